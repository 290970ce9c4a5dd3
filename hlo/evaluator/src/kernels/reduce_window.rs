//! `reduce-window`: N inputs and N scalar inits; every output element reduces
//! the input elements under its window (strided, padded, base- and
//! window-dilated) with a computation of 2N scalars.
//!
//! Each output starts from its init and folds its window's valid elements in
//! row-major window order (padding and dilation holes are skipped, never
//! combined as the init), as XLA's evaluator and CPU backend do.
//!
//! Two routes compute exactly that:
//! * **Prefix scan.** When one dimension's windows are all prefixes of the
//!   input (stride 1, no dilation, `padding_low >= output_size - 1` — a
//!   cumulative sum, `window={size=1xN pad=0_0xN-1_0}`) and every other
//!   dimension's window is the element itself, output `o` folds exactly the
//!   elements output `o - 1` folded and then the next few, in the same order.
//!   A running accumulator per line therefore performs the same operations in
//!   the same order as per-window evaluation — bit-identical for any reducer,
//!   in O(input) instead of O(input × window).
//! * **Direct.** Otherwise each window is folded on its own
//!   ([`window::for_each_window`]).
//!
//! Suffix windows (a reversed cumulative sum) take the direct route: folding
//! each suffix left to right admits no reuse for a non-associative reducer.
//!
//! Binary-op reducers run as typed loops ([`typed_binary`]).

use super::scalar::{typed_binary, CombineError, Subcomputation, TypedBinary};
use super::util::{self, invalid, literal_from_values, operand_array, Element};
use super::window::{self, DimWindows, Visit};
use super::CallComputation;
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result, Scalar, Shape};
use hlo_ir::{Op, Window};

/// How the outputs are computed from the windows.
enum Plan {
    /// Running fold along `dim`; output `o` covers input `0..=ends[o]`
    /// (`None`: nothing, the init).
    Scan {
        dim: usize,
        ends: Vec<Option<usize>>,
    },
    Direct(Vec<DimWindows>),
}

fn plan(window: &Window, input: &[usize], output: &[usize]) -> Plan {
    let trivial = |w: &hlo_ir::WindowDim| {
        w.size == 1
            && w.stride == 1
            && w.padding_low == 0
            && w.padding_high == 0
            && w.window_dilation == 1
            && w.base_dilation == 1
    };
    let active: Vec<usize> = (0..input.len())
        .filter(|&d| !trivial(&window.dims[d]))
        .collect();
    if let [dim] = active[..] {
        let w = &window.dims[dim];
        let (n_in, n_out) = (input[dim] as i64, output[dim] as i64);
        if w.stride == 1
            && w.window_dilation == 1
            && w.base_dilation == 1
            && n_out - 1 <= w.padding_low
        {
            let ends = (0..n_out)
                .map(|o| {
                    let end = (o - w.padding_low + w.size as i64 - 1).min(n_in - 1);
                    (end >= 0).then_some(end as usize)
                })
                .collect();
            return Plan::Scan { dim, ends };
        }
    }
    Plan::Direct(
        (0..input.len())
            .map(|d| DimWindows::new(input[d], output[d], &window.dims[d]))
            .collect(),
    )
}

/// Walks the scan lines: for every index of the other dimensions, calls
/// `line(input_base, output_base)`; positions along the scan dimension are
/// `base + i * stride` with the strides returned.
fn scan_lines(
    input: &[usize],
    output: &[usize],
    dim: usize,
    mut line: impl FnMut(usize, usize),
) -> (usize, usize) {
    let in_strides = util::strides_of(input);
    let out_strides = util::strides_of(output);
    let mut outer = output.to_vec();
    outer[dim] = 1;
    util::walk2(&outer, &in_strides, &out_strides, &mut line);
    (in_strides[dim], out_strides[dim])
}

/// The `reduce-window` kernel.
pub fn reduce_window(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::ReduceWindow { window, to_apply } = &instr.op else {
        return Err(invalid(instr, "not a reduce-window"));
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
    let (_, first) = operand_array(instr, operands, 0)?;
    let in_dims = first.dims.clone();
    let mut inputs = Vec::with_capacity(n);
    let mut inits = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        let (lit, shape) = operand_array(instr, operands, i)?;
        if shape.dims != in_dims {
            return Err(invalid(
                instr,
                format!(
                    "inputs have different shapes: {} and {}",
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
    let out_dims = out_shapes[0].dims.clone();
    for (i, s) in out_shapes.iter().enumerate() {
        if s.dims != out_dims || s.element_type != types[i] {
            return Err(invalid(
                instr,
                format!(
                    "result {i} has shape {s}, expected {}{out_dims:?}",
                    types[i]
                ),
            ));
        }
    }
    window::check_window(instr, window, &in_dims, &out_dims)?;

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
    let plan = plan(window, &in_dims, &out_dims);

    if n == 1 {
        if let Some((op, swapped, ty)) = sub.as_binary() {
            let errors = CombineError::default();
            let visitor = TypedReduceWindow {
                input: inputs[0],
                init: inits[0],
                shape: &out_shapes[0],
                in_dims: &in_dims,
                plan: &plan,
            };
            if let Some(result) = typed_binary(op, ty, swapped, &errors, visitor) {
                errors.take()?;
                return result;
            }
        }
    }

    // Generic path over scalars.
    let out_count: usize = out_dims.iter().product();
    let sizes: Vec<usize> = types.iter().map(|t| t.byte_size()).collect();
    let bytes: Vec<&[u8]> = inputs.iter().map(|l| l.bytes()).collect::<Result<_>>()?;
    let mut results: Vec<Scalar> = Vec::with_capacity(out_count * n);
    for _ in 0..out_count {
        results.extend_from_slice(&inits);
    }
    let mut acc = inits.clone();
    let mut args = vec![Scalar::Pred(false); 2 * n];
    let mut failure = None;
    let mut fold = |acc: &mut Vec<Scalar>, src: usize| {
        if failure.is_some() {
            return;
        }
        args[..n].copy_from_slice(acc);
        for i in 0..n {
            let s = sizes[i];
            args[n + i] = Scalar::from_bytes(types[i], &bytes[i][src * s..src * s + s]);
        }
        if let Err(e) = sub.apply(calls, &args, acc) {
            failure = Some(e);
        }
    };
    match &plan {
        Plan::Scan { dim, ends } => {
            let mut lines = Vec::new();
            let (in_step, out_step) =
                scan_lines(&in_dims, &out_dims, *dim, |a, b| lines.push((a, b)));
            for (in_base, out_base) in lines {
                acc.copy_from_slice(&inits);
                let mut next = 0usize;
                for (o, end) in ends.iter().enumerate() {
                    if let Some(end) = *end {
                        while next <= end {
                            fold(&mut acc, in_base + next * in_step);
                            next += 1;
                        }
                    }
                    let dst = out_base + o * out_step;
                    results[dst * n..dst * n + n].copy_from_slice(&acc);
                }
            }
        }
        Plan::Direct(windows) => {
            window::for_each_window(&in_dims, &out_dims, windows, |visit| match visit {
                Visit::Begin => acc.copy_from_slice(&inits),
                Visit::Element(src) => fold(&mut acc, src),
                Visit::End(dst) => results[dst * n..dst * n + n].copy_from_slice(&acc),
            });
        }
    }
    if let Some(e) = failure {
        return Err(e.context(format!("%{} (reduce-window)", instr.name)));
    }
    let mut outputs = Vec::with_capacity(n);
    for (i, shape) in out_shapes.iter().enumerate() {
        let mut lit = Literal::zeros(&Shape::Array(shape.clone()));
        for j in 0..out_count {
            let v = results[j * n + i];
            if v.element_type() != types[i] {
                return Err(invalid(
                    instr,
                    format!(
                        "reducer returned a {} value for a {} input",
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
        outputs.swap_remove(0)
    } else {
        Literal::tuple(outputs)
    })
}

struct TypedReduceWindow<'a> {
    input: &'a Literal,
    init: Scalar,
    shape: &'a ArrayShape,
    in_dims: &'a [usize],
    plan: &'a Plan,
}

impl TypedBinary for TypedReduceWindow<'_> {
    type Output = Result<Literal>;
    fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, f: F) -> Result<Literal> {
        let x = self.input.data::<T>()?;
        let init = T::from_scalar(self.init).unwrap_or_default();
        let out_dims = &self.shape.dims;
        let mut out = vec![init; self.shape.element_count()];
        match self.plan {
            Plan::Scan { dim, ends } => {
                let mut lines = Vec::new();
                let (in_step, out_step) =
                    scan_lines(self.in_dims, out_dims, *dim, |a, b| lines.push((a, b)));
                for (in_base, out_base) in lines {
                    let mut acc = init;
                    let mut next = 0usize;
                    for (o, end) in ends.iter().enumerate() {
                        if let Some(end) = *end {
                            while next <= end {
                                acc = f(acc, x[in_base + next * in_step]);
                                next += 1;
                            }
                        }
                        out[out_base + o * out_step] = acc;
                    }
                }
            }
            Plan::Direct(windows) => {
                let mut acc = init;
                window::for_each_window(self.in_dims, out_dims, windows, |visit| match visit {
                    Visit::Begin => acc = init,
                    Visit::Element(src) => acc = f(acc, x[src]),
                    Visit::End(dst) => out[dst] = acc,
                });
            }
        }
        literal_from_values(self.shape, &out)
    }
}
