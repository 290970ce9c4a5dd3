//! Structure and control flow: map, get-tuple-element, while, conditional, call,
//! fusion and custom-call.

use super::{is_scalar_of, plain, signature, Cx};
use crate::error::Result;
use crate::op::CustomCallAttrs;
use crate::shape::{ElementType, ProgramShape, Shape};
use crate::CompId;

/// `map(operands...)`: applies a scalar computation elementwise.
pub(super) fn map(cx: &Cx, dimensions: &[usize], to_apply: CompId) -> Result<Shape> {
    cx.at_least(1)?;
    let first = cx.array(0, "operand 0")?;
    let mut types = Vec::with_capacity(cx.operands.len());
    for i in 0..cx.operands.len() {
        let a = cx.array(i, &format!("operand {i}"))?;
        if a.dims != first.dims {
            return Err(cx.err(format!(
                "operands must have the same dimensions, got {} and {}",
                plain(first),
                plain(a)
            )));
        }
        types.push(a.element_type);
    }
    // XLA only maps over all dimensions; its text writes them as {0,...,rank-1}.
    if !dimensions.is_empty() && !dimensions.iter().copied().eq(0..first.rank()) {
        return Err(cx.err(format!(
            "dimensions {} must be all dimensions of {} in order",
            super::dims_text(dimensions),
            plain(first)
        )));
    }
    let p = cx.program(to_apply)?;
    let params_ok = p.parameters.len() == types.len()
        && p.parameters
            .iter()
            .zip(&types)
            .all(|(s, &t)| is_scalar_of(s, t));
    let result = match &p.result {
        Shape::Array(a) if a.dims.is_empty() && params_ok => a.element_type,
        _ => {
            let expected: Vec<String> = types.iter().map(|t| format!("{t}[]")).collect();
            return Err(cx.err(format!(
                "the mapped computation {} has signature {}, expected ({}) -> a scalar",
                cx.comp_name(to_apply),
                signature(&p),
                expected.join(", ")
            )));
        }
    };
    Ok(Shape::array(result, first.dims.clone()))
}

pub(super) fn get_tuple_element(cx: &Cx, index: usize) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?;
    match s {
        Shape::Tuple(t) => t.get(index).map(Shape::without_layout).ok_or_else(|| {
            cx.err(format!(
                "index {index} is out of range for the {}-element tuple {s}",
                t.len()
            ))
        }),
        _ => Err(cx.err(format!("the operand must be a tuple, got {s}"))),
    }
}

/// Checks that `comp` takes exactly the given argument shapes (layouts ignored);
/// `role` names it in the error.
fn check_params(
    cx: &Cx,
    role: &str,
    comp: CompId,
    p: &ProgramShape,
    args: &[&Shape],
) -> Result<()> {
    let ok = p.parameters.len() == args.len()
        && p.parameters.iter().zip(args).all(|(p, a)| p.compatible(a));
    if !ok {
        let given: Vec<String> = args
            .iter()
            .map(|s| s.without_layout().to_string())
            .collect();
        return Err(cx.err(format!(
            "the {role} {} has signature {}, but is given ({})",
            cx.comp_name(comp),
            signature(p),
            given.join(", ")
        )));
    }
    Ok(())
}

/// `while(init)`: `condition: T -> pred[]`, `body: T -> T`, result `T`.
pub(super) fn while_loop(cx: &Cx, condition: CompId, body: CompId) -> Result<Shape> {
    cx.count(1)?;
    let init = cx.operand(0)?;
    let c = cx.program(condition)?;
    check_params(cx, "condition", condition, &c, &[init])?;
    if !is_scalar_of(&c.result, ElementType::Pred) {
        return Err(cx.err(format!(
            "the condition {} must return pred[], returns {}",
            cx.comp_name(condition),
            c.result
        )));
    }
    let b = cx.program(body)?;
    check_params(cx, "body", body, &b, &[init])?;
    if !b.result.compatible(init) {
        return Err(cx.err(format!(
            "the body {} returns {}, but the loop state is {}",
            cx.comp_name(body),
            b.result.without_layout(),
            init.without_layout()
        )));
    }
    Ok(init.without_layout())
}

/// `conditional(selector, operand_0, ..., operand_n-1)`: a `pred[]` selector picks
/// between two branches (true first), an `s32[]` selector indexes `n` branches.
pub(super) fn conditional(cx: &Cx, branches: &[CompId]) -> Result<Shape> {
    cx.at_least(1)?;
    let selector = cx.operand(0)?;
    let n = branches.len();
    if is_scalar_of(selector, ElementType::Pred) {
        if n != 2 {
            return Err(cx.err(format!("a pred selector needs exactly 2 branches, got {n}")));
        }
    } else if is_scalar_of(selector, ElementType::S32) {
        if n == 0 {
            return Err(cx.err("an s32 selector needs at least one branch"));
        }
    } else {
        return Err(cx.err(format!(
            "the selector must be pred[] or s32[], got {selector}"
        )));
    }
    cx.count(n + 1)?;
    let mut result: Option<Shape> = None;
    for (j, &branch) in branches.iter().enumerate() {
        let p = cx.program(branch)?;
        check_params(
            cx,
            &format!("branch {j}"),
            branch,
            &p,
            &[cx.operand(j + 1)?],
        )?;
        match &result {
            None => result = Some(p.result.without_layout()),
            Some(r) if !r.compatible(&p.result) => {
                return Err(cx.err(format!(
                    "branch 0 returns {r}, but branch {j} ({}) returns {}",
                    cx.comp_name(branch),
                    p.result.without_layout()
                )))
            }
            Some(_) => {}
        }
    }
    result.ok_or_else(|| cx.err("no branches"))
}

pub(super) fn call(cx: &Cx, to_apply: CompId) -> Result<Shape> {
    let p = cx.program(to_apply)?;
    check_params(cx, "called computation", to_apply, &p, cx.operands)?;
    Ok(p.result.without_layout())
}

/// `fusion`: the fused computation's parameters are the fusion's operands, its
/// root is the fusion's result.
pub(super) fn fusion(cx: &Cx, calls: CompId) -> Result<Shape> {
    let p = cx.program(calls)?;
    check_params(cx, "fused computation", calls, &p, cx.operands)?;
    Ok(p.result.without_layout())
}

/// `custom-call`: the target decides the result, so the declared shape is the
/// result. What can be checked is checked: operand layout constraints name one
/// compatible shape per operand, aliasing names existing sub-shapes of equal
/// shape, called computations exist.
pub(super) fn custom_call(cx: &Cx, attrs: &CustomCallAttrs) -> Result<Shape> {
    if let Some(constraints) = &attrs.operand_layout_constraints {
        if constraints.len() != cx.operands.len() {
            return Err(cx.err(format!(
                "operand_layout_constraints gives {} shapes for {} operands",
                constraints.len(),
                cx.operands.len()
            )));
        }
        for (i, (c, o)) in constraints.iter().zip(cx.operands).enumerate() {
            if !c.compatible(o) {
                return Err(cx.err(format!(
                    "operand {i} has shape {} but its layout constraint is {c}",
                    o.without_layout()
                )));
            }
        }
    }
    for alias in &attrs.output_to_operand_aliasing {
        let operand = cx.operands.get(alias.operand).ok_or_else(|| {
            cx.err(format!(
                "output_to_operand_aliasing names operand {}, but there are {}",
                alias.operand,
                cx.operands.len()
            ))
        })?;
        let out = cx.declared.subshape(&alias.output_index);
        let inp = operand.subshape(&alias.operand_index);
        match (out, inp) {
            (Some(o), Some(i)) if o.compatible(i) => {}
            _ => {
                return Err(cx.err(format!(
                    "output_to_operand_aliasing pairs output {:?} of {} with operand {} index {:?} of {}, which do not exist or differ in shape",
                    alias.output_index,
                    cx.declared.without_layout(),
                    alias.operand,
                    alias.operand_index,
                    operand.without_layout()
                )))
            }
        }
    }
    for &c in &attrs.called_computations {
        cx.program(c)?;
    }
    Ok(cx.declared.without_layout())
}
