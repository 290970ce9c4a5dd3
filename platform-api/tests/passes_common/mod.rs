//! Helpers shared by the `passes_*` tests: parsing, running one pass with
//! verification, and counting opcodes.

#![allow(dead_code)]

use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::{HloModule, Opcode};
use platform_api::passes::HloPass;

/// Parses and verifies HLO text (a test's input must be valid).
pub fn parse(text: &str) -> HloModule {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("input does not verify: {e}\n{text}"));
    module
}

/// Runs `pass` on a copy of `module`, checks the result verifies, and returns it
/// with the pass's `changed` answer.
pub fn run(pass: &mut dyn HloPass, module: &HloModule) -> (HloModule, bool) {
    let mut out = module.clone();
    let changed = pass
        .run(&mut out)
        .unwrap_or_else(|e| panic!("pass {} failed: {e}\n{module}", pass.name()));
    verify_module(&out).unwrap_or_else(|e| {
        panic!(
            "after {}: {e}\nbefore:\n{module}\nafter:\n{out}",
            pass.name()
        )
    });
    assert_eq!(
        changed,
        &out != module,
        "pass {} said changed={changed}\nbefore:\n{module}\nafter:\n{out}",
        pass.name()
    );
    (out, changed)
}

/// Runs `pass` twice more on its own output and checks it has nothing left to do
/// (so one run reached its fixed point).
pub fn assert_idempotent(pass: &mut dyn HloPass, module: &HloModule) {
    let (again, changed) = run(pass, module);
    assert!(
        !changed,
        "pass {} changed its own output again:\n{module}\nto\n{again}",
        pass.name()
    );
}

/// How many instructions of the whole module have this opcode.
pub fn count(module: &HloModule, opcode: Opcode) -> usize {
    module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| i.opcode() == opcode)
        .count()
}

/// The opcodes of the entry computation in order.
pub fn entry_opcodes(module: &HloModule) -> Vec<Opcode> {
    module
        .entry()
        .instructions
        .iter()
        .map(|i| i.opcode())
        .collect()
}

/// The opcode of the entry root.
pub fn root_opcode(module: &HloModule) -> Opcode {
    module.entry().root_instr().opcode()
}
