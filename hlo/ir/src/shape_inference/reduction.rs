//! Reductions and the operations that apply a computation to pairs of elements:
//! reduce, reduce-window, select-and-scatter, scatter, sort and top-k.

use super::{
    check_dims, check_sorted, dims_text, is_scalar_of, one_or_tuple, plain, signature,
    window_output_dims, Cx,
};
use crate::attrs::{ScatterDimensionNumbers, Window};
use crate::error::Result;
use crate::shape::{ArrayShape, ElementType, Shape};
use crate::CompId;

/// Checks that `comp` combines `n = init_types.len()` values: it takes `2n` scalars
/// (the accumulators, typed like the initial values, then the new values, typed
/// like the inputs) and returns the `n` accumulators (a scalar when `n == 1`, or a
/// tuple). Returns the accumulator types and whether the result is a tuple.
pub(super) fn check_reducer(
    cx: &Cx,
    comp: CompId,
    init_types: &[ElementType],
    input_types: &[ElementType],
) -> Result<(Vec<ElementType>, bool)> {
    let n = init_types.len();
    let p = cx.program(comp)?;
    let name = cx.comp_name(comp);
    let expected = || {
        let types: Vec<String> = init_types
            .iter()
            .chain(input_types)
            .map(|t| format!("{t}[]"))
            .collect();
        let result: Vec<String> = init_types.iter().map(|t| format!("{t}[]")).collect();
        let result = if n == 1 {
            result.join("")
        } else {
            format!("({})", result.join(", "))
        };
        format!("({}) -> {result}", types.join(", "))
    };
    let wrong = |why: String| {
        cx.err(format!(
            "the reducer {name} has signature {}, expected {} ({why})",
            signature(&p),
            expected()
        ))
    };
    if p.parameters.len() != 2 * n {
        return Err(wrong(format!(
            "it must take {} parameters, takes {}",
            2 * n,
            p.parameters.len()
        )));
    }
    let (results, is_tuple): (Vec<&Shape>, bool) = match &p.result {
        Shape::Tuple(t) => (t.iter().collect(), true),
        s @ Shape::Array(_) if n == 1 => (vec![s], false),
        _ => return Err(wrong(format!("it must return {n} scalars"))),
    };
    if results.len() != n {
        return Err(wrong(format!("it must return {n} scalars")));
    }
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        if !is_scalar_of(results[i], init_types[i]) {
            return Err(wrong(format!("result {i} must be {}[]", init_types[i])));
        }
        if !is_scalar_of(&p.parameters[i], init_types[i]) {
            return Err(wrong(format!("parameter {i} must be {}[]", init_types[i])));
        }
        if !is_scalar_of(&p.parameters[n + i], input_types[i]) {
            return Err(wrong(format!(
                "parameter {} must be {}[]",
                n + i,
                input_types[i]
            )));
        }
        if input_types[i] != init_types[i] {
            return Err(wrong(format!(
                "input {i} has type {} but its initial value {}",
                input_types[i], init_types[i]
            )));
        }
        types.push(init_types[i]);
    }
    Ok((types, is_tuple))
}

/// Splits `2n` operands into `n` arrays of equal dimensions and `n` scalar initial
/// values.
fn inputs_and_inits<'a>(cx: &'a Cx) -> Result<(Vec<&'a ArrayShape>, Vec<ElementType>)> {
    let count = cx.operands.len();
    if count == 0 || count % 2 == 1 {
        return Err(cx.err(format!(
            "expects inputs followed by as many initial values (an even number of operands), got {count}"
        )));
    }
    let n = count / 2;
    let mut inputs = Vec::with_capacity(n);
    for i in 0..n {
        let a = cx.array(i, &format!("input {i}"))?;
        if let Some(first) = inputs.first() {
            let first: &&ArrayShape = first;
            if first.dims != a.dims {
                return Err(cx.err(format!(
                    "inputs must have the same dimensions, got {} and {}",
                    plain(first),
                    plain(a)
                )));
            }
        }
        inputs.push(a);
    }
    let mut inits = Vec::with_capacity(n);
    for i in n..count {
        let s = cx.operand(i)?;
        match s {
            Shape::Array(a) if a.dims.is_empty() => inits.push(a.element_type),
            _ => return Err(cx.err(format!("initial value {} must be a scalar, got {s}", i - n))),
        }
    }
    Ok((inputs, inits))
}

pub(super) fn reduce(cx: &Cx, dimensions: &[usize], to_apply: CompId) -> Result<Shape> {
    let (inputs, inits) = inputs_and_inits(cx)?;
    let first = inputs[0];
    check_dims(cx, "dimensions", dimensions, first.rank())
        .map_err(|e| cx.err(format!("{} (input {})", strip(cx, &e), plain(first))))?;
    let input_types: Vec<ElementType> = inputs.iter().map(|a| a.element_type).collect();
    let (types, is_tuple) = check_reducer(cx, to_apply, &inits, &input_types)?;
    let dims: Vec<usize> = (0..first.rank())
        .filter(|d| !dimensions.contains(d))
        .map(|d| first.dims[d])
        .collect();
    let shapes: Vec<Shape> = types
        .iter()
        .map(|&t| Shape::array(t, dims.clone()))
        .collect();
    Ok(if is_tuple {
        Shape::Tuple(shapes)
    } else {
        one_or_tuple(shapes)
    })
}

fn strip(cx: &Cx, e: &crate::Error) -> String {
    let m = e.message();
    m.strip_prefix(cx.name)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(m)
        .to_string()
}

pub(super) fn reduce_window(cx: &Cx, window: &Window, to_apply: CompId) -> Result<Shape> {
    let (inputs, inits) = inputs_and_inits(cx)?;
    let input_types: Vec<ElementType> = inputs.iter().map(|a| a.element_type).collect();
    let (types, is_tuple) = check_reducer(cx, to_apply, &inits, &input_types)?;
    let dims = window_output_dims(cx, &inputs[0].dims, window)?;
    let shapes: Vec<Shape> = types
        .iter()
        .map(|&t| Shape::array(t, dims.clone()))
        .collect();
    Ok(if is_tuple {
        Shape::Tuple(shapes)
    } else {
        one_or_tuple(shapes)
    })
}

/// `select-and-scatter(operand, source, init)`: `select` picks one element per
/// window of `operand`; `scatter` adds the window's `source` value into it.
pub(super) fn select_and_scatter(
    cx: &Cx,
    window: &Window,
    select: CompId,
    scatter: CompId,
) -> Result<Shape> {
    cx.count(3)?;
    let operand = cx.array(0, "the operand")?;
    let source = cx.array(1, "the source")?;
    let init = cx.operand(2)?;
    let t = operand.element_type;
    let sel = cx.program(select)?;
    let ok = sel.parameters.len() == 2
        && sel.parameters.iter().all(|p| is_scalar_of(p, t))
        && is_scalar_of(&sel.result, ElementType::Pred);
    if !ok {
        return Err(cx.err(format!(
            "the select computation {} has signature {}, expected ({t}[], {t}[]) -> pred[]",
            cx.comp_name(select),
            signature(&sel)
        )));
    }
    let init_type = match init {
        Shape::Array(a) if a.dims.is_empty() => a.element_type,
        _ => return Err(cx.err(format!("the initial value must be a scalar, got {init}"))),
    };
    check_reducer(cx, scatter, &[init_type], &[source.element_type])?;
    let windows = window_output_dims(cx, &operand.dims, window)?;
    if windows != source.dims || source.element_type != t {
        return Err(cx.err(format!(
            "the source {} must have one element per window position: {}",
            plain(source),
            Shape::array(t, windows)
        )));
    }
    Ok(plain(operand))
}

/// `sort(operands...)`: all operands share dimensions; the comparator takes two
/// scalars per operand and returns `pred[]`.
pub(super) fn sort(cx: &Cx, dimension: usize, comparator: CompId) -> Result<Shape> {
    cx.at_least(1)?;
    let mut arrays = Vec::with_capacity(cx.operands.len());
    for i in 0..cx.operands.len() {
        let a = cx.array(i, &format!("operand {i}"))?;
        if let Some(first) = arrays.first() {
            let first: &&ArrayShape = first;
            if first.dims != a.dims {
                return Err(cx.err(format!(
                    "operands must have the same dimensions, got {} and {}",
                    plain(first),
                    plain(a)
                )));
            }
        }
        arrays.push(a);
    }
    if dimension >= arrays[0].rank() {
        return Err(cx.err(format!(
            "dimension {dimension} is out of range for {}",
            plain(arrays[0])
        )));
    }
    let p = cx.program(comparator)?;
    let expected: Vec<String> = arrays
        .iter()
        .flat_map(|a| [a.element_type, a.element_type])
        .map(|t| format!("{t}[]"))
        .collect();
    let ok = p.parameters.len() == 2 * arrays.len()
        && p.parameters
            .iter()
            .enumerate()
            .all(|(i, s)| is_scalar_of(s, arrays[i / 2].element_type))
        && is_scalar_of(&p.result, ElementType::Pred);
    if !ok {
        return Err(cx.err(format!(
            "the comparator {} has signature {}, expected ({}) -> pred[]",
            cx.comp_name(comparator),
            signature(&p),
            expected.join(", ")
        )));
    }
    Ok(one_or_tuple(arrays.iter().map(|a| plain(a)).collect()))
}

/// `topk(operand)`: the `k` largest (or smallest) entries along the last
/// dimension, and their `s32` indices.
pub(super) fn top_k(cx: &Cx, k: usize) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let Some(&last) = a.dims.last() else {
        return Err(cx.err("the operand must have rank at least 1, got a scalar"));
    };
    if k > last {
        return Err(cx.err(format!("k={k} exceeds the last dimension of {}", plain(a))));
    }
    let mut dims = a.dims.clone();
    let r = dims.len() - 1;
    dims[r] = k;
    Ok(Shape::Tuple(vec![
        Shape::array(a.element_type, dims.clone()),
        Shape::array(ElementType::S32, dims),
    ]))
}

/// `scatter(operands..., indices, updates...)` with XLA's dimension numbers,
/// including the batching dimensions.
pub(super) fn scatter(cx: &Cx, dn: &ScatterDimensionNumbers, to_apply: CompId) -> Result<Shape> {
    let count = cx.operands.len();
    if count < 3 || count % 2 != 1 {
        return Err(cx.err(format!(
            "expects operands, scatter indices and as many updates (an odd number of at least 3 operands), got {count}"
        )));
    }
    let n = count / 2;
    let indices = cx.array(n, "the scatter indices")?;
    if !indices.element_type.is_integer() {
        return Err(cx.err(format!(
            "scatter indices must be integers, got {}",
            plain(indices)
        )));
    }
    let ivd = dn.index_vector_dim;
    if ivd > indices.rank() {
        return Err(cx.err(format!(
            "index_vector_dim {ivd} is out of range for scatter indices {}",
            plain(indices)
        )));
    }
    let mut expanded = indices.dims.clone();
    if ivd == expanded.len() {
        expanded.push(1);
    }
    let operand0 = cx.array(0, "operand 0")?;
    let update0 = cx.array(n + 1, "updates 0")?;
    let rank = operand0.rank();
    check_sorted(cx, "update_window_dims", &dn.update_window_dims)?;
    check_dims(
        cx,
        "update_window_dims",
        &dn.update_window_dims,
        update0.rank(),
    )?;
    check_sorted(cx, "inserted_window_dims", &dn.inserted_window_dims)?;
    check_dims(cx, "inserted_window_dims", &dn.inserted_window_dims, rank)?;
    check_sorted(cx, "input_batching_dims", &dn.input_batching_dims)?;
    check_dims(cx, "input_batching_dims", &dn.input_batching_dims, rank)?;
    check_dims(
        cx,
        "scatter_indices_batching_dims",
        &dn.scatter_indices_batching_dims,
        expanded.len(),
    )?;
    if dn.scatter_indices_batching_dims.contains(&ivd) {
        return Err(cx.err(format!(
            "scatter_indices_batching_dims {} must not contain index_vector_dim {ivd}",
            dims_text(&dn.scatter_indices_batching_dims)
        )));
    }
    if let Some(d) = dn
        .inserted_window_dims
        .iter()
        .chain(&dn.scatter_dims_to_operand_dims)
        .find(|d| dn.input_batching_dims.contains(d))
    {
        return Err(cx.err(format!(
            "operand dimension {d} is a batching dimension and cannot also be inserted or indexed"
        )));
    }
    if dn.input_batching_dims.len() != dn.scatter_indices_batching_dims.len() {
        return Err(cx.err(format!(
            "input_batching_dims {} and scatter_indices_batching_dims {} differ in length",
            dims_text(&dn.input_batching_dims),
            dims_text(&dn.scatter_indices_batching_dims)
        )));
    }
    let window =
        dn.update_window_dims.len() + dn.inserted_window_dims.len() + dn.input_batching_dims.len();
    if window != rank {
        return Err(cx.err(format!(
            "update_window_dims {}, inserted_window_dims {} and input_batching_dims {} must together account for the {rank} dimensions of the operand {}",
            dims_text(&dn.update_window_dims),
            dims_text(&dn.inserted_window_dims),
            dims_text(&dn.input_batching_dims),
            plain(operand0)
        )));
    }
    if dn.scatter_dims_to_operand_dims.len() != expanded[ivd] {
        return Err(cx.err(format!(
            "scatter_dims_to_operand_dims {} has {} entries, but dimension {ivd} of the scatter indices {} has size {}",
            dims_text(&dn.scatter_dims_to_operand_dims),
            dn.scatter_dims_to_operand_dims.len(),
            plain(indices),
            expanded[ivd]
        )));
    }
    check_dims(
        cx,
        "scatter_dims_to_operand_dims",
        &dn.scatter_dims_to_operand_dims,
        rank,
    )?;
    for (&o, &s) in dn
        .input_batching_dims
        .iter()
        .zip(&dn.scatter_indices_batching_dims)
    {
        if operand0.dims[o] != expanded[s] {
            return Err(cx.err(format!(
                "batching dimension {o} of the operand {} and dimension {s} of the scatter indices {} differ in size",
                plain(operand0),
                plain(indices)
            )));
        }
    }
    // Window dimensions of the updates are bounded by the operand dimensions that
    // are neither inserted nor batching; the other update dimensions equal the
    // indices' dimensions without index_vector_dim.
    let window_bounds: Vec<usize> = (0..rank)
        .filter(|d| !dn.inserted_window_dims.contains(d) && !dn.input_batching_dims.contains(d))
        .map(|d| operand0.dims[d])
        .collect();
    let scatter_bounds: Vec<usize> = (0..expanded.len())
        .filter(|&d| d != ivd)
        .map(|d| expanded[d])
        .collect();
    let expected_update_rank = scatter_bounds.len() + dn.update_window_dims.len();
    let mut operands = Vec::with_capacity(n);
    let mut update_types = Vec::with_capacity(n);
    for i in 0..n {
        let operand = cx.array(i, &format!("operand {i}"))?;
        let update = cx.array(n + 1 + i, &format!("updates {i}"))?;
        if operand.dims != operand0.dims {
            return Err(cx.err(format!(
                "operands must have the same dimensions, got {} and {}",
                plain(operand0),
                plain(operand)
            )));
        }
        if update.rank() != expected_update_rank {
            return Err(cx.err(format!(
                "updates {} must have rank {expected_update_rank} (scatter indices {}, {} window dimensions)",
                plain(update),
                plain(indices),
                dn.update_window_dims.len()
            )));
        }
        let mut window_i = window_bounds.iter();
        let mut scatter_i = scatter_bounds.iter();
        for d in 0..update.rank() {
            let size = update.dims[d];
            if dn.update_window_dims.contains(&d) {
                let bound = window_i.next().copied().unwrap_or(0);
                if size > bound {
                    return Err(cx.err(format!(
                        "window dimension {d} of updates {} exceeds the operand {}",
                        plain(update),
                        plain(operand)
                    )));
                }
            } else {
                let bound = scatter_i.next().copied().unwrap_or(0);
                if size != bound {
                    return Err(cx.err(format!(
                        "scatter dimension {d} of updates {} must match the scatter indices {}",
                        plain(update),
                        plain(indices)
                    )));
                }
            }
        }
        operands.push(plain(operand));
        update_types.push(update.element_type);
    }
    let operand_types: Vec<ElementType> =
        operands.iter().filter_map(|s| s.element_type()).collect();
    check_reducer(cx, to_apply, &operand_types, &update_types)?;
    Ok(one_or_tuple(operands))
}

/// `scan(inputs..., inits...)` with `to_apply(slices..., carries...) ->
/// (outputs..., carries...)`: the outputs stacked along `dimension`, then the
/// final carries (one value alone when `to_apply` returns one value).
pub(super) fn scan(
    cx: &Cx,
    dimension: usize,
    num_carries: usize,
    to_apply: CompId,
) -> Result<Shape> {
    let n = cx.operands.len();
    if num_carries > n {
        return Err(cx.err(format!(
            "num_carries={num_carries} exceeds the {n} operand(s)"
        )));
    }
    let inputs = n - num_carries;
    if inputs == 0 {
        return Err(cx.err(
            "a scan needs at least one input (the operands before the carries) to give its length",
        ));
    }
    let mut len = None;
    let mut expected = Vec::with_capacity(n);
    for i in 0..inputs {
        let a = cx.array(i, &format!("input {i}"))?;
        if dimension >= a.rank() {
            return Err(cx.err(format!(
                "dimension {dimension} is out of range for input {i} {}",
                plain(a)
            )));
        }
        match len {
            None => len = Some(a.dims[dimension]),
            Some(l) if l != a.dims[dimension] => {
                return Err(cx.err(format!(
                    "inputs differ in length along dimension {dimension}: {l} and {} ({})",
                    a.dims[dimension],
                    plain(a)
                )))
            }
            Some(_) => {}
        }
        let mut dims = a.dims.clone();
        dims.remove(dimension);
        expected.push(Shape::array(a.element_type, dims));
    }
    let len = len.unwrap_or(0);
    let carries: Vec<Shape> = cx.operands[inputs..]
        .iter()
        .map(|s| s.without_layout())
        .collect();
    expected.extend(carries.iter().cloned());
    let p = cx.program(to_apply)?;
    let params_ok = p.parameters.len() == expected.len()
        && p.parameters
            .iter()
            .zip(&expected)
            .all(|(got, want)| got.without_layout() == *want);
    let results: Vec<Shape> = match &p.result {
        Shape::Tuple(elements) => elements.iter().map(|s| s.without_layout()).collect(),
        single => vec![single.without_layout()],
    };
    let carries_ok =
        results.len() >= num_carries && results[results.len() - num_carries..] == carries[..];
    if !params_ok || !carries_ok {
        let want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        let carried: Vec<String> = carries.iter().map(|s| s.to_string()).collect();
        return Err(cx.err(format!(
            "{} has signature {}, expected ({}) -> (outputs..., {})",
            cx.comp_name(to_apply),
            signature(&p),
            want.join(", "),
            carried.join(", ")
        )));
    }
    let outputs = results.len() - num_carries;
    let mut shapes = Vec::with_capacity(results.len());
    for (k, r) in results[..outputs].iter().enumerate() {
        let Shape::Array(a) = r else {
            return Err(cx.err(format!("output {k} of the scan is {r}, not an array")));
        };
        if dimension > a.rank() {
            return Err(cx.err(format!(
                "dimension {dimension} is out of range for stacking output {k} {r}"
            )));
        }
        let mut dims = a.dims.clone();
        dims.insert(dimension, len);
        shapes.push(Shape::array(a.element_type, dims));
    }
    shapes.extend(carries);
    Ok(match p.result {
        Shape::Tuple(_) => Shape::Tuple(shapes),
        _ => shapes.remove(0),
    })
}
