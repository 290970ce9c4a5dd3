//! Feeds arbitrary bytes (as UTF-8 when they are) to `HloModule::parse` and, when
//! they parse, checks print -> parse -> print is a fixed point. A panic or a broken
//! round trip is a crash. Seed with `fuzz/seed_corpus.sh`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../hlo/ir/tests/parser_support/oracle.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(why) = oracle::check_text(text) {
            panic!("{why}");
        }
    }
});
