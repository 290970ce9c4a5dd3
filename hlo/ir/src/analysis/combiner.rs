//! Scalar computations that combine two values: reducers (`reduce`,
//! `reduce-window`, `all-reduce`), scatter combiners, select-and-scatter's
//! scatter. Most are one binary op of their two parameters (`add(p0, p1)`),
//! which a backend runs as a typed loop instead of calling a computation per
//! element; a scatter combiner that returns its second parameter is a plain
//! overwrite.

use crate::opcode::BinaryOp;
use crate::shape::{ElementType, Shape};
use crate::{HloComputation, InstrId, Op};

/// A computation whose root is `op` applied to its two scalar parameters,
/// both of type `ty`, as is the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryCombiner {
    pub op: BinaryOp,
    /// The root reads `op(p1, p0)` rather than `op(p0, p1)`. Only matters for
    /// an op that is not commutative.
    pub swapped: bool,
    pub ty: ElementType,
}

impl BinaryCombiner {
    /// Whether `op(a, b)` is what the computation computes of `(p0, p1) = (a, b)`
    /// with the operands in that order (not swapped, or swapped but
    /// commutative).
    pub fn in_order(&self) -> bool {
        !self.swapped || self.op.is_commutative()
    }
}

/// The element type of a rank-0 array shape.
fn scalar_type(shape: &Shape) -> Option<ElementType> {
    shape
        .as_array()
        .filter(|a| a.rank() == 0)
        .map(|a| a.element_type)
}

/// `comp` as a [`BinaryCombiner`], if it is one: exactly two parameters, both
/// scalars of the root's type, and a root that is a binary op reading each of
/// them once.
pub fn binary_combiner(comp: &HloComputation) -> Option<BinaryCombiner> {
    let params = comp.parameters();
    if params.len() != 2 {
        return None;
    }
    let root = comp.instructions.get(comp.root.index())?;
    let Op::Binary(op) = root.op else {
        return None;
    };
    let ty = scalar_type(&root.shape)?;
    let param_number = |id: InstrId| -> Option<usize> {
        let instr = comp.instructions.get(id.index())?;
        match instr.op {
            Op::Parameter { number } if scalar_type(&instr.shape) == Some(ty) => Some(number),
            _ => None,
        }
    };
    let (a, b) = (
        param_number(*root.operands.first()?)?,
        param_number(*root.operands.get(1)?)?,
    );
    match (a, b) {
        (0, 1) => Some(BinaryCombiner {
            op,
            swapped: false,
            ty,
        }),
        (1, 0) => Some(BinaryCombiner {
            op,
            swapped: true,
            ty,
        }),
        _ => None,
    }
}

/// The number of the parameter `comp` returns unchanged, if its root is a
/// parameter and every parameter is a scalar (scatter's "replace" combiner
/// returns parameter 1).
pub fn returned_parameter(comp: &HloComputation) -> Option<usize> {
    let root = comp.instructions.get(comp.root.index())?;
    let Op::Parameter { number } = root.op else {
        return None;
    };
    comp.parameters()
        .iter()
        .all(|&p| {
            comp.instructions
                .get(p.index())
                .is_some_and(|i| scalar_type(&i.shape).is_some())
        })
        .then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HloModule;

    fn analyse(body: &str) -> (Option<BinaryCombiner>, Option<usize>) {
        let text = format!(
            "HloModule m\n\nc {{\n{body}\n}}\n\nENTRY e {{\n  ROOT p = f32[] parameter(0)\n}}\n"
        );
        let m = HloModule::parse(&text).unwrap();
        let c = m.computation(m.find_computation("c").unwrap());
        (binary_combiner(c), returned_parameter(c))
    }

    #[test]
    fn recognises_binary_ops_of_the_parameters() {
        let (b, _) =
            analyse("a = f32[] parameter(0)\nb = f32[] parameter(1)\nROOT r = f32[] add(a, b)");
        assert_eq!(
            b,
            Some(BinaryCombiner {
                op: BinaryOp::Add,
                swapped: false,
                ty: ElementType::F32
            })
        );
        let (b, _) = analyse(
            "a = s32[] parameter(0)\nb = s32[] parameter(1)\nROOT r = s32[] subtract(b, a)",
        );
        let b = b.unwrap();
        assert!(b.swapped && !b.in_order());
        let (b, _) =
            analyse("a = f32[] parameter(0)\nb = f32[] parameter(1)\nROOT r = f32[] maximum(b, a)");
        assert!(b.unwrap().in_order());
    }

    #[test]
    fn rejects_everything_else() {
        // The same parameter twice, a constant, mixed types, a non-scalar.
        for body in [
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nROOT r = f32[] add(a, a)",
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nc = f32[] constant(1)\nROOT r = f32[] add(a, c)",
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\ns = f32[] negate(b)\nROOT r = f32[] add(a, s)",
            "a = f32[2] parameter(0)\nb = f32[2] parameter(1)\nROOT r = f32[2] add(a, b)",
        ] {
            assert_eq!(analyse(body).0, None, "{body}");
        }
    }

    #[test]
    fn recognises_a_returned_parameter() {
        let (b, p) = analyse("a = f32[] parameter(0)\nROOT b = f32[] parameter(1)");
        assert_eq!((b, p), (None, Some(1)));
        let (_, p) = analyse("a = f32[2] parameter(0)\nROOT b = f32[] parameter(1)");
        assert_eq!(p, None);
    }
}
