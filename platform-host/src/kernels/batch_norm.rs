//! `batch-norm-training`, `batch-norm-inference`, `batch-norm-grad` and `map`.
//!
//! Batch norm statistics are taken over every dimension but `feature_index`,
//! accumulated in f64 and rounded once (the variance is the biased one, as
//! XLA's expansion computes it). `map` applies its scalar computation to every
//! element through the vectorized scalar evaluator.

use super::scalar_program::ScalarProgram;
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, Thunk};
use platform_api::hlo::{InstrId, Op};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

/// Reads a float array as f64.
///
/// # Safety
/// `p` must hold `n` elements of `ty` (a float type).
unsafe fn read(ty: ElementType, p: *const u8, n: usize) -> Vec<f64> {
    // SAFETY: forwarded.
    unsafe {
        match ty {
            ElementType::F32 => std::slice::from_raw_parts(p.cast::<f32>(), n)
                .iter()
                .map(|&v| v as f64)
                .collect(),
            ElementType::F64 => std::slice::from_raw_parts(p.cast::<f64>(), n).to_vec(),
            ElementType::F16 => std::slice::from_raw_parts(p.cast::<half::f16>(), n)
                .iter()
                .map(|v| v.to_f64())
                .collect(),
            _ => std::slice::from_raw_parts(p.cast::<half::bf16>(), n)
                .iter()
                .map(|v| v.to_f64())
                .collect(),
        }
    }
}

/// Writes f64 values as a float array.
///
/// # Safety
/// `p` must have room for `v.len()` elements of `ty`.
unsafe fn write(ty: ElementType, v: &[f64], p: *mut u8) {
    // SAFETY: forwarded.
    unsafe {
        for (i, &x) in v.iter().enumerate() {
            match ty {
                ElementType::F32 => p.cast::<f32>().add(i).write(x as f32),
                ElementType::F64 => p.cast::<f64>().add(i).write(x),
                ElementType::F16 => p.cast::<half::f16>().add(i).write(half::f16::from_f64(x)),
                _ => p.cast::<half::bf16>().add(i).write(half::bf16::from_f64(x)),
            }
        }
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    if let Op::Map { to_apply, .. } = &instr.op {
        return map(ctx, id, *to_apply);
    }
    let (epsilon, feature_index) = match &instr.op {
        Op::BatchNormTraining {
            epsilon,
            feature_index,
        }
        | Op::BatchNormInference {
            epsilon,
            feature_index,
        }
        | Op::BatchNormGrad {
            epsilon,
            feature_index,
        } => (*epsilon as f64, *feature_index),
        _ => return Err(Error::internal("not a batch-norm op")),
    };
    let x = ctx.operand_array(instr, 0)?;
    if !x.element_type.is_float() || feature_index >= x.rank() {
        return Err(Error::invalid_argument(format!(
            "{} %{}: needs a float operand with feature dimension {feature_index}, got {x}",
            instr.opcode(),
            instr.name
        )));
    }
    let ty = x.element_type;
    let c = x.dims[feature_index];
    let inner: usize = x.dims[feature_index + 1..].iter().product();
    let count = x.element_count();
    let per_feature = (count / c.max(1)).max(1) as f64;
    let feature_of = move |i: usize| (i / inner.max(1)) % c.max(1);
    let mut operands: Vec<BufferSlice> = Vec::new();
    for k in 0..instr.operands.len() {
        let a = ctx.operand_array(instr, k)?;
        let want = if k == 0 || (matches!(instr.op, Op::BatchNormGrad { .. }) && k == 4) {
            count
        } else {
            c
        };
        if a.element_count() != want || a.element_type != ty {
            return Err(Error::invalid_argument(format!(
                "{} %{}: operand {k} is {a}, expected {want} {ty} elements",
                instr.opcode(),
                instr.name
            )));
        }
        operands.push(ctx.operand_slice(instr, k)?);
    }
    let results: Vec<BufferSlice> = ctx.result_leaves(id).to_vec();
    let kind = instr.opcode();
    Ok(thunk(instr.name.clone(), kind.name(), move |ctx| {
        // SAFETY: operands were checked to hold the element counts read here.
        let get = |k: usize, n: usize| unsafe { read(ty, ctx.ptr(operands[k]), n) };
        let stats = |xs: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let mut mean = vec![0.0; c];
            for (i, &v) in xs.iter().enumerate() {
                mean[feature_of(i)] += v;
            }
            mean.iter_mut().for_each(|m| *m /= per_feature);
            let mut var = vec![0.0; c];
            for (i, &v) in xs.iter().enumerate() {
                let d = v - mean[feature_of(i)];
                var[feature_of(i)] += d * d;
            }
            var.iter_mut().for_each(|v| *v /= per_feature);
            (mean, var)
        };
        let put = |k: usize, v: &[f64]| {
            // SAFETY: result leaf `k` holds `v.len()` elements of `ty`.
            unsafe { write(ty, v, ctx.ptr(results[k])) }
        };
        match kind {
            platform_api::hlo::Opcode::BatchNormTraining => {
                let (xs, scale, offset) = (get(0, count), get(1, c), get(2, c));
                let (mean, var) = stats(&xs);
                let out: Vec<f64> = xs
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let f = feature_of(i);
                        (v - mean[f]) / (var[f] + epsilon).sqrt() * scale[f] + offset[f]
                    })
                    .collect();
                put(0, &out);
                put(1, &mean);
                put(2, &var);
            }
            platform_api::hlo::Opcode::BatchNormInference => {
                let (xs, scale, offset, mean, var) =
                    (get(0, count), get(1, c), get(2, c), get(3, c), get(4, c));
                let out: Vec<f64> = xs
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| {
                        let f = feature_of(i);
                        (v - mean[f]) / (var[f] + epsilon).sqrt() * scale[f] + offset[f]
                    })
                    .collect();
                put(0, &out);
            }
            _ => {
                let (xs, scale, mean, var, dy) = (
                    get(0, count),
                    get(1, c),
                    get(2, c),
                    get(3, c),
                    get(4, count),
                );
                let mut sum_dy = vec![0.0; c];
                let mut sum_dy_xc = vec![0.0; c];
                for i in 0..count {
                    let f = feature_of(i);
                    sum_dy[f] += dy[i];
                    sum_dy_xc[f] += dy[i] * (xs[i] - mean[f]);
                }
                let inv_std: Vec<f64> = var.iter().map(|v| 1.0 / (v + epsilon).sqrt()).collect();
                let grad_x: Vec<f64> = (0..count)
                    .map(|i| {
                        let f = feature_of(i);
                        scale[f] * inv_std[f] / per_feature
                            * (per_feature * dy[i]
                                - sum_dy[f]
                                - (xs[i] - mean[f]) * sum_dy_xc[f] * inv_std[f] * inv_std[f])
                    })
                    .collect();
                let grad_scale: Vec<f64> = (0..c).map(|f| sum_dy_xc[f] * inv_std[f]).collect();
                put(0, &grad_x);
                put(1, &grad_scale);
                put(2, &sum_dy);
            }
        }
        Ok(())
    }))
}

fn map(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    to_apply: platform_api::hlo::CompId,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    let n = result.element_count();
    let program = Arc::new(ScalarProgram::compile(ctx.module, to_apply)?);
    if program.param_count() != instr.operands.len()
        || program.output_types() != [result.element_type]
    {
        return Err(Error::invalid_argument(format!(
            "map %{}: the computation must take {} scalars and return one {}",
            instr.name,
            instr.operands.len(),
            result.element_type
        )));
    }
    let mut inputs = Vec::new();
    let mut widths = Vec::new();
    for k in 0..instr.operands.len() {
        let a = ctx.operand_array(instr, k)?;
        if a.element_count() != n || Some(&a.element_type) != program.param_types().get(k) {
            return Err(Error::invalid_argument(format!(
                "map %{}: operand {k} is {a}",
                instr.name
            )));
        }
        inputs.push(ctx.operand_slice(instr, k)?);
        widths.push(a.element_type.byte_size());
    }
    let out = ctx.result_slice(id)?;
    let out_width = result.element_type.byte_size();
    Ok(thunk(instr.name.clone(), "map", move |ctx| {
        let ins: Vec<usize> = inputs.iter().map(|s| ctx.ptr(*s) as usize).collect();
        let po = ctx.ptr(out) as usize;
        parallel_for(n, 1 << 13, |s, e| {
            let params: Vec<*const u8> = ins
                .iter()
                .zip(&widths)
                .map(|(&p, &w)| (p + s * w) as *const u8)
                .collect();
            // SAFETY: each operand holds `n` elements; this task reads and
            // writes positions s..e.
            unsafe { program.eval_batch(&params, e - s, 0, (po + s * out_width) as *mut u8) };
        });
        Ok(())
    }))
}
