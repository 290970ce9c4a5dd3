//! Reductions that would read their input in short strided runs, split in two.
//!
//! A reduction over a set of dimensions that includes the innermost ones but
//! also dimensions outside a kept one reads its input transposed: GroupNorm's
//! statistics over `{1, 2, 4}` of `[n, h, w, groups, c]` fold, for each
//! `(n, group)`, runs of `c` elements `groups · c` apart, so every cache line
//! is fetched once per group it holds. Split at the innermost kept
//! dimension, the same reduction is first a reduction over the outer reduced
//! dimensions (`{1, 2}`: a column reduction that streams the input once,
//! into `[n, groups, c]`), then one over the short innermost run (`{2}` of
//! that small result).
//!
//! The split only reassociates the reduction, which XLA leaves unspecified
//! (its own reduction splitters do the same); the init value is applied once
//! per stage, which a reduction's init value (an identity of the reducer)
//! allows. Variadic reductions and reductions in fused computations (XLA's
//! own fusions) are left as they are.

use platform_api::hlo::rewrite::{effectful_computations, ComputationEditor, NameGen};
use platform_api::hlo::{CompId, HloComputation, InstrId, Op};
use platform_api::{HloModule, Result, Shape};

/// Innermost reduced runs up to this many bytes are split off; longer runs
/// are read well enough in place.
const SHORT_RUN_BYTES: usize = 32;

/// The outer reduced dimensions must hold at least this many elements per
/// output: fewer, and the input is hardly read transposed (each cache line
/// is fetched a few times at most), while the first stage would be an array
/// almost the input's size.
const MIN_OUTER: usize = 16;

/// The first stage's result is a temporary; past this many elements it
/// would cost more memory than the split saves time (a reduction keeping a
/// large dimension, whose result is large too).
const MAX_FIRST_STAGE: usize = 1 << 16;

/// Splits every qualifying reduction outside fused computations; returns
/// whether any was.
pub fn run(module: &mut HloModule) -> Result<bool> {
    let fused = crate::compiler::fused_computations(module);
    let targets: Vec<(usize, Vec<(InstrId, Split)>)> = module
        .computations
        .iter()
        .enumerate()
        .filter(|(c, _)| !fused.contains(&CompId(*c as u32)))
        .map(|(c, comp)| {
            let found: Vec<(InstrId, Split)> = comp
                .ids()
                .filter_map(|id| split_of(comp, id).map(|s| (id, s)))
                .collect();
            (c, found)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect();
    if targets.is_empty() {
        return Ok(false);
    }
    let effectful = effectful_computations(module);
    let mut names = NameGen::for_instructions(module);
    let mut changed = false;
    for (c, found) in targets {
        let mut ed = ComputationEditor::new(&mut module.computations[c], &mut names);
        for (id, split) in found {
            let instr = ed.instr(id).clone();
            let to_apply = split.to_apply;
            let (x, init) = (instr.operands[0], instr.operands[1]);
            let outer = ed.add_derived(
                id,
                &instr.name,
                split.outer_shape,
                Op::Reduce {
                    dimensions: split.outer,
                    to_apply,
                },
                vec![x, init],
            );
            let inner = ed.add_derived(
                id,
                &instr.name,
                instr.shape.clone(),
                Op::Reduce {
                    dimensions: split.inner,
                    to_apply,
                },
                vec![outer, init],
            );
            ed.replace_all_uses(id, inner)?;
        }
        changed |= ed.finish(&effectful)?;
    }
    Ok(changed)
}

/// The two reductions one reduction becomes.
#[derive(Debug, PartialEq)]
struct Split {
    /// The reducer, which both stages apply.
    to_apply: CompId,
    /// The reduced dimensions outside the innermost kept one, of the input.
    outer: Vec<usize>,
    /// The first stage's result: the input without `outer`.
    outer_shape: Shape,
    /// The innermost reduced dimensions, of the first stage's result.
    inner: Vec<usize>,
}

/// How `id` splits, if it is a single-input reduction whose innermost
/// reduced run is short and which also reduces dimensions outside the
/// innermost kept one.
fn split_of(comp: &HloComputation, id: InstrId) -> Option<Split> {
    let instr = comp.instr(id);
    let Op::Reduce {
        dimensions,
        to_apply,
    } = &instr.op
    else {
        return None;
    };
    if instr.operands.len() != 2 {
        return None;
    }
    let input = comp.instr(instr.operands[0]).shape.as_array()?;
    let dims = &input.dims;
    let reduced = |d: usize| dimensions.contains(&d);
    // The innermost kept dimension of more than one element; the reduced
    // dimensions after it form the innermost run.
    let kept = (0..dims.len())
        .rev()
        .find(|&d| !reduced(d) && dims[d] > 1)?;
    let run: usize = (kept + 1..dims.len()).map(|d| dims[d]).product();
    let width = input.element_type.byte_size().max(1);
    if run < 2 || run * width > SHORT_RUN_BYTES {
        return None;
    }
    let outer: Vec<usize> = dimensions.iter().copied().filter(|&d| d < kept).collect();
    if outer.iter().map(|&d| dims[d]).product::<usize>() < MIN_OUTER {
        return None;
    }
    let outer_dims: Vec<usize> = (0..dims.len())
        .filter(|d| !outer.contains(d))
        .map(|d| dims[d])
        .collect();
    if outer_dims.iter().product::<usize>() > MAX_FIRST_STAGE {
        return None;
    }
    // In the first stage's result, the reduced dimensions after `kept`.
    let inner: Vec<usize> = (0..dims.len())
        .filter(|d| !outer.contains(d))
        .enumerate()
        .filter(|&(_, d)| d > kept && reduced(d))
        .map(|(i, _)| i)
        .collect();
    let element_type = instr.shape.as_array()?.element_type;
    Some(Split {
        to_apply: *to_apply,
        outer,
        outer_shape: Shape::array(element_type, outer_dims),
        inner,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(dims: &str, reduce: &str, out: &str) -> HloModule {
        HloModule::parse(&format!(
            "HloModule m\n\
             add {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
             ROOT s = f32[] add(a, b)\n}}\n\
             ENTRY e {{\n  x = f32[{dims}] parameter(0)\n  z = f32[] constant(0)\n  \
             ROOT r = f32[{out}] reduce(x, z), dimensions={{{reduce}}}, to_apply=add\n}}\n"
        ))
        .unwrap()
    }

    fn split(dims: &str, reduce: &str, out: &str) -> Option<Split> {
        let m = module(dims, reduce, out);
        let comp = m.computation(m.entry);
        split_of(comp, comp.root)
    }

    #[test]
    fn group_statistics_split_at_the_group_dimension() {
        let s = split("2,64,64,32,4", "1,2,4", "2,32").unwrap();
        assert_eq!(s.outer, vec![1, 2]);
        assert_eq!(
            s.outer_shape,
            Shape::array(platform_api::ElementType::F32, vec![2, 32, 4])
        );
        assert_eq!(s.inner, vec![2]);
    }

    #[test]
    fn streaming_reductions_stay_whole() {
        // Innermost kept: a column reduction already streams.
        assert_eq!(split("64,128", "0", "128"), None);
        // A long innermost run: rows are read in place.
        assert_eq!(split("64,32,16", "0,2", "32"), None);
        // Nothing reduced outside the kept dimension.
        assert_eq!(split("64,32,4", "2", "64,32"), None);
        // Everything reduced.
        assert_eq!(split("64,4", "0,1", ""), None);
        // Too few outer elements to be read transposed.
        assert_eq!(split("8,32,4", "0,2", "32"), None);
        // A first stage too large to keep as a temporary.
        assert_eq!(split("16,100000,4", "0,2", "100000"), None);
    }

    #[test]
    fn the_split_module_is_valid_and_ends_in_the_same_shape() {
        let mut m = module("2,6,5,3,2", "1,2,4", "2,3");
        assert!(run(&mut m).unwrap());
        platform_api::hlo::verifier::verify_module(&m).unwrap();
        let comp = m.computation(m.entry);
        let root = comp.instr(comp.root);
        assert!(matches!(&root.op, Op::Reduce { dimensions, .. } if dimensions == &[2]));
        let first = comp.instr(root.operands[0]);
        assert!(matches!(&first.op, Op::Reduce { dimensions, .. } if dimensions == &[1, 2]));
        assert_eq!(first.shape.as_array().unwrap().dims, vec![2, 3, 2]);
    }
}
