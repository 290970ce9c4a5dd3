//! `batch-norm-training`, `batch-norm-inference` and `batch-norm-grad`.
//!
//! Statistics are taken over every dimension but `feature_index`, in `f64`,
//! and results are rounded to the operand's type once at the end: a reference
//! should not add rounding the definition does not have. The formulas are those
//! of XLA's operation semantics (the variance is the biased one).

use super::rng::float_scalar;
use super::zeros;
use hlo_ir::{ArrayShape, Error, Literal, Result};

fn to_f64s(literal: &Literal, what: &str) -> Result<Vec<f64>> {
    let ty = literal.array_shape()?.element_type;
    if !ty.is_float() {
        return Err(Error::invalid_argument(format!(
            "{what} must be floating point, got {}",
            literal.shape()
        )));
    }
    (0..literal.element_count())
        .map(|i| Ok(literal.get(i)?.to_f64_lossy()))
        .collect()
}

fn from_f64s(like: &ArrayShape, dims: &[usize], values: &[f64]) -> Result<Literal> {
    let ty = like.element_type;
    let mut out = zeros(ty, dims);
    let size = ty.byte_size();
    let bytes = out.bytes_mut()?;
    for (i, &v) in values.iter().enumerate() {
        float_scalar(ty, v)?.write_bytes(&mut bytes[i * size..(i + 1) * size]);
    }
    Ok(out)
}

/// Operand geometry: feature count, and for each element its feature.
struct Features {
    count: usize,
    inner: usize,
    per_feature: usize,
}

impl Features {
    fn new(operand: &ArrayShape, feature_index: usize) -> Result<Self> {
        if feature_index >= operand.rank() {
            return Err(Error::invalid_argument(format!(
                "feature_index {feature_index} is out of range for {operand}"
            )));
        }
        let count = operand.dims[feature_index];
        let inner = operand.dims[feature_index + 1..].iter().product();
        let per_feature = operand.element_count().checked_div(count).unwrap_or(0);
        Ok(Features {
            count,
            inner,
            per_feature,
        })
    }
    fn of(&self, linear: usize) -> usize {
        (linear / self.inner.max(1)) % self.count.max(1)
    }
    fn check(&self, v: &[f64], what: &str) -> Result<()> {
        if v.len() != self.count {
            return Err(Error::invalid_argument(format!(
                "{what} has {} elements; the operand has {} features",
                v.len(),
                self.count
            )));
        }
        Ok(())
    }
}

fn mean_and_variance(x: &[f64], f: &Features) -> (Vec<f64>, Vec<f64>) {
    let n = f.per_feature.max(1) as f64;
    let mut mean = vec![0.0; f.count];
    for (i, &v) in x.iter().enumerate() {
        mean[f.of(i)] += v;
    }
    mean.iter_mut().for_each(|m| *m /= n);
    let mut var = vec![0.0; f.count];
    for (i, &v) in x.iter().enumerate() {
        let d = v - mean[f.of(i)];
        var[f.of(i)] += d * d;
    }
    var.iter_mut().for_each(|v| *v /= n);
    (mean, var)
}

/// Returns (output, batch_mean, batch_var).
pub fn training(
    operand: &Literal,
    scale: &Literal,
    offset: &Literal,
    epsilon: f32,
    feature_index: usize,
) -> Result<(Literal, Literal, Literal)> {
    let shape = operand.array_shape()?.clone();
    let f = Features::new(&shape, feature_index)?;
    let x = to_f64s(operand, "the operand")?;
    let (scale, offset) = (to_f64s(scale, "scale")?, to_f64s(offset, "offset")?);
    f.check(&scale, "scale")?;
    f.check(&offset, "offset")?;
    let (mean, var) = mean_and_variance(&x, &f);
    let eps = epsilon as f64;
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = f.of(i);
            (v - mean[c]) * scale[c] / (var[c] + eps).sqrt() + offset[c]
        })
        .collect();
    Ok((
        from_f64s(&shape, &shape.dims, &y)?,
        from_f64s(&shape, &[f.count], &mean)?,
        from_f64s(&shape, &[f.count], &var)?,
    ))
}

pub fn inference(
    operand: &Literal,
    scale: &Literal,
    offset: &Literal,
    mean: &Literal,
    variance: &Literal,
    epsilon: f32,
    feature_index: usize,
) -> Result<Literal> {
    let shape = operand.array_shape()?.clone();
    let f = Features::new(&shape, feature_index)?;
    let x = to_f64s(operand, "the operand")?;
    let params = [
        ("scale", scale),
        ("offset", offset),
        ("mean", mean),
        ("variance", variance),
    ]
    .iter()
    .map(|(name, l)| {
        let v = to_f64s(l, name)?;
        f.check(&v, name)?;
        Ok(v)
    })
    .collect::<Result<Vec<_>>>()?;
    let (scale, offset, mean, var) = (&params[0], &params[1], &params[2], &params[3]);
    let eps = epsilon as f64;
    let y: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = f.of(i);
            (v - mean[c]) * scale[c] / (var[c] + eps).sqrt() + offset[c]
        })
        .collect();
    from_f64s(&shape, &shape.dims, &y)
}

/// Returns (grad_operand, grad_scale, grad_offset).
pub fn grad(
    operand: &Literal,
    scale: &Literal,
    mean: &Literal,
    variance: &Literal,
    grad_output: &Literal,
    epsilon: f32,
    feature_index: usize,
) -> Result<(Literal, Literal, Literal)> {
    let shape = operand.array_shape()?.clone();
    let f = Features::new(&shape, feature_index)?;
    let x = to_f64s(operand, "the operand")?;
    let dy = to_f64s(grad_output, "grad_output")?;
    if dy.len() != x.len() {
        return Err(Error::invalid_argument(format!(
            "grad_output {} does not match the operand {shape}",
            grad_output.shape()
        )));
    }
    let params = [("scale", scale), ("mean", mean), ("variance", variance)]
        .iter()
        .map(|(name, l)| {
            let v = to_f64s(l, name)?;
            f.check(&v, name)?;
            Ok(v)
        })
        .collect::<Result<Vec<_>>>()?;
    let (scale, mean, var) = (&params[0], &params[1], &params[2]);
    let eps = epsilon as f64;
    let n = f.per_feature.max(1) as f64;
    let mut sum_dy = vec![0.0; f.count];
    let mut sum_dy_xc = vec![0.0; f.count];
    for (i, (&v, &g)) in x.iter().zip(&dy).enumerate() {
        let c = f.of(i);
        sum_dy[c] += g;
        sum_dy_xc[c] += g * (v - mean[c]);
    }
    let grad_x: Vec<f64> = x
        .iter()
        .zip(&dy)
        .enumerate()
        .map(|(i, (&v, &g))| {
            let c = f.of(i);
            let ve = var[c] + eps;
            scale[c] / ve.sqrt() * (g - sum_dy[c] / n - (v - mean[c]) * sum_dy_xc[c] / (ve * n))
        })
        .collect();
    let grad_scale: Vec<f64> = (0..f.count)
        .map(|c| sum_dy_xc[c] / (var[c] + eps).sqrt())
        .collect();
    Ok((
        from_f64s(&shape, &shape.dims, &grad_x)?,
        from_f64s(&shape, &[f.count], &grad_scale)?,
        from_f64s(&shape, &[f.count], &sum_dy)?,
    ))
}
