//! [`ComputationPlacer`] and [`DeviceAssignment`]: which device runs which
//! (replica, computation) of a program.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// A table from (replica, computation) to device ordinal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceAssignment {
    replica_count: usize,
    computation_count: usize,
    /// Row-major `[replica][computation]`.
    devices: Vec<usize>,
}

impl DeviceAssignment {
    /// An assignment from an explicit table (`devices[replica][computation]`).
    pub fn new(devices: Vec<Vec<usize>>) -> Result<Self> {
        let replica_count = devices.len();
        let computation_count = devices.first().map_or(0, Vec::len);
        if replica_count == 0 || computation_count == 0 {
            return Err(Error::invalid_argument(
                "a device assignment needs at least one replica and one computation",
            ));
        }
        if devices.iter().any(|r| r.len() != computation_count) {
            return Err(Error::invalid_argument(
                "every replica must list the same number of computations",
            ));
        }
        let flat: Vec<usize> = devices.into_iter().flatten().collect();
        let mut seen = std::collections::HashSet::new();
        if let Some(d) = flat.iter().find(|d| !seen.insert(**d)) {
            return Err(Error::invalid_argument(format!(
                "device {d} is assigned twice"
            )));
        }
        Ok(DeviceAssignment {
            replica_count,
            computation_count,
            devices: flat,
        })
    }
    pub fn replica_count(&self) -> usize {
        self.replica_count
    }
    pub fn computation_count(&self) -> usize {
        self.computation_count
    }
    /// The device that runs `(replica, computation)`.
    pub fn device(&self, replica: usize, computation: usize) -> Result<usize> {
        if replica >= self.replica_count || computation >= self.computation_count {
            return Err(Error::out_of_range(format!(
                "(replica {replica}, computation {computation}) is outside a {}x{} assignment",
                self.replica_count, self.computation_count
            )));
        }
        Ok(self.devices[replica * self.computation_count + computation])
    }
    /// The (replica, computation) a device runs, if any.
    pub fn logical_id_of(&self, device: usize) -> Option<(usize, usize)> {
        let i = self.devices.iter().position(|&d| d == device)?;
        Some((i / self.computation_count, i % self.computation_count))
    }
    /// Serialises to JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    /// Reads JSON written by [`to_json`](Self::to_json), checking its invariants.
    pub fn from_json(text: &str) -> Result<Self> {
        let raw: DeviceAssignment = serde_json::from_str(text)
            .map_err(|e| Error::invalid_argument(format!("device assignment JSON: {e}")))?;
        if raw.devices.len() != raw.replica_count * raw.computation_count {
            return Err(Error::invalid_argument(
                "device assignment JSON: table size does not match its counts",
            ));
        }
        let rows = raw
            .devices
            .chunks(raw.computation_count.max(1))
            .map(|c| c.to_vec())
            .collect();
        DeviceAssignment::new(rows)
    }
}

/// Decides device assignments for a platform.
///
/// # Threading
/// Stateless; callable from any thread.
pub trait ComputationPlacer: Send + Sync {
    /// The device for `(replica, computation)`: by default `computation *
    /// replica_count + replica`, as XLA's default placer does.
    fn device_id(
        &self,
        replica: usize,
        computation: usize,
        replica_count: usize,
        computation_count: usize,
    ) -> Result<usize> {
        if replica >= replica_count || computation >= computation_count {
            return Err(Error::out_of_range(format!(
                "(replica {replica}, computation {computation}) is outside {replica_count} replicas x {computation_count} computations"
            )));
        }
        Ok(computation * replica_count + replica)
    }

    /// The whole assignment for a program with these counts.
    fn assign_devices(
        &self,
        replica_count: usize,
        computation_count: usize,
    ) -> Result<DeviceAssignment> {
        let mut rows = Vec::with_capacity(replica_count);
        for r in 0..replica_count {
            let mut row = Vec::with_capacity(computation_count);
            for c in 0..computation_count {
                row.push(self.device_id(r, c, replica_count, computation_count)?);
            }
            rows.push(row);
        }
        DeviceAssignment::new(rows)
    }
}

/// XLA's default placement; serves every platform that registers no placer of its own.
pub struct DefaultComputationPlacer;

impl ComputationPlacer for DefaultComputationPlacer {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_placement_and_json() {
        let a = DefaultComputationPlacer.assign_devices(2, 3).unwrap();
        assert_eq!(a.device(0, 0).unwrap(), 0);
        assert_eq!(a.device(1, 0).unwrap(), 1);
        assert_eq!(a.device(1, 2).unwrap(), 5);
        assert_eq!(a.logical_id_of(5), Some((1, 2)));
        assert!(a.device(2, 0).is_err());
        assert_eq!(DeviceAssignment::from_json(&a.to_json()).unwrap(), a);
        assert!(DeviceAssignment::new(vec![vec![0], vec![0]]).is_err());
    }
}
