//! The compile cache: compiled programs keyed by what they were compiled from.
//!
//! The key is a [`Fingerprint`] of the module's canonical text
//! ([`platform_api::HloModule::to_text`]), the platform and the
//! [`CompileOptions`]. Canonical text makes two spellings of one program (short
//! and long form, different whitespace) share an entry, while any difference that
//! changes the program changes the text.
//!
//! Each key has its own slot with its own lock, so two threads asking for the
//! same program compile it once (the second waits for the first), while threads
//! compiling different programs never wait for each other. A failed compile
//! leaves its slot empty; the next request tries again.

use platform_api::{CompileOptions, Error, Result};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

/// A 128-bit FNV-1a hash of a module's canonical text. Stable across runs and
/// builds, so it can name a program in logs and on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub u128);

impl Fingerprint {
    const OFFSET_BASIS: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;

    /// The fingerprint of `text`.
    pub fn of(text: &str) -> Fingerprint {
        let mut hash = Self::OFFSET_BASIS;
        for &byte in text.as_bytes() {
            hash ^= u128::from(byte);
            hash = hash.wrapping_mul(Self::PRIME);
        }
        Fingerprint(hash)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// What a cached program is keyed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub fingerprint: Fingerprint,
    pub platform: &'static str,
    pub options: CompileOptions,
}

type Slot<V> = Arc<Mutex<Option<Arc<V>>>>;

/// A map from [`CacheKey`] to compiled values, compiling each key at most once
/// at a time.
pub struct CompileCache<V> {
    slots: Mutex<HashMap<CacheKey, Slot<V>>>,
}

impl<V> Default for CompileCache<V> {
    fn default() -> Self {
        CompileCache {
            slots: Mutex::new(HashMap::new()),
        }
    }
}

impl<V> CompileCache<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// The value cached under `key`, or the result of `compile` (stored on
    /// success). The flag says whether the value came from the cache.
    pub fn get_or_compile(
        &self,
        key: CacheKey,
        compile: impl FnOnce() -> Result<V>,
    ) -> Result<(Arc<V>, bool)> {
        let slot = {
            let mut slots = self
                .slots
                .lock()
                .map_err(|_| Error::internal("compile cache lock poisoned"))?;
            slots.entry(key).or_default().clone()
        };
        let mut value = slot
            .lock()
            .map_err(|_| Error::internal("compile cache slot lock poisoned"))?;
        if let Some(v) = value.as_ref() {
            return Ok((v.clone(), true));
        }
        let compiled = Arc::new(compile()?);
        *value = Some(compiled.clone());
        Ok((compiled, false))
    }

    /// Programs currently cached.
    pub fn len(&self) -> usize {
        self.slots
            .lock()
            .map(|s| {
                s.values()
                    .filter(|slot| slot.lock().map(|v| v.is_some()).unwrap_or(false))
                    .count()
            })
            .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every cached program (executables still in use stay alive).
    pub fn clear(&self) {
        if let Ok(mut slots) = self.slots.lock() {
            slots.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str, replicas: usize) -> CacheKey {
        CacheKey {
            fingerprint: Fingerprint::of(text),
            platform: "P",
            options: CompileOptions {
                replica_count: replicas,
                ..CompileOptions::default()
            },
        }
    }

    #[test]
    fn fingerprint_is_fnv1a_128() {
        // Published FNV-1a 128-bit test vectors.
        assert_eq!(Fingerprint::of("").0, 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(Fingerprint::of("a").0, 0xd228cb696f1a8caf78912b704e4a8964);
    }

    #[test]
    fn hits_misses_and_failures() {
        let cache = CompileCache::<u32>::new();
        let (v, hit) = cache.get_or_compile(key("m", 1), || Ok(7)).unwrap();
        assert_eq!((*v, hit), (7, false));
        let (v, hit) = cache.get_or_compile(key("m", 1), || Ok(8)).unwrap();
        assert_eq!((*v, hit), (7, true));
        // Different options, different program.
        let (v, hit) = cache.get_or_compile(key("m", 2), || Ok(9)).unwrap();
        assert_eq!((*v, hit), (9, false));
        // A failure is not cached.
        assert!(cache
            .get_or_compile(key("n", 1), || Err(Error::internal("boom")))
            .is_err());
        let (v, hit) = cache.get_or_compile(key("n", 1), || Ok(1)).unwrap();
        assert_eq!((*v, hit), (1, false));
        assert_eq!(cache.len(), 3);
        cache.clear();
        assert!(cache.is_empty());
    }
}
