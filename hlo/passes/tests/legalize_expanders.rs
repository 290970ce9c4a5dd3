//! Each expander against the evaluator: a one-op module is legalized to the
//! core op set (`legalize_common::core_support`), must verify and be fully
//! legal, and must compute what the original computes on random inputs (with
//! many special values: signed zeros, infinities, NaNs, denormals, integer
//! extremes), to the tolerance the expander's docs state.

mod legalize_common;
mod passes_common;

use hlo_ir::error::Code;
use hlo_ir::verifier::verify_module;
use hlo_ir::{HloModule, Literal, Opcode, Shape};
use hlo_passes::legalize::{legalize, unlegalized, OpSupport};
use legalize_common::{close_or_within, core_support};
use passes_common::{count, evaluate, parse, random_literal, Rng};

/// Legalizes `text` to `support`, checks the result is legal, valid and lacks
/// `gone`, and compares both modules on `inputs` (or random inputs when `None`).
fn check_with(
    text: &str,
    support: &OpSupport,
    gone: &[Opcode],
    ulps: f64,
    inputs: Option<Vec<Literal>>,
) {
    check_within(text, support, gone, ulps, 0.0, inputs)
}

/// [`check_with`], also accepting floats within `atol` of the original.
fn check_within(
    text: &str,
    support: &OpSupport,
    gone: &[Opcode],
    ulps: f64,
    atol: f64,
    inputs: Option<Vec<Literal>>,
) {
    let before = parse(text);
    let after = legalize(&before, support).unwrap_or_else(|e| panic!("legalize: {e}\n{before}"));
    verify_module(&after).unwrap_or_else(|e| panic!("invalid after legalize: {e}\n{after}"));
    assert!(unlegalized(&after, support).is_empty(), "{after}");
    for &op in gone {
        assert_eq!(count(&after, op), 0, "{op:?} left:\n{after}");
    }
    let runs: Vec<Vec<Literal>> = match inputs {
        Some(args) => vec![args],
        None => {
            let params = before.entry_program_shape().parameters;
            (1..=4u64)
                .map(|seed| {
                    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B ^ seed.wrapping_mul(0x9E37_79B9));
                    params.iter().map(|p| random_literal(p, &mut rng)).collect()
                })
                .collect()
        }
    };
    for args in runs {
        let want = evaluate(&before, &args).unwrap_or_else(|e| panic!("evaluate before: {e}"));
        let got =
            evaluate(&after, &args).unwrap_or_else(|e| panic!("evaluate after: {e}\n{after}"));
        if let Err(why) = close_or_within(&want, &got, ulps, 0.0, atol) {
            panic!("{why}\nargs: {args:?}\nbefore:\n{before}\nafter:\n{after}");
        }
    }
}

fn check(text: &str, gone: Opcode, ulps: f64) {
    check_with(text, &core_support(), &[gone], ulps, None)
}

/// A module applying `op` to `arity` parameters of type `ty` (64 elements),
/// with result type `result`.
fn elementwise(op: &str, ty: &str, result: &str, arity: usize) -> String {
    let params: Vec<String> = (0..arity)
        .map(|i| format!("p{i} = {ty}[64] parameter({i})"))
        .collect();
    let names: Vec<String> = (0..arity).map(|i| format!("p{i}")).collect();
    format!(
        "HloModule m\nENTRY e {{\n  {}\n  ROOT r = {result}[64] {op}({})\n}}\n",
        params.join("\n  "),
        names.join(", ")
    )
}

fn opcode(name: &str) -> Opcode {
    Opcode::from_name(name).unwrap_or_else(|| panic!("no opcode {name}"))
}

#[test]
fn exact_elementwise_expansions() {
    let cases: &[(&str, &[&str], usize)] = &[
        ("subtract", &["f32", "f64", "s32", "u8", "s64"], 2),
        ("negate", &["f32", "f64", "s32", "u32", "s8"], 1),
        ("not", &["pred", "s32", "u8"], 1),
        ("abs", &["f32", "f64", "s32", "s8"], 1),
        ("sign", &["f32", "f64", "s32", "s8"], 1),
        ("maximum", &["f32", "f64", "s32", "u32", "pred", "s8"], 2),
        ("minimum", &["f32", "f64", "s32", "u32", "pred", "s64"], 2),
        ("rsqrt", &["f32", "f64"], 1),
    ];
    for &(op, types, arity) in cases {
        for ty in types {
            check(&elementwise(op, ty, ty, arity), opcode(op), 0.0);
        }
    }
    for ty in ["f32", "f64"] {
        check(
            &elementwise("is-finite", ty, "pred", 1),
            Opcode::IsFinite,
            0.0,
        );
    }
}

#[test]
fn clamp_with_scalar_and_array_bounds() {
    for ty in ["f32", "s32", "u8", "f64"] {
        check(&elementwise("clamp", ty, ty, 3), Opcode::Clamp, 0.0);
        let scalar_bounds = format!(
            "HloModule m\nENTRY e {{\n  lo = {ty}[] parameter(0)\n  x = {ty}[64] parameter(1)\n  hi = {ty}[] parameter(2)\n  ROOT r = {ty}[64] clamp(lo, x, hi)\n}}\n"
        );
        check(&scalar_bounds, Opcode::Clamp, 0.0);
    }
}

#[test]
fn half_types_compute_through_f32() {
    let cases: &[(&str, usize, &str)] = &[
        ("add", 2, ""),
        ("subtract", 2, ""),
        ("multiply", 2, ""),
        ("divide", 2, ""),
        ("sqrt", 1, ""),
        ("exponential", 1, ""),
        ("tanh", 1, ""),
        ("maximum", 2, ""),
        ("negate", 1, ""),
        ("abs", 1, ""),
        ("rsqrt", 1, ""),
        ("clamp", 3, ""),
        ("compare", 2, ", direction=LT"),
    ];
    for &(op, arity, attrs) in cases {
        for ty in ["f16", "bf16"] {
            let result = if op == "compare" { "pred" } else { ty };
            let text = elementwise(op, ty, result, arity).replace(")\n}", &format!("){attrs}\n}}"));
            let module = parse(&text);
            let after = legalize(&module, &core_support()).unwrap_or_else(|e| panic!("{e}"));
            // Nothing of the half type is computed any more, only converted.
            for i in &after.entry().instructions {
                let half = matches!(i.shape.element_type(), Some(t) if t.bit_width() == 16);
                assert!(
                    !half || matches!(i.opcode(), Opcode::Convert | Opcode::Parameter),
                    "%{} computes in a half type:\n{after}",
                    i.name
                );
            }
            check_with(&text, &core_support(), &[], 0.0, None);
        }
    }
    // A dot accumulates in f32 and rounds once either way.
    for ty in ["f16", "bf16"] {
        let dot = format!("HloModule m\nENTRY e {{\n  a = {ty}[4,32] parameter(0)\n  b = {ty}[32,3] parameter(1)\n  ROOT d = {ty}[4,3] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n");
        check_with(&dot, &core_support(), &[], 0.0, None);
    }
    // `select` with an f16 value and a pred predicate.
    let select = "HloModule m\nENTRY e {\n  p = pred[64] parameter(0)\n  a = f16[64] parameter(1)\n  b = f16[64] parameter(2)\n  ROOT r = f16[64] select(p, a, b)\n}\n";
    check_with(select, &core_support(), &[], 0.0, None);
}

/// Inputs in `[-1.4, 1.4]` (away from tan's poles) and the special values.
fn tan_inputs() -> Vec<Literal> {
    let mut rng = Rng(7);
    let mut v: Vec<f32> = (0..60)
        .map(|_| (rng.below(2_800_001) as f32 / 1e6) - 1.4)
        .collect();
    v.extend([0.0, -0.0, f32::INFINITY, f32::NAN]);
    vec![Literal::vector(&v)]
}

#[test]
fn tan_is_sine_over_cosine_within_4_ulp() {
    let text = elementwise("tan", "f32", "f32", 1);
    check_with(
        &text,
        &core_support(),
        &[Opcode::Tan],
        4.0,
        Some(tan_inputs()),
    );
}

#[test]
fn fusions_and_calls_are_inlined() {
    let text = "HloModule m
fused_inner {
  q0 = f32[8] parameter(0)
  ROOT n = f32[8] multiply(q0, q0)
}
fused {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  s = f32[8] subtract(p0, p1)
  ROOT g = f32[8] fusion(s), kind=kLoop, calls=fused_inner
}
callee {
  c0 = f32[8] parameter(0)
  ROOT m = f32[8] maximum(c0, c0)
}
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  f = f32[8] fusion(a, b), kind=kLoop, calls=fused
  ROOT c = f32[8] call(f), to_apply=callee
}
";
    check(text, Opcode::Fusion, 0.0);
    let after = legalize(&parse(text), &core_support()).expect("legal");
    assert_eq!(
        after.computations.len(),
        1,
        "fused computations are gone:\n{after}"
    );
    assert_eq!(count(&after, Opcode::Call), 0);
    // A backend that runs fusions itself keeps them.
    let keeps = core_support().ops(&[
        Opcode::Fusion,
        Opcode::Subtract,
        Opcode::Maximum,
        Opcode::Call,
    ]);
    let kept = legalize(&parse(text), &keeps).expect("legal");
    assert_eq!(count(&kept, Opcode::Fusion), 2, "{kept}");
}

#[test]
fn expansions_inside_reducers_and_loops() {
    // `maximum` in a reducer and `subtract` in a while body are expanded where
    // they are.
    let text = "HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  bs = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bs), index=0
  v = f32[4] get-tuple-element(bs), index=1
  one = s32[] constant(1)
  i2 = s32[] add(bi, one)
  v2 = f32[4] subtract(v, v)
  ROOT t = (s32[], f32[4]) tuple(i2, v2)
}
ENTRY e {
  x = f32[4,8] parameter(0)
  init = f32[] constant(-inf)
  r = f32[4] reduce(x, init), dimensions={1}, to_apply=max
  z = s32[] constant(0)
  t0 = (s32[], f32[4]) tuple(z, r)
  w = (s32[], f32[4]) while(t0), condition=cond, body=body
  ROOT o = f32[4] get-tuple-element(w), index=1
}
";
    check(text, Opcode::Maximum, 0.0);
}

#[test]
fn everything_that_cannot_be_legalized_is_reported_at_once() {
    let text = "HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  y = s32[8] parameter(1)
  c = c64[8] parameter(2)
  w = f64[8] parameter(3)
  a = f64[8] erf(w)
  b = f64[8] erf(a)
  p = f32[8] exponential-minus-one(x)
  f = c64[8] fft(c), fft_type=FFT, fft_length={8}
  e = f64[8] power(w, w)
  s = f64[8] subtract(a, e)
  ROOT t = (f64[8], f32[8], c64[8], f64[8]) tuple(b, p, f, s)
}
";
    let module = parse(text);
    let err = legalize(&module, &core_support())
        .expect_err("f64 erf, fft of a parameter, f64 power are not legalizable");
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    let msg = err.message();
    for needle in ["erf [f64]: 2 instruction(s)", "fft [c64]", "power [f64]"] {
        assert!(msg.contains(needle), "{needle} missing from: {msg}");
    }
    // `subtract` was legalizable, so it is not reported.
    assert!(!msg.contains("subtract"), "{msg}");
    assert_eq!(
        unlegalized(&module, &core_support()).len(),
        5,
        "before: subtract too"
    );
}

#[test]
fn nothing_declared_reports_every_op_and_structural_ops_need_no_declaration() {
    let text = elementwise("add", "f32", "f32", 2);
    let err = legalize(&parse(&text), &OpSupport::new()).expect_err("add is not declared");
    assert!(err.message().contains("add [f32]"), "{err}");
    let only_structure = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  c = f32[] constant(1)\n  t = (f32[2], f32[]) tuple(p, c)\n  ROOT g = f32[2] get-tuple-element(t), index=0\n}\n";
    legalize(&parse(only_structure), &OpSupport::new()).expect("structural ops are always legal");
}

#[test]
fn per_op_type_exceptions() {
    use hlo_ir::shape::ElementType as T;
    let s = OpSupport::new()
        .ops(&[Opcode::Add])
        .types(&[T::F32])
        .op_types(Opcode::Convert, &[T::F16, T::F32]);
    assert!(s.supports(Opcode::Add, &[T::F32]));
    assert!(!s.supports(Opcode::Add, &[T::F16]));
    assert!(s.supports(Opcode::Convert, &[T::F16, T::F32]));
    assert!(!s.supports(Opcode::Convert, &[T::F32, T::S32]));
    assert!(!s.supports(Opcode::Multiply, &[T::F32]));
    // f16 add through f32 with just these two declarations.
    let text = elementwise("add", "f16", "f16", 2);
    check_with(&text, &s, &[], 0.0, None);
    let after = legalize(&parse(&text), &s).expect("legal");
    assert_eq!(count(&after, Opcode::Convert), 3, "{after}");
}

#[test]
fn malformed_modules_give_errors_not_panics() {
    // An operand list too short for the op: the expander must fail cleanly.
    let mut module = parse(&elementwise("subtract", "f32", "f32", 2));
    let root = module.entry().root;
    let entry = module.entry;
    module.computations[entry.index()].instructions[root.index()]
        .operands
        .pop();
    let _ = legalize(&module, &core_support());
    // A tuple where an array is expected.
    let mut module = parse(&elementwise("negate", "f32", "f32", 1));
    let root = module.entry().root;
    module.computations[entry.index()].instructions[root.index()].shape = Shape::tuple(vec![]);
    let _ = legalize(&module, &core_support());
    let _ = HloModule::parse("HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }");
}

#[test]
fn pad_with_edges_and_interior() {
    for (ty, config) in [
        ("f32", "1_2x0_3"),
        ("s32", "-1_2x2_-1"),
        ("f32", "0_0x-2_-1"),
        ("f32", "1_1_2x0_0_1"),
        ("u8", "-2_0_3x1_-3_1"),
        // A negative edge cropping into the other edge's padding.
        ("f32", "3_-5x0_0"),
        ("s32", "-6_3x1_1"),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[4,5] parameter(0)\n  v = {ty}[] parameter(1)\n  ROOT p = {ty}[?] pad(x, v), padding={config}\n}}\n"
        );
        // Let the parser's shape inference be checked by writing the shape out.
        let dims: Vec<i64> = config
            .split('x')
            .zip([4i64, 5])
            .map(|(c, n)| {
                let p: Vec<i64> = c.split('_').map(|v| v.parse().expect("number")).collect();
                let interior = p.get(2).copied().unwrap_or(0) * (n - 1);
                n + p[0] + p[1] + interior
            })
            .collect();
        let text = text.replace("[?]", &format!("[{},{}]", dims[0], dims[1]));
        check(&text, Opcode::Pad, 0.0);
    }
}

#[test]
fn reduce_window_sums_pools_and_scans() {
    let reducer = |name: &str, op: &str, ty: &str| {
        format!("{name} {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT r = {ty}[] {op}(a, b)\n}}\n")
    };
    // (reducer op, type, init, input dims, window, result dims)
    let cases = [
        ("add", "f32", "0", "4,6", "size=2x3 stride=1x2", "3,2"),
        (
            "maximum",
            "f32",
            "-inf",
            "1,6,6,2",
            "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0",
            "1,3,3,2",
        ),
        ("add", "f32", "0", "3,8", "size=1x8 pad=0_0x7_0", "3,8"),
        ("multiply", "s32", "1", "2,5", "size=1x5 pad=0_0x4_0", "2,5"),
        (
            "maximum",
            "s32",
            "-2147483648",
            "7",
            "size=3 stride=2 pad=1_1 rhs_dilate=2",
            "3",
        ),
        ("add", "f64", "0", "5", "size=2 stride=3", "2"),
    ];
    for (op, ty, init, dims, window, out) in cases {
        let text = format!(
            "HloModule m\n{}ENTRY e {{\n  x = {ty}[{dims}] parameter(0)\n  i = {ty}[] constant({init})\n  ROOT w = {ty}[{out}] reduce-window(x, i), window={{{window}}}, to_apply=red\n}}\n",
            reducer("red", op, ty)
        );
        check(&text, Opcode::ReduceWindow, 0.0);
    }
    // A non-identity init with padding is declined and reported, not
    // expanded inexactly.
    let text = format!(
        "HloModule m\n{}ENTRY e {{\n  x = f32[6] parameter(0)\n  i = f32[] constant(1)\n  ROOT w = f32[6] reduce-window(x, i), window={{size=3 pad=1_1}}, to_apply=red\n}}\n",
        reducer("red", "add", "f32")
    );
    let err = legalize(&parse(&text), &core_support()).expect_err("init 1 is not neutral for add");
    assert!(err.message().contains("reduce-window [f32]"), "{err}");
}

#[test]
fn integer_bit_ops_remainder_and_rounding_are_exact() {
    for ty in ["s32", "u32", "s64", "u8", "s8", "f32", "f64", "f16"] {
        check(&elementwise("remainder", ty, ty, 2), Opcode::Remainder, 0.0);
    }
    for op in ["popcnt", "count-leading-zeros"] {
        for ty in ["s8", "u8", "s32", "u32", "s64", "u64"] {
            check(&elementwise(op, ty, ty, 1), opcode(op), 0.0);
        }
    }
    for op in ["floor", "ceil", "round-nearest-even", "round-nearest-afz"] {
        for ty in ["f32", "f64", "f16", "bf16"] {
            check(&elementwise(op, ty, ty, 1), opcode(op), 0.0);
        }
    }
}

/// Inputs spanning tiny to large magnitudes of both signs, and the specials.
fn wide_inputs() -> Vec<Literal> {
    let mut rng = Rng(11);
    let mut v: Vec<f32> = (0..200)
        .map(|_| {
            let mag = 10f32.powf(rng.below(16_000) as f32 / 1000.0 - 12.0);
            if rng.below(2) == 0 {
                mag
            } else {
                -mag.min(0.999_999)
            }
        })
        .collect();
    v.extend([
        0.0,
        -0.0,
        -1.0,
        -2.0,
        1e-30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        88.0,
        89.0,
        -104.0,
    ]);
    vec![Literal::vector(&v)]
}

#[test]
fn log1p_and_expm1_within_4_ulp() {
    for op in ["log-plus-one", "exponential-minus-one"] {
        let text = elementwise(op, "f32", "f32", 1).replace("[64]", "[211]");
        check_with(
            &text,
            &core_support(),
            &[opcode(op)],
            4.0,
            Some(wide_inputs()),
        );
    }
}

#[test]
fn reverse_along_any_dimensions() {
    for (ty, dims) in [("f32", "0"), ("s32", "1"), ("f64", "0,1"), ("pred", "1,0")] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[3,5] parameter(0)\n  ROOT r = {ty}[3,5] reverse(x), dimensions={{{dims}}}\n}}\n"
        );
        check(&text, Opcode::Reverse, 0.0);
    }
}

/// Finite inputs in `[-2, 2]` (integers in `[-3, 3]`) for each parameter.
fn finite_inputs(module: &HloModule, seed: u64) -> Vec<Literal> {
    let mut rng = Rng(seed);
    module
        .entry_program_shape()
        .parameters
        .iter()
        .map(|p| {
            let n = p.element_count();
            let lit = match p.element_type() {
                Some(hlo_ir::shape::ElementType::F32) => Literal::vector(
                    &(0..n)
                        .map(|_| rng.below(4001) as f32 / 1000.0 - 2.0)
                        .collect::<Vec<f32>>(),
                ),
                _ => Literal::vector(
                    &(0..n)
                        .map(|_| rng.below(7) as i32 - 3)
                        .collect::<Vec<i32>>(),
                ),
            };
            lit.reshape(p.dims()).expect("same element count")
        })
        .collect()
}

#[test]
fn convolution_as_dots_within_float_tolerance() {
    let cases = [
        (
            "f32[2,9,9,3]",
            "f32[3,3,3,5]",
            "f32[2,9,9,5]",
            "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
        ),
        (
            "f32[1,4,9,10]",
            "f32[6,4,3,2]",
            "f32[1,6,4,5]",
            "window={size=3x2 stride=2x2 pad=1_0x0_1 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01",
        ),
        (
            "f32[2,6,6,8]",
            "f32[3,3,2,8]",
            "f32[2,4,4,8]",
            "window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4",
        ),
        (
            "f32[1,5,2]",
            "f32[2,2,3]",
            "f32[1,10,3]",
            "window={size=2 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f",
        ),
        (
            "s32[2,7,3]",
            "s32[3,3,4]",
            "s32[2,3,4]",
            "window={size=3 stride=2}, dim_labels=b0f_0io->b0f",
        ),
    ];
    for (lhs, rhs, out, attrs) in cases {
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {lhs} parameter(0)\n  k = {rhs} parameter(1)\n  ROOT c = {out} convolution(x, k), {attrs}\n}}\n"
        );
        let before = parse(&text);
        let after = legalize(&before, &core_support()).unwrap_or_else(|e| panic!("{e}\n{before}"));
        verify_module(&after).unwrap_or_else(|e| panic!("{e}\n{after}"));
        assert_eq!(count(&after, Opcode::Convolution), 0);
        for seed in 1..=3 {
            let args = finite_inputs(&before, seed);
            let want = evaluate(&before, &args).expect("evaluate before");
            let got = evaluate(&after, &args).expect("evaluate after");
            // Integers exactly; floats to a reordered sum's tolerance.
            legalize_common::close_or_within(&want, &got, 0.0, 1e-5, 1e-5)
                .unwrap_or_else(|why| panic!("{why}\n{before}\n{after}"));
        }
    }
}

#[test]
fn integer_bits_to_float_up_to_nan() {
    use hlo_ir::shape::ElementType as T;
    for (int, float, it, ft) in [
        ("u32", "f32", T::U32, T::F32),
        ("s32", "f32", T::S32, T::F32),
        ("u64", "f64", T::U64, T::F64),
        ("s64", "f64", T::S64, T::F64),
    ] {
        let text = elementwise("bitcast-convert", int, float, 1);
        check(&text, Opcode::BitcastConvert, 0.0);
        // Random integers are mostly huge or tiny floats: also the bits of
        // random floats (zeros, denormals, infinities, NaNs, ordinary values).
        for seed in 1..=3 {
            let mut rng = Rng(seed);
            let floats = random_literal(&Shape::array(ft, vec![64]), &mut rng);
            let bits =
                Literal::from_bytes(Shape::array(it, vec![64]), floats.bytes().expect("array"))
                    .expect("same size");
            check_with(
                &text,
                &core_support(),
                &[Opcode::BitcastConvert],
                0.0,
                Some(vec![bits]),
            );
        }
    }
}

#[test]
fn batch_norm_inference_in_f64_is_exact() {
    for (ty, feature) in [("f32", 1), ("f64", 0), ("f32", 2), ("f16", 1)] {
        let dims = [3usize, 4, 5];
        let n = dims[feature];
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[3,4,5] parameter(0)\n  s = {ty}[{n}] parameter(1)\n  o = {ty}[{n}] parameter(2)\n  m = {ty}[{n}] parameter(3)\n  v = {ty}[{n}] parameter(4)\n  ROOT y = {ty}[3,4,5] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index={feature}\n}}\n"
        );
        check(&text, Opcode::BatchNormInference, 0.0);
    }
}

#[test]
fn batch_norm_training_in_f64_is_exact() {
    for (ty, feature) in [("f32", 1), ("f64", 0), ("f32", 2), ("f16", 1)] {
        let n = [3usize, 4, 5][feature];
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[3,4,5] parameter(0)\n  s = {ty}[{n}] parameter(1)\n  o = {ty}[{n}] parameter(2)\n  ROOT y = ({ty}[3,4,5], {ty}[{n}], {ty}[{n}]) batch-norm-training(x, s, o), epsilon=0.001, feature_index={feature}\n}}\n"
        );
        check(&text, Opcode::BatchNormTraining, 0.0);
    }
}

#[test]
fn float_to_integer_bits_exact_except_nan() {
    use hlo_ir::shape::ElementType as T;
    for (float, int, ft) in [
        ("f32", "s32", T::F32),
        ("f32", "u32", T::F32),
        ("f64", "s64", T::F64),
        ("f64", "u64", T::F64),
    ] {
        let text = elementwise("bitcast-convert", float, int, 1);
        for seed in 1..=4 {
            // Random floats rich in zeros, denormals, infinities and extremes;
            // NaN lanes become 1.5 (a NaN's bits are not reproduced).
            let mut rng = Rng(seed);
            let lit = random_literal(&Shape::array(ft, vec![64]), &mut rng);
            let scalars = lit.scalars().expect("array");
            let mut clean = Literal::zeros(lit.shape());
            for (k, s) in scalars.into_iter().enumerate() {
                let s = match s {
                    hlo_ir::Scalar::F32(v) if v.is_nan() => hlo_ir::Scalar::F32(1.5),
                    hlo_ir::Scalar::F64(v) if v.is_nan() => hlo_ir::Scalar::F64(1.5),
                    s => s,
                };
                clean.set(k, s).expect("in range");
            }
            check_with(
                &text,
                &core_support(),
                &[Opcode::BitcastConvert],
                0.0,
                Some(vec![clean]),
            );
        }
    }
}

#[test]
fn reduce_precision_on_the_bits_is_exact() {
    // A backend with bitcast-convert, and the core set, which expands it too
    // (NaN lanes select the operand itself, so both are exact).
    let with_bitcast = core_support().any_type(&[Opcode::BitcastConvert]);
    for (ty, e, m) in [
        ("f32", 5, 10),
        ("f32", 8, 7),
        ("f32", 8, 0),
        ("f32", 1, 1),
        ("f64", 8, 23),
        ("f64", 11, 52),
        ("f64", 5, 3),
    ] {
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[64] parameter(0)\n  ROOT r = {ty}[64] reduce-precision(x), exponent_bits={e}, mantissa_bits={m}\n}}\n"
        );
        check_with(&text, &with_bitcast, &[Opcode::ReducePrecision], 0.0, None);
        check(&text, Opcode::ReducePrecision, 0.0);
    }
}

/// Values for the binary special functions: signed zeros, infinities, NaN,
/// integers (odd and even, for `power`), `±1`, halves, tiny, denormal and huge
/// magnitudes.
fn special_function_values() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.5,
        -0.5,
        1.0 / 3.0,
        -7.0,
        10.0,
        -0.1,
        1e-3,
        1e-20,
        -1e-38,
        1e-45,
        -1e-45,
        1e20,
        -3e38,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        16_777_216.0,
        -16_777_215.0,
        1.000_001,
        0.999_999,
        88.7,
        -104.0,
        127.5,
    ];
    let mut rng = Rng(23);
    v.extend((0..24).map(|_| {
        let mag = 10f32.powf(rng.below(8_000) as f32 / 1000.0 - 4.0);
        if rng.below(2) == 0 {
            mag
        } else {
            -mag
        }
    }));
    v
}

/// Every pair of [`special_function_values`] as two vectors.
fn all_pairs() -> (usize, Vec<Literal>) {
    let v = special_function_values();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &v {
        for &y in &v {
            a.push(x);
            b.push(y);
        }
    }
    (a.len(), vec![Literal::vector(&a), Literal::vector(&b)])
}

#[test]
fn f32_special_functions_within_1_ulp() {
    for op in ["cbrt", "erf"] {
        check(&elementwise(op, "f32", "f32", 1), opcode(op), 1.0);
        let text = elementwise(op, "f32", "f32", 1).replace("[64]", "[211]");
        check_with(
            &text,
            &core_support(),
            &[opcode(op)],
            1.0,
            Some(wide_inputs()),
        );
        let v = special_function_values();
        let text = elementwise(op, "f32", "f32", 1).replace("[64]", &format!("[{}]", v.len()));
        check_with(
            &text,
            &core_support(),
            &[opcode(op)],
            1.0,
            Some(vec![Literal::vector(&v)]),
        );
        // Half types go through f32 (one more rounding: still within 1 ulp).
        for ty in ["f16", "bf16"] {
            check(&elementwise(op, ty, ty, 1), opcode(op), 1.0);
        }
    }
    for op in ["atan2", "power"] {
        check(&elementwise(op, "f32", "f32", 2), opcode(op), 1.0);
        let (n, inputs) = all_pairs();
        let text = elementwise(op, "f32", "f32", 2).replace("[64]", &format!("[{n}]"));
        check_with(&text, &core_support(), &[opcode(op)], 1.0, Some(inputs));
        for ty in ["f16", "bf16"] {
            check(&elementwise(op, ty, ty, 2), opcode(op), 1.0);
        }
    }
}

#[test]
fn erf_near_its_saturation_within_1_ulp() {
    // Around 3.92, where f32 erf reaches 1, and the series' range end 4.
    let v: Vec<f32> = (0..400).map(|i| 3.0 + i as f32 * 0.005).collect();
    let neg: Vec<f32> = v.iter().map(|x| -x).collect();
    for input in [v, neg] {
        let text = elementwise("erf", "f32", "f32", 1).replace("[64]", "[400]");
        check_with(
            &text,
            &core_support(),
            &[Opcode::Erf],
            1.0,
            Some(vec![Literal::vector(&input)]),
        );
    }
}

/// A comparator of `2 * n` parameters of `types` comparing parameters
/// `2 * key` and `2 * key + 1` with `direction` (and `type=TOTALORDER` for
/// floats, so NaNs are ordered and the order is a strict weak one).
fn comparator(types: &[&str], key: usize, direction: &str) -> String {
    let mut lines = Vec::new();
    for (i, t) in types.iter().enumerate() {
        lines.push(format!("  l{i} = {t}[] parameter({})", 2 * i));
        lines.push(format!("  r{i} = {t}[] parameter({})", 2 * i + 1));
    }
    let total = if types[key].starts_with('f') {
        ", type=TOTALORDER"
    } else {
        ""
    };
    lines.push(format!(
        "  ROOT c = pred[] compare(l{key}, r{key}), direction={direction}{total}"
    ));
    format!("less {{\n{}\n}}\n", lines.join("\n"))
}

/// A module sorting parameters of `types` and `dims` along `dim`.
fn sort_module(types: &[&str], dims: &str, dim: usize, key: usize, direction: &str) -> String {
    let params: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| format!("  p{i} = {t}[{dims}] parameter({i})"))
        .collect();
    let names: Vec<String> = (0..types.len()).map(|i| format!("p{i}")).collect();
    let shapes: Vec<String> = types.iter().map(|t| format!("{t}[{dims}]")).collect();
    let shape = if types.len() == 1 {
        shapes[0].clone()
    } else {
        format!("({})", shapes.join(", "))
    };
    format!(
        "HloModule m\n{}ENTRY e {{\n{}\n  ROOT s = {shape} sort({}), dimensions={{{dim}}}, is_stable=true, to_apply=less\n}}\n",
        comparator(types, key, direction),
        params.join("\n"),
        names.join(", ")
    )
}

#[test]
fn sort_by_a_network_matches_the_stable_sort() {
    // One operand, any dimension, both directions, odd and even lengths.
    for (ty, dims, dim, dir) in [
        ("f32", "64", 0, "LT"),
        ("f32", "5,7", 1, "GT"),
        ("s32", "5,7", 0, "LT"),
        ("f64", "3,4,5", 1, "LT"),
        ("u8", "3,4,5", 2, "GT"),
        ("s32", "1,3", 0, "LT"),
        ("f32", "9,2", 0, "LT"),
    ] {
        check(&sort_module(&[ty], dims, dim, 0, dir), Opcode::Sort, 0.0);
    }
    // Keys and values: ties in the keys (small integers, repeated specials)
    // keep the values' original order; the key may be any operand.
    for (types, dims, dim, key) in [
        (&["s32", "f32"][..], "64", 0, 0),
        (&["f32", "s32"][..], "6,11", 1, 0),
        (&["f32", "s32", "pred"][..], "11,6", 0, 1),
        (&["pred", "f64"][..], "4,33", 1, 0),
    ] {
        check(&sort_module(types, dims, dim, key, "LT"), Opcode::Sort, 0.0);
    }
}

#[test]
fn sort_with_a_comparator_of_several_ops() {
    // JAX's float comparator: NaNs made canonical and -0 made +0, then a
    // total-order compare; ties (±0, NaNs) stay in order.
    let text = "HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  nan = f32[] constant(nan)
  zero = f32[] constant(0)
  a_nan = pred[] compare(a, a), direction=NE
  a_zero = pred[] compare(a, zero), direction=EQ
  a1 = f32[] select(a_zero, zero, a)
  a2 = f32[] select(a_nan, nan, a1)
  b_nan = pred[] compare(b, b), direction=NE
  b_zero = pred[] compare(b, zero), direction=EQ
  b1 = f32[] select(b_zero, zero, b)
  b2 = f32[] select(b_nan, nan, b1)
  ROOT lt = pred[] compare(a2, b2), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[4,50] parameter(0)
  i = s32[4,50] iota(), iota_dimension=1
  ROOT s = (f32[4,50], s32[4,50]) sort(x, i), dimensions={1}, is_stable=true, to_apply=less
}
";
    check(text, Opcode::Sort, 0.0);
}

#[test]
fn sort_with_a_non_elementwise_comparator_is_reported() {
    // A comparator with a non-scalar intermediate cannot be applied lane by
    // lane.
    let text = "HloModule m
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  w = f32[1] broadcast(a), dimensions={}
  n = f32[] reshape(w)
  ROOT k = pred[] compare(n, b), direction=LT
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=less
}
";
    let err = legalize(&parse(text), &core_support()).expect_err("a call in the comparator");
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    assert!(err.message().contains("sort [f32]"), "{err}");
}

#[test]
fn topk_is_a_stable_sort_and_a_slice() {
    for (ty, dims, k, largest) in [
        ("f32", "4,10", 3, true),
        ("f32", "4,10", 10, false),
        ("s32", "64", 5, true),
        ("f64", "2,3,7", 1, false),
        ("u8", "3,20", 20, true),
    ] {
        let out: Vec<&str> = dims.rsplit_once(',').map_or(vec![], |(h, _)| vec![h]);
        let kd = if out.is_empty() {
            format!("{k}")
        } else {
            format!("{},{k}", out[0])
        };
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[{dims}] parameter(0)\n  ROOT t = ({ty}[{kd}], s32[{kd}]) topk(x), k={k}, largest={largest}\n}}\n"
        );
        check(&text, Opcode::TopK, 0.0);
    }
}

/// A module making complex values of `ty` (`c64`/`c128`) from real
/// parameters, applying `body` (which defines `z` from `x` and `y`, complex
/// arrays of 64), and returning the parts of `z`.
fn complex_module(ty: &str, body: &str) -> String {
    let p = if ty == "c64" { "f32" } else { "f64" };
    format!(
        "HloModule m\nENTRY e {{\n  a = {p}[64] parameter(0)\n  b = {p}[64] parameter(1)\n  c = {p}[64] parameter(2)\n  d = {p}[64] parameter(3)\n  x = {ty}[64] complex(a, b)\n  y = {ty}[64] complex(c, d)\n{body}\n  re = {p}[64] real(z)\n  im = {p}[64] imag(z)\n  ROOT t = ({p}[64], {p}[64]) tuple(re, im)\n}}\n"
    )
}

/// Legal for the core set (so no complex value is left: the core set has no
/// complex type) and exact.
fn exact_complex(text: &str) {
    check_with(text, &core_support(), &[], 0.0, None);
}

#[test]
fn complex_arithmetic_on_parts_is_exact() {
    for ty in ["c64", "c128"] {
        for op in ["add", "subtract", "multiply"] {
            let body = format!("  z = {ty}[64] {op}(x, y)");
            exact_complex(&complex_module(ty, &body));
        }
        let body = format!("  z = {ty}[64] negate(x)");
        exact_complex(&complex_module(ty, &body));
        // Constants, broadcasts, converts from reals and data movement.
        let p = if ty == "c64" { "f32" } else { "f64" };
        let body = format!(
            "  k = {ty}[] constant((0.5, -2))\n  kb = {ty}[64] broadcast(k), dimensions={{}}\n  ca = {ty}[64] convert(a)\n  m = {ty}[64] multiply(kb, ca)\n  r = {ty}[8,8] reshape(m)\n  tr = {ty}[8,8] transpose(r), dimensions={{1,0}}\n  s = {ty}[4,8] slice(tr), slice={{[0:8:2], [0:8]}}\n  s2 = {ty}[4,8] slice(tr), slice={{[1:8:2], [0:8]}}\n  cc = {ty}[8,8] concatenate(s2, s), dimensions={{0}}\n  f = {ty}[64] reshape(cc)\n  z = {ty}[64] add(f, y)\n  unused = {p}[64] real(x)"
        );
        exact_complex(&complex_module(ty, &body));
        let p = if ty == "c64" { "f32" } else { "f64" };
        let abs = format!(
            "HloModule m\nENTRY e {{\n  a = {p}[64] parameter(0)\n  b = {p}[64] parameter(1)\n  x = {ty}[64] complex(a, b)\n  ROOT r = {p}[64] abs(x)\n}}\n"
        );
        exact_complex(&abs);
    }
}

#[test]
fn complex_parameters_are_reported() {
    let text = "HloModule m\nENTRY e {\n  p = c64[8] parameter(0)\n  ROOT r = f32[8] real(p)\n}\n";
    let err = legalize(&parse(text), &core_support()).expect_err("a complex parameter");
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    assert!(err.message().contains("real [f32, c64]"), "{err}");
    // A complex op on a parameter is left as written, and named.
    let text = "HloModule m\nENTRY e {\n  p = c64[8] parameter(0)\n  q = c64[8] multiply(p, p)\n  f = c64[8] fft(q), fft_type=FFT, fft_length={8}\n  ROOT r = f32[8] abs(f)\n}\n";
    let err = legalize(&parse(text), &core_support()).expect_err("a complex parameter");
    for needle in ["multiply [c64]", "fft [c64]", "abs [f32, c64]"] {
        assert!(err.message().contains(needle), "{needle}: {err}");
    }
    assert!(!err.message().contains("real"), "{err}");
}

#[test]
fn fft_as_a_dft_within_1_ulp_or_tiny_absolute_error() {
    // Finite inputs: 1 ulp, or an absolute 1e-9 for bins that cancel.
    let dft_check = |text: &str, seed: usize| {
        let inputs = finite_inputs(&parse(text), seed as u64);
        check_within(
            text,
            &core_support(),
            &[Opcode::Fft],
            1.0,
            1e-9,
            Some(inputs),
        );
    };
    for n in [1usize, 5, 12, 16, 100] {
        for kind in ["FFT", "IFFT"] {
            let text = format!(
                "HloModule m\nENTRY e {{\n  a = f32[{}] parameter(0)\n  b = f32[{}] parameter(1)\n  ra = f32[3,{n}] reshape(a)\n  rb = f32[3,{n}] reshape(b)\n  x = c64[3,{n}] complex(ra, rb)\n  z = c64[3,{n}] fft(x), fft_type={kind}, fft_length={{{n}}}\n  re = f32[3,{n}] real(z)\n  im = f32[3,{n}] imag(z)\n  ROOT t = (f32[3,{n}], f32[3,{n}]) tuple(re, im)\n}}\n",
                3 * n,
                3 * n
            );
            dft_check(&text, n);
        }
        let m = n / 2 + 1;
        let text = format!(
            "HloModule m\nENTRY e {{\n  a = f32[{}] parameter(0)\n  b = f32[{}] parameter(1)\n  ra = f32[3,{m}] reshape(a)\n  rb = f32[3,{m}] reshape(b)\n  x = c64[3,{m}] complex(ra, rb)\n  ROOT z = f32[3,{n}] fft(x), fft_type=IRFFT, fft_length={{{n}}}\n}}\n",
            3 * m,
            3 * m
        );
        dft_check(&text, n);
        let text = format!(
            "HloModule m\nENTRY e {{\n  a = f32[{}] parameter(0)\n  x = f32[3,{n}] reshape(a)\n  z = c64[3,{m}] fft(x), fft_type=RFFT, fft_length={{{n}}}\n  re = f32[3,{m}] real(z)\n  im = f32[3,{m}] imag(z)\n  ROOT t = (f32[3,{m}], f32[3,{m}]) tuple(re, im)\n}}\n",
            3 * n
        );
        dft_check(&text, n);
    }
}

/// `select-and-scatter` of an operand `ty[dims]` and a source `ty[sdims]` with
/// a `select` comparing by `direction` and a `scatter` combining by `combine`.
fn select_and_scatter_module(
    ty: &str,
    dims: &str,
    sdims: &str,
    window: &str,
    direction: &str,
    combine: &str,
) -> String {
    let total = if ty.starts_with('f') {
        ", type=TOTALORDER"
    } else {
        ""
    };
    format!(
        "HloModule m\nsel {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction={direction}{total}\n}}\nsc {{\n  u = {ty}[] parameter(0)\n  v = {ty}[] parameter(1)\n  ROOT w = {ty}[] {combine}(u, v)\n}}\nENTRY e {{\n  x = {ty}[{dims}] parameter(0)\n  s = {ty}[{sdims}] parameter(1)\n  i = {ty}[] parameter(2)\n  ROOT r = {ty}[{dims}] select-and-scatter(x, s, i), window={{{window}}}, select=sel, scatter=sc\n}}\n"
    )
}

#[test]
fn select_and_scatter_matches_the_evaluator_in_its_order() {
    for (ty, dims, sdims, window, dir, combine) in [
        ("f32", "6,8", "3,4", "size=2x2 stride=2x2", "GE", "add"),
        (
            "f32",
            "6,8",
            "6,8",
            "size=3x3 stride=1x1 pad=1_1x1_1",
            "GE",
            "add",
        ),
        // A non-commutative combiner and overlapping windows: the order of
        // combinations shows.
        ("f32", "7,5", "3,2", "size=3x3 stride=2x2", "GT", "subtract"),
        (
            "s32",
            "10",
            "5",
            "size=3 stride=2 pad=1_1",
            "LE",
            "multiply",
        ),
        (
            "f64",
            "4,5,3",
            "2,2,3",
            "size=2x3x1 stride=2x2x1 pad=0_0x0_1x0_0",
            "GE",
            "maximum",
        ),
        ("u8", "9", "9", "size=4 stride=1 pad=2_1", "GT", "add"),
    ] {
        check(
            &select_and_scatter_module(ty, dims, sdims, window, dir, combine),
            Opcode::SelectAndScatter,
            0.0,
        );
    }
}

#[test]
fn map_applies_its_function_lane_wise() {
    let text = "HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  k = s32[] parameter(2)
  two = f32[] constant(2)
  p = f32[] multiply(a, two)
  q = f32[] maximum(p, b)
  kf = f32[] convert(k)
  c = pred[] compare(q, kf), direction=LT
  ROOT r = f32[] select(c, kf, q)
}
ENTRY e {
  x = f32[4,16] parameter(0)
  y = f32[4,16] parameter(1)
  z = s32[4,16] parameter(2)
  ROOT m = f32[4,16] map(x, y, z), dimensions={0,1}, to_apply=f
}
";
    check(text, Opcode::Map, 0.0);
    // A function with a non-scalar step is not expanded, and is reported.
    let text = "HloModule m
g {
  a = f32[] parameter(0)
  w = f32[2] broadcast(a), dimensions={}
  ROOT r = f32[] reduce(w, a), dimensions={0}, to_apply=h
}
h {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT s = f32[] add(u, v)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT m = f32[8] map(x), dimensions={0}, to_apply=g
}
";
    let err = legalize(&parse(text), &core_support()).expect_err("map of a reduce");
    assert!(err.message().contains("map [f32]"), "{err}");
}

#[test]
fn rng_bit_generator_bit_for_bit() {
    for (alg, n) in [
        ("rng_three_fry", 2),
        ("rng_philox", 2),
        ("rng_philox", 3),
        ("rng_default", 3),
    ] {
        for (ty, dims) in [
            ("u32", "4,6"),
            ("u32", "3,5"),
            ("u32", "5,3,2"),
            ("u32", ""),
            ("u64", "7"),
            ("s32", "9"),
            ("u8", "2,3"),
            ("s64", "3,2"),
            ("u16", "11"),
        ] {
            let text = format!(
                "HloModule m\nENTRY e {{\n  s = u64[{n}] parameter(0)\n  ROOT r = (u64[{n}], {ty}[{dims}]) rng-bit-generator(s), algorithm={alg}\n}}\n"
            );
            check(&text, Opcode::RngBitGenerator, 0.0);
        }
    }
}

/// `batch` matrices `n x n`: symmetric positive definite ones (`M Mᵀ + n I`)
/// except that matrix 1 (if any) has a negative diagonal entry.
fn spd_matrices(batch: usize, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for b in 0..batch {
        let m: Vec<f64> = (0..n * n)
            .map(|_| rng.below(2001) as f64 / 1000.0 - 1.0)
            .collect();
        for i in 0..n {
            for j in 0..n {
                let mut v: f64 = (0..n).map(|k| m[i * n + k] * m[j * n + k]).sum();
                if i == j {
                    v += n as f64;
                }
                if b == 1 && i == j && i == n / 2 {
                    v = -v;
                }
                out.push(v);
            }
        }
    }
    out
}

#[test]
fn cholesky_is_the_evaluators_column_loop() {
    for (ty, n, lower) in [
        ("f32", 4, true),
        ("f32", 7, false),
        ("f64", 5, true),
        ("f64", 1, false),
        ("f64", 6, false),
    ] {
        let batch = 3;
        let text = format!(
            "HloModule m\nENTRY e {{\n  a = {ty}[{batch},{n},{n}] parameter(0)\n  ROOT c = {ty}[{batch},{n},{n}] cholesky(a), lower={lower}\n}}\n"
        );
        let values = spd_matrices(batch, n, n as u64);
        let shape = [batch, n, n];
        let input = if ty == "f32" {
            let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
            Literal::vector(&v)
        } else {
            Literal::vector(&values)
        };
        let input = input.reshape(&shape).expect("sizes agree");
        check_with(
            &text,
            &core_support(),
            &[Opcode::Cholesky],
            0.0,
            Some(vec![input]),
        );
    }
}

#[test]
fn triangular_solve_is_the_evaluators_substitution() {
    for left in [true, false] {
        for lower in [true, false] {
            for transpose in ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"] {
                for unit in [false, true] {
                    let b = if left { "2,5,3" } else { "2,3,5" };
                    for ty in ["f32", "f64"] {
                        let text = format!(
                            "HloModule m\nENTRY e {{\n  a = {ty}[2,5,5] parameter(0)\n  b = {ty}[{b}] parameter(1)\n  ROOT x = {ty}[{b}] triangular-solve(a, b), left_side={left}, lower={lower}, unit_diagonal={unit}, transpose_a={transpose}\n}}\n"
                        );
                        // Random values with specials (infinities, NaN, zeros
                        // of both signs) ...
                        check(&text, Opcode::TriangularSolve, 0.0);
                        // ... and finite ones.
                        if ty == "f32" {
                            let inputs = finite_inputs(&parse(&text), 5);
                            check_with(
                                &text,
                                &core_support(),
                                &[Opcode::TriangularSolve],
                                0.0,
                                Some(inputs),
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn batch_norm_grad_in_f64_is_exact() {
    for (ty, feature) in [("f32", 1), ("f64", 0), ("f32", 2), ("f16", 1), ("bf16", 0)] {
        let n = [3usize, 4, 5][feature];
        let text = format!(
            "HloModule m\nENTRY e {{\n  x = {ty}[3,4,5] parameter(0)\n  s = {ty}[{n}] parameter(1)\n  m = {ty}[{n}] parameter(2)\n  v = {ty}[{n}] parameter(3)\n  g = {ty}[3,4,5] parameter(4)\n  ROOT y = ({ty}[3,4,5], {ty}[{n}], {ty}[{n}]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, feature_index={feature}\n}}\n"
        );
        check(&text, Opcode::BatchNormGrad, 0.0);
    }
}

#[test]
fn batch_norm_grad_of_finite_f64_is_exact() {
    // Random specials make whole features NaN; finite values show the order
    // of operations in f64.
    let mut rng = Rng(77);
    let mut vector = |n: usize, positive: bool| -> Literal {
        let v: Vec<f64> = (0..n)
            .map(|_| {
                let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
                if positive {
                    x.abs() + 0.1
                } else {
                    x
                }
            })
            .collect();
        Literal::vector(&v)
    };
    let text = "HloModule m\nENTRY e {\n  x = f64[60] parameter(0)\n  s = f64[60] parameter(1)\n  m = f64[60] parameter(2)\n  v = f64[60] parameter(3)\n  g = f64[60] parameter(4)\n  rx = f64[3,4,5] reshape(x)\n  rg = f64[3,4,5] reshape(g)\n  ss = f64[4] slice(s), slice={[0:4]}\n  ms = f64[4] slice(m), slice={[0:4]}\n  vs = f64[4] slice(v), slice={[0:4]}\n  ROOT y = (f64[3,4,5], f64[4], f64[4]) batch-norm-grad(rx, ss, ms, vs, rg), epsilon=0.001, feature_index=1\n}\n";
    for _ in 0..4 {
        let inputs = vec![
            vector(60, false),
            vector(60, false),
            vector(60, false),
            vector(60, true),
            vector(60, false),
        ];
        check_with(
            text,
            &core_support(),
            &[Opcode::BatchNormGrad],
            0.0,
            Some(inputs),
        );
    }
}

#[test]
fn malformed_instructions_for_the_new_expanders_give_errors_not_panics() {
    // Attributes and shapes that do not fit; each module either fails to parse,
    // fails to legalize with an error, or legalizes: never a panic.
    let cases = [
        "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT s = f32[8] sort(x), dimensions={3}, to_apply=less\n}\nless {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n",
        "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=less\n}\nless {\n  a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=LT\n}\n",
        "ENTRY e {\n  x = f32[4,10] parameter(0)\n  ROOT t = (f32[4,20], s32[4,20]) topk(x), k=20, largest=true\n}\n",
        "ENTRY e {\n  x = c64[3,8] parameter(0)\n  ROOT f = c64[3,8] fft(x), fft_type=FFT, fft_length={7}\n}\n",
        "ENTRY e {\n  x = f32[3,8] parameter(0)\n  ROOT f = f32[3,8] fft(x), fft_type=IRFFT, fft_length={8}\n}\n",
        "ENTRY e {\n  x = f32[6,8] parameter(0)\n  s = f32[2,2] parameter(1)\n  i = f32[] parameter(2)\n  ROOT r = f32[6,8] select-and-scatter(x, s, i), window={size=2x2 stride=2x2}, select=sel, scatter=sc\n}\nsel {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\nsc {\n  u = f32[] parameter(0)\n  v = f32[] parameter(1)\n  ROOT w = f32[] add(u, v)\n}\n",
        "ENTRY e {\n  x = f32[6,8] parameter(0)\n  s = f32[3,4] parameter(1)\n  i = f32[] parameter(2)\n  ROOT r = f32[6,8] select-and-scatter(x, s, i), window={size=2x2 stride=0x2}, select=sel, scatter=sc\n}\nsel {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\nsc {\n  u = f32[] parameter(0)\n  v = f32[] parameter(1)\n  ROOT w = f32[] add(u, v)\n}\n",
        "ENTRY e {\n  a = f32[3,4] parameter(0)\n  ROOT c = f32[3,4] cholesky(a), lower=true\n}\n",
        "ENTRY e {\n  a = f32[4,4] parameter(0)\n  b = f32[3,2] parameter(1)\n  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=false, transpose_a=NO_TRANSPOSE\n}\n",
        "ENTRY e {\n  s = u64[1] parameter(0)\n  ROOT r = (u64[1], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
        "ENTRY e {\n  s = u64[3] parameter(0)\n  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n",
        "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT m = f32[8] map(x), dimensions={0}, to_apply=g\n}\ng {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n",
        "ENTRY e {\n  x = f32[2,3] parameter(0)\n  s = f32[3] parameter(1)\n  m = f32[3] parameter(2)\n  v = f32[3] parameter(3)\n  g = f32[2,3] parameter(4)\n  ROOT y = (f32[2,3], f32[3], f32[3]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, feature_index=7\n}\n",
        "ENTRY e {\n  k = c64[2] constant({(1, 2), (3, 4)})\n  ROOT r = f32[3] real(k)\n}\n",
        "ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT r = f32[4] atan2(a, b)\n}\n",
    ];
    let mut parsed = 0;
    for body in cases {
        let text = format!("HloModule m\n{body}");
        if let Ok(module) = HloModule::parse(&text) {
            parsed += 1;
            if let Err(e) = legalize(&module, &core_support()) {
                assert!(!e.message().is_empty(), "{text}");
            }
        }
    }
    // Most of them reach legalization (the parser does not check shapes).
    assert!(parsed >= 8, "only {parsed} parsed");
}

#[test]
fn multi_dimensional_fft_within_1_ulp_or_tiny_absolute_error() {
    // (type, input dims, output dims, lengths); complex inputs are built from
    // two real parameters.
    for (kind, ind, outd, lengths) in [
        ("FFT", "2,4,6", "2,4,6", "4,6"),
        ("IFFT", "3,2,5", "3,2,5", "3,2,5"),
        ("RFFT", "2,4,6", "2,4,4", "4,6"),
        ("IRFFT", "2,4,4", "2,4,6", "4,6"),
        ("IRFFT", "3,5,3", "3,5,5", "3,5,5"),
    ] {
        let count: usize = ind
            .split(',')
            .map(|d| d.parse::<usize>().unwrap())
            .product();
        let real_in = kind == "RFFT";
        let (out_ty, make) = match kind {
            "IRFFT" => ("f32", "  x = c64[{ind}] complex(ra, rb)"),
            "RFFT" => ("c64", "  x = f32[{ind}] reshape(a)"),
            _ => ("c64", "  x = c64[{ind}] complex(ra, rb)"),
        };
        let params = if real_in {
            format!("  a = f32[{count}] parameter(0)\n")
        } else {
            format!("  a = f32[{count}] parameter(0)\n  b = f32[{count}] parameter(1)\n  ra = f32[{ind}] reshape(a)\n  rb = f32[{ind}] reshape(b)\n")
        };
        let make = make.replace("{ind}", ind);
        let tail = if out_ty == "c64" {
            format!("  z = c64[{outd}] fft(x), fft_type={kind}, fft_length={{{lengths}}}\n  re = f32[{outd}] real(z)\n  im = f32[{outd}] imag(z)\n  ROOT t = (f32[{outd}], f32[{outd}]) tuple(re, im)\n")
        } else {
            format!("  ROOT z = f32[{outd}] fft(x), fft_type={kind}, fft_length={{{lengths}}}\n")
        };
        let text = format!("HloModule m\nENTRY e {{\n{params}{make}\n{tail}}}\n");
        let inputs = finite_inputs(&parse(&text), count as u64);
        check_within(
            &text,
            &core_support(),
            &[Opcode::Fft],
            1.0,
            1e-9,
            Some(inputs),
        );
    }
}

/// `f64` values spanning the exponent range, with the specials.
fn wide_f64_values() -> Vec<f64> {
    let mut rng = Rng(41);
    let mut v: Vec<f64> = (0..300)
        .map(|_| {
            let mag = 10f64.powf(rng.below(600_000) as f64 / 1000.0 - 300.0);
            if rng.below(2) == 0 {
                mag
            } else {
                -mag
            }
        })
        .collect();
    v.extend([
        0.0,
        -0.0,
        1.0,
        -1.0,
        8.0,
        -27.0,
        f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        1e-310,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ]);
    v
}

#[test]
fn f64_cbrt_within_2_ulp_and_atan2_within_4_ulp() {
    let v = wide_f64_values();
    let n = v.len();
    let text = elementwise("cbrt", "f64", "f64", 1).replace("[64]", &format!("[{n}]"));
    check_with(
        &text,
        &core_support(),
        &[Opcode::Cbrt],
        2.0,
        Some(vec![Literal::vector(&v)]),
    );
    check(&elementwise("cbrt", "f64", "f64", 1), Opcode::Cbrt, 2.0);
    // atan2 on every pair of a sample (both orders of magnitude).
    let sample: Vec<f64> = v.iter().step_by(5).copied().collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &sample {
        for &y in &sample {
            a.push(x);
            b.push(y);
        }
    }
    let text = elementwise("atan2", "f64", "f64", 2).replace("[64]", &format!("[{}]", a.len()));
    check_with(
        &text,
        &core_support(),
        &[Opcode::Atan2],
        4.0,
        Some(vec![Literal::vector(&a), Literal::vector(&b)]),
    );
    check(&elementwise("atan2", "f64", "f64", 2), Opcode::Atan2, 4.0);
}

#[test]
fn the_pass_reports_changes_truthfully() {
    // Already legal: nothing to do, and the pass says so.
    let legal = elementwise("add", "f32", "f32", 2);
    let (_, changed) = passes_common::run(
        &mut hlo_passes::legalize::Legalize::new(core_support()),
        &parse(&legal),
    );
    assert!(!changed);
    // An expansion changes the module, and `run` checks the flag and numerics.
    let (_, changed) = passes_common::run(
        &mut hlo_passes::legalize::Legalize::new(core_support()),
        &parse(&elementwise("maximum", "f32", "f32", 2)),
    );
    assert!(changed);
}

#[test]
fn xla_topk_custom_call_becomes_topk() {
    let call = "HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT g = pred[] compare(a, b), direction=GT, type=TOTALORDER
}
ENTRY e {
  x = f32[5,10] parameter(0)
  ROOT t = (f32[5,4], s32[5,4]) custom-call(x), custom_call_target=\"TopK\", called_computations={gt}
}
";
    let op = "HloModule m\nENTRY e {\n  x = f32[5,10] parameter(0)\n  ROOT t = (f32[5,4], s32[5,4]) topk(x), k=4, largest=true\n}\n";
    let after = legalize(&parse(call), &core_support()).unwrap_or_else(|e| panic!("{e}"));
    verify_module(&after).unwrap_or_else(|e| panic!("{e}\n{after}"));
    assert_eq!(
        count(&after, Opcode::CustomCall) + count(&after, Opcode::TopK),
        0,
        "{after}"
    );
    // The evaluator has no custom-call targets: compare with the op it stands for.
    let reference = parse(op);
    for seed in 1..=3 {
        let mut rng = Rng(seed);
        let args = vec![random_literal(
            &Shape::array(hlo_ir::shape::ElementType::F32, vec![5, 10]),
            &mut rng,
        )];
        let want = evaluate(&reference, &args).expect("topk evaluates");
        let got = evaluate(&after, &args).expect("legalized evaluates");
        legalize_common::close(&want, &got, 0.0).unwrap_or_else(|why| panic!("{why}\n{after}"));
    }
}

/// XLA's `TopK` custom call is the `topk` op in custom-call form: a backend
/// that declares `custom-call` (for its own targets) still gets it rewritten.
#[test]
fn topk_custom_call_is_rewritten_even_where_custom_calls_are_declared() {
    let module = parse(
        r#"HloModule m
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK"
}"#,
    );
    let only_calls = OpSupport::new().ops(&[Opcode::CustomCall]);
    let left = unlegalized(&module, &only_calls);
    assert!(
        left.iter().any(|u| u.opcode == Opcode::CustomCall),
        "{left:?}"
    );
    let support = core_support().ops(&[Opcode::CustomCall]);
    let legal = legalize(&module, &support).expect("legalizes");
    assert_eq!(count(&legal, Opcode::CustomCall), 0, "{}", legal.to_text());
    let other = parse(
        r#"HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] custom-call(x), custom_call_target="my_target"
}"#,
    );
    assert!(unlegalized(&other, &only_calls).is_empty());
}
