//! Collectives: all-reduce, all-gather, reduce-scatter, all-to-all,
//! collective-permute and collective-broadcast (and their start forms).
//!
//! The number of participants in a group comes from `replica_groups` (the size of
//! the first group; groups must be of equal size except for all-reduce). With no
//! groups, every replica takes part, and that count lives in the module config,
//! which an operation does not see: the declared shape then supplies the shard
//! count, as XLA's verifier derives it.

use super::{is_scalar_of, one_or_tuple, plain, signature, Cx};
use crate::attrs::CollectiveAttrs;
use crate::error::Result;
use crate::shape::{ArrayShape, Shape};
use crate::CompId;
use std::collections::HashSet;

/// Checks the replica groups (no empty group, no id twice, equal sizes when
/// `uniform`) and returns the group size if groups are given.
fn group_size(cx: &Cx, attrs: &CollectiveAttrs, uniform: bool) -> Result<Option<usize>> {
    let groups = &attrs.replica_groups.groups;
    let mut seen = HashSet::new();
    for g in groups {
        if g.is_empty() {
            return Err(cx.err(format!(
                "replica_groups {} contains an empty group",
                attrs.replica_groups
            )));
        }
        for &id in g {
            if !seen.insert(id) {
                return Err(cx.err(format!(
                    "replica_groups {} names replica {id} twice",
                    attrs.replica_groups
                )));
            }
        }
        if uniform && g.len() != groups[0].len() {
            return Err(cx.err(format!(
                "replica_groups {} must all have the same size",
                attrs.replica_groups
            )));
        }
    }
    Ok(groups.first().map(Vec::len))
}

fn arrays<'a>(cx: &'a Cx) -> Result<Vec<&'a ArrayShape>> {
    cx.at_least(1)?;
    (0..cx.operands.len())
        .map(|i| cx.array(i, &format!("operand {i}")))
        .collect()
}

/// The declared result for operand `i` of a possibly variadic collective (the
/// whole declared shape when there is one operand).
fn declared_for(declared: &Shape, count: usize, i: usize) -> Option<&ArrayShape> {
    if count == 1 {
        declared.as_array()
    } else {
        declared.tuple_shapes().get(i)?.as_array()
    }
}

pub(super) fn all_reduce(cx: &Cx, attrs: &CollectiveAttrs, to_apply: CompId) -> Result<Shape> {
    let ops = arrays(cx)?;
    group_size(cx, attrs, false)?;
    let p = cx.program(to_apply)?;
    let t = ops[0].element_type;
    let ok = p.parameters.len() == 2
        && ops.iter().all(|a| a.element_type == t)
        && p.parameters.iter().all(|s| is_scalar_of(s, t))
        && is_scalar_of(&p.result, t);
    if !ok {
        return Err(cx.err(format!(
            "the reducer {} has signature {}, expected ({t}[], {t}[]) -> {t}[] for operands of type {t}",
            cx.comp_name(to_apply),
            signature(&p)
        )));
    }
    Ok(one_or_tuple(ops.iter().map(|a| plain(a)).collect()))
}

/// `all-gather` (and `all-gather-start`, whose result is `(inputs, outputs)`).
pub(super) fn all_gather(
    cx: &Cx,
    attrs: &CollectiveAttrs,
    dimension: usize,
    start: bool,
) -> Result<Shape> {
    let ops = arrays(cx)?;
    let groups = group_size(cx, attrs, true)?;
    let declared_out = if start {
        cx.declared
            .tuple_shapes()
            .get(1)
            .cloned()
            .unwrap_or(Shape::Token)
    } else {
        cx.declared.clone()
    };
    let mut outputs = Vec::with_capacity(ops.len());
    for (i, a) in ops.iter().enumerate() {
        if dimension >= a.rank() {
            return Err(cx.err(format!(
                "dimension {dimension} is out of range for operand {}",
                plain(a)
            )));
        }
        let shards = match groups {
            Some(n) => n,
            None => infer_shards(
                a,
                declared_for(&declared_out, ops.len(), i),
                dimension,
                true,
            )?,
        };
        let mut dims = a.dims.clone();
        dims[dimension] = dims[dimension]
            .checked_mul(shards)
            .ok_or_else(|| cx.err("the result is too large"))?;
        outputs.push(Shape::array(a.element_type, dims));
    }
    let out = one_or_tuple(outputs);
    if start {
        let inputs = one_or_tuple(ops.iter().map(|a| plain(a)).collect());
        Ok(Shape::Tuple(vec![inputs, out]))
    } else {
        Ok(out)
    }
}

/// The shard count implied by a declared result: output/input size along
/// `dimension` when gathering (`grow`), input/output when scattering. Falls back
/// to 1 when the declared shape says nothing usable, which the final shape
/// comparison then reports.
fn infer_shards(
    a: &ArrayShape,
    declared: Option<&ArrayShape>,
    dimension: usize,
    grow: bool,
) -> Result<usize> {
    let Some(out) = declared.and_then(|d| d.dims.get(dimension).copied()) else {
        return Ok(1);
    };
    let (big, small) = if grow {
        (out, a.dims[dimension])
    } else {
        (a.dims[dimension], out)
    };
    if small == 0 || big % small != 0 {
        return Ok(1);
    }
    Ok(big / small)
}

pub(super) fn reduce_scatter(
    cx: &Cx,
    attrs: &CollectiveAttrs,
    dimension: usize,
    to_apply: CompId,
) -> Result<Shape> {
    let ops = arrays(cx)?;
    let groups = group_size(cx, attrs, true)?;
    let p = cx.program(to_apply)?;
    let t = ops[0].element_type;
    if p.parameters.len() != 2
        || !p.parameters.iter().all(|s| is_scalar_of(s, t))
        || !is_scalar_of(&p.result, t)
    {
        return Err(cx.err(format!(
            "the reducer {} has signature {}, expected ({t}[], {t}[]) -> {t}[]",
            cx.comp_name(to_apply),
            signature(&p)
        )));
    }
    let mut outputs = Vec::with_capacity(ops.len());
    for (i, a) in ops.iter().enumerate() {
        if dimension >= a.rank() {
            return Err(cx.err(format!(
                "dimension {dimension} is out of range for operand {}",
                plain(a)
            )));
        }
        let shards = match groups {
            Some(n) => n,
            None => infer_shards(a, declared_for(cx.declared, ops.len(), i), dimension, false)?,
        };
        if a.dims[dimension] % shards != 0 {
            return Err(cx.err(format!(
                "dimension {dimension} of operand {} is not divisible among {shards} participants",
                plain(a)
            )));
        }
        let mut dims = a.dims.clone();
        dims[dimension] /= shards;
        outputs.push(Shape::array(a.element_type, dims));
    }
    Ok(one_or_tuple(outputs))
}

/// `all-to-all`: with a split dimension, one array is split into group-size
/// pieces and reassembled along the same dimension (shape unchanged); without,
/// each of the group-size operands goes to one participant (a tuple result).
pub(super) fn all_to_all(
    cx: &Cx,
    attrs: &CollectiveAttrs,
    split_dimension: Option<usize>,
) -> Result<Shape> {
    let ops = arrays(cx)?;
    let groups = group_size(cx, attrs, true)?;
    match split_dimension {
        Some(d) => {
            cx.count(1)?;
            let a = ops[0];
            if d >= a.rank() {
                return Err(cx.err(format!(
                    "split dimension {d} is out of range for {}",
                    plain(a)
                )));
            }
            if let Some(n) = groups {
                if a.dims[d] % n != 0 {
                    return Err(cx.err(format!(
                        "dimension {d} of {} is not divisible among {n} participants",
                        plain(a)
                    )));
                }
            }
            Ok(plain(a))
        }
        None => {
            if let Some(n) = groups {
                cx.count(n)?;
            }
            for a in &ops[1..] {
                if !a.compatible(ops[0]) {
                    return Err(cx.err(format!(
                        "operands must have the same shape, got {} and {}",
                        plain(ops[0]),
                        plain(a)
                    )));
                }
            }
            Ok(Shape::Tuple(ops.iter().map(|a| plain(a)).collect()))
        }
    }
}

/// `collective-permute` and `collective-permute-start`, as XLA infers them.
///
/// The result is the operand, or for several operands (a combined permute)
/// the tuple of them; the in-place form (`in_place`: the `slice_sizes`
/// attribute, with four operands: input, output, input and output start
/// indices) returns its output buffer. A start's value is `(operands,
/// result, context...)`, where a combined start's element 0 is the tuple of
/// its operands, like its result, and an in-place start's is its input
/// buffer.
pub(super) fn collective_permute(
    cx: &Cx,
    pairs: &[(usize, usize)],
    in_place: bool,
    start: bool,
) -> Result<Shape> {
    cx.at_least(1)?;
    let (mut sources, mut targets) = (HashSet::new(), HashSet::new());
    for &(s, t) in pairs {
        if !sources.insert(s) || !targets.insert(t) {
            return Err(cx.err(format!(
                "source_target_pairs names source {s} or target {t} more than once"
            )));
        }
    }
    let (input, result) = if in_place {
        if cx.operands.len() != 4 {
            return Err(cx.err(format!(
                "an in-place collective permute (with slice_sizes) takes four operands \
                 (input, output, input and output start indices), not {}",
                cx.operands.len()
            )));
        }
        (
            cx.operand(0)?.without_layout(),
            cx.operand(1)?.without_layout(),
        )
    } else {
        let ops = arrays(cx)?;
        let result = one_or_tuple(ops.iter().map(|a| plain(a)).collect());
        (result.clone(), result)
    };
    if !start {
        return Ok(result);
    }
    // After (operands, result) the start form carries context values whose
    // shapes vary between XLA versions (two u32[] in older ones); they are
    // taken as declared.
    let mut elements = vec![input, result];
    elements.extend(
        cx.declared
            .tuple_shapes()
            .iter()
            .skip(2)
            .map(Shape::without_layout),
    );
    Ok(Shape::Tuple(elements))
}

pub(super) fn collective_broadcast(cx: &Cx, attrs: &CollectiveAttrs) -> Result<Shape> {
    let ops = arrays(cx)?;
    group_size(cx, attrs, true)?;
    Ok(one_or_tuple(ops.iter().map(|a| plain(a)).collect()))
}
