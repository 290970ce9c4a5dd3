//! Scalars in generated C: storage types, literals, one element operation as
//! a C statement, and a scalar computation (a reducer, a scatter combiner) as
//! a C function through the shared scalar-program front end.

use platform_api::hlo::analysis::scalar_program::{NoExtension, ScalarOp, ScalarProgram};
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::{ElementType, Error, Result, Scalar};

/// The C type an element is stored (and, but for half floats, computed) in.
pub fn ctype(ty: ElementType) -> Result<&'static str> {
    use ElementType::*;
    Ok(match ty {
        Pred | U8 => "u8",
        S8 => "s8",
        S16 => "s16",
        S32 => "s32",
        S64 => "s64",
        U16 => "u16",
        U32 => "u32",
        U64 => "u64",
        F16 => "f16b",
        BF16 => "bf16b",
        F32 => "float",
        F64 => "double",
        C64 => "c64",
        C128 => "c128",
        narrow => {
            return Err(Error::unimplemented(format!(
                "the CUDA platform has no {narrow} (narrow types are not supported yet)"
            )))
        }
    })
}

fn is_int(ty: ElementType) -> bool {
    ty.is_signed_int() || ty.is_unsigned_int()
}

/// A C expression of type `ctype(ty)` holding the element whose
/// little-endian bytes are `bytes`.
pub fn literal(ty: ElementType, bytes: &[u8]) -> Result<String> {
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
        u64::from_le_bytes(w)
    };
    use ElementType::*;
    Ok(match ty {
        F32 => format!("f32_from_bits(0x{:x}u)", word(&bytes[..4])),
        F64 => format!("f64_from_bits(0x{:x}ull)", word(&bytes[..8])),
        C64 => format!(
            "make_c64(f32_from_bits(0x{:x}u), f32_from_bits(0x{:x}u))",
            word(&bytes[..4]),
            word(&bytes[4..8])
        ),
        C128 => format!(
            "make_c128(f64_from_bits(0x{:x}ull), f64_from_bits(0x{:x}ull))",
            word(&bytes[..8]),
            word(&bytes[8..16])
        ),
        _ => format!(
            "(({})0x{:x}ull)",
            ctype(ty)?,
            word(&bytes[..ty.byte_size()])
        ),
    })
}

/// [`literal`] of a [`Scalar`].
pub fn scalar_literal(value: &Scalar) -> Result<String> {
    let ty = value.element_type();
    let mut bytes = vec![0u8; ty.byte_size()];
    value.write_bytes(&mut bytes);
    literal(ty, &bytes)
}

/// `T out = op(args);` for one elementwise operation. Arguments are C
/// variables of their storage types.
pub fn statement(
    op: &ScalarOp<NoExtension>,
    out: &str,
    out_ty: ElementType,
    args: &[(String, ElementType)],
) -> Result<String> {
    let t = ctype(out_ty)?;
    let a = |i: usize| args[i].0.as_str();
    let ty0 = args.first().map(|a| a.1).unwrap_or(out_ty);
    let expr = match op {
        ScalarOp::Unary(u) => unary(*u, ty0, a(0))?,
        ScalarOp::Binary(b) => binary(*b, ty0, a(0), a(1))?,
        ScalarOp::Compare {
            direction,
            compare_type,
        } => compare(*direction, *compare_type, ty0, a(0), a(1))?,
        ScalarOp::Select => format!("(({}) ? ({}) : ({}))", a(0), a(1), a(2)),
        ScalarOp::Convert => convert(ty0, out_ty, a(0))?,
        // Legalization rewrites these into the ops above.
        ScalarOp::Clamp | ScalarOp::ReducePrecision { .. } | ScalarOp::Extension(_) => {
            return Err(Error::unimplemented(format!(
                "the CUDA backend has no scalar form of {op:?}"
            )))
        }
        ScalarOp::BitcastConvert => {
            if ty0.byte_size() != out_ty.byte_size() {
                return Err(Error::internal(
                    "bitcast-convert of different widths in a scalar",
                ));
            }
            return Ok(format!(
                "{t} {out}; {{ {} __src = {}; copy_bytes(&{out}, &__src, {}); }}\n",
                ctype(ty0)?,
                a(0),
                out_ty.byte_size()
            ));
        }
    };
    Ok(format!("{t} {out} = {expr};\n"))
}

fn unsupported(what: &str, ty: ElementType) -> Error {
    Error::unimplemented(format!("the CUDA backend does not compute {what} on {ty}"))
}

fn unary(op: UnaryOp, ty: ElementType, a: &str) -> Result<String> {
    let f = match (op, ty) {
        (UnaryOp::Exp, _) => "exp",
        (UnaryOp::Log, _) => "log",
        (UnaryOp::Sqrt, _) => "sqrt",
        (UnaryOp::Tanh, _) => "tanh",
        (UnaryOp::Sin, _) => "sin",
        (UnaryOp::Cos, _) => "cos",
        _ => return Err(unsupported(op.name(), ty)),
    };
    match ty {
        // CUDA's single-precision `sinf`, `expf`, ... are off by up to two
        // ULPs, enough to leave XLA's results after a few dependent steps (a
        // loop of `x * 0.9 + sin(x) * i` drifted by 4e-4 relative in ten
        // iterations). Computed in double and rounded once, the result is the
        // correctly rounded one but for rare ties, as on the CPU platforms.
        // `sqrt` is correctly rounded in single precision already.
        ElementType::F32 if op == UnaryOp::Sqrt => Ok(format!("sqrtf({a})")),
        ElementType::F32 => Ok(format!("((float){f}((double)({a})))")),
        ElementType::F64 => Ok(format!("{f}({a})")),
        _ => Err(unsupported(op.name(), ty)),
    }
}

fn binary(op: BinaryOp, ty: ElementType, a: &str, b: &str) -> Result<String> {
    let t = ctype(ty)?;
    let float = matches!(ty, ElementType::F32 | ElementType::F64);
    let int = is_int(ty);
    let wide = if ty.byte_size() == 8 { "u64" } else { "u32" };
    Ok(match op {
        BinaryOp::Add if float => format!("({a} + {b})"),
        BinaryOp::Add if int => format!("(({t})(({wide}){a} + ({wide}){b}))"),
        BinaryOp::Add if ty.is_pred() => format!("((u8)({a} | {b}))"),
        BinaryOp::Multiply if float => format!("({a} * {b})"),
        BinaryOp::Multiply if int => format!("(({t})(({wide}){a} * ({wide}){b}))"),
        BinaryOp::Multiply if ty.is_pred() => format!("((u8)({a} & {b}))"),
        BinaryOp::Divide if float => format!("({a} / {b})"),
        BinaryOp::Divide if int => format!("div_{t}({a}, {b})"),
        BinaryOp::And if int || ty.is_pred() => format!("(({t})({a} & {b}))"),
        BinaryOp::Or if int || ty.is_pred() => format!("(({t})({a} | {b}))"),
        BinaryOp::Xor if int || ty.is_pred() => format!("(({t})({a} ^ {b}))"),
        BinaryOp::ShiftLeft if int => format!("shl_{t}({a}, {b})"),
        BinaryOp::ShiftRightLogical if int => format!("lshr_{t}({a}, {b})"),
        BinaryOp::ShiftRightArithmetic if int => format!("ashr_{t}({a}, {b})"),
        _ => return Err(unsupported(op.name(), ty)),
    })
}

fn compare(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    ty: ElementType,
    a: &str,
    b: &str,
) -> Result<String> {
    let cmp = match direction {
        ComparisonDirection::Eq => "==",
        ComparisonDirection::Ne => "!=",
        ComparisonDirection::Lt => "<",
        ComparisonDirection::Le => "<=",
        ComparisonDirection::Gt => ">",
        ComparisonDirection::Ge => ">=",
    };
    let (a, b) = match (ty, compare_type) {
        (ElementType::F32, Some(ComparisonType::TotalOrder)) => (
            format!("total_order_f32({a})"),
            format!("total_order_f32({b})"),
        ),
        (ElementType::F64, Some(ComparisonType::TotalOrder)) => (
            format!("total_order_f64({a})"),
            format!("total_order_f64({b})"),
        ),
        (ElementType::F32 | ElementType::F64 | ElementType::Pred, _) => {
            (a.to_string(), b.to_string())
        }
        (t, _) if is_int(t) => (a.to_string(), b.to_string()),
        (t, _) => return Err(unsupported("compare", t)),
    };
    Ok(format!("((u8)({a} {cmp} {b}))"))
}

/// A C expression converting `a` from `from` to `to` with XLA's rules.
pub fn convert(from: ElementType, to: ElementType, a: &str) -> Result<String> {
    use ElementType::*;
    if from == to {
        return Ok(a.to_string());
    }
    // Reduce the source to f32, f64, an integer or pred.
    let (a, from) = match from {
        F16 => (format!("f16_to_f32({a})"), F32),
        BF16 => (format!("bf16_to_f32({a})"), F32),
        C64 => (format!("({a}).re"), F32),
        C128 => (format!("({a}).re"), F64),
        other => {
            ctype(other)?;
            (a.to_string(), other)
        }
    };
    let real = matches!(from, F32 | F64);
    Ok(match to {
        _ if from == to => a,
        Pred => format!("((u8)({a} != 0))"),
        F32 | F64 => format!("(({}){a})", ctype(to)?),
        F16 => format!("f64_to_f16((double){a})"),
        BF16 => format!("f32_to_bf16((float){a})"),
        C64 => format!("make_c64({}, 0.0f)", convert(from, F32, &a)?),
        C128 => format!("make_c128({}, 0.0)", convert(from, F64, &a)?),
        t if is_int(t) && real => format!("from_float_{}((double){a})", ctype(t)?),
        t if is_int(t) => format!("(({}){a})", ctype(t)?),
        other => return Err(unsupported("convert", other)),
    })
}

/// A scalar computation as a C function `void name(params..., T* out...)`.
pub fn program_function(name: &str, program: &ScalarProgram<NoExtension>) -> Result<String> {
    let mut params = Vec::new();
    for (i, leaf) in program.params.iter().enumerate() {
        params.push(format!("{} r{i}", ctype(leaf.ty)?));
    }
    for (i, leaf) in program.outputs.iter().enumerate() {
        params.push(format!("{}* out{i}", ctype(leaf.ty)?));
    }
    let mut body = String::new();
    for (reg, value) in &program.constants {
        body += &format!(
            "  {} r{reg} = {};\n",
            ctype(value.element_type())?,
            scalar_literal(value)?
        );
    }
    for step in &program.steps {
        let args: Vec<(String, ElementType)> = step
            .args()
            .iter()
            .map(|&r| (format!("r{r}"), program.reg_types[r as usize]))
            .collect();
        let out_ty = program.reg_types[step.out as usize];
        body += "  ";
        body += &statement(&step.op, &format!("r{}", step.out), out_ty, &args)
            .map_err(|e| e.context(&program.name))?;
    }
    for (i, leaf) in program.outputs.iter().enumerate() {
        body += &format!("  *out{i} = r{};\n", leaf.reg);
    }
    Ok(format!(
        "DEVICE void {name}({}) {{\n{body}}}\n",
        params.join(", ")
    ))
}
