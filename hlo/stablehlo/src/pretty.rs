//! Operations in their pretty (custom) printed form.
//!
//! Most StableHLO ops print as `name operands, keyword = value, ... {attrs} :
//! types`, which one loop reads ([`default_form`]): operands, bare
//! enumerators (`compare`'s `GT` and `FLOAT`), `keyword = value` pairs kept
//! under the keyword (`dims`, `sizes`, `low`; the conversion knows which op
//! means what by it), slice brackets, an attribute dictionary, then the type
//! signature. The ops whose syntax departs from that shape (`constant`,
//! `reduce`, `while`, `custom_call`, `call`, `composite`) have readers of
//! their own.

use hlo_ir::{Error, Result};

use crate::parser::Parser;
use crate::syntax::*;

pub(crate) fn parse_pretty(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    match op.name.as_str() {
        "stablehlo.constant" | "mhlo.constant" | "arith.constant" => constant(p, op),
        "stablehlo.reduce" => reduce(p, op),
        "stablehlo.while" => while_op(p, op),
        "stablehlo.custom_call" => custom_call(p, op),
        "func.call" | "call" => call(p, op),
        "stablehlo.composite" => composite(p, op),
        "func.return" | "return" | "stablehlo.return" => {
            default_form(p, op, false)?;
            // The types after `return` are its operands'.
            op.operand_types = std::mem::take(&mut op.result_types);
            Ok(())
        }
        _ => default_form(p, op, true),
    }
}

/// `dense<...> : tensor<...>` (or any typed attribute), with an optional
/// attribute dictionary before it.
fn constant(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    p.ws();
    if p.peek() == Some(b'{') {
        let a = p.attr_dict()?;
        op.attrs.extend(a);
    }
    let value = p.attr_value()?;
    match &value {
        Attr::Dense(_, t) => op.result_types = vec![t.clone()],
        other => {
            return Err(p.err(format!(
                "a constant's value must be a dense elements attribute, found {}",
                other.kind()
            )))
        }
    }
    op.attrs.push(("value".into(), value));
    Ok(())
}

/// The general pretty form (see the module documentation). `signature`:
/// whether a `:` and types must follow.
fn default_form(p: &mut Parser<'_>, op: &mut Operation, signature: bool) -> Result<()> {
    items(p, op, false)?;
    p.ws();
    if p.peek() == Some(b'{') {
        let a = p.attr_dict()?;
        op.attrs.extend(a);
    }
    p.ws();
    if p.peek() == Some(b':') {
        p.eat(":");
        let (ins, outs, _) = p.signature()?;
        op.operand_types = ins;
        op.result_types = outs;
    } else if signature && !op.results.is_empty() {
        return Err(p.err(format!(
            "expected ':' and the types of '{}', found {}",
            op.name,
            p.found()
        )));
    }
    Ok(())
}

/// Operands, bare enumerators, `keyword = value` pairs and bracketed slices,
/// separated by commas; inside parentheses when `nested`.
fn items(p: &mut Parser<'_>, op: &mut Operation, nested: bool) -> Result<()> {
    let mut enums = 0usize;
    loop {
        p.ws();
        match p.peek() {
            Some(b'%') => op.operands.push(p.value_ref()?),
            Some(b'(') if !nested && op.operands.is_empty() => {
                p.eat("(");
                items(p, op, true)?;
                p.expect(")")?;
            }
            Some(b'[') => {
                // `%x [0:2, 1:3:1]` (slice) or `%t[0]` (get_tuple_element).
                p.eat("[");
                slice_spec(p, op)?;
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let mark = p.mark();
                let word = p.ident()?;
                p.ws();
                if word == "applies" || word == "across" {
                    // `reduce`'s words: handled by its own reader.
                    p.reset(mark);
                    return Ok(());
                }
                if p.peek() == Some(b'=') && !p.looking_at("==") {
                    p.eat("=");
                    let v = keyword_value(p, &word)?;
                    op.attrs.push((word, v));
                } else if op.operands.is_empty() || enums > 0 || is_enum_word(&word) {
                    op.attrs.push((format!("#{enums}"), Attr::Enum(word)));
                    enums += 1;
                } else {
                    p.reset(mark);
                    return Ok(());
                }
            }
            _ => return Ok(()),
        }
        // Items are separated by commas, but an operand list in parentheses
        // or a slice bracket may be followed directly by the next item.
        p.ws();
        if p.eat(",") {
            continue;
        }
        match p.peek() {
            Some(b'[') => continue,
            Some(c) if c.is_ascii_alphabetic() && !nested => {
                let mark = p.mark();
                let _ = p.ident();
                p.ws();
                let keyword = p.peek() == Some(b'=') && !p.looking_at("==");
                p.reset(mark);
                if keyword {
                    continue;
                }
                return Ok(());
            }
            _ => return Ok(()),
        }
    }
}

/// Enumerator words that may follow operands (`compare`'s type).
fn is_enum_word(w: &str) -> bool {
    matches!(w, "FLOAT" | "TOTALORDER" | "SIGNED" | "UNSIGNED" | "NOTYPE")
}

/// A keyword's value: a list (maybe `[..] x [..]`), a dictionary, a
/// `<...>` struct, a number, a boolean or an enumerator.
fn keyword_value(p: &mut Parser<'_>, key: &str) -> Result<Attr> {
    p.ws();
    if key == "dim_numbers" {
        // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
        let mut text = String::new();
        let mut depth = 0i32;
        loop {
            match p.peek() {
                None => break,
                Some(b',') | Some(b'{') | Some(b':') if depth == 0 => break,
                Some(c) => {
                    if c == b'[' {
                        depth += 1;
                    } else if c == b']' {
                        depth -= 1;
                    }
                    text.push(c as char);
                    let m = p.mark();
                    p.reset(m + 1);
                }
            }
        }
        return Ok(Attr::Raw(text.trim().to_string()));
    }
    if p.peek() == Some(b'<') {
        // `algorithm = <lhs_precision_type = f32, ...>`.
        p.eat("<");
        let mut fields = Vec::new();
        if !p.eat(">") {
            loop {
                let k = p.ident()?;
                p.expect("=")?;
                let v = p.attr_value()?;
                fields.push((k, v));
                if p.eat(">") {
                    break;
                }
                p.expect(",")?;
            }
        }
        return Ok(Attr::Struct(key.to_string(), fields));
    }
    // A number or boolean here is untyped: a `:` after it starts the op's
    // signature (`iota dim = 0 : tensor<4xf32>`).
    let v = match p.peek() {
        Some(b'-' | b'0'..=b'9') => Attr::Int(p.i64_lit()? as i128),
        _ => match p.peek_ident().as_deref() {
            Some("true") => {
                p.ident()?;
                Attr::Bool(true)
            }
            Some("false") => {
                p.ident()?;
                Attr::Bool(false)
            }
            _ => p.attr_value()?,
        },
    };
    p.ws();
    if matches!(v, Attr::List(_)) {
        let mark = p.mark();
        if p.peek_ident().as_deref() == Some("x") {
            p.ident()?;
            p.ws();
            if p.peek() == Some(b'[') {
                let w = p.attr_value()?;
                return Ok(Attr::List(vec![v, w]));
            }
            p.reset(mark);
        }
    }
    Ok(v)
}

/// `[a:b, c:d:s]` or `[i]`, the `[` consumed.
fn slice_spec(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    let (mut starts, mut limits, mut strides) = (Vec::new(), Vec::new(), Vec::new());
    if p.eat("]") {
        op.attrs
            .push(("start_indices".into(), Attr::IntArray(starts)));
        op.attrs
            .push(("limit_indices".into(), Attr::IntArray(limits)));
        op.attrs.push(("strides".into(), Attr::IntArray(strides)));
        return Ok(());
    }
    let mut single = None;
    loop {
        let a = p.i64_lit()?;
        if p.eat(":") {
            let b = p.i64_lit()?;
            let s = if p.eat(":") { p.i64_lit()? } else { 1 };
            starts.push(a);
            limits.push(b);
            strides.push(s);
        } else {
            single = Some(a);
        }
        if p.eat("]") {
            break;
        }
        p.expect(",")?;
    }
    match single {
        Some(i) if starts.is_empty() => op.attrs.push(("index".into(), Attr::Int(i as i128))),
        Some(_) => return Err(p.err("a slice mixes ranges and single indices")),
        None => {
            op.attrs
                .push(("start_indices".into(), Attr::IntArray(starts)));
            op.attrs
                .push(("limit_indices".into(), Attr::IntArray(limits)));
            op.attrs.push(("strides".into(), Attr::IntArray(strides)));
        }
    }
    Ok(())
}

/// `stablehlo.reduce(%a init: %b), ... applies OP across dimensions = [..] :
/// sig` or `... across dimensions = [..] : sig reducer(%x: T, %y: T) ... {...}`.
/// Operands are the inputs then the inits, as in the generic form.
fn reduce(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    let mut inputs = Vec::new();
    let mut inits = Vec::new();
    loop {
        p.expect("(")?;
        inputs.push(p.value_ref()?);
        p.expect("init")?;
        p.expect(":")?;
        inits.push(p.value_ref()?);
        p.expect(")")?;
        if !p.eat(",") {
            break;
        }
    }
    op.operands = inputs;
    op.operands.extend(inits);
    p.ws();
    if p.eat("applies") {
        p.ws();
        let body = p.ident()?;
        op.attrs.push(("applies".into(), Attr::Enum(body)));
    }
    p.expect("across")?;
    p.expect("dimensions")?;
    p.expect("=")?;
    let dims = p.attr_value()?;
    op.attrs.push(("dimensions".into(), dims));
    p.ws();
    if p.peek() == Some(b'{') {
        let a = p.attr_dict()?;
        op.attrs.extend(a);
    }
    p.expect(":")?;
    let (ins, outs, _) = p.signature()?;
    op.operand_types = ins;
    op.result_types = outs;
    if p.peek_ident().as_deref() == Some("reducer") {
        p.ident()?;
        // `(%a: T, %c: T) (%b: T, %d: T)`: one pair per input, the
        // accumulator then the element; the region's arguments are all the
        // accumulators, then all the elements.
        let mut accs = Vec::new();
        let mut elems = Vec::new();
        loop {
            p.ws();
            if p.peek() != Some(b'(') {
                break;
            }
            p.eat("(");
            let a = block_arg(p)?;
            p.expect(",")?;
            let e = block_arg(p)?;
            p.expect(")")?;
            accs.push(a);
            elems.push(e);
        }
        accs.extend(elems);
        let region = p.region(accs)?;
        op.regions.push(region);
    }
    Ok(())
}

fn block_arg(p: &mut Parser<'_>) -> Result<Argument> {
    let name = p.value_name()?;
    p.expect(":")?;
    let ty = p.ty()?;
    let loc = p.opt_loc()?;
    Ok(Argument {
        name,
        ty,
        attrs: Vec::new(),
        loc,
    })
}

/// `stablehlo.while(%iterArg = %0, ...) : T, ... cond {...} do {...}`.
fn while_op(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    p.ws();
    let mut names = Vec::new();
    if p.peek() == Some(b'(') {
        p.eat("(");
        if !p.eat(")") {
            loop {
                names.push(p.value_name()?);
                p.expect("=")?;
                op.operands.push(p.value_ref()?);
                if p.eat(")") {
                    break;
                }
                p.expect(",")?;
            }
        }
    }
    p.ws();
    if p.peek() == Some(b'{') {
        let a = p.attr_dict()?;
        op.attrs.extend(a);
    }
    let mut types = Vec::new();
    if p.eat(":") {
        let (_, outs, _) = p.signature()?;
        types = outs;
    }
    if types.len() != names.len() {
        return Err(p.err(format!(
            "a while of {} values declares {} types",
            names.len(),
            types.len()
        )));
    }
    let args: Vec<Argument> = names
        .into_iter()
        .zip(&types)
        .map(|(name, ty)| Argument {
            name,
            ty: ty.clone(),
            attrs: Vec::new(),
            loc: None,
        })
        .collect();
    p.expect("cond")?;
    op.regions.push(p.region(args.clone())?);
    p.expect("do")?;
    op.regions.push(p.region(args)?);
    op.operand_types = types.clone();
    op.result_types = types;
    Ok(())
}

/// `stablehlo.custom_call @target(%a, ...) {attrs} : sig`.
fn custom_call(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    let target = p.symbol()?;
    op.attrs
        .push(("call_target_name".into(), Attr::Str(target)));
    call_rest(p, op)
}

/// `func.call @f(%a, ...) : sig`.
fn call(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    let callee = p.symbol()?;
    op.attrs.push(("callee".into(), Attr::Symbol(callee)));
    call_rest(p, op)
}

fn call_rest(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    p.expect("(")?;
    if !p.eat(")") {
        loop {
            op.operands.push(p.value_ref()?);
            if p.eat(")") {
                break;
            }
            p.expect(",")?;
        }
    }
    p.ws();
    if p.peek() == Some(b'{') {
        let a = p.attr_dict()?;
        op.attrs.extend(a);
    }
    p.expect(":")?;
    let (ins, outs, _) = p.signature()?;
    op.operand_types = ins;
    op.result_types = outs;
    Ok(())
}

/// `stablehlo.composite "name" %a, ... {attrs} : sig`.
fn composite(p: &mut Parser<'_>, op: &mut Operation) -> Result<()> {
    let name = p.string()?;
    op.attrs.push(("name".into(), Attr::Str(name)));
    default_form(p, op, true)
}

#[allow(dead_code)]
fn unsupported(op: &Operation) -> Error {
    Error::unimplemented(format!("{}: op '{}' is not supported", op.pos, op.name))
}
