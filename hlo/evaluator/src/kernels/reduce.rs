//! `reduce`: N inputs of one shape and N scalar inits, reduced over `dimensions`
//! with a computation of 2N scalar parameters `(acc_0.., x_0..)` returning N
//! scalars (a tuple when N > 1).
//!
//! Order of evaluation: XLA leaves it unspecified (the reducer is meant to be
//! associative). Here every output starts from its init and folds the input
//! elements it covers in row-major order of the input — the order XLA's own
//! `HloEvaluator` uses — so a non-associative reducer (float add) gives the
//! plain left-to-right result. The walk is a single row-major pass over the
//! input that updates the accumulator of each element's output position, which
//! visits every output's elements in exactly that order while reading the input
//! sequentially.
//!
//! A reduce over no dimensions computes `reducer(init, x)` for every element,
//! as the definition (and XLA's evaluator) says; XLA CPU's algebraic
//! simplifier instead returns the operand unchanged, which agrees whenever the
//! init is the reducer's identity, as XLA requires it to be.
//!
//! A reducer that is one binary op of its two parameters (`add`, `maximum`, ...)
//! runs as a typed loop ([`typed_binary`]); anything else runs per element
//! through [`Subcomputation`].

use super::scalar::{typed_binary, CombineError, Subcomputation, TypedBinary};
use super::util::{self, invalid, literal_from_values, operand_array, Element};
use super::CallComputation;
use hlo_ir::Op;
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result, Scalar};

/// The `reduce` kernel.
pub fn reduce(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Reduce {
        dimensions,
        to_apply,
    } = &instr.op
    else {
        return Err(invalid(instr, "not a reduce"));
    };
    if operands.is_empty() || operands.len() % 2 == 1 {
        return Err(invalid(
            instr,
            format!(
                "expects N inputs and N init values, got {} operands",
                operands.len()
            ),
        ));
    }
    let n = operands.len() / 2;
    let (_, first_shape) = operand_array(instr, operands, 0)?;
    let in_dims = first_shape.dims.clone();
    let rank = in_dims.len();
    let mut reduced = vec![false; rank];
    for &d in dimensions {
        if d >= rank || reduced[d] {
            return Err(invalid(
                instr,
                format!(
                    "dimensions {dimensions:?} are not distinct dimensions of a rank-{rank} input"
                ),
            ));
        }
        reduced[d] = true;
    }
    let out_dims: Vec<usize> = (0..rank)
        .filter(|&d| !reduced[d])
        .map(|d| in_dims[d])
        .collect();
    let mut inputs = Vec::with_capacity(n);
    let mut inits = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        let (lit, shape) = operand_array(instr, operands, i)?;
        if shape.dims != in_dims {
            return Err(invalid(
                instr,
                format!(
                    "all inputs must have one shape; input 0 is {} but input {i} is {}",
                    operands[0].shape(),
                    lit.shape()
                ),
            ));
        }
        let init = util::scalar_operand(instr, operands, n + i)?;
        if init.element_type() != shape.element_type {
            return Err(invalid(
                instr,
                format!(
                    "init value {i} has type {} but input {i} has type {}",
                    init.element_type(),
                    shape.element_type
                ),
            ));
        }
        inputs.push(lit);
        inits.push(init);
        types.push(shape.element_type);
    }
    let out_shapes: Vec<ArrayShape> = if n == 1 {
        vec![util::result_array(instr)?.clone()]
    } else {
        (0..n)
            .map(|i| util::result_tuple_element(instr, i).cloned())
            .collect::<Result<_>>()?
    };
    for (i, s) in out_shapes.iter().enumerate() {
        if s.dims != out_dims || s.element_type != types[i] {
            return Err(invalid(
                instr,
                format!(
                    "result {i} has shape {s} but reducing {} over {dimensions:?} gives {}{out_dims:?}",
                    operands[i].shape(),
                    types[i]
                ),
            ));
        }
    }

    // Offsets into the output for each input dimension (0 for reduced ones).
    let out_strides = util::strides_of(&out_dims);
    let mut in_to_out = vec![0usize; rank];
    let mut k = 0;
    for d in 0..rank {
        if !reduced[d] {
            in_to_out[d] = out_strides[k];
            k += 1;
        }
    }
    let in_strides = util::strides_of(&in_dims);

    let mut sub = Subcomputation::new(calls, *to_apply);
    let param_types: Vec<ElementType> = types.iter().chain(types.iter()).copied().collect();
    sub.check_params(&format!("reducer of %{}", instr.name), &param_types)
        .map_err(|e| invalid(instr, e.message()))?;
    if sub.num_outputs() != n {
        return Err(invalid(
            instr,
            format!(
                "reducer returns {} values for {n} inputs",
                sub.num_outputs()
            ),
        ));
    }

    if n == 1 {
        if let Some((op, swapped, ty)) = sub.as_binary() {
            let errors = CombineError::default();
            let visitor = TypedReduce {
                input: inputs[0],
                init: inits[0],
                shape: &out_shapes[0],
                in_dims: &in_dims,
                in_strides: &in_strides,
                in_to_out: &in_to_out,
            };
            if let Some(result) = typed_binary(op, ty, swapped, &errors, visitor) {
                errors.take()?;
                return result;
            }
        }
    }

    // Generic path: accumulators as scalars, the reducer evaluated per element.
    let out_count: usize = out_dims.iter().product();
    let mut acc: Vec<Scalar> = Vec::with_capacity(out_count * n);
    for _ in 0..out_count {
        acc.extend_from_slice(&inits);
    }
    let sizes: Vec<usize> = types.iter().map(|t| t.byte_size()).collect();
    let bytes: Vec<&[u8]> = inputs.iter().map(|l| l.bytes()).collect::<Result<_>>()?;
    let mut args = vec![Scalar::Pred(false); 2 * n];
    let mut result = vec![Scalar::Pred(false); n];
    let mut failure = None;
    util::walk2(&in_dims, &in_strides, &in_to_out, |src, dst| {
        if failure.is_some() {
            return;
        }
        let slot = &mut acc[dst * n..dst * n + n];
        args[..n].copy_from_slice(slot);
        for i in 0..n {
            let s = sizes[i];
            args[n + i] = Scalar::from_bytes(types[i], &bytes[i][src * s..src * s + s]);
        }
        match sub.apply(calls, &args, &mut result) {
            Ok(()) => slot.copy_from_slice(&result),
            Err(e) => failure = Some(e),
        }
    });
    if let Some(e) = failure {
        return Err(e.context(format!("%{} (reduce)", instr.name)));
    }
    let mut outputs = Vec::with_capacity(n);
    for (i, shape) in out_shapes.iter().enumerate() {
        let mut lit = Literal::zeros(&hlo_ir::Shape::Array(shape.clone()));
        for j in 0..out_count {
            let v = acc[j * n + i];
            if v.element_type() != types[i] {
                return Err(invalid(
                    instr,
                    format!(
                        "reducer returned a {} value for a {} reduction",
                        v.element_type(),
                        types[i]
                    ),
                ));
            }
            lit.set(j, v)?;
        }
        outputs.push(lit);
    }
    Ok(if n == 1 {
        outputs.pop().unwrap_or_else(Literal::token)
    } else {
        Literal::tuple(outputs)
    })
}

struct TypedReduce<'a> {
    input: &'a Literal,
    init: Scalar,
    shape: &'a ArrayShape,
    in_dims: &'a [usize],
    in_strides: &'a [usize],
    in_to_out: &'a [usize],
}

impl TypedBinary for TypedReduce<'_> {
    type Output = Result<Literal>;
    fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, f: F) -> Result<Literal> {
        let x = self.input.data::<T>()?;
        let init = T::from_scalar(self.init).unwrap_or_default();
        let mut out = vec![init; self.shape.element_count()];
        util::walk2(self.in_dims, self.in_strides, self.in_to_out, |src, dst| {
            out[dst] = f(out[dst], x[src]);
        });
        literal_from_values(self.shape, &out)
    }
}
