//! Floating-point contraction: `a * b + c` with one rounding, as XLA CPU emits it.
//!
//! HLO defines `multiply` and `add` as separately rounded operations, but XLA CPU
//! compiles its fused loops with LLVM allowed to fuse a multiply into the add or
//! subtract that consumes it (`FPOpFusion::Fast`). On x86 with FMA this turns
//! `add(multiply(x, y), z)` into one `fma(x, y, z)` whenever the multiply has no
//! other use. A chaotic loop (the conformance case `fori_loop`) amplifies the
//! difference past any sensible tolerance, and emulating the fused form
//! reproduces XLA CPU's output bit for bit.
//!
//! This module is the arithmetic; deciding *which* multiply contracts into which
//! add is [`contraction_candidate`]'s rule, shared by every backend that offers
//! the `fp_contract=xla` compile option so they agree with each other and with XLA.

use hlo_ir::shape::ElementType;
use hlo_ir::{BinaryOp, HloComputation, InstrId, Op};
use hlo_ir::{Error, Literal, Result};

/// Reads the `fp_contract` compile option every contracting backend offers:
/// unset, `xla`, `on` or `true` contract like XLA CPU (the default); `off` or
/// `false` round every operation separately.
pub fn fp_contract_option(value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("xla") | Some("on") | Some("true") => Ok(true),
        Some("off") | Some("false") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "fp_contract must be xla (the default) or off, not \"{other}\""
        ))),
    }
}

/// How an add or subtract absorbs a multiply (one rounding for the whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contraction {
    /// `add(mul(a, b), c)` or `add(c, mul(a, b))`: `fma(a, b, c)`.
    Add,
    /// `subtract(mul(a, b), c)`: `fma(a, b, -c)`.
    SubtractFromProduct,
    /// `subtract(c, mul(a, b))`: `fma(-a, b, c)`.
    SubtractProduct,
}

/// The multiply operand (0 or 1) of `instr` that contracts into it, if any, and
/// how. The rule mirrors LLVM's DAG combiner without aggressive fusion (x86): the
/// instruction is an f32/f64 `add` or `subtract`; the candidate is a `multiply` of
/// the same shape used exactly once (`use_counts`, live uses only) and not the
/// computation's root; the left operand is tried first.
pub fn contraction_candidate(
    comp: &HloComputation,
    id: InstrId,
    use_counts: &[u32],
) -> Option<(usize, Contraction)> {
    let instr = comp.instructions.get(id.index())?;
    let op = match instr.op {
        Op::Binary(op @ (BinaryOp::Add | BinaryOp::Subtract)) => op,
        _ => return None,
    };
    if !matches!(
        instr.shape.element_type(),
        Some(ElementType::F32 | ElementType::F64)
    ) {
        return None;
    }
    let contractible = |k: usize| -> bool {
        let Some(&operand) = instr.operands.get(k) else {
            return false;
        };
        let Some(m) = comp.instructions.get(operand.index()) else {
            return false;
        };
        matches!(m.op, Op::Binary(BinaryOp::Multiply))
            && m.shape.compatible(&instr.shape.without_layout())
            && use_counts.get(operand.index()) == Some(&1)
            && operand != comp.root
            && m.operands.len() == 2
    };
    for k in 0..2 {
        if contractible(k) {
            let how = match (op, k) {
                (BinaryOp::Add, _) => Contraction::Add,
                (_, 0) => Contraction::SubtractFromProduct,
                _ => Contraction::SubtractProduct,
            };
            return Some((k, how));
        }
    }
    None
}

/// `a * b + c` elementwise with a single rounding, arranged as `how` says (`c` is
/// the add/subtract's other operand). All three are f32 or f64 arrays of one shape.
pub fn fused_multiply_add(
    how: Contraction,
    a: &Literal,
    b: &Literal,
    c: &Literal,
) -> Result<Literal> {
    let shape = a.shape().without_layout();
    if !b.shape().compatible(&shape) || !c.shape().compatible(&shape) {
        return Err(Error::invalid_argument(format!(
            "fused multiply-add of {}, {} and {}: shapes differ",
            a.shape(),
            b.shape(),
            c.shape()
        )));
    }
    let mut out = Literal::zeros(&shape);
    fn run<T: Copy + std::ops::Neg<Output = T>>(
        how: Contraction,
        a: &[T],
        b: &[T],
        c: &[T],
        out: &mut [T],
        fma: impl Fn(T, T, T) -> T,
    ) {
        for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
            *o = match how {
                Contraction::Add => fma(x, y, z),
                Contraction::SubtractFromProduct => fma(x, y, -z),
                Contraction::SubtractProduct => fma(-x, y, z),
            };
        }
    }
    match shape.element_type() {
        Some(ElementType::F32) => run(
            how,
            a.data::<f32>()?,
            b.data::<f32>()?,
            c.data::<f32>()?,
            out.data_mut::<f32>()?,
            f32::mul_add,
        ),
        Some(ElementType::F64) => run(
            how,
            a.data::<f64>()?,
            b.data::<f64>()?,
            c.data::<f64>()?,
            out.data_mut::<f64>()?,
            f64::mul_add,
        ),
        _ => {
            return Err(Error::invalid_argument(format!(
                "fused multiply-add is defined for f32 and f64, not {}",
                a.shape()
            )))
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rounding_differs_from_two() {
        // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: separately rounded, the 2^-24 is lost.
        let x = 1.0f32 + 2f32.powi(-12);
        let a = Literal::vector(&[x]);
        let c = Literal::vector(&[-1.0f32]);
        let fused = fused_multiply_add(Contraction::Add, &a, &a, &c).unwrap();
        let got = fused.data::<f32>().unwrap()[0];
        assert_eq!(got, 2f32.powi(-11) + 2f32.powi(-24));
        assert_ne!(got, x * x - 1.0);
        let sub = fused_multiply_add(
            Contraction::SubtractProduct,
            &a,
            &a,
            &Literal::vector(&[1.0f32]),
        )
        .unwrap();
        assert_eq!(
            sub.data::<f32>().unwrap()[0],
            -(2f32.powi(-11) + 2f32.powi(-24))
        );
    }

    #[test]
    fn candidate_rule() {
        let m = hlo_ir::HloModule::parse(
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  m0 = f32[2] multiply(a, b)\n  m1 = f32[2] multiply(b, b)\n  s = f32[2] add(m0, m1)\n  t = f32[2] subtract(a, m1)\n  ROOT r = (f32[2], f32[2]) tuple(s, t)\n}\n",
        )
        .unwrap();
        let comp = m.entry();
        let uses = [2, 3, 1, 2, 1, 1, 0];
        // m1 has two uses: only m0 contracts into s; t keeps its multiply.
        assert_eq!(
            contraction_candidate(comp, InstrId(4), &uses),
            Some((0, Contraction::Add))
        );
        assert_eq!(contraction_candidate(comp, InstrId(5), &uses), None);
        let uses = [2, 3, 1, 1, 1, 1, 0];
        assert_eq!(
            contraction_candidate(comp, InstrId(5), &uses),
            Some((1, Contraction::SubtractProduct))
        );
    }
}
