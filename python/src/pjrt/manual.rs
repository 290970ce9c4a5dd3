//! `shard_map` and `jax.pmap` through the plugin: the per-device program of
//! a partitioned module that is one `sdy.manual_computation`.
//!
//! jax 0.10 builds `jax.pmap` on `jit(shard_map(...))`: the program JAX
//! hands the plugin is partitioned (`num_partitions` = the devices, one
//! replica), and its entry is a manual computation over every mesh axis
//! whose operands are the entry's parameters and whose results are its
//! results. hlo-stablehlo writes that computation as XLA does before
//! partitioning: `SPMDFullToShardShape` custom calls (carrying the
//! in-shardings) around each operand, a `call` of the body, and
//! `SPMDShardToFullShape` custom calls (carrying the out-shardings) around
//! each result. When every in-sharding is its parameter's sharding and every
//! out-sharding its result's, the shard a device holds of each argument is
//! exactly the body's argument on that device, and the body's result is the
//! device's shard of each result: the body *is* the per-device program (what
//! XLA's SPMD partitioner would make of it), and its collectives and
//! `partition-id` already speak of the devices. [`per_device_program`]
//! checks that form and makes the body the module's entry; any other form
//! needs a partitioner and is refused with UNIMPLEMENTED saying what is
//! missing.

use platform_api::hlo::rewrite::remove_unreachable_computations;
use platform_api::hlo::sharding::HloSharding;
use platform_api::hlo::{HloComputation, HloModule, InstrId, Op};
use platform_api::{Error, Shape};

type Result<T> = std::result::Result<T, Error>;

const FULL_TO_SHARD: &str = "SPMDFullToShardShape";
const SHARD_TO_FULL: &str = "SPMDShardToFullShape";

fn is_custom_call(entry: &HloComputation, id: InstrId, target: &str) -> bool {
    matches!(&entry.instr(id).op, Op::CustomCall(a) if a.target == target)
}

/// `id` past the identities the StableHLO reader leaves between a manual
/// computation and the entry (same-shape reshapes from Shardy's
/// `unrealized_conversion_cast`s, copies).
fn through_identities(entry: &HloComputation, mut id: InstrId) -> InstrId {
    loop {
        let instr = entry.instr(id);
        let identity = match &instr.op {
            Op::Copy => true,
            Op::Reshape => instr
                .operands
                .first()
                .is_some_and(|&o| entry.instr(o).shape == instr.shape),
            _ => false,
        };
        match (identity, instr.operands.first()) {
            (true, Some(&o)) => id = o,
            _ => return id,
        }
    }
}

fn sharding_of(text: &Option<String>, what: &str) -> Result<HloSharding> {
    match text {
        Some(t) => HloSharding::parse(t).map_err(|e| e.context(what.to_string())),
        None => Ok(HloSharding::Replicated),
    }
}

fn unsupported(module: &HloModule, what: String) -> Error {
    Error::unimplemented(format!(
        "module {}: {what}; the hlorun PJRT plugin runs a shard_map (jax.pmap) whose \
         manual computation takes the entry's parameters and gives its results, with the \
         same shardings, and needs an SPMD partitioner (which hlorun does not have) for \
         anything else",
        module.name
    ))
}

/// The per-device program of `module` when its entry is a manual computation
/// (see the module comment); `None` when it has none; an UNIMPLEMENTED error
/// when it has one in another form. With one partition the shardings are
/// not compared (every sharding of one device is the whole array).
pub(super) fn per_device_program(
    module: &HloModule,
    partitions: usize,
) -> Result<Option<HloModule>> {
    let entry = module.entry();
    let manual = entry.ids().any(|id| {
        is_custom_call(entry, id, FULL_TO_SHARD) || is_custom_call(entry, id, SHARD_TO_FULL)
    });
    if !manual {
        return Ok(None);
    }
    let same = |a: &HloSharding, b: &HloSharding| partitions == 1 || a == b;
    // Whether `local` is a device's shard of `global` under `s`.
    let fits = |global: &Shape, local: &Shape, s: &HloSharding| -> Result<bool> {
        Ok(partitions == 1
            || match (global, local) {
                (Shape::Array(g), Shape::Array(l)) => {
                    super::shard_dims(&g.dims, s, partitions)? == l.dims
                }
                _ => false,
            })
    };
    let root = entry.root_instr();
    let leaves = match root.op {
        Op::Tuple => root.operands.clone(),
        _ => vec![entry.root],
    };
    let root_sharding = sharding_of(&root.sharding, "the ROOT's sharding")?;
    let root_parts: Vec<HloSharding> = root_sharding.leaves().into_iter().cloned().collect();
    // The one call every result comes from, result k from its result k.
    let mut call = None;
    for (k, &leaf) in leaves.iter().enumerate() {
        let full = through_identities(entry, leaf);
        if !is_custom_call(entry, full, SHARD_TO_FULL) {
            return Err(unsupported(
                module,
                format!("result {k} is computed outside the manual computation"),
            ));
        }
        let full_instr = entry.instr(full);
        let local = through_identities(entry, full_instr.operands[0]);
        let (c, index) = match &entry.instr(local).op {
            Op::GetTupleElement { index } => (entry.instr(local).operands[0], *index),
            Op::Call { .. } => (local, 0),
            _ => (local, usize::MAX),
        };
        if !matches!(entry.instr(c).op, Op::Call { .. }) || index != k && leaves.len() > 1 {
            return Err(unsupported(
                module,
                format!("result {k} is not the manual computation's result {k}"),
            ));
        }
        if call.is_some_and(|first| first != c) {
            return Err(unsupported(
                module,
                "the entry holds several manual computations".to_string(),
            ));
        }
        call = Some(c);
        let out = sharding_of(&full_instr.sharding, &format!("out-sharding {k}"))?;
        let result = match root_parts.len() {
            0 => HloSharding::Replicated,
            1 => root_parts[0].clone(),
            _ => root_parts
                .get(k)
                .cloned()
                .unwrap_or(HloSharding::Replicated),
        };
        if !same(&out, &result) || !fits(&full_instr.shape, &entry.instr(local).shape, &result)? {
            return Err(unsupported(
                module,
                format!(
                    "result {k}'s out-sharding {out} is not the result's sharding {result} \
                     (a reshard after the shard_map)"
                ),
            ));
        }
    }
    let call =
        call.ok_or_else(|| unsupported(module, "a manual computation with no results".into()))?;
    let call_instr = entry.instr(call);
    let parameters = entry.parameters();
    if call_instr.operands.len() != parameters.len() {
        return Err(unsupported(
            module,
            format!(
                "the manual computation takes {} operand(s) and the entry {} parameter(s)",
                call_instr.operands.len(),
                parameters.len()
            ),
        ));
    }
    for (i, (&operand, &parameter)) in call_instr.operands.iter().zip(&parameters).enumerate() {
        let shard = through_identities(entry, operand);
        let from = entry.instr(shard).operands.first().copied();
        if !is_custom_call(entry, shard, FULL_TO_SHARD)
            || from.map(|f| through_identities(entry, f)) != Some(parameter)
        {
            return Err(unsupported(
                module,
                format!("operand {i} of the manual computation is not parameter {i}"),
            ));
        }
        let given = sharding_of(
            &entry.instr(parameter).sharding,
            &format!("parameter {i}'s sharding"),
        )?;
        let wanted = sharding_of(&entry.instr(shard).sharding, &format!("in-sharding {i}"))?;
        if !same(&given, &wanted)
            || !fits(
                &entry.instr(parameter).shape,
                &entry.instr(shard).shape,
                &given,
            )?
        {
            return Err(unsupported(
                module,
                format!(
                    "parameter {i} is sharded {given} but the manual computation takes it as \
                     {wanted} (a reshard before the shard_map)"
                ),
            ));
        }
    }
    let Op::Call { to_apply, .. } = call_instr.op else {
        return Err(Error::internal("the manual computation is not a call"));
    };
    let mut program = module.clone();
    program.entry = to_apply;
    program.config.entry_computation_layout = None;
    program.config.num_partitions = Some(partitions);
    remove_unreachable_computations(&mut program)?;
    Ok(Some(program))
}
