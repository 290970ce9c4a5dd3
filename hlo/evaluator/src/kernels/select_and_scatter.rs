//! `select-and-scatter(operand, source, init)`: the gradient of a windowed
//! max/min. The result has the operand's shape and starts as `init`
//! everywhere. For each source element (row-major), its window over the
//! operand is scanned in window order: the first valid element is selected,
//! and each later element `e` replaces the selection when
//! `select(selected, e)` is false. The source value is then combined into the
//! selected position as `scatter(result[selected], source)`. A window with no
//! valid element (all padding) scatters nothing.
//!
//! The argument order of `scatter` is XLA CPU's — current result value first,
//! source value second — checked against XLA CPU with a non-commutative
//! combiner (XLA's `HloEvaluator` passes them the other way round).

use super::scalar::Subcomputation;
use super::util::{invalid, operand_array, scalar_operand};
use super::window::{self, DimWindows, Visit};
use super::CallComputation;
use hlo_ir::Op;
use hlo_ir::{HloInstruction, Literal, Result, Scalar, Shape};

/// The `select-and-scatter` kernel.
pub fn select_and_scatter(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::SelectAndScatter {
        window,
        select,
        scatter,
    } = &instr.op
    else {
        return Err(invalid(instr, "not a select-and-scatter"));
    };
    if operands.len() != 3 {
        return Err(invalid(
            instr,
            format!("expects 3 operands, got {}", operands.len()),
        ));
    }
    let (operand, operand_shape) = operand_array(instr, operands, 0)?;
    let (source, source_shape) = operand_array(instr, operands, 1)?;
    let init = scalar_operand(instr, operands, 2)?;
    let ty = operand_shape.element_type;
    if source_shape.element_type != ty || init.element_type() != ty {
        return Err(invalid(
            instr,
            format!(
                "operand {}, source {} and init {} must have one element type",
                operand.shape(),
                source.shape(),
                init.element_type()
            ),
        ));
    }
    let result_shape = super::util::result_array(instr)?;
    if result_shape.dims != operand_shape.dims || result_shape.element_type != ty {
        return Err(invalid(
            instr,
            format!(
                "result shape {} must be the operand's shape {}",
                instr.shape,
                operand.shape()
            ),
        ));
    }
    let in_dims = &operand_shape.dims;
    let src_dims = &source_shape.dims;
    window::check_window(instr, window, in_dims, src_dims)?;

    let mut select_fn = Subcomputation::new(calls, *select);
    select_fn
        .check_params(&format!("select of %{}", instr.name), &[ty, ty])
        .map_err(|e| invalid(instr, e.message()))?;
    let mut scatter_fn = Subcomputation::new(calls, *scatter);
    scatter_fn
        .check_params(&format!("scatter of %{}", instr.name), &[ty, ty])
        .map_err(|e| invalid(instr, e.message()))?;

    let windows: Vec<DimWindows> = (0..in_dims.len())
        .map(|d| DimWindows::new(in_dims[d], src_dims[d], &window.dims[d]))
        .collect();
    let size = ty.byte_size();
    let operand_bytes = operand.bytes()?;
    let source_bytes = source.bytes()?;
    let element =
        |bytes: &[u8], i: usize| Scalar::from_bytes(ty, &bytes[i * size..i * size + size]);

    let mut result = Literal::zeros(&Shape::Array(result_shape.clone()));
    {
        let out = result.bytes_mut()?;
        for chunk in out.chunks_exact_mut(size) {
            init.write_bytes(chunk);
        }
    }
    let mut selected: Option<(usize, Scalar)> = None;
    let mut failure = None;
    let out = result.bytes_mut()?;
    window::for_each_window(in_dims, src_dims, &windows, |visit| {
        if failure.is_some() {
            return;
        }
        match visit {
            Visit::Begin => selected = None,
            Visit::Element(i) => {
                let value = element(operand_bytes, i);
                match selected {
                    None => selected = Some((i, value)),
                    Some((_, current)) => match select_fn.apply1(calls, &[current, value]) {
                        Ok(Scalar::Pred(true)) => {}
                        Ok(Scalar::Pred(false)) => selected = Some((i, value)),
                        Ok(other) => {
                            failure = Some(invalid(
                                instr,
                                format!("select returned {} instead of pred", other.element_type()),
                            ))
                        }
                        Err(e) => failure = Some(e),
                    },
                }
            }
            Visit::End(s) => {
                if let Some((i, _)) = selected {
                    let current = element(out, i);
                    let src = element(source_bytes, s);
                    match scatter_fn.apply1(calls, &[current, src]) {
                        Ok(v) if v.element_type() == ty => {
                            v.write_bytes(&mut out[i * size..i * size + size])
                        }
                        Ok(v) => {
                            failure = Some(invalid(
                                instr,
                                format!("scatter returned a {} value, not {ty}", v.element_type()),
                            ))
                        }
                        Err(e) => failure = Some(e),
                    }
                }
            }
        }
    });
    if let Some(e) = failure {
        return Err(e.context(format!("%{} (select-and-scatter)", instr.name)));
    }
    Ok(result)
}
