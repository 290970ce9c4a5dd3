//! The Host's compile explained in text, for `--dump`: per computation, its
//! thunks in run order (a fusion with the ops it holds), where every value
//! lives (which allocation, at which offset, how many bytes), and the
//! allocations themselves. Written next to the module dumps when the debug
//! option `dump_to` is set.

use crate::compiler::buffer_assignment::BufferAssignment;
use crate::thunk::{Allocation, BufferSlice, Thunk};
use platform_api::hlo::{HloComputation, HloModule, Op};
use platform_api::profile::instruction_args;
use std::fmt::Write;

/// The plan of one computation as text.
pub fn plan_text(
    module: &HloModule,
    comp: &HloComputation,
    assignment: &BufferAssignment,
    thunks: &[Box<dyn Thunk>],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "computation {}: {} thunk(s), temp arena {} byte(s)",
        comp.name,
        thunks.len(),
        assignment.temp_bytes
    );
    out.push_str("\nthunks, in run order:\n");
    for (i, t) in thunks.iter().enumerate() {
        let instr = comp.instructions.iter().find(|x| x.name == t.name());
        let detail = match instr {
            Some(instr) => {
                let args = instruction_args(Some(module), instr);
                let get = |k: &str| {
                    args.iter()
                        .find(|(key, _)| *key == k)
                        .map(|(_, v)| v.clone())
                };
                let mut d = get("shape").unwrap_or_default();
                if let Some(f) = get("fused") {
                    d.push_str(&format!("  fuses: {f}"));
                }
                d
            }
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:>4}  %{}  ({})  {detail}",
            i + 1,
            t.name(),
            t.category()
        );
    }
    out.push_str("\nvalues (allocation #n + offset, bytes, per array leaf):\n");
    for (instr, slices) in comp.instructions.iter().zip(&assignment.leaf_slices) {
        if slices.is_empty() {
            continue;
        }
        let places: Vec<String> = slices.iter().map(slice_text).collect();
        let alias = if matches!(instr.op, Op::Parameter { .. }) {
            " (parameter)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  %{}  {}{alias}: {}",
            instr.name,
            instr.shape.without_layout(),
            places.join(", ")
        );
    }
    out.push_str("\nallocations:\n");
    for (i, a) in assignment.allocations.iter().enumerate() {
        let what = match a {
            Allocation::Parameter { leaf } => format!(
                "parameter leaf {leaf} ({} bytes)",
                assignment
                    .parameter_leaf_bytes
                    .get(*leaf)
                    .copied()
                    .unwrap_or(0)
            ),
            Allocation::Output { leaf } => format!(
                "result leaf {leaf} ({} bytes)",
                assignment
                    .output_leaf_bytes
                    .get(*leaf)
                    .copied()
                    .unwrap_or(0)
            ),
            Allocation::Temp => format!("temp arena ({} bytes)", assignment.temp_bytes),
            Allocation::Constant(c) => format!("constant ({} bytes)", c.len()),
        };
        let _ = writeln!(out, "  #{i}  {what}");
    }
    if !assignment.final_copies.is_empty() {
        out.push_str("\ncopies after the last thunk:\n");
        for c in &assignment.final_copies {
            let _ = writeln!(out, "  {} -> {}", slice_text(&c.src), slice_text(&c.dst));
        }
    }
    out
}

fn slice_text(s: &BufferSlice) -> String {
    format!("#{}+{} ({} B)", s.allocation, s.offset, s.size)
}
