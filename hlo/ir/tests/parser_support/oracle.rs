//! The property the HLO parser fuzzers check, shared by the stable mutation
//! fuzzer (`tests/parser_fuzz.rs`) and the cargo-fuzz target
//! (`fuzz/fuzz_targets/parse_hlo.rs`, which includes this file by path).
//!
//! For any text: parsing returns (never panics, never overflows the stack); and
//! when it parses, the printed module parses again to an equal module whose
//! printed text is the same — print → parse → print is a fixed point.

use hlo_ir::HloModule;
use hlo_ir::Op;

/// `Ok(true)` if the text parsed and round-trips, `Ok(false)` if it was rejected
/// (a parse error is a fine outcome), `Err(why)` if the round-trip property broke.
pub fn check_text(text: &str) -> Result<bool, String> {
    let Ok(module) = HloModule::parse(text) else {
        return Ok(false);
    };
    let printed = module.to_text();
    let again = HloModule::parse(&printed)
        .map_err(|e| format!("printed text does not parse: {e}\n--- printed:\n{printed}"))?;
    let reprinted = again.to_text();
    if reprinted != printed {
        return Err(format!(
            "print -> parse -> print is not a fixed point\n--- first print:\n{printed}\n--- second print:\n{reprinted}"
        ));
    }
    if again != module && !equal_but_for_nan_attributes(&again, &module) {
        return Err(format!(
            "parse(print(m)) != m although the prints agree\n--- printed:\n{printed}"
        ));
    }
    Ok(true)
}

/// `PartialEq` finds a NaN float attribute (batch-norm `epsilon`, the only float
/// attribute) unequal to itself; compare with NaN epsilons replaced by a number.
/// Literals are compared by their bytes, so NaN constants need no such help.
fn equal_but_for_nan_attributes(a: &HloModule, b: &HloModule) -> bool {
    fn scrub(m: &HloModule) -> HloModule {
        let mut m = m.clone();
        for comp in &mut m.computations {
            for instr in &mut comp.instructions {
                match &mut instr.op {
                    Op::BatchNormTraining { epsilon, .. }
                    | Op::BatchNormInference { epsilon, .. }
                    | Op::BatchNormGrad { epsilon, .. }
                        if epsilon.is_nan() =>
                    {
                        // Keep the sign, which the text does carry.
                        *epsilon = if epsilon.is_sign_negative() {
                            -1.0
                        } else {
                            1.0
                        };
                    }
                    _ => {}
                }
            }
        }
        m
    }
    scrub(a) == scrub(b)
}
