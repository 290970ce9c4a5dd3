//! Reads StableHLO into the HLO IR.
//!
//! StableHLO is what ML frameworks exchange: `jax.jit(f).lower(x).as_text()`
//! prints it, and a PJRT plugin receives nothing else. This crate turns its
//! text form, as JAX and the StableHLO tools print it (the pretty form of
//! each op and MLIR's generic form alike, CHLO ops that map onto HLO ops, and
//! locations), into an [`HloModule`](hlo_ir::HloModule) every platform runs.
//!
//! Two stages, one module each:
//! - [`parser`] (with `pretty` for the ops' custom syntax) reads the text
//!   into the syntax tree of [`syntax`]: MLIR's generic structure of
//!   operations, attributes, regions and types, located by `line:column`;
//! - `convert` builds the HLO module from it with the IR's builder, so every
//!   instruction is shape-checked as it is added, doing what XLA's own
//!   StableHLO-to-HLO translation does where the two IRs differ (tuples for
//!   several results, tuple operands for regions that capture values).
//!
//! Locations become instruction metadata (`op_name` from the name JAX gives,
//! `source_file`/`source_line` from the innermost file location), so
//! profiles and graphs point at the user's code.
//!
//! What it refuses, it refuses by name: an op, an attribute form, a type or
//! a CHLO op without an HLO lowering here is `Unimplemented` with its
//! `line:column`; malformed text is `InvalidArgument` with its position.
//! No input panics; nesting is bounded by memory, not the stack.
//!
//! MLIR bytecode is read by two more modules in front of the same
//! conversion: `bytecode` reads MLIR's container (sections, string and
//! attribute tables, properties, the operation tree), and `vhlo` turns
//! a portable artifact's VHLO ops, attributes and types into the syntax tree
//! the text parser would have produced for the StableHLO they version.
//! `jax_export` unwraps a serialized `jax.export` module (a flatbuffer that
//! holds a portable artifact).

mod bytecode;
mod chlo;
mod convert;
mod jax_export;
pub mod parser;
mod pretty;
mod sdy;
pub mod syntax;
mod vhlo;
#[rustfmt::skip]
mod vhlo_ops;

pub use bytecode::is_bytecode;
pub use jax_export::{export_info, is_jax_export, ExportInfo};

use hlo_ir::{HloModule, Result};

/// Parses StableHLO text and converts it to an HLO module.
pub fn parse_module(text: &str) -> Result<HloModule> {
    let module = parser::parse(text)?;
    convert::to_hlo(&module)
}

/// Reads StableHLO in any of its forms: text (`.mlir`), a portable
/// artifact (VHLO in MLIR bytecode, `.mlirbc`), or a serialized `jax.export`
/// module; the bytes tell them apart.
pub fn parse_module_bytes(bytes: &[u8]) -> Result<HloModule> {
    let module = read_any(bytes)?;
    convert::to_hlo(&module).map_err(|e| locate(e, &module))
}

/// Bytecode has no lines: an error there names the operation's ordinal
/// (`operation #12`). Adds what that operation is and, where the program
/// carries it, its source location (`jit(f)/dot_general at model.py:33`).
fn locate(e: hlo_ir::Error, module: &syntax::Module) -> hlo_ir::Error {
    let message = e.message();
    let Some(n) = message
        .split("operation #")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|d| d.parse::<u32>().ok())
    else {
        return e;
    };
    let target = syntax::Pos { line: n, col: 0 };
    let mut stack: Vec<&syntax::Region> = module.funcs.iter().map(|f| &f.body).collect();
    while let Some(region) = stack.pop() {
        for op in &region.ops {
            if op.pos == target {
                let mut what = format!("operation #{n} is {}", op.name);
                if let Some(loc) = &op.loc {
                    if let Some(name) = &loc.name {
                        what += &format!(" ({name})");
                    }
                    if let (Some(file), Some(line)) = (&loc.file, loc.line) {
                        what += &format!(" at {file}:{line}");
                    }
                }
                return hlo_ir::Error::new(e.code(), format!("{message}; {what}"));
            }
            stack.extend(op.regions.iter());
        }
    }
    e
}

/// The syntax tree of StableHLO in any of its forms (see
/// [`parse_module_bytes`]).
fn read_any(bytes: &[u8]) -> Result<syntax::Module> {
    if bytecode::is_bytecode(bytes) {
        return vhlo::read(bytes);
    }
    if jax_export::is_jax_export(bytes) {
        let artifact = jax_export::module_bytes(bytes)?;
        return vhlo::read(artifact).map_err(|e| e.context("in a serialized jax.export module"));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        hlo_ir::Error::invalid_argument(format!(
            "StableHLO input is neither MLIR bytecode, a jax.export module nor UTF-8 text (byte {} is not UTF-8)",
            e.valid_up_to()
        ))
    })?;
    parser::parse(text)
}

/// A module read for a test runner (see [`parse_test_module`]).
#[derive(Debug)]
pub struct TestModule {
    /// The entry returns its own results, then for each check its actual
    /// and its expected value.
    pub module: HloModule,
    /// How many of the entry's results are its own.
    pub results: usize,
    /// How many (actual, expected) pairs follow them.
    pub checks: usize,
}

/// Reads a StableHLO test program (`stablehlo/testdata`'s form: `check.eq`
/// and `check.expect_*` custom calls compare what the program computes with
/// embedded expected values) so that a runner can judge the checks itself.
pub fn parse_test_module(text: &str) -> Result<TestModule> {
    parse_test_module_bytes(text.as_bytes())
}

/// [`parse_test_module`] for any form [`parse_module_bytes`] reads.
pub fn parse_test_module_bytes(bytes: &[u8]) -> Result<TestModule> {
    let syntax = read_any(bytes)?;
    let (module, results, checks) =
        convert::to_hlo_with(&syntax, true).map_err(|e| locate(e, &syntax))?;
    Ok(TestModule {
        module,
        results,
        checks,
    })
}

/// Whether `text` looks like MLIR (StableHLO) rather than HLO text: its first
/// meaningful line starts a module, a function or a location alias.
pub fn looks_like_mlir(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        .find(|l| !l.is_empty() && !l.starts_with("//"))
        .is_some_and(|l| {
            l.starts_with("module") || l.starts_with("func.func") || l.starts_with("#loc")
        })
}

/// What the reader knowingly cannot read yet among the ops JAX emits, with
/// why: a CHLO op with no decomposition here (for the types named). A
/// conformance run reports a StableHLO form that meets one as a known gap,
/// as a backend's registered gaps are reported; the StableHLO test-data test
/// fails if one is met by none of its programs or the op matrix's, so the
/// list says exactly what does not work.
pub const KNOWN_GAPS: &[(&str, &str)] = &[
    ("chlo.acos", COMPLEX),
    ("chlo.acosh", COMPLEX),
    ("chlo.asin", COMPLEX),
    ("chlo.asinh", COMPLEX),
    ("chlo.atan", COMPLEX),
    ("chlo.atanh", COMPLEX),
    ("chlo.cosh", COMPLEX),
    ("chlo.sinh", COMPLEX),
    ("chlo.square", COMPLEX),
    (
        "chlo.erf_inv",
        "f64: its three-branch polynomial is not written yet (f32, f16, bf16 are)",
    ),
    (
        "chlo.erfc",
        "f64: its polynomials are not written yet (f32, f16, bf16 are)",
    ),
    ("chlo.bessel_i1e", SERIES),
];

const COMPLEX: &str = "complex arguments: the decomposition is written for real types only";
const SERIES: &str = "its polynomial and series decomposition is not written yet";

/// The known gap (op, reason) an error message of this reader names, if any.
pub fn known_gap(message: &str) -> Option<(&'static str, &'static str)> {
    KNOWN_GAPS
        .iter()
        .copied()
        .find(|(op, _)| message.contains(&format!("CHLO op '{op}'")))
}
