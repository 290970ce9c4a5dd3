//! Tokens, randomness, host communication and asynchronous wrappers: after-all,
//! add-dependency, rng, rng-bit-generator, infeed/outfeed, send/recv,
//! async-start/update/done and copy-start/done.
//!
//! No platform runs the host-communication and async operations yet; their rules
//! follow XLA's verifier so that valid XLA output verifies.

use super::{plain, signature, Cx};
use crate::attrs::RandomDistribution;
use crate::error::Result;
use crate::shape::{ElementType, Shape};
use crate::CompId;

fn token_operand(cx: &Cx, i: usize) -> Result<()> {
    let s = cx.operand(i)?;
    if !s.is_token() {
        return Err(cx.err(format!("operand {i} must be a token, got {s}")));
    }
    Ok(())
}

pub(super) fn after_all(cx: &Cx) -> Result<Shape> {
    for i in 0..cx.operands.len() {
        token_operand(cx, i)?;
    }
    Ok(Shape::Token)
}

/// `add-dependency(value, token)`: the value, ordered after the token.
pub(super) fn add_dependency(cx: &Cx) -> Result<Shape> {
    cx.count(2)?;
    token_operand(cx, 1)?;
    Ok(cx.operand(0)?.without_layout())
}

/// `rng(a, b)`: scalars bounding (uniform) or parameterising (normal) the values;
/// the declared shape gives the dimensions.
pub(super) fn rng(cx: &Cx, distribution: RandomDistribution) -> Result<Shape> {
    cx.count(2)?;
    let a = cx.array(0, "operand 0")?;
    let b = cx.array(1, "operand 1")?;
    if !a.dims.is_empty() || !b.dims.is_empty() || a.element_type != b.element_type {
        return Err(cx.err(format!(
            "the operands must be scalars of one type, got {} and {}",
            plain(a),
            plain(b)
        )));
    }
    let t = a.element_type;
    let ok = match distribution {
        RandomDistribution::Uniform => !t.is_complex(),
        RandomDistribution::Normal => t.is_float(),
    };
    if !ok {
        return Err(cx.err(format!(
            "{distribution} does not produce values of type {t}"
        )));
    }
    let out = cx.declared_array()?;
    Ok(Shape::array(t, out.dims.clone()))
}

/// `rng-bit-generator(state)`: `(new state, random bits)`, the bits' shape as
/// declared.
pub(super) fn rng_bit_generator(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let state = cx.array(0, "the state")?;
    let values = match cx.declared.tuple_shapes() {
        [_, Shape::Array(v)] => v,
        _ => {
            return Err(cx.err(format!(
                "the result must be a (state, values) tuple, declared {}",
                cx.declared
            )))
        }
    };
    if !(values.element_type.is_integer() || values.element_type.is_float()) {
        return Err(cx.err(format!(
            "the generated values must be integers or floats, declared {}",
            plain(values)
        )));
    }
    Ok(Shape::Tuple(vec![plain(state), plain(values)]))
}

/// The `index`-th element of the tuple-shaped operand (`all-gather-done`,
/// `collective-permute-done`, `async-done`).
pub(super) fn tuple_element_of_operand(cx: &Cx, index: usize) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?;
    s.tuple_shapes()
        .get(index)
        .map(Shape::without_layout)
        .ok_or_else(|| {
            cx.err(format!(
                "the operand must be a tuple with an element {index}, got {s}"
            ))
        })
}

/// `infeed(token)`: `(data, token)` with the data shape as declared.
pub(super) fn infeed(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    token_operand(cx, 0)?;
    match cx.declared.tuple_shapes() {
        [data, Shape::Token] => Ok(Shape::Tuple(vec![data.without_layout(), Shape::Token])),
        _ => Err(cx.err(format!(
            "the result must be a (data, token) tuple, declared {}",
            cx.declared
        ))),
    }
}

/// `outfeed(data, token)`: a token.
pub(super) fn outfeed(cx: &Cx, outfeed_shape: Option<&Shape>) -> Result<Shape> {
    cx.count(2)?;
    token_operand(cx, 1)?;
    let data = cx.operand(0)?;
    if let Some(s) = outfeed_shape {
        if !s.compatible(data) {
            return Err(cx.err(format!(
                "outfeed_shape {s} differs from the data's shape {}",
                data.without_layout()
            )));
        }
    }
    Ok(Shape::Token)
}

/// `send(data, token)`: `(data, u32[] context, token)`.
pub(super) fn send(cx: &Cx) -> Result<Shape> {
    cx.count(2)?;
    token_operand(cx, 1)?;
    Ok(Shape::Tuple(vec![
        cx.operand(0)?.without_layout(),
        Shape::scalar(ElementType::U32),
        Shape::Token,
    ]))
}

pub(super) fn send_done(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    if cx.operand(0)?.tuple_shapes().len() < 2 {
        return Err(cx.err(format!(
            "the operand must be a send's tuple, got {}",
            cx.operand(0)?
        )));
    }
    Ok(Shape::Token)
}

/// `recv(token)`: `(data, u32[] context, token)` with the data shape as declared.
pub(super) fn recv(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    token_operand(cx, 0)?;
    match cx.declared.tuple_shapes() {
        [data, ..] => Ok(Shape::Tuple(vec![
            data.without_layout(),
            Shape::scalar(ElementType::U32),
            Shape::Token,
        ])),
        _ => Err(cx.err(format!(
            "the result must be a (data, u32[], token) tuple, declared {}",
            cx.declared
        ))),
    }
}

/// `recv-done(recv)`: `(data, token)`.
pub(super) fn recv_done(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?;
    match s.tuple_shapes().first() {
        Some(data) => Ok(Shape::Tuple(vec![data.without_layout(), Shape::Token])),
        None => Err(cx.err(format!("the operand must be a recv's tuple, got {s}"))),
    }
}

/// `async-start(operands...)`: `((operands...), result, context...)` where the
/// wrapped computation takes the operands and returns the result; context shapes
/// are taken as declared.
pub(super) fn async_start(cx: &Cx, calls: CompId) -> Result<Shape> {
    let p = cx.program(calls)?;
    let ok = p.parameters.len() == cx.operands.len()
        && p.parameters
            .iter()
            .zip(cx.operands)
            .all(|(p, o)| p.compatible(o));
    if !ok {
        let given: Vec<String> = cx
            .operands
            .iter()
            .map(|s| s.without_layout().to_string())
            .collect();
        return Err(cx.err(format!(
            "the wrapped computation {} has signature {}, but is given ({})",
            cx.comp_name(calls),
            signature(&p),
            given.join(", ")
        )));
    }
    let mut elements = vec![
        Shape::Tuple(cx.operands.iter().map(|s| s.without_layout()).collect()),
        p.result.without_layout(),
    ];
    elements.extend(
        cx.declared
            .tuple_shapes()
            .iter()
            .skip(2)
            .map(Shape::without_layout),
    );
    Ok(Shape::Tuple(elements))
}

pub(super) fn async_update(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?;
    if s.tuple_shapes().len() < 2 {
        return Err(cx.err(format!(
            "the operand must be an async tuple of at least two elements, got {s}"
        )));
    }
    Ok(s.without_layout())
}

/// `copy-start(operand)`: `(destination, source, u32[] context)`.
pub(super) fn copy_start(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?.without_layout();
    Ok(Shape::Tuple(vec![
        s.clone(),
        s,
        Shape::scalar(ElementType::U32),
    ]))
}

/// `copy-done(copy-start)`: the destination.
pub(super) fn copy_done(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let s = cx.operand(0)?;
    match s.tuple_shapes() {
        [dest, src, ..] if dest.compatible(src) => Ok(dest.without_layout()),
        _ => Err(cx.err(format!(
            "the operand must be a copy-start tuple (destination, source, ...) of equal shapes, got {s}"
        ))),
    }
}
