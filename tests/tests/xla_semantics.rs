//! Programs XLA accepts, run on the Interpreter and the Host with XLA's
//! results: text in XLA's looser forms (names reused across computations,
//! shapes left out, instructions inline), `dot` with `algorithm=`, `dot` over
//! operands of different types, `pred` dot and convolution, empty FFTs,
//! `conditional` with an out-of-range index, zero-element arrays with huge
//! dimensions. The expected values are worked out by hand from XLA's
//! operation semantics.

use platform_api::{ElementType, HloModule, Literal, Shape};

// Linking a backend registers it.
use platform_host as _;
use platform_interpreter as _;

const PLATFORMS: [&str; 2] = ["Interpreter", "Host"];

/// Runs `text` on both platforms and checks every output leaf against `want`.
fn check(text: &str, args: &[Literal], want: &[Literal]) {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    for platform in PLATFORMS {
        let got = tests::run_program(platform, module.clone(), args)
            .unwrap_or_else(|e| panic!("{platform}: {e}\n{text}"));
        assert_eq!(got.len(), want.len(), "{platform}: output count");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if let Err(e) = tests::compare(g, w, 0.0, 0.0) {
                panic!("{platform}: output {i}: {e}\n{text}");
            }
        }
    }
}

fn lit<T: platform_api::NativeType>(dims: &[usize], values: &[T]) -> Literal {
    Literal::from_slice(dims, values).unwrap()
}

fn zeros(ty: ElementType, dims: &[usize]) -> Literal {
    Literal::zeros(&Shape::array(ty, dims.to_vec()))
}

fn bools(dims: &[usize], values: &[bool]) -> Literal {
    Literal::from_bools(dims, values).unwrap()
}

#[test]
fn xla_text_forms_run() {
    // Names reused across computations, shapes left out, instructions inline,
    // a colon after the module name.
    let text = r#"HloModule m:, entry_computation_layout={(f32[4]{0})->f32[]}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = add(x, y)
}

ENTRY e {
  x = f32[4] parameter(0)
  n = negate(x)
  ROOT r = f32[] reduce(multiply(n, f32[4] constant({1, 2, 3, 4})), f32[] constant(0)), dimensions={0}, to_apply=add
}
"#;
    check(
        text,
        &[lit(&[4], &[1f32, 1., 1., 2.])],
        &[Literal::scalar(-14f32)],
    );
}

#[test]
fn dot_algorithm_computes_the_plain_dot() {
    for algorithm in ["dot_bf16_bf16_f32", "dot_tf32_tf32_f32", "dot_f32_f32_f32"] {
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, algorithm={algorithm}\n}}\n"
        );
        // Exactly representable in bf16, so every algorithm gives these.
        let a = lit(&[2, 3], &[1f32, 2., 3., 4., 5., 6.]);
        let b = lit(&[3, 2], &[1f32, -1., 0.5, 2., -2., 0.25]);
        check(&text, &[a, b], &[lit(&[2, 2], &[-4f32, 3.75, -5.5, 7.5])]);
    }
}

#[test]
fn dot_of_different_integer_types() {
    // s8 x s16 -> s32: each operand converted to s32 first.
    let text = "HloModule m\n\nENTRY e {\n  a = s8[2,2] parameter(0)\n  b = s16[2,2] parameter(1)\n  ROOT d = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let a = lit(&[2, 2], &[-128i8, 127, 1, -1]);
    let b = lit(&[2, 2], &[30000i16, -30000, 2, 3]);
    // row 0: -128*30000 + 127*2 = -3839746; -128*-30000 + 127*3 = 3840381
    // row 1: 30000 - 2 = 29998; -30000 - 3 = -30003
    check(
        text,
        &[a.clone(), b.clone()],
        &[lit(&[2, 2], &[-3839746i32, 3840381, 29998, -30003])],
    );
    // u8 x s8 -> s32 (255 stays 255).
    let text = "HloModule m\n\nENTRY e {\n  a = u8[3] parameter(0)\n  b = s8[3] parameter(1)\n  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
    check(
        text,
        &[lit(&[3], &[255u8, 2, 3]), lit(&[3], &[-1i8, 100, -128])],
        &[Literal::scalar(-255i32 + 200 - 384)],
    );
    // Without a declared shape the wider type is the result: s8 x s16 -> s16.
    let text = "HloModule m\n\nENTRY e {\n  a = s8[2,2] parameter(0)\n  b = s16[2,2] parameter(1)\n  ROOT d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    check(
        text,
        &[
            lit(&[2, 2], &[3i8, -2, 1, 0]),
            lit(&[2, 2], &[100i16, 7, -5, 9]),
        ],
        &[lit(&[2, 2], &[310i16, 3, 100, 7])],
    );
}

#[test]
fn dot_of_different_float_types() {
    let text = "HloModule m\n\nENTRY e {\n  a = f16[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
    let a = lit(&[2], &[half::f16::from_f32(1.5), half::f16::from_f32(-2.0)]);
    let b = lit(&[2], &[0.1f32, 3.0]);
    check(text, &[a, b], &[Literal::scalar(1.5f32 * 0.1 - 6.0)]);
    let text = "HloModule m\n\nENTRY e {\n  a = bf16[2] parameter(0)\n  b = f16[2] parameter(1)\n  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
    let a = lit(
        &[2],
        &[half::bf16::from_f32(3.0), half::bf16::from_f32(0.5)],
    );
    let b = lit(
        &[2],
        &[half::f16::from_f32(0.25), half::f16::from_f32(-8.0)],
    );
    check(text, &[a, b], &[Literal::scalar(0.75f32 - 4.0)]);
}

#[test]
fn pred_dot_and_convolution_are_or_of_ands() {
    let text = "HloModule m\n\nENTRY e {\n  a = pred[2,3] parameter(0)\n  b = pred[3,2] parameter(1)\n  ROOT d = pred[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let a = bools(&[2, 3], &[true, false, true, false, false, false]);
    let b = bools(&[3, 2], &[false, false, true, true, true, false]);
    check(
        text,
        &[a, b],
        &[bools(&[2, 2], &[true, false, false, false])],
    );
    // 1-d convolution, window 2: out[i] = OR_k (x[i+k] AND w[k]).
    let text = "HloModule m\n\nENTRY e {\n  x = pred[1,1,5] parameter(0)\n  w = pred[1,1,2] parameter(1)\n  ROOT c = pred[1,1,4] convolution(x, w), window={size=2}, dim_labels=bf0_oi0->bf0\n}\n";
    let x = bools(&[1, 1, 5], &[false, true, false, false, true]);
    let w = bools(&[1, 1, 2], &[false, true]);
    check(
        text,
        &[x, w],
        &[bools(&[1, 1, 4], &[true, false, false, true])],
    );
}

#[test]
fn fft_of_zero_elements_is_empty() {
    for (shape, length) in [("c64[0,8]", "8"), ("c64[4,0]", "0"), ("c64[0]", "0")] {
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  x = {shape} parameter(0)\n  ROOT f = {shape} fft(x), fft_type=FFT, fft_length={{{length}}}\n}}\n"
        );
        let dims: Vec<usize> = shape[4..shape.len() - 1]
            .split(',')
            .map(|d| d.parse().unwrap())
            .collect();
        let e = zeros(ElementType::C64, &dims);
        check(&text, std::slice::from_ref(&e), std::slice::from_ref(&e));
    }
    // Real transforms of length 0 keep no bins (XLA's shape rule).
    let text = "HloModule m\n\nENTRY e {\n  x = f32[3,0] parameter(0)\n  ROOT f = c64[3,0] fft(x), fft_type=RFFT, fft_length={0}\n}\n";
    check(
        text,
        &[zeros(ElementType::F32, &[3, 0])],
        &[zeros(ElementType::C64, &[3, 0])],
    );
    let text = "HloModule m\n\nENTRY e {\n  x = c64[3,0] parameter(0)\n  ROOT f = f32[3,0] fft(x), fft_type=IRFFT, fft_length={0}\n}\n";
    check(
        text,
        &[zeros(ElementType::C64, &[3, 0])],
        &[zeros(ElementType::F32, &[3, 0])],
    );
    // A real transform of an empty batch.
    let text = "HloModule m\n\nENTRY e {\n  x = f32[0,8] parameter(0)\n  ROOT f = c64[0,5] fft(x), fft_type=RFFT, fft_length={8}\n}\n";
    check(
        text,
        &[zeros(ElementType::F32, &[0, 8])],
        &[zeros(ElementType::C64, &[0, 5])],
    );
}

#[test]
fn conditional_index_out_of_range_runs_the_last_branch() {
    let text = r#"HloModule m

b0 {
  p = s32[] parameter(0)
  ROOT r = add(p, s32[] constant(10))
}

b1 {
  p = s32[] parameter(0)
  ROOT r = add(p, s32[] constant(20))
}

b2 {
  p = s32[] parameter(0)
  ROOT r = add(p, s32[] constant(30))
}

ENTRY e {
  i = s32[] parameter(0)
  x = s32[] parameter(1)
  ROOT c = s32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
}
"#;
    for (index, want) in [
        (0, 10),
        (1, 20),
        (2, 30),
        (3, 30),
        (-1, 30),
        (i32::MIN, 30),
        (i32::MAX, 30),
    ] {
        check(
            text,
            &[Literal::scalar(index), Literal::scalar(5i32)],
            &[Literal::scalar(5 + want)],
        );
    }
}

#[test]
fn zero_element_arrays_with_huge_dimensions() {
    let text = r#"HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  i = f32[1000000000000,0] iota(), iota_dimension=0
  j = f32[1000000000000,0] add(i, i)
  z = f32[] constant(0)
  r = f32[0] reduce(j, z), dimensions={0}, to_apply=add
  b = f32[0,1000000000000] broadcast(r), dimensions={0}
  t = f32[1000000000000,0] transpose(b), dimensions={1,0}
  ROOT out = (f32[1000000000000,0], f32[0], f32[1000000000000,0]) tuple(i, r, t)
}
"#;
    check(
        text,
        &[],
        &[
            zeros(ElementType::F32, &[1_000_000_000_000, 0]),
            zeros(ElementType::F32, &[0]),
            zeros(ElementType::F32, &[1_000_000_000_000, 0]),
        ],
    );
}
