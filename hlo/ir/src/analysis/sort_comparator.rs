//! Sort comparators that compare one key per element.
//!
//! `sort` calls its comparator with `2k` scalars, `(lhs_0, rhs_0, lhs_1,
//! rhs_1, ...)`, one pair per sorted operand. Almost every comparator a
//! framework emits is `compare(f(lhs_i), f(rhs_i))` for one operand `i` and one
//! expression `f` (the identity for `jnp.sort`, a total-order key or a negation
//! for descending sorts): the sort can then compute each element's key once and
//! sort the keys, instead of calling the comparator `n log n` times.

use crate::{CompId, HloComputation, HloModule, InstrId, Op};
use crate::{ComparisonDirection, ComparisonType};

/// Node visits the analysis may spend. Expressions are DAGs, and a tree walk of
/// a DAG can be exponential; past the budget the comparator is treated as
/// general (called per comparison), which is always correct.
const ANALYSIS_BUDGET: usize = 4096;

/// A comparator `compare(f(p_a), f(p_b))` where `p_a` and `p_b` are the two
/// elements of one operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyComparison {
    /// The sorted operand the key is computed from.
    pub operand: usize,
    /// The root of `f` on the compare's left side.
    pub key: InstrId,
    /// The parameter `key` reads: `2 * operand` (the left-hand element) unless
    /// `swapped`, then `2 * operand + 1`.
    pub key_parameter: usize,
    pub direction: ComparisonDirection,
    pub compare_type: Option<ComparisonType>,
    /// The compare's left side reads the right-hand element
    /// (`compare(f(rhs), f(lhs))`): the order is reversed.
    pub swapped: bool,
}

/// `comp`, the comparator of a sort of `num_operands` operands, as a
/// [`KeyComparison`], if it is one.
pub fn key_comparison(comp: &HloComputation, num_operands: usize) -> Option<KeyComparison> {
    if comp.num_parameters() != 2 * num_operands {
        return None;
    }
    let root = comp.instructions.get(comp.root.index())?;
    let Op::Compare {
        direction,
        compare_type,
    } = root.op
    else {
        return None;
    };
    let (&a, &b) = (root.operands.first()?, root.operands.get(1)?);
    let mut budget = ANALYSIS_BUDGET;
    let pa = first_param(comp, a, &mut budget)?;
    let (pb, swapped) = if pa % 2 == 0 {
        (pa + 1, false)
    } else {
        (pa - 1, true)
    };
    if !mirrored(comp, a, b, (pa, pb), &mut budget) {
        return None;
    }
    Some(KeyComparison {
        operand: pa / 2,
        key: a,
        key_parameter: pa,
        direction,
        compare_type,
        swapped,
    })
}

/// [`key_comparison`] of computation `id` of `module`.
pub fn module_key_comparison(
    module: &HloModule,
    id: CompId,
    num_operands: usize,
) -> Option<KeyComparison> {
    key_comparison(module.computations.get(id.index())?, num_operands)
}

fn spend(budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    true
}

/// Whether `id` depends on any parameter (conservatively true when the budget
/// runs out).
fn uses_params(comp: &HloComputation, id: InstrId, budget: &mut usize) -> bool {
    let Some(instr) = comp.instructions.get(id.index()) else {
        return true;
    };
    if !spend(budget) {
        return true;
    }
    matches!(instr.op, Op::Parameter { .. })
        || instr.operands.iter().any(|&o| uses_params(comp, o, budget))
}

/// Whether the expressions rooted at `a` and `b` are the same except that `a`
/// reads parameter `pa` where `b` reads `pb` (and neither reads any other).
fn mirrored(
    comp: &HloComputation,
    a: InstrId,
    b: InstrId,
    (pa, pb): (usize, usize),
    budget: &mut usize,
) -> bool {
    if !spend(budget) {
        return false;
    }
    if a == b {
        return !uses_params(comp, a, budget);
    }
    let (Some(x), Some(y)) = (
        comp.instructions.get(a.index()),
        comp.instructions.get(b.index()),
    ) else {
        return false;
    };
    if x.shape.without_layout() != y.shape.without_layout() {
        return false;
    }
    match (&x.op, &y.op) {
        (Op::Parameter { number: na }, Op::Parameter { number: nb }) => *na == pa && *nb == pb,
        (Op::Parameter { .. }, _) | (_, Op::Parameter { .. }) => false,
        (ox, oy) => {
            ox == oy
                && x.operands.len() == y.operands.len()
                && x.operands
                    .iter()
                    .zip(&y.operands)
                    .all(|(&p, &q)| mirrored(comp, p, q, (pa, pb), budget))
        }
    }
}

/// The first parameter number read in the cone of `id`.
fn first_param(comp: &HloComputation, id: InstrId, budget: &mut usize) -> Option<usize> {
    let instr = comp.instructions.get(id.index())?;
    if !spend(budget) {
        return None;
    }
    if let Op::Parameter { number } = instr.op {
        return Some(number);
    }
    instr
        .operands
        .iter()
        .find_map(|&o| first_param(comp, o, budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(body: &str, operands: usize) -> Option<KeyComparison> {
        let text = format!(
            "HloModule m\n\nc {{\n{body}\n}}\n\nENTRY e {{\n  ROOT p = f32[] parameter(0)\n}}\n"
        );
        let m = HloModule::parse(&text).unwrap();
        module_key_comparison(&m, m.find_computation("c").unwrap(), operands)
    }

    #[test]
    fn plain_and_keyed_comparators() {
        let k = analyse(
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nROOT r = pred[] compare(a, b), direction=LT",
            1,
        )
        .unwrap();
        assert_eq!((k.operand, k.key_parameter, k.swapped), (0, 0, false));
        // Sorting by the second operand, descending through a negation, with
        // the sides swapped.
        let k = analyse(
            "a = s32[] parameter(0)\nb = s32[] parameter(1)\nc = f32[] parameter(2)\nd = f32[] parameter(3)\n\
             nd = f32[] negate(d)\nnc = f32[] negate(c)\nROOT r = pred[] compare(nd, nc), direction=GT",
            2,
        )
        .unwrap();
        assert_eq!((k.operand, k.key_parameter, k.swapped), (1, 3, true));
        assert_eq!(k.direction, ComparisonDirection::Gt);
    }

    #[test]
    fn rejects_comparators_of_two_keys() {
        // Lexicographic on two operands: not one key.
        assert!(analyse(
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nc = f32[] parameter(2)\nd = f32[] parameter(3)\n\
             lt = pred[] compare(a, b), direction=LT\neq = pred[] compare(a, b), direction=EQ\n\
             lt2 = pred[] compare(c, d), direction=LT\nt = pred[] and(eq, lt2)\nROOT r = pred[] or(lt, t)",
            2,
        )
        .is_none());
        // Different expressions on the two sides.
        assert!(analyse(
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nna = f32[] negate(a)\nROOT r = pred[] compare(na, b), direction=LT",
            1,
        )
        .is_none());
        // A parameter count that does not fit the operand count.
        assert!(analyse(
            "a = f32[] parameter(0)\nb = f32[] parameter(1)\nROOT r = pred[] compare(a, b), direction=LT",
            2,
        )
        .is_none());
    }
}
