//! Differential tests of the block evaluator: every fused program here runs
//! twice, once as a block program and once through the unfused fallback (the
//! fused computation compiled as an ordinary nested sequence), on the same
//! random inputs. Results must be bit-identical, except where the program
//! uses a transcendental function or a floating-point reduction (whose order
//! the block evaluator changes): those compare within a tolerance.
//!
//! Each test also checks that the fusion really runs as a block program, so a
//! silent fallback cannot make a test pass.

use platform_api::hlo::Op;
use platform_api::{CompileOptions, ElementType, HloModule, Literal, Shape};
use platform_host::compiler::optimize;
use platform_host::fusion::{self, InPlace, Strategy};
use platform_host::runner::HostRunner;

use crate::rng::Rng;

fn random_literal(shape: &Shape, rng: &mut Rng) -> Literal {
    let a = shape.as_array().expect("array parameter");
    let n = a.element_count();
    let mut bytes = Vec::with_capacity(n * a.element_type.byte_size());
    for _ in 0..n {
        let x = rng.unit() * 8.0 - 4.0;
        match a.element_type {
            ElementType::F32 => bytes.extend_from_slice(&(x as f32).to_le_bytes()),
            ElementType::F64 => bytes.extend_from_slice(&x.to_le_bytes()),
            ElementType::F16 => bytes.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
            ElementType::BF16 => bytes.extend_from_slice(&half::bf16::from_f64(x).to_le_bytes()),
            ElementType::S32 => {
                bytes.extend_from_slice(&((rng.next() % 41) as i32 - 20).to_le_bytes())
            }
            ElementType::S64 => {
                bytes.extend_from_slice(&((rng.next() % 1001) as i64 - 500).to_le_bytes())
            }
            ElementType::U8 => bytes.push(rng.next() as u8),
            ElementType::U32 => bytes.extend_from_slice(&(rng.next() as u32 % 1000).to_le_bytes()),
            ElementType::S8 => bytes.push(rng.next() as u8),
            ElementType::Pred => bytes.push((rng.next() & 1) as u8),
            other => panic!("no generator for {other}"),
        }
    }
    Literal::from_bytes(shape.clone(), &bytes).unwrap()
}

fn values(lit: &Literal) -> Vec<f64> {
    (0..lit.element_count())
        .map(|i| lit.get(i).unwrap().to_f64_lossy())
        .collect()
}

/// How results must agree.
#[derive(Clone, Copy, Debug)]
enum Agree {
    Bits,
    /// `|a - b| <= tol · (1 + |b|)`.
    Within(f64),
}

fn compare(name: &str, got: &Literal, want: &Literal, agree: Agree) {
    assert_eq!(got.shape(), want.shape(), "{name}: shapes");
    match agree {
        Agree::Bits => {
            let (g, w) = (got.bytes().unwrap(), want.bytes().unwrap());
            if g != w {
                let (gv, wv) = (values(got), values(want));
                let i = gv
                    .iter()
                    .zip(&wv)
                    .position(|(a, b)| a.to_bits() != b.to_bits() && !(a.is_nan() && b.is_nan()))
                    .unwrap_or(0);
                if gv
                    .iter()
                    .zip(&wv)
                    .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
                {
                    return; // only NaN payloads differ
                }
                panic!("{name}: element {i}: block {} vs unfused {}", gv[i], wv[i]);
            }
        }
        Agree::Within(tol) => {
            for (i, (a, b)) in values(got).iter().zip(values(want)).enumerate() {
                let ok =
                    (a.is_nan() && b.is_nan()) || a == &b || (a - b).abs() <= tol * (1.0 + b.abs());
                assert!(ok, "{name}: element {i}: block {a} vs unfused {b}");
            }
        }
    }
}

/// Makes instruction names unique in the module (the verifier requires it)
/// by suffixing each computation's names with the computation's.
fn uniquify(text: &str) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut out = String::new();
    let mut comp = String::new();
    let mut names: std::collections::HashSet<String> = Default::default();
    let blocks: Vec<&str> = text.split("\n}").collect();
    for (k, block) in blocks.iter().enumerate() {
        names.clear();
        for line in block.lines() {
            let t = line.trim();
            if t.ends_with('{') && !t.contains('=') {
                comp = t
                    .trim_end_matches('{')
                    .trim()
                    .replace("ENTRY", "")
                    .trim()
                    .to_string();
            } else if let Some((lhs, _)) = t.split_once(" = ") {
                names.insert(lhs.trim_start_matches("ROOT").trim().to_string());
            }
        }
        let mut token = String::new();
        let flush = |token: &mut String, out: &mut String| {
            if names.contains(token.as_str()) {
                out.push_str(&format!("{token}__{comp}"));
            } else {
                out.push_str(token);
            }
            token.clear();
        };
        for c in block.chars() {
            if is_name(c) {
                token.push(c);
            } else {
                flush(&mut token, &mut out);
                out.push(c);
            }
        }
        flush(&mut token, &mut out);
        if k + 1 < blocks.len() {
            out.push_str("\n}");
        }
    }
    out
}

/// Runs `text` both ways on random inputs and compares every result leaf.
/// Every fusion in the module must be a block program.
fn check(name: &str, text: &str, agree: Agree) {
    let text = &uniquify(text);
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
    let optimized = optimize(module.clone(), &CompileOptions::default()).unwrap();
    let mut fusions = 0;
    for comp in &optimized.computations {
        for instr in &comp.instructions {
            if matches!(instr.op, Op::Fusion { .. }) {
                fusions += 1;
                if let Err(e) = fusion::block_support(&optimized, instr) {
                    panic!("{name}: %{} is not a block program: {e}", instr.name);
                }
            }
        }
    }
    assert!(fusions > 0, "{name}: no fusion");
    compare_with_unfused(name, text, 0x9e37_79b9_7f4a_7c15, agree);
}

/// Runs `text` as compiled by default and with every fusion run instruction
/// by instruction (`host_fusion=off`), on the same random inputs (from
/// `seed`), and compares every result leaf.
fn compare_with_unfused(name: &str, text: &str, seed: u64, agree: Agree) {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
    let mut rng = Rng(seed ^ name.len() as u64);
    let args: Vec<Literal> = module
        .computation(module.entry)
        .program_shape()
        .parameters
        .iter()
        .map(|s| random_literal(s, &mut rng))
        .collect();
    let block = HostRunner::compile(text).unwrap_or_else(|e| panic!("{name}: compile: {e}"));
    let unfused = HostRunner::compile_with(text, &Strategy::Unfused.options()).unwrap();
    let got = block
        .run(&args)
        .unwrap_or_else(|e| panic!("{name}: run: {e}"));
    let want = unfused
        .run(&args)
        .unwrap_or_else(|e| panic!("{name}: unfused run: {e}"));
    let (g, w) = (got.flatten_leaves(), want.flatten_leaves());
    assert_eq!(g.len(), w.len(), "{name}: result count");
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        compare(&format!("{name} out{k}"), a, b, agree);
    }
}

const REDUCERS: &str = r#"
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, v0, v1)
  i = s32[] select(keep, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
"#;

fn module(fused: &str, entry: &str) -> String {
    format!("HloModule m\n{REDUCERS}\n{fused}\nENTRY main {{\n{entry}\n}}\n")
}

#[test]
fn elementwise_chains_with_every_broadcast() {
    let text = module(
        r#"
fc {
  p0 = f32[37,50] parameter(0)
  p1 = f32[] parameter(1)
  p2 = f32[50] parameter(2)
  p3 = f32[37] parameter(3)
  c = f32[] constant(0.5)
  bc = f32[37,50] broadcast(c), dimensions={}
  b1 = f32[37,50] broadcast(p1), dimensions={}
  b2 = f32[37,50] broadcast(p2), dimensions={1}
  b3 = f32[37,50] broadcast(p3), dimensions={0}
  m = f32[37,50] multiply(p0, b1)
  a = f32[37,50] add(m, b2)
  s = f32[37,50] subtract(a, b3)
  d = f32[37,50] divide(s, bc)
  mx = f32[37,50] maximum(d, p0)
  mn = f32[37,50] minimum(mx, b2)
  ab = f32[37,50] abs(mn)
  ng = f32[37,50] negate(ab)
  fl = f32[37,50] floor(ng)
  cmp = pred[37,50] compare(fl, s), direction=LT
  sel = f32[37,50] select(cmp, fl, a)
  cv = f64[37,50] convert(sel)
  sq = f64[37,50] multiply(cv, cv)
  ROOT back = f32[37,50] convert(sq)
}
"#,
        r#"  p0 = f32[37,50] parameter(0)
  p1 = f32[] parameter(1)
  p2 = f32[50] parameter(2)
  p3 = f32[37] parameter(3)
  ROOT f = f32[37,50] fusion(p0, p1, p2, p3), kind=kLoop, calls=fc"#,
    );
    check("elementwise", &text, Agree::Bits);
}

#[test]
fn values_repeated_along_the_innermost_dimension() {
    // A per-group value broadcast over `[.., groups, r]` (GroupNorm's mean)
    // is loaded as its distinct values, each then written `r` times: one
    // store per value where `r` is a power of two, one per element
    // otherwise. Blocks of 1024 positions start mid-repeat for r = 3 and 5.
    // f32, bf16 and s8 cover three element widths; the iota's repeat takes
    // the ordinary path.
    for ty in ["f32", "bf16", "s8"] {
        for r in [2, 3, 4, 5, 8, 16] {
            let text = module(
                r#"
fc {
  p0 = T[5,11,7,R] parameter(0)
  p1 = T[5,7] parameter(1)
  p2 = T[7,2] parameter(2)
  b1 = T[5,11,7,R] broadcast(p1), dimensions={0,2}
  s = T[5,11,7,R] subtract(p0, b1)
  b2 = T[5,11,7,2,R] broadcast(p2), dimensions={2,3}
  t = T[5,11,7,2,R] transpose(b2), dimensions={0,1,2,3,4}
  i = s32[5,11,7,R] iota(), iota_dimension=2
  ic = T[5,11,7,R] convert(i)
  a = T[5,11,7,R] add(s, ic)
  sl = T[5,11,7,1,R] slice(t), slice={[0:5], [0:11], [0:7], [1:2], [0:R]}
  r = T[5,11,7,R] reshape(sl)
  ROOT o = T[5,11,7,R] multiply(a, r)
}
"#,
                r#"  p0 = T[5,11,7,R] parameter(0)
  p1 = T[5,7] parameter(1)
  p2 = T[7,2] parameter(2)
  ROOT f = T[5,11,7,R] fusion(p0, p1, p2), kind=kLoop, calls=fc"#,
            )
            .replace("T[", &format!("{ty}["))
            .replace(",R]", &format!(",{r}]"))
            .replace("[0:R]", &format!("[0:{r}]"));
            check(&format!("repeated {ty} r={r}"), &text, Agree::Bits);
        }
    }
}

#[test]
fn a_run_repeated_down_every_outer_dimension() {
    // A per-channel vector broadcast along every outer dimension (an image
    // normalisation's mean and scale, `[.., c]`) is written out once per
    // task and each block read from it at its phase: blocks start
    // mid-period for most `r`, the slice reads its run at an offset, and
    // r = 1025 (longer than a periodic leaf's longest run) takes the
    // ordinary path.
    for ty in ["f32", "bf16", "s8"] {
        for r in [2, 3, 5, 17, 100, 1000, 1025] {
            let text = module(
                r#"
fc {
  p0 = T[16,97,R] parameter(0)
  p1 = T[R] parameter(1)
  p2 = T[2,R] parameter(2)
  b1 = T[16,97,R] broadcast(p1), dimensions={2}
  s = T[16,97,R] subtract(p0, b1)
  sl = T[1,R] slice(p2), slice={[1:2], [0:R]}
  row = T[R] reshape(sl)
  b2 = T[16,97,R] broadcast(row), dimensions={2}
  ROOT o = T[16,97,R] multiply(s, b2)
}
"#,
                r#"  p0 = T[16,97,R] parameter(0)
  p1 = T[R] parameter(1)
  p2 = T[2,R] parameter(2)
  ROOT f = T[16,97,R] fusion(p0, p1, p2), kind=kLoop, calls=fc"#,
            )
            .replace("T[", &format!("{ty}["))
            .replace(",R]", &format!(",{r}]"))
            .replace("[R]", &format!("[{r}]"))
            .replace("[0:R]", &format!("[0:{r}]"));
            check(&format!("periodic {ty} r={r}"), &text, Agree::Bits);
        }
    }
}

#[test]
fn a_value_read_over_whole_blocks() {
    // A per-channel scale and bias over NCHW planes: most blocks read one
    // value of each, from a block the task keeps and refills only when the
    // channel changes. Planes shorter than a block, of a block and a bit,
    // and many blocks long; blocks crossing planes; the values both read by
    // generated code and by a step (`exponential`) that takes them as
    // blocks.
    for ty in ["f32", "bf16", "s32"] {
        for plane in [7, 1000, 1025, 5000] {
            let text = module(
                r#"
fc {
  p0 = T[3,5,P] parameter(0)
  p1 = T[5] parameter(1)
  p2 = T[5] parameter(2)
  b1 = T[3,5,P] broadcast(p1), dimensions={1}
  b2 = T[3,5,P] broadcast(p2), dimensions={1}
  m = T[3,5,P] multiply(p0, b1)
  a = T[3,5,P] add(m, b2)
  ROOT o = T[3,5,P] subtract(a, b1)
}
"#,
                r#"  p0 = T[3,5,P] parameter(0)
  p1 = T[5] parameter(1)
  p2 = T[5] parameter(2)
  ROOT f = T[3,5,P] fusion(p0, p1, p2), kind=kLoop, calls=fc"#,
            )
            .replace("T[", &format!("{ty}["))
            .replace(",P]", &format!(",{plane}]"));
            check(&format!("splat {ty} plane={plane}"), &text, Agree::Bits);
        }
    }
    for plane in [7, 1025, 5000] {
        let text = module(
            r#"
fc {
  p0 = f32[2,3,P] parameter(0)
  p1 = f32[3] parameter(1)
  b1 = f32[2,3,P] broadcast(p1), dimensions={1}
  e = f32[2,3,P] exponential(b1)
  ROOT o = f32[2,3,P] multiply(p0, e)
}
"#,
            r#"  p0 = f32[2,3,P] parameter(0)
  p1 = f32[3] parameter(1)
  ROOT f = f32[2,3,P] fusion(p0, p1), kind=kLoop, calls=fc"#,
        )
        .replace(",P]", &format!(",{plane}]"));
        check(
            &format!("splat through a step, plane={plane}"),
            &text,
            Agree::Bits,
        );
    }
}

#[test]
fn a_transposed_result_computed_in_one_pass() {
    // NHWC bytes normalised per channel and written NCHW (the fusion pass
    // makes this one fusion, its leaves read three elements apart), and a
    // transpose moving a stride-2 dimension innermost.
    let text = module(
        r#"
fc {
  img = u8[2,37,41,3] parameter(0)
  mean = f32[3] parameter(1)
  x = f32[2,37,41,3] convert(img)
  mb = f32[2,37,41,3] broadcast(mean), dimensions={3}
  d = f32[2,37,41,3] subtract(x, mb)
  ROOT t = f32[2,3,37,41] transpose(d), dimensions={0,3,1,2}
}
"#,
        r#"  img = u8[2,37,41,3] parameter(0)
  mean = f32[3] parameter(1)
  ROOT f = f32[2,3,37,41] fusion(img, mean), kind=kLoop, calls=fc"#,
    );
    check("nhwc to nchw", &text, Agree::Bits);
    let text = module(
        r#"
fc {
  p = s32[300,7,2] parameter(0)
  q = s32[300,7,2] multiply(p, p)
  ROOT t = s32[7,2,300] transpose(q), dimensions={1,2,0}
}
"#,
        r#"  p = s32[300,7,2] parameter(0)
  ROOT f = s32[7,2,300] fusion(p), kind=kLoop, calls=fc"#,
    );
    check("stride 14", &text, Agree::Bits);
    let text = module(
        r#"
fc {
  p = bf16[64,300,2] parameter(0)
  q = bf16[64,300,2] negate(p)
  ROOT t = bf16[64,2,300] transpose(q), dimensions={0,2,1}
}
"#,
        r#"  p = bf16[64,300,2] parameter(0)
  ROOT f = bf16[64,2,300] fusion(p), kind=kLoop, calls=fc"#,
    );
    check("stride 2", &text, Agree::Bits);
}

#[test]
fn transcendentals_within_a_few_ulp() {
    let text = module(
        r#"
fc {
  p0 = f32[64,33] parameter(0)
  p1 = f32[64,33] parameter(1)
  one = f32[] constant(1)
  b1 = f32[64,33] broadcast(one), dimensions={}
  m = f32[64,33] multiply(p0, p1)
  a = f32[64,33] add(m, b1)
  t = f32[64,33] tanh(a)
  ab = f32[64,33] abs(p0)
  ng = f32[64,33] negate(ab)
  e = f32[64,33] exponential(ng)
  q = f32[64,33] multiply(p1, p1)
  q1 = f32[64,33] add(q, b1)
  d = f32[64,33] divide(e, q1)
  lg = f32[64,33] log-plus-one(q)
  r = f32[64,33] rsqrt(q1)
  l = f32[64,33] logistic(p0)
  s1 = f32[64,33] add(lg, r)
  s2 = f32[64,33] add(s1, l)
  s3 = f32[64,33] subtract(t, d)
  ROOT o = f32[64,33] add(s2, s3)
}
"#,
        r#"  p0 = f32[64,33] parameter(0)
  p1 = f32[64,33] parameter(1)
  ROOT f = f32[64,33] fusion(p0, p1), kind=kLoop, calls=fc"#,
    );
    check("transcendental", &text, Agree::Within(1e-6));
}

#[test]
fn transposes_slices_reverses_and_iotas_inside() {
    let text = module(
        r#"
fc {
  p0 = f32[20,30] parameter(0)
  p1 = f32[30,20] parameter(1)
  p2 = f32[25,70] parameter(2)
  p3 = f32[2,3,5,20] parameter(3)
  t = f32[20,30] transpose(p1), dimensions={1,0}
  s = f32[20,30] slice(p2), slice={[3:23], [1:61:2]}
  r = f32[20,30] reverse(s), dimensions={0,1}
  x = f32[20,30] add(p0, t)
  y = f32[20,30] multiply(x, r)
  i0 = s32[20,30] iota(), iota_dimension=0
  i1 = s32[20,30] iota(), iota_dimension=1
  ge = pred[20,30] compare(i0, i1), direction=GE
  z = f32[] constant(0)
  bz = f32[20,30] broadcast(z), dimensions={}
  masked = f32[20,30] select(ge, y, bz)
  tr = f32[30,20] transpose(p3), dimensions={}
  ROOT o = f32[20,30] add(masked, p0)
}
"#,
        r#"  p0 = f32[20,30] parameter(0)
  p1 = f32[30,20] parameter(1)
  p2 = f32[25,70] parameter(2)
  p3 = f32[2,3,5,20] parameter(3)
  ROOT f = f32[20,30] fusion(p0, p1, p2, p3), kind=kLoop, calls=fc"#,
    )
    .replace("  tr = f32[30,20] transpose(p3), dimensions={}\n", "");
    check("movement", &text, Agree::Bits);
    // A reshape between two transposes needs a second view stage.
    let text = module(
        r#"
fc {
  p0 = f32[4,6,10] parameter(0)
  p1 = f32[60,4] parameter(1)
  t = f32[10,4,6] transpose(p0), dimensions={2,0,1}
  r = f32[10,24] reshape(t)
  t2 = f32[24,10] transpose(r), dimensions={1,0}
  r2 = f32[4,60] reshape(t2)
  t3 = f32[60,4] transpose(r2), dimensions={1,0}
  e = f32[60,4] exponential(t3)
  ROOT o = f32[60,4] add(e, p1)
}
"#,
        r#"  p0 = f32[4,6,10] parameter(0)
  p1 = f32[60,4] parameter(1)
  ROOT f = f32[60,4] fusion(p0, p1), kind=kLoop, calls=fc"#,
    );
    check("reshape between transposes", &text, Agree::Within(1e-6));
}

#[test]
fn integer_and_narrow_float_types() {
    let text = module(
        r#"
fc {
  p0 = s32[40,17] parameter(0)
  p1 = s32[40,17] parameter(1)
  d = s32[40,17] divide(p0, p1)
  r = s32[40,17] remainder(p0, p1)
  sh = s32[40,17] shift-left(d, p1)
  x = s32[40,17] xor(sh, r)
  c = u8[40,17] convert(x)
  back = s32[40,17] convert(c)
  ROOT o = s32[40,17] add(back, r)
}
"#,
        r#"  p0 = s32[40,17] parameter(0)
  p1 = s32[40,17] parameter(1)
  ROOT f = s32[40,17] fusion(p0, p1), kind=kLoop, calls=fc"#,
    );
    check("integers", &text, Agree::Bits);
    let text = module(
        r#"
fc {
  p0 = f16[33,9] parameter(0)
  p1 = bf16[33,9] parameter(1)
  a = f32[33,9] convert(p0)
  b = f32[33,9] convert(p1)
  m = f32[33,9] multiply(a, b)
  h = f16[33,9] convert(m)
  h2 = f16[33,9] add(h, p0)
  k = bf16[33,9] convert(h2)
  ROOT o = bf16[33,9] multiply(k, p1)
}
"#,
        r#"  p0 = f16[33,9] parameter(0)
  p1 = bf16[33,9] parameter(1)
  ROOT f = bf16[33,9] fusion(p0, p1), kind=kLoop, calls=fc"#,
    );
    check("narrow floats", &text, Agree::Bits);
}

#[test]
fn rotates_as_random_number_generators_write_them() {
    // Threefry's round: a rotate by a uniform amount written as two shifts
    // and an or, in either order, with amounts both inside and past the
    // width; one shift also read on its own, and a signed type.
    let text = module(
        r#"
fc {
  p0 = u32[64,33] parameter(0)
  p1 = u32[64,33] parameter(1)
  k = u32[] parameter(2)
  w = u32[] constant(32)
  m = u32[] constant(63)
  k6 = u32[] and(k, m)
  rk = u32[] subtract(w, k6)
  bl = u32[64,33] broadcast(k6), dimensions={}
  br = u32[64,33] broadcast(rk), dimensions={}
  a = u32[64,33] add(p0, p1)
  l = u32[64,33] shift-left(p1, bl)
  r = u32[64,33] shift-right-logical(p1, br)
  rot = u32[64,33] or(l, r)
  x = u32[64,33] xor(a, rot)
  l2 = u32[64,33] shift-left(x, p0)
  r2 = u32[64,33] shift-right-logical(x, p1)
  rot2 = u32[64,33] or(r2, l2)
  y = u32[64,33] add(rot2, l)
  ROOT o = (u32[64,33], u32[64,33]) tuple(x, y)
}
"#,
        r#"  p0 = u32[64,33] parameter(0)
  p1 = u32[64,33] parameter(1)
  k = u32[] parameter(2)
  ROOT f = (u32[64,33], u32[64,33]) fusion(p0, p1, k), kind=kLoop, calls=fc"#,
    );
    check("unsigned rotates", &text, Agree::Bits);
    let text = module(
        r#"
fc {
  p0 = s32[40,17] parameter(0)
  p1 = s32[40,17] parameter(1)
  l = s32[40,17] shift-left(p0, p1)
  n = s32[40,17] negate(p1)
  r = s32[40,17] shift-right-logical(p0, n)
  ROOT o = s32[40,17] or(l, r)
}
"#,
        r#"  p0 = s32[40,17] parameter(0)
  p1 = s32[40,17] parameter(1)
  ROOT f = s32[40,17] fusion(p0, p1), kind=kLoop, calls=fc"#,
    );
    check("signed shift pairs", &text, Agree::Bits);
}

#[test]
fn short_rows_repeated_down_the_block() {
    // A batch norm over 24 channels (rows far shorter than a per-row call
    // pays for): per-channel vectors, one a slice of a longer one, broadcast
    // down 3000 rows (several blocks per task, the last one partial), and
    // the per-channel sum of squares as a column reduction over them.
    let text = module(
        r#"
fc {
  x = f32[3000,24] parameter(0)
  mean = f32[24] parameter(1)
  scale = f32[48] parameter(2)
  m = f32[3000,24] broadcast(mean), dimensions={1}
  s24 = f32[24] slice(scale), slice={[24:48]}
  s = f32[3000,24] broadcast(s24), dimensions={1}
  c = f32[24] constant({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24})
  cb = f32[3000,24] broadcast(c), dimensions={1}
  d = f32[3000,24] subtract(x, m)
  n = f32[3000,24] multiply(d, s)
  ROOT o = f32[3000,24] add(n, cb)
}
"#,
        r#"  x = f32[3000,24] parameter(0)
  mean = f32[24] parameter(1)
  scale = f32[48] parameter(2)
  ROOT f = f32[3000,24] fusion(x, mean, scale), kind=kLoop, calls=fc"#,
    );
    check("short repeated rows", &text, Agree::Bits);
    let text = module(
        r#"
fc {
  x = s32[20000,24] parameter(0)
  mean = s32[24] parameter(1)
  m = s32[20000,24] broadcast(mean), dimensions={1}
  d = s32[20000,24] subtract(x, m)
  sq = s32[20000,24] multiply(d, d)
  z = s32[] constant(0)
  ROOT r = s32[24] reduce(sq, z), dimensions={0}, to_apply=add_s32
}
"#,
        r#"  x = s32[20000,24] parameter(0)
  mean = s32[24] parameter(1)
  ROOT f = s32[24] fusion(x, mean), kind=kInput, calls=fc"#,
    );
    check("short-row column sums", &text, Agree::Bits);
}

#[test]
fn short_contiguous_runs_read_through_transposed_views() {
    // GroupNorm's statistics: a reduction over {1, 2, 4} of [n, h, w, g, c]
    // reads its operand as runs of `c` contiguous elements (loaded by a
    // walker that copies each run inline), integer so that the block
    // program's order of addition is exact; then an elementwise transpose
    // whose innermost run of 3 stays contiguous, at several element widths.
    let text = module(
        r#"
fc {
  p0 = s32[2,6,5,4,3] parameter(0)
  z = s32[] constant(0)
  sq = s32[2,6,5,4,3] multiply(p0, p0)
  ROOT r = s32[2,4] reduce(sq, z), dimensions={1,2,4}, to_apply=add_s32
}
"#,
        r#"  p0 = s32[2,6,5,4,3] parameter(0)
  ROOT f = s32[2,4] fusion(p0), kind=kInput, calls=fc"#,
    );
    check("grouped statistics", &text, Agree::Bits);
    for ty in ["f32", "bf16", "s8", "f64"] {
        let text = module(
            r#"
fc {
  p0 = T[7,5,3] parameter(0)
  p1 = T[5,7,3] parameter(1)
  t = T[5,7,3] transpose(p0), dimensions={1,0,2}
  ROOT o = T[5,7,3] multiply(t, p1)
}
"#,
            r#"  p0 = T[7,5,3] parameter(0)
  p1 = T[5,7,3] parameter(1)
  ROOT f = T[5,7,3] fusion(p0, p1), kind=kLoop, calls=fc"#,
        )
        .replace("T[", &format!("{ty}["));
        check(&format!("short runs {ty}"), &text, Agree::Bits);
    }
}

#[test]
fn row_column_total_and_mixed_reductions() {
    // Row and column sums of the same input in one multi-output fusion,
    // integer so that reassociation is exact.
    let text = module(
        r#"
fc {
  p0 = s32[300,70] parameter(0)
  z = s32[] constant(0)
  five = s32[] constant(5)
  sq = s32[300,70] multiply(p0, p0)
  rows = s32[300] reduce(sq, z), dimensions={1}, to_apply=add_s32
  cols = s32[70] reduce(p0, five), dimensions={0}, to_apply=add_s32
  ROOT t = (s32[300], s32[70]) tuple(rows, cols)
}
"#,
        r#"  p0 = s32[300,70] parameter(0)
  ROOT f = (s32[300], s32[70]) fusion(p0), kind=kInput, calls=fc"#,
    );
    check("row and column", &text, Agree::Bits);
    // Total and mixed-dimension reductions; long rows (chunked) too.
    let text = module(
        r#"
fc {
  p0 = f32[6,7,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[7] reduce(p0, z), dimensions={0,2}, to_apply=add_f32
}
fd {
  p0 = f32[3,10000] parameter(0)
  z = f32[] constant(-inf)
  e = f32[3,10000] exponential(p0)
  ROOT r = f32[3] reduce(e, z), dimensions={1}, to_apply=max_f32
}
fe {
  p0 = s32[20000] parameter(0)
  seven = s32[] constant(7)
  ROOT r = s32[] reduce(p0, seven), dimensions={0}, to_apply=add_s32
}
"#,
        r#"  p0 = f32[6,7,8] parameter(0)
  p1 = f32[3,10000] parameter(1)
  p2 = s32[20000] parameter(2)
  a = f32[7] fusion(p0), kind=kInput, calls=fc
  b = f32[3] fusion(p1), kind=kInput, calls=fd
  c = s32[] fusion(p2), kind=kInput, calls=fe
  ROOT t = (f32[7], f32[3], s32[]) tuple(a, b, c)"#,
    );
    check("mixed, chunked and total", &text, Agree::Within(1e-5));
}

#[test]
fn variadic_argmax_rows_and_columns() {
    let text = module(
        r#"
fc {
  p0 = f32[50,40] parameter(0)
  i = s32[50,40] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[50], s32[50]) reduce(p0, i, ninf, zero), dimensions={1}, to_apply=argmax
}
fd {
  p0 = f32[50,40] parameter(0)
  i = s32[50,40] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[40], s32[40]) reduce(p0, i, ninf, zero), dimensions={0}, to_apply=argmax
  v = f32[40] get-tuple-element(r), index=0
  k = s32[40] get-tuple-element(r), index=1
  ROOT t = (s32[40], f32[40]) tuple(k, v)
}
"#,
        r#"  p0 = f32[50,40] parameter(0)
  a = (f32[50], s32[50]) fusion(p0), kind=kInput, calls=fc
  b = (s32[40], f32[40]) fusion(p0), kind=kInput, calls=fd
  ROOT t = ((f32[50], s32[50]), (s32[40], f32[40])) tuple(a, b)"#,
    );
    check("argmax", &text, Agree::Bits);
}

#[test]
fn softmax_and_layernorm_in_one_fusion() {
    let text = module(
        r#"
softmax {
  x = f32[64,300] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bmx = f32[64,300] broadcast(mx), dimensions={0}
  sub = f32[64,300] subtract(x, bmx)
  e = f32[64,300] exponential(sub)
  s = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  s1 = f32[64,1] reshape(s)
  s2 = f32[64] reshape(s1)
  bs = f32[64,300] broadcast(s2), dimensions={0}
  ROOT d = f32[64,300] divide(e, bs)
}
layernorm {
  x = f32[64,300] parameter(0)
  g = f32[300] parameter(1)
  zero = f32[] constant(0)
  n = f32[] constant(300)
  eps = f32[] constant(1e-5)
  sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=add_f32
  bn = f32[64] broadcast(n), dimensions={}
  mean = f32[64] divide(sum, bn)
  bmean = f32[64,300] broadcast(mean), dimensions={0}
  xc = f32[64,300] subtract(x, bmean)
  sq = f32[64,300] multiply(xc, xc)
  var0 = f32[64] reduce(sq, zero), dimensions={1}, to_apply=add_f32
  var = f32[64] divide(var0, bn)
  be = f32[64] broadcast(eps), dimensions={}
  ve = f32[64] add(var, be)
  rs = f32[64] rsqrt(ve)
  brs = f32[64,300] broadcast(rs), dimensions={0}
  y = f32[64,300] multiply(xc, brs)
  bg = f32[64,300] broadcast(g), dimensions={1}
  ROOT o = f32[64,300] multiply(y, bg)
}
"#,
        r#"  x = f32[64,300] parameter(0)
  g = f32[300] parameter(1)
  a = f32[64,300] fusion(x), kind=kInput, calls=softmax
  b = f32[64,300] fusion(x, g), kind=kInput, calls=layernorm
  ROOT t = (f32[64,300], f32[64,300]) tuple(a, b)"#,
    );
    check("softmax+layernorm", &text, Agree::Within(1e-5));
}

#[test]
fn multi_output_and_outer_level_roots() {
    let text = module(
        r#"
fc {
  x = f32[128,96] parameter(0)
  zero = f32[] constant(0)
  e = f32[128,96] exponential(x)
  s = f32[128] reduce(e, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[128,96], f32[128]) tuple(e, s)
}
fd {
  p = f32[8,4] parameter(0)
  one = f32[] constant(1)
  zero = f32[] constant(0)
  b = f32[8] broadcast(one), dimensions={}
  r = f32[8] reduce(p, zero), dimensions={1}, to_apply=add_f32
  ROOT d = f32[8] divide(b, r)
}
fl {
  p = f32[30,12] parameter(0)
  zero = f32[] constant(0)
  r = f32[12] reduce(p, zero), dimensions={0}, to_apply=add_f32
  a = f32[12] abs(r)
  ROOT l = f32[12] log-plus-one(a)
}
"#,
        r#"  x = f32[128,96] parameter(0)
  p = f32[8,4] parameter(1)
  q = f32[30,12] parameter(2)
  a = (f32[128,96], f32[128]) fusion(x), kind=kInput, calls=fc
  b = f32[8] fusion(p), kind=kLoop, calls=fd
  c = f32[12] fusion(q), kind=kLoop, calls=fl
  ROOT t = ((f32[128,96], f32[128]), f32[8], f32[12]) tuple(a, b, c)"#,
    );
    check("multi-output", &text, Agree::Within(1e-5));
}

#[test]
fn a_row_reduction_broadcast_back_as_the_root() {
    // XLA's `__ynn_fusion` of softmax's max: the fusion's root is the
    // broadcast itself (it stored nothing, leaving zeros, before the fix).
    let text = module(
        r#"
fm {
  p = f32[32,128] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[32] reduce(p, ninf), dimensions={1}, to_apply=max_f32
  ROOT b = f32[32,128] broadcast(m), dimensions={0}
}
"#,
        r#"  x = f32[32,128] parameter(0)
  ROOT f = f32[32,128] fusion(x), kind=kCustom, calls=fm"#,
    );
    check("broadcast-root", &text, Agree::Bits);
}

#[test]
fn large_fusions_split_into_tasks() {
    // Big enough to be split over the compute pool, with column partials
    // combined across tasks (integer: exact).
    let text = module(
        r#"
fc {
  p0 = s32[1024,513] parameter(0)
  p1 = s32[513] parameter(1)
  z = s32[] constant(0)
  b = s32[1024,513] broadcast(p1), dimensions={1}
  m = s32[1024,513] multiply(p0, b)
  a = s32[1024,513] add(m, p0)
  rows = s32[1024] reduce(a, z), dimensions={1}, to_apply=add_s32
  cols = s32[513] reduce(a, z), dimensions={0}, to_apply=add_s32
  ROOT t = (s32[1024,513], s32[1024], s32[513]) tuple(a, rows, cols)
}
fl {
  p0 = f32[3000000] parameter(0)
  two = f32[] constant(2)
  b = f32[3000000] broadcast(two), dimensions={}
  ROOT m = f32[3000000] multiply(p0, b)
}
"#,
        r#"  p0 = s32[1024,513] parameter(0)
  p1 = s32[513] parameter(1)
  p2 = f32[3000000] parameter(2)
  a = (s32[1024,513], s32[1024], s32[513]) fusion(p0, p1), kind=kInput, calls=fc
  b = f32[3000000] fusion(p2), kind=kLoop, calls=fl
  ROOT t = ((s32[1024,513], s32[1024], s32[513]), f32[3000000]) tuple(a, b)"#,
    );
    check("tasks", &text, Agree::Bits);
}

/// The operands the root fusion's results may be written over, as its plan
/// names them after the Host's passes.
fn root_in_place(text: &str) -> Vec<InPlace> {
    let module = optimize(
        HloModule::parse(&uniquify(text)).unwrap(),
        &CompileOptions::default(),
    )
    .unwrap();
    let entry = module.computation(module.entry);
    let plan = fusion::plan(&module, entry.root_instr(), &CompileOptions::default()).unwrap();
    plan.in_place_operands().to_vec()
}

#[test]
fn result_written_over_a_dying_operand() {
    // `e` is a temporary that dies at the fusion, read only at the result's
    // positions: buffer assignment may write the result over it.
    let text = module(
        r#"
fc {
  a = f32[300,40] parameter(0)
  b = f32[40] parameter(1)
  bb = f32[300,40] broadcast(b), dimensions={1}
  m = f32[300,40] multiply(a, bb)
  ROOT s = f32[300,40] add(m, a)
}
"#,
        r#"  x = f32[300,40] parameter(0)
  b = f32[40] parameter(1)
  e = f32[300,40] exponential(x)
  ROOT f = f32[300,40] fusion(e, b), kind=kLoop, calls=fc"#,
    );
    assert_eq!(
        root_in_place(&text),
        [InPlace {
            result: 0,
            operand: 0,
            elementwise: true
        }]
    );
    check("in place", &text, Agree::Within(1e-6));
    // A transposed read of the operand forbids it.
    let text2 = text.replace(
        "ROOT s = f32[300,40] add(m, a)",
        "t = f32[300,40] reverse(a), dimensions={0}\n  ROOT s = f32[300,40] add(m, t)",
    );
    assert!(root_in_place(&text2).is_empty());
    check("not in place", &text2, Agree::Within(1e-6));
}

#[test]
fn multi_output_results_written_over_operands_read_before_them() {
    // `s` is written before `p` reads both operands, so it may overwrite
    // neither; `q` is written after every read, so it may overwrite either.
    let text = module(
        r#"
fc {
  a = f32[300,40] parameter(0)
  b = f32[300,40] parameter(1)
  s = f32[300,40] add(a, b)
  p = f32[300,40] multiply(a, b)
  q = f32[300,40] subtract(p, s)
  ROOT t = (f32[300,40], f32[300,40]) tuple(s, q)
}
"#,
        r#"  x = f32[300,40] parameter(0)
  y = f32[300,40] parameter(1)
  e = f32[300,40] exponential(x)
  g = f32[300,40] exponential(y)
  ROOT f = (f32[300,40], f32[300,40]) fusion(e, g), kind=kLoop, calls=fc"#,
    );
    let pairs = root_in_place(&text);
    assert!(
        pairs.iter().all(|p| p.result == 1 && !p.elementwise),
        "{pairs:?}"
    );
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    check("multi-output in place", &text, Agree::Within(1e-6));
}

/// Random fused programs over a [R, C] domain: leaves read through every
/// kind of view, exact elementwise ops, optionally ending in a reduction.
#[test]
fn random_fused_programs() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for case in 0..40 {
        let r = 1 + rng.below(70);
        let c = 1 + rng.below(90);
        let mut params: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        let mut vals: Vec<String> = Vec::new();
        let leaves = 2 + rng.below(4);
        for k in 0..leaves {
            let name = format!("v{k}");
            let line = match rng.below(6) {
                0 => {
                    params.push(format!("f32[{r},{c}]"));
                    format!("{name} = f32[{r},{c}] parameter({})", params.len() - 1)
                }
                1 => {
                    params.push("f32[]".into());
                    let p = params.len() - 1;
                    format!("q{k} = f32[] parameter({p})\n  {name} = f32[{r},{c}] broadcast(q{k}), dimensions={{}}")
                }
                2 => {
                    params.push(format!("f32[{c}]"));
                    let p = params.len() - 1;
                    format!("q{k} = f32[{c}] parameter({p})\n  {name} = f32[{r},{c}] broadcast(q{k}), dimensions={{1}}")
                }
                3 => {
                    params.push(format!("f32[{r}]"));
                    let p = params.len() - 1;
                    format!("q{k} = f32[{r}] parameter({p})\n  {name} = f32[{r},{c}] broadcast(q{k}), dimensions={{0}}")
                }
                4 => {
                    params.push(format!("f32[{c},{r}]"));
                    let p = params.len() - 1;
                    format!("q{k} = f32[{c},{r}] parameter({p})\n  {name} = f32[{r},{c}] transpose(q{k}), dimensions={{1,0}}")
                }
                _ => {
                    params.push(format!("f32[{},{}]", r + 3, 2 * c + 1));
                    let p = params.len() - 1;
                    format!(
                        "q{k} = f32[{},{}] parameter({p})\n  {name} = f32[{r},{c}] slice(q{k}), slice={{[2:{}], [1:{}:2]}}",
                        r + 3,
                        2 * c + 1,
                        r + 2,
                        2 * c + 1
                    )
                }
            };
            lines.push(line);
            vals.push(name);
        }
        let ops = ["add", "subtract", "multiply", "maximum", "minimum"];
        let unary = ["abs", "negate", "floor", "ceil"];
        for k in 0..(2 + rng.below(8)) {
            let name = format!("t{k}");
            let line = if rng.below(4) == 0 {
                let a = &vals[rng.below(vals.len())];
                format!(
                    "{name} = f32[{r},{c}] {}({a})",
                    unary[rng.below(unary.len())]
                )
            } else {
                let a = &vals[rng.below(vals.len())];
                let b = &vals[rng.below(vals.len())];
                format!(
                    "{name} = f32[{r},{c}] {}({a}, {b})",
                    ops[rng.below(ops.len())]
                )
            };
            lines.push(line);
            vals.push(name);
        }
        let last = vals.last().unwrap().clone();
        let (root, shape, agree) = match rng.below(3) {
            0 => (format!("ROOT out = f32[{r},{c}] add({last}, v0)"), format!("f32[{r},{c}]"), Agree::Bits),
            1 => (
                format!("z = f32[] constant(0)\n  ROOT out = f32[{r}] reduce({last}, z), dimensions={{1}}, to_apply=add_f32"),
                format!("f32[{r}]"),
                Agree::Within(1e-4),
            ),
            _ => (
                format!("z = f32[] constant(-inf)\n  ROOT out = f32[{c}] reduce({last}, z), dimensions={{0}}, to_apply=max_f32"),
                format!("f32[{c}]"),
                Agree::Bits,
            ),
        };
        let fused = format!("fc {{\n  {}\n  {root}\n}}\n", lines.join("\n  "));
        let entry_params: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, s)| format!("  e{i} = {s} parameter({i})"))
            .collect();
        let args: Vec<String> = (0..params.len()).map(|i| format!("e{i}")).collect();
        let entry = format!(
            "{}\n  ROOT f = {shape} fusion({}), kind=kLoop, calls=fc",
            entry_params.join("\n"),
            args.join(", ")
        );
        check(&format!("random {case}"), &module(&fused, &entry), agree);
    }
}

#[test]
fn causal_mask_of_iotas_broadcast_over_heads() {
    // The mask depends on iotas and constants only: it is evaluated when the
    // fusion is compiled and read through a broadcast view.
    let text = module(
        r#"
fc {
  s = f32[2,3,80,80] parameter(0)
  i = s32[80] iota(), iota_dimension=0
  r = s32[80,80] broadcast(i), dimensions={0}
  c = s32[80,80] broadcast(i), dimensions={1}
  ge = pred[80,80] compare(r, c), direction=GE
  t = pred[] constant(true)
  f = pred[] constant(false)
  bt = pred[80,80] broadcast(t), dimensions={}
  bf = pred[80,80] broadcast(f), dimensions={}
  m = pred[80,80] select(ge, bt, bf)
  bm = pred[2,3,80,80] broadcast(m), dimensions={2,3}
  big = f32[] constant(-1e9)
  bb = f32[2,3,80,80] broadcast(big), dimensions={}
  x = f32[2,3,80,80] select(bm, s, bb)
  ninf = f32[] constant(-inf)
  mx = f32[2,3,80] reduce(x, ninf), dimensions={3}, to_apply=max_f32
  bmx = f32[2,3,80,80] broadcast(mx), dimensions={0,1,2}
  d = f32[2,3,80,80] subtract(x, bmx)
  e = f32[2,3,80,80] exponential(d)
  z = f32[] constant(0)
  sum = f32[2,3,80] reduce(e, z), dimensions={3}, to_apply=add_f32
  bs = f32[2,3,80,80] broadcast(sum), dimensions={0,1,2}
  ROOT o = f32[2,3,80,80] divide(e, bs)
}
"#,
        r#"  s = f32[2,3,80,80] parameter(0)
  ROOT f = f32[2,3,80,80] fusion(s), kind=kInput, calls=fc"#,
    );
    check("causal mask", &text, Agree::Within(1e-5));
}

#[test]
fn empty_arrays() {
    // Reducing no elements gives the init; an empty loop writes nothing.
    let text = module(
        r#"
fc {
  p = f32[0,4,6] parameter(0)
  big = f32[] constant(inf)
  r = f32[] reduce(p, big), dimensions={0,1,2}, to_apply=max_f32
  ROOT c = s32[] convert(r)
}
fd {
  p = f32[4,0] parameter(0)
  z = f32[] constant(0)
  r = f32[4] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT n = f32[4] negate(r)
}
fe {
  p = f32[0,3] parameter(0)
  q = f32[3] parameter(1)
  b = f32[0,3] broadcast(q), dimensions={1}
  ROOT m = f32[0,3] multiply(p, b)
}
"#,
        r#"  p0 = f32[0,4,6] parameter(0)
  p1 = f32[4,0] parameter(1)
  p2 = f32[0,3] parameter(2)
  p3 = f32[3] parameter(3)
  a = s32[] fusion(p0), kind=kInput, calls=fc
  b = f32[4] fusion(p1), kind=kInput, calls=fd
  c = f32[0,3] fusion(p2, p3), kind=kLoop, calls=fe
  ROOT t = (s32[], f32[4], f32[0,3]) tuple(a, b, c)"#,
    );
    check("empty", &text, Agree::Bits);
}

#[test]
fn row_broadcast_source_outlives_other_temporaries() {
    // A broadcast row value is read lazily from its source's register; a
    // later temporary must not take that register before the broadcast's
    // last use (differential seed 1733 got `false` for every element).
    let text = module(
        r#"
fb {
  m = f32[1,2] parameter(0)
  d = f32[1,2] parameter(1)
  lo = f32[] constant(-inf)
  r = f32[] reduce(m, lo), dimensions={0,1}, to_apply=max_f32
  c = pred[] convert(r)
  b = pred[1,2] broadcast(c), dimensions={}
  k = f32[] constant(0.001)
  kb = f32[1,2] broadcast(k), dimensions={}
  small = f32[1,2] multiply(d, kb)
  rn = f32[1,2] round-nearest-afz(small)
  c2 = pred[1,2] convert(rn)
  ROOT o = pred[1,2] xor(b, c2)
}
"#,
        r#"  p0 = f32[1,2] parameter(0)
  p1 = f32[1,2] parameter(1)
  ROOT f = pred[1,2] fusion(p0, p1), kind=kInput, calls=fb"#,
    );
    check("row broadcast liveness", &text, Agree::Bits);
}

#[test]
fn one_iota_read_as_two_element_types() {
    // The same iota view as f32 and as u8 is two leaves (differential seed
    // 3129: the u8 read wrote f32 values past its register).
    let text = module(
        r#"
fi {
  p = u8[2,6,5] parameter(0)
  a = f32[2,6,5] iota(), iota_dimension=2
  b = u8[2,6,5] iota(), iota_dimension=2
  x = u8[2,6,5] xor(p, b)
  c = f32[2,6,5] convert(x)
  ROOT m = f32[2,6,5] maximum(a, c)
}
"#,
        r#"  p0 = u8[2,6,5] parameter(0)
  ROOT f = f32[2,6,5] fusion(p0), kind=kLoop, calls=fi"#,
    );
    check("iota of two types", &text, Agree::Bits);
}

/// Categories of the entry's thunks.
fn thunk_categories(text: &str) -> Vec<String> {
    let runner = HostRunner::compile(&uniquify(text)).unwrap();
    runner
        .executable
        .thunk_names()
        .into_iter()
        .map(|(_, c)| c)
        .collect()
}

/// Bytes of the entry's temp arena.
fn temp_bytes(text: &str) -> usize {
    HostRunner::compile(&uniquify(text))
        .unwrap()
        .executable
        .temp_bytes()
}

#[test]
fn element_gathers_run_inside_their_masked_select() {
    // jnp.take_along_axis as JAX lowers it: the index wrapped, a batched
    // gather of one element per point, the bounds check reduced over the
    // unit index vector dimension and used as the select's predicate
    // directly (no broadcast). Indices run from -20 to 20 over rows of 16,
    // so both sides are out of range; 1200 points are several chunks.
    let take = module(
        r#"
and_reducer {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT c = pred[] and(a, b)
}
"#,
        r#"  x = f32[40,16] parameter(0)
  idx = s32[40,30] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[40,30] broadcast(zero), dimensions={}
  neg = pred[40,30] compare(idx, zeros), direction=LT
  n = s32[] constant(16)
  ns = s32[40,30] broadcast(n), dimensions={}
  wrapped = s32[40,30] add(idx, ns)
  fixed = s32[40,30] select(neg, wrapped, idx)
  col = s32[40,30,1] reshape(fixed)
  zeros1 = s32[40,30,1] broadcast(zero), dimensions={}
  ge = pred[40,30,1] compare(col, zeros1), direction=GE
  last = s32[] constant(15)
  lasts = s32[40,30,1] broadcast(last), dimensions={}
  le = pred[40,30,1] compare(col, lasts), direction=LE
  ok1 = pred[40,30,1] and(ge, le)
  yes = pred[] constant(true)
  ok = pred[40,30] reduce(ok1, yes), dimensions={2}, to_apply=and_reducer
  g = f32[40,30] gather(x, col), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
  qnan = f32[] constant(nan)
  nans = f32[40,30] broadcast(qnan), dimensions={}
  ROOT r = f32[40,30] select(ok, g, nans)"#,
    );
    // One thunk, as XLA's one loop: neither the wrapped indices nor the
    // gathered elements are stored.
    assert_eq!(thunk_categories(&take), ["gather"]);
    assert_eq!(temp_bytes(&take), 0);
    check("masked take_along_axis", &take, Agree::Bits);
    // The branches the other way round, a fill of another value.
    let negated = take.replace(
        "ROOT r = f32[40,30] select(ok, g, nans)",
        "bad = pred[40,30] not(ok)\n  ROOT r = f32[40,30] select(bad, nans, g)",
    );
    assert_eq!(thunk_categories(&negated), ["gather"]);
    check("masked take_along_axis, negated", &negated, Agree::Bits);
    // With the wrapped indices also returned, their fusion stays and the
    // gather reads them.
    let returned = take.replace(
        "ROOT r = f32[40,30] select(ok, g, nans)",
        "r = f32[40,30] select(ok, g, nans)\n  ROOT t = (f32[40,30], s32[40,30]) tuple(r, fixed)",
    );
    assert_eq!(thunk_categories(&returned), ["fusion", "gather"]);
    check(
        "masked take_along_axis, indices returned",
        &returned,
        Agree::Bits,
    );
}

#[test]
fn row_gathers_run_inside_the_fusion_that_consumes_them() {
    // jnp.take's lowering: indices normalised, rows gathered, rows whose
    // index was out of range masked with NaN. Indices run from -20 to 20
    // over a 16-row table: both sides are out of range.
    let take = module(
        "",
        r#"  table = f32[16,24] parameter(0)
  idx = s32[64] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[64] broadcast(zero), dimensions={}
  neg = pred[64] compare(idx, zeros), direction=LT
  n = s32[] constant(16)
  ns = s32[64] broadcast(n), dimensions={}
  wrapped = s32[64] add(idx, ns)
  fixed = s32[64] select(neg, wrapped, idx)
  col = s32[64,1] reshape(fixed)
  g = f32[64,24] gather(table, col), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,24}
  ge = pred[64] compare(fixed, zeros), direction=GE
  last = s32[] constant(15)
  lasts = s32[64] broadcast(last), dimensions={}
  le = pred[64] compare(fixed, lasts), direction=LE
  ok = pred[64] and(ge, le)
  okb = pred[64,24] broadcast(ok), dimensions={0}
  qnan = f32[] constant(nan)
  nans = f32[64,24] broadcast(qnan), dimensions={}
  ROOT r = f32[64,24] select(okb, g, nans)"#,
    );
    // One thunk: the gather and its select, the indices and the mask
    // computed there from the raw indices, nothing in between stored.
    assert_eq!(thunk_categories(&take), ["gather"]);
    assert_eq!(temp_bytes(&take), 0);
    check("masked take", &take, Agree::Bits);
    // With the fixed indices also returned, their fusion stays; the mask is
    // still computed by the gather, from them.
    let returned = take.replace(
        "ROOT r = f32[64,24] select(okb, g, nans)",
        "r = f32[64,24] select(okb, g, nans)\n  ROOT t = (f32[64,24], s32[64]) tuple(r, fixed)",
    );
    assert_eq!(thunk_categories(&returned), ["fusion", "gather"]);
    check("masked take, indices returned", &returned, Agree::Bits);

    // As JAX writes it: the bounds check reduced over the index vector
    // dimension, so the mask arrives as an array; the branches the other
    // way round (a negated mask); indices of two dimensions.
    let jax_take = module(
        r#"
and_reducer {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT c = pred[] and(a, b)
}
"#,
        r#"  table = f32[16,8] parameter(0)
  idx = s32[6,5] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[6,5] broadcast(zero), dimensions={}
  neg = pred[6,5] compare(idx, zeros), direction=LT
  n = s32[] constant(16)
  ns = s32[6,5] broadcast(n), dimensions={}
  wrapped = s32[6,5] add(idx, ns)
  fixed = s32[6,5] select(neg, wrapped, idx)
  col = s32[6,5,1] reshape(fixed)
  zeros1 = s32[6,5,1] broadcast(zero), dimensions={}
  ge = pred[6,5,1] compare(col, zeros1), direction=GE
  last = s32[] constant(15)
  lasts = s32[6,5,1] broadcast(last), dimensions={}
  le = pred[6,5,1] compare(col, lasts), direction=LE
  ok1 = pred[6,5,1] and(ge, le)
  yes = pred[] constant(true)
  ok = pred[6,5] reduce(ok1, yes), dimensions={2}, to_apply=and_reducer
  bad = pred[6,5] not(ok)
  badb = pred[6,5,8] broadcast(bad), dimensions={0,1}
  g = f32[6,5,8] gather(table, col), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,8}
  minus = f32[] constant(-1.5)
  fill = f32[6,5,8] broadcast(minus), dimensions={}
  ROOT r = f32[6,5,8] select(badb, fill, g)"#,
    );
    assert_eq!(thunk_categories(&jax_take), ["gather"]);
    assert_eq!(temp_bytes(&jax_take), 0);
    check("masked take as JAX writes it", &jax_take, Agree::Bits);

    // Half rows are no row gather: the select runs as a fusion after it.
    let half = take
        .replace("f32[64,24]", "f32[64,12]")
        .replace("pred[64,24]", "pred[64,12]")
        .replace("slice_sizes={1,24}", "slice_sizes={1,12}");
    assert!(thunk_categories(&half).iter().any(|c| c == "gather"));
    check("masked take of half rows", &half, Agree::Bits);

    // A mask that is an argument of its own, zeros where it is false.
    let given = module(
        "",
        r#"  table = f32[16,24] parameter(0)
  idx = s32[64,1] parameter(1)
  valid = pred[64] parameter(2)
  g = f32[64,24] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,24}
  vb = pred[64,24] broadcast(valid), dimensions={0}
  zero = f32[] constant(0)
  zeros = f32[64,24] broadcast(zero), dimensions={}
  ROOT r = f32[64,24] select(vb, g, zeros)"#,
    );
    assert_eq!(thunk_categories(&given), ["gather"]);
    check("mask given", &given, Agree::Bits);
    // A constant mask, and an iota-based one (every other point).
    let constant = given.replace(
        "valid = pred[64] parameter(2)",
        &format!(
            "valid = pred[64] constant({{{}}})",
            (0..64)
                .map(|i| if i % 3 == 0 { "false" } else { "true" })
                .collect::<Vec<_>>()
                .join(",")
        ),
    );
    check("constant mask", &constant, Agree::Bits);
    let iota = given.replace(
        "valid = pred[64] parameter(2)",
        "i = s32[64] iota(), iota_dimension=0\n  one = s32[] constant(1)\n  ones = s32[64] broadcast(one), dimensions={}\n  odd = s32[64] and(i, ones)\n  valid = pred[64] compare(odd, ones), direction=EQ",
    );
    check("iota mask", &iota, Agree::Bits);

    // A predicate over the slice's columns is no per-point mask: the gather
    // feeds the fusion block by block instead.
    let columns = take.replace(
        "okb = pred[64,24] broadcast(ok), dimensions={0}",
        "cols = s32[24] iota(), iota_dimension=0
  three = s32[] constant(3)
  threes = s32[24] broadcast(three), dimensions={}
  okc = pred[24] compare(cols, threes), direction=GT
  okb = pred[64,24] broadcast(okc), dimensions={1}",
    );
    assert_eq!(thunk_categories(&columns), ["fusion", "fusion"]);
    check("column mask", &columns, Agree::Bits);

    // Two-row slices (dimension 0 kept), s64 indices with an explicit index
    // vector dimension, consumed by arithmetic with another operand.
    let pairs = module(
        "",
        r#"  table = f32[30,8] parameter(0)
  idx = s64[25,1] parameter(1)
  w = f32[8] parameter(2)
  g = f32[25,2,8] gather(table, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,8}
  wb = f32[25,2,8] broadcast(w), dimensions={2}
  m = f32[25,2,8] multiply(g, wb)
  ROOT r = f32[25,2,8] add(m, g)"#,
    );
    let cats = thunk_categories(&pairs);
    assert!(!cats.iter().any(|c| c == "gather"), "{cats:?}");
    check("row pairs", &pairs, Agree::Bits);

    // Read out of order (reversed rows) or used again elsewhere: the gather
    // runs on its own first.
    let reversed = pairs.replace(
        "ROOT r = f32[25,2,8] add(m, g)",
        "gr = f32[25,2,8] reverse(g), dimensions={0}\n  ROOT r = f32[25,2,8] add(m, gr)",
    );
    assert!(thunk_categories(&reversed).iter().any(|c| c == "gather"));
    check("reversed rows", &reversed, Agree::Bits);
    let shared = pairs.replace(
        "ROOT r = f32[25,2,8] add(m, g)",
        "a = f32[25,2,8] add(m, g)\n  ROOT t = (f32[25,2,8], f32[25,2,8]) tuple(a, g)",
    );
    assert!(thunk_categories(&shared).iter().any(|c| c == "gather"));
    check("gather also returned", &shared, Agree::Bits);
}

/// The column groups of each fusion's plan after the Host's passes, in
/// entry order.
fn column_groups(text: &str) -> Vec<usize> {
    fusion_plans(text, |p| p.column_groups())
}

/// `f` of each fusion's plan after the Host's passes, in entry order.
fn fusion_plans<T>(text: &str, f: impl Fn(&fusion::FusionPlan) -> T) -> Vec<T> {
    let module = optimize(
        HloModule::parse(&uniquify(text)).unwrap(),
        &CompileOptions::default(),
    )
    .unwrap();
    let entry = module.computation(module.entry);
    entry
        .instructions
        .iter()
        .filter(|i| matches!(i.op, Op::Fusion { .. }))
        .map(|i| {
            f(&fusion::plan(&module, i, &CompileOptions::default())
                .unwrap_or_else(|e| panic!("%{}: {e}\n{module}", i.name)))
        })
        .collect()
}

#[test]
fn middle_dimension_reductions_run_as_grouped_columns() {
    // Sums over a middle dimension, read in memory order: blocks that hold
    // several groups (rows of 40, groups of 9 rows), groups longer than a
    // block (3000 rows of 20), size-1 dimensions, two reduced dimensions,
    // results used by column-phase ops with a broadcast operand (a mean
    // scaled per column), a variadic argmax, a full-domain second output,
    // and enough results for the column phase to run in parallel.
    let text = module(
        r#"
fa {
  p0 = s32[12,9,40] parameter(0)
  five = s32[] constant(5)
  ROOT r = s32[12,40] reduce(p0, five), dimensions={1}, to_apply=add_s32
}
fb {
  p0 = f32[6,3000,20] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6,20] reduce(p0, z), dimensions={1}, to_apply=add_f32
}
fc {
  p0 = f32[5,1,7,1,33] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT r = f32[5,1,1,33] reduce(p0, ninf), dimensions={2}, to_apply=max_f32
}
fd {
  p0 = f32[4,3,5,6,17] parameter(0)
  w = f32[17] parameter(1)
  z = f32[] constant(0)
  s = f32[4,6,17] reduce(p0, z), dimensions={1,2}, to_apply=add_f32
  n = f32[] constant(15)
  bn = f32[4,6,17] broadcast(n), dimensions={}
  mean = f32[4,6,17] divide(s, bn)
  bw = f32[4,6,17] broadcast(w), dimensions={2}
  ROOT o = f32[4,6,17] multiply(mean, bw)
}
fe {
  p0 = f32[8,30,32] parameter(0)
  i = s32[8,30,32] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[8,32], s32[8,32]) reduce(p0, i, ninf, zero), dimensions={1}, to_apply=argmax
}
ff {
  p0 = f32[16,7,64] parameter(0)
  ninf = f32[] constant(-inf)
  e = f32[16,7,64] exponential(p0)
  m = f32[16,64] reduce(e, ninf), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[16,64], f32[16,7,64]) tuple(m, e)
}
fg {
  p0 = s32[128,8,1024] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[128,1024] reduce(p0, z), dimensions={1}, to_apply=add_s32
}
"#,
        r#"  p0 = s32[12,9,40] parameter(0)
  p1 = f32[6,3000,20] parameter(1)
  p2 = f32[5,1,7,1,33] parameter(2)
  p3 = f32[4,3,5,6,17] parameter(3)
  p4 = f32[17] parameter(4)
  p5 = f32[8,30,32] parameter(5)
  p6 = f32[16,7,64] parameter(6)
  p7 = s32[128,8,1024] parameter(7)
  a = s32[12,40] fusion(p0), kind=kInput, calls=fa
  b = f32[6,20] fusion(p1), kind=kInput, calls=fb
  c = f32[5,1,1,33] fusion(p2), kind=kInput, calls=fc
  d = f32[4,6,17] fusion(p3, p4), kind=kInput, calls=fd
  e = (f32[8,32], s32[8,32]) fusion(p5), kind=kInput, calls=fe
  f = (f32[16,64], f32[16,7,64]) fusion(p6), kind=kInput, calls=ff
  g = s32[128,1024] fusion(p7), kind=kInput, calls=fg
  ROOT t = (s32[12,40], f32[6,20], f32[5,1,1,33], f32[4,6,17], (f32[8,32], s32[8,32]), (f32[16,64], f32[16,7,64]), s32[128,1024]) tuple(a, b, c, d, e, f, g)"#,
    );
    assert_eq!(column_groups(&text), [12, 6, 5, 4, 8, 16, 128]);
    // A sum or max stored unchanged builds its groups' rows in the output
    // itself; scaled results (`fd`) and variadic ones (`fe`) keep them in
    // scratch.
    let scratch = fusion_plans(&text, |p| p.scratch_bytes());
    assert_eq!(
        scratch.iter().map(|&b| b > 0).collect::<Vec<_>>(),
        [false, false, false, true, true, false, false],
        "{scratch:?}"
    );
    check("grouped columns", &text, Agree::Within(1e-5));
}

#[test]
fn middle_dimension_reductions_fall_back_when_groups_cannot_hold() {
    // A row reduction beside a grouped one (its rows are the groups' rows),
    // a reduction of another orientation after a grouped one, too few
    // groups, and nothing to reduce (the init for every result): each runs
    // as a block program, the last three without groups.
    let text = module(
        r#"
fb {
  p0 = s32[8,9,32] parameter(0)
  z = s32[] constant(0)
  mid = s32[8,32] reduce(p0, z), dimensions={1}, to_apply=add_s32
  last = s32[8,9] reduce(p0, z), dimensions={2}, to_apply=add_s32
  ROOT t = (s32[8,32], s32[8,9]) tuple(mid, last)
}
fd {
  p0 = s32[8,9,32] parameter(0)
  z = s32[] constant(0)
  mid = s32[8,32] reduce(p0, z), dimensions={1}, to_apply=add_s32
  other = s32[9] reduce(p0, z), dimensions={0,2}, to_apply=add_s32
  ROOT t = (s32[8,32], s32[9]) tuple(mid, other)
}
fc {
  p0 = s32[2,50,64] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2,64] reduce(p0, z), dimensions={1}, to_apply=add_s32
}
fe {
  p0 = s32[6,0,32] parameter(0)
  three = s32[] constant(3)
  ROOT r = s32[6,32] reduce(p0, three), dimensions={1}, to_apply=add_s32
}
"#,
        r#"  p1 = s32[8,9,32] parameter(0)
  p2 = s32[2,50,64] parameter(1)
  b = (s32[8,32], s32[8,9]) fusion(p1), kind=kInput, calls=fb
  d = (s32[8,32], s32[9]) fusion(p1), kind=kInput, calls=fd
  c = s32[2,64] fusion(p2), kind=kInput, calls=fc
  p3 = s32[6,0,32] parameter(2)
  e = s32[6,32] fusion(p3), kind=kInput, calls=fe
  ROOT t = ((s32[8,32], s32[8,9]), (s32[8,32], s32[9]), s32[2,64], s32[6,32]) tuple(b, d, c, e)"#,
    );
    assert_eq!(column_groups(&text), [8, 1, 1, 1]);
    check("ungrouped middle reductions", &text, Agree::Bits);
}

#[test]
fn row_reductions_then_a_grouped_sum_over_their_rows() {
    // Pairwise forces: a norm over the short minor dimension (x, y, z),
    // broadcast back along its row and summed over the middle dimension.
    // The first reduction fixes rows of 3; the second keeps them as a
    // grouped column reduction, so the fusion stays one block program and
    // the [n, n] norms are never stored. Also rows of 40 (an integer sum,
    // an integer sum) and a max over rows of 2.
    let text = module(
        r#"
fa {
  p0 = f32[64,3] parameter(0)
  bi = f32[64,64,3] broadcast(p0), dimensions={1,2}
  bj = f32[64,64,3] broadcast(p0), dimensions={0,2}
  d = f32[64,64,3] subtract(bi, bj)
  d2 = f32[64,64,3] multiply(d, d)
  z = f32[] constant(0)
  r2 = f32[64,64] reduce(d2, z), dimensions={2}, to_apply=add_f32
  eps = f32[] constant(0.001)
  beps = f32[64,64] broadcast(eps), dimensions={}
  r2e = f32[64,64] add(r2, beps)
  s = f32[64,64] sqrt(r2e)
  r3 = f32[64,64] multiply(r2e, s)
  b3 = f32[64,64,3] broadcast(r3), dimensions={0,1}
  q = f32[64,64,3] divide(d, b3)
  ROOT f = f32[64,3] reduce(q, z), dimensions={1}, to_apply=add_f32
}
fb {
  p0 = s32[8,30,40] parameter(0)
  z = s32[] constant(0)
  m = s32[8,30] reduce(p0, z), dimensions={2}, to_apply=add_s32
  bm = s32[8,30,40] broadcast(m), dimensions={0,1}
  x = s32[8,30,40] subtract(p0, bm)
  ROOT r = s32[8,40] reduce(x, z), dimensions={1}, to_apply=add_s32
}
fc {
  p0 = f32[16,50,2] parameter(0)
  ninf = f32[] constant(-inf)
  z = f32[] constant(0)
  m = f32[16,50] reduce(p0, ninf), dimensions={2}, to_apply=max_f32
  bm = f32[16,50,2] broadcast(m), dimensions={0,1}
  e = f32[16,50,2] subtract(p0, bm)
  ROOT r = f32[16,2] reduce(e, z), dimensions={1}, to_apply=add_f32
}
"#,
        r#"  p0 = f32[64,3] parameter(0)
  p1 = s32[8,30,40] parameter(1)
  p2 = f32[16,50,2] parameter(2)
  a = f32[64,3] fusion(p0), kind=kInput, calls=fa
  b = s32[8,40] fusion(p1), kind=kInput, calls=fb
  c = f32[16,2] fusion(p2), kind=kInput, calls=fc
  ROOT t = (f32[64,3], s32[8,40], f32[16,2]) tuple(a, b, c)"#,
    );
    assert_eq!(column_groups(&text), [64, 8, 16]);
    check("rows then grouped columns", &text, Agree::Within(1e-5));
}

#[test]
fn dynamic_slices_read_in_place_at_clamped_starts() {
    // Dynamic slices of parameters fused into their consumers: starts from
    // s32 parameters (random in -20..=20, so below zero and past the end
    // clamp), a u32 one, compile-time constants, a slice along a middle
    // dimension, a reshape of the slice, two slices of one operand, and
    // starts that are elements of an array parameter.
    let text = module(
        r#"
fa {
  xs = f32[12,5,40] parameter(0)
  i = s32[] parameter(1)
  h = f32[5,40] parameter(2)
  z = s32[] constant(0)
  ds = f32[1,5,40] dynamic-slice(xs, i, z, z), dynamic_slice_sizes={1,5,40}
  r = f32[5,40] reshape(ds)
  a = f32[5,40] add(r, h)
  ROOT t = f32[5,40] tanh(a)
}
fb {
  x = s32[30,7,9] parameter(0)
  j = u32[] parameter(1)
  k = s32[] parameter(2)
  z = u32[] constant(0)
  two = s32[] constant(2)
  d1 = s32[30,3,9] dynamic-slice(x, z, j, z), dynamic_slice_sizes={30,3,9}
  zs = s32[] constant(0)
  d2 = s32[30,3,9] dynamic-slice(x, zs, k, two), dynamic_slice_sizes={30,3,9}
  ROOT m = s32[30,3,9] multiply(d1, d2)
}
fc {
  x = s32[30,7,9] parameter(0)
  k = s32[] parameter(1)
  l = s32[] parameter(2)
  d1 = s32[4,3,9] dynamic-slice(x, k, l, k), dynamic_slice_sizes={4,3,9}
  d2 = s32[4,3,9] dynamic-slice(x, l, k, l), dynamic_slice_sizes={4,3,9}
  ROOT s = s32[4,3,9] subtract(d1, d2)
}
fd {
  x = s32[30,7,9] parameter(0)
  idx = s32[3] parameter(1)
  s1 = s32[1] slice(idx), slice={[1:2]}
  i = s32[] reshape(s1)
  s2 = s32[1] slice(idx), slice={[2:3]}
  j = s32[] reshape(s2)
  ROOT d = s32[2,7,4] dynamic-slice(x, i, i, j), dynamic_slice_sizes={2,7,4}
}
"#,
        r#"  xs = f32[12,5,40] parameter(0)
  i = s32[] parameter(1)
  h = f32[5,40] parameter(2)
  x = s32[30,7,9] parameter(3)
  j = u32[] parameter(4)
  k = s32[] parameter(5)
  l = s32[] parameter(6)
  a = f32[5,40] fusion(xs, i, h), kind=kLoop, calls=fa
  b = s32[30,3,9] fusion(x, j, k), kind=kLoop, calls=fb
  c = s32[4,3,9] fusion(x, k, l), kind=kLoop, calls=fc
  idx = s32[3] parameter(7)
  d = s32[2,7,4] fusion(x, idx), kind=kLoop, calls=fd
  ROOT t = (f32[5,40], s32[30,3,9], s32[4,3,9], s32[2,7,4]) tuple(a, b, c, d)"#,
    );
    check("dynamic slices", &text, Agree::Within(1e-6));
}

/// The optimized module's product chains (`kCustom` fusions of the chain
/// pass) and the compiled program's peak memory.
fn chains_and_peak(text: &str) -> (usize, u64) {
    use platform_api::Executable;
    let module = HloModule::parse(text).unwrap();
    let optimized = optimize(module, &CompileOptions::default()).unwrap();
    let chains = optimized
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| {
            matches!(i.op, Op::Fusion { kind: platform_api::hlo::FusionKind::Custom, calls }
                if optimized.computation(calls).instructions.iter().filter(|j| matches!(j.op, Op::Dot { .. })).count() == 2)
        })
        .count();
    let peak = HostRunner::compile(text)
        .unwrap()
        .executable
        .peak_memory_bytes()
        .unwrap();
    (chains, peak)
}

/// The inputs of the product-chain tests.
const CHAIN_SEED: u64 = 0x51_7cc1_b727_220a;

/// A module computing scores (`s2`), their row softmax (`p`) and a product
/// of `p`, with `extra` computations beside the f32 reducers.
fn chain_module(extra: &str, scores: &str, softmax: String, product: &str) -> String {
    module(extra, &format!("{scores}\n{softmax}\n{product}"))
}

/// A row softmax of `s2` (element type `t`, dimensions `dims`, rows along
/// the last one; `outer_dims` the others, which `kept` lists by number) as
/// HLO lines defining `p`.
fn softmax_lines(t: &str, dims: &str, outer_dims: &str, kept: &str) -> String {
    let last = dims.split(',').count() - 1;
    format!(
        r#"  ninf = {t}[] constant(-inf)
  mx = {t}[{outer_dims}] reduce(s2, ninf), dimensions={{{last}}}, to_apply=max_{t}
  bmx = {t}[{dims}] broadcast(mx), dimensions={{{kept}}}
  sub = {t}[{dims}] subtract(s2, bmx)
  e = {t}[{dims}] exponential(sub)
  zero = {t}[] constant(0)
  sm = {t}[{outer_dims}] reduce(e, zero), dimensions={{{last}}}, to_apply=add_{t}
  bs = {t}[{dims}] broadcast(sm), dimensions={{{kept}}}
  p = {t}[{dims}] divide(e, bs)"#
    )
}

const F64_REDUCERS: &str = r#"
add_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT r = f64[] add(a, b)
}
max_f64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT r = f64[] maximum(a, b)
}
"#;

#[test]
fn attention_runs_as_a_product_chain_without_its_scores() {
    // Heads as a batch dimension between the sequence and the head size (as
    // JAX writes multi-head attention), the weighted sum as `Vᵀ·Pᵀ`, rows
    // of 40 in blocks that do not divide them.
    let heads = chain_module(
        "",
        r#"  q = f32[2,40,3,8] parameter(0)
  k = f32[2,40,3,8] parameter(1)
  v = f32[2,40,3,8] parameter(2)
  s = f32[2,3,40,40] dot(q, k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}
  c = f32[] constant(0.35)
  bc = f32[2,3,40,40] broadcast(c), dimensions={}
  s2 = f32[2,3,40,40] multiply(s, bc)"#,
        softmax_lines("f32", "2,3,40,40", "2,3,40", "0,1,2"),
        "  ROOT o = f32[2,3,8,40] dot(v, p), lhs_batch_dims={0,2}, lhs_contracting_dims={1}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}"
    );
    // f64, a mask read through a broadcast (every row at its own place in
    // the whole domain), `P·V`, 37 rows of 300 in blocks of 27 and 10.
    let masked = chain_module(
        F64_REDUCERS,
        r#"  q = f64[3,37,16] parameter(0)
  k = f64[3,300,16] parameter(1)
  v = f64[3,300,5] parameter(2)
  mask = f64[37,300] parameter(3)
  s = f64[3,37,300] dot(q, k), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  bm = f64[3,37,300] broadcast(mask), dimensions={1,2}
  s2 = f64[3,37,300] add(s, bm)"#,
        softmax_lines("f64", "3,37,300", "3,37", "0,1"),
        "  ROOT o = f64[3,37,5] dot(p, v), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"
    );
    // No batch, rows of 3000 (one row per block would still fit), the
    // keys as a `[K, N]` matrix.
    let long = chain_module(
        "",
        r#"  q = f32[5,16] parameter(0)
  k = f32[16,3000] parameter(1)
  v = f32[3000,7] parameter(2)
  s2 = f32[5,3000] dot(q, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}"#,
        softmax_lines("f32", "5,3000", "5", "0"),
        "  ROOT o = f32[5,7] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    );
    for (name, text, scores_bytes) in [
        ("heads", &heads, 2 * 3 * 40 * 40 * 4),
        ("masked", &masked, 3 * 37 * 300 * 8),
        ("long", &long, 5 * 3000 * 4),
    ] {
        let (chains, peak) = chains_and_peak(text);
        assert_eq!(chains, 1, "{name}: one chain");
        assert!(
            peak < scores_bytes,
            "{name}: peak {peak} bytes holds the scores ({scores_bytes} bytes)"
        );
        compare_with_unfused(name, text, CHAIN_SEED, Agree::Within(1e-5));
    }
}

#[test]
fn chains_that_do_not_fit_run_op_by_op() {
    // A softmax over the scores' columns (each row of the result needs
    // every row of the scores), and scores used twice: no chain, the same
    // results.
    let columns = module(
        "",
        r#"  q = f32[24,8] parameter(0)
  k = f32[8,24] parameter(1)
  v = f32[24,6] parameter(2)
  s = f32[24,24] dot(q, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  mx = f32[24] reduce(s, ninf), dimensions={0}, to_apply=max_f32
  bmx = f32[24,24] broadcast(mx), dimensions={1}
  sub = f32[24,24] subtract(s, bmx)
  p = f32[24,24] exponential(sub)
  ROOT o = f32[24,6] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}"#,
    );
    let twice = module(
        "",
        r#"  q = f32[24,8] parameter(0)
  k = f32[8,24] parameter(1)
  v = f32[24,6] parameter(2)
  s = f32[24,24] dot(q, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  p = f32[24,24] tanh(s)
  o = f32[24,6] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[24,6], f32[24,24]) tuple(o, s)"#,
    );
    for (name, text) in [("columns", &columns), ("twice", &twice)] {
        let (chains, _) = chains_and_peak(text);
        assert_eq!(chains, 0, "{name}: no chain");
        compare_with_unfused(name, text, CHAIN_SEED, Agree::Within(1e-5));
    }
}

#[test]
fn chains_of_empty_products() {
    // No contraction (the scores are all zero, the softmax uniform), no
    // keys (an empty sum: zeros), no queries (an empty result): each gives
    // what the instructions give one by one, chain or not.
    for (name, m, n, k) in [("k0", 6, 9, 0), ("n0", 6, 0, 4), ("m0", 0, 9, 4)] {
        let text = chain_module(
            "",
            &format!(
                "  q = f32[{m},{k}] parameter(0)
  kk = f32[{k},{n}] parameter(1)
  v = f32[{n},3] parameter(2)
  s2 = f32[{m},{n}] dot(q, kk), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"
            ),
            softmax_lines("f32", &format!("{m},{n}"), &m.to_string(), "0"),
            &format!("  ROOT o = f32[{m},3] dot(p, v), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"),
        );
        assert_eq!(chains_and_peak(&text).0, 0, "{name}: no chain");
        compare_with_unfused(name, &text, CHAIN_SEED, Agree::Within(1e-6));
    }
}

#[test]
fn chains_with_malformed_dimension_numbers_are_refused_not_run() {
    // A module that skipped the verifier (a chain fusion written by hand,
    // planned directly): a contracting dimension out of range is an error
    // of the plan, where indexing by it would panic. The same chain with
    // the dimension in range is planned.
    let text = |contracting: usize| {
        module(
            &format!(
                "sm {{
  p0 = f32[4,6] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(p0, ninf), dimensions={{1}}, to_apply=max_f32
  b = f32[4,6] broadcast(mx), dimensions={{0}}
  ROOT e = f32[4,6] subtract(p0, b)
}}
chain {{
  q = f32[4,3] parameter(0)
  k = f32[3,6] parameter(1)
  v = f32[6,2] parameter(2)
  s = f32[4,6] dot(q, k), lhs_contracting_dims={{{contracting}}}, rhs_contracting_dims={{0}}
  p = f32[4,6] fusion(s), kind=kLoop, calls=sm
  ROOT o = f32[4,2] dot(p, v), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}"
            ),
            "  q = f32[4,3] parameter(0)
  k = f32[3,6] parameter(1)
  v = f32[6,2] parameter(2)
  ROOT c = f32[4,2] fusion(q, k, v), kind=kCustom, calls=chain",
        )
    };
    let plan = |contracting: usize| {
        let module = HloModule::parse(&text(contracting)).unwrap();
        let entry = module.computation(module.entry);
        fusion::chain::plan(&module, entry.root_instr(), &CompileOptions::default()).map(|_| ())
    };
    assert!(plan(1).is_ok(), "{:?}", plan(1).err());
    let refused = plan(7).expect_err("a contracting dimension out of range");
    assert!(
        refused.to_string().contains("dimension numbers"),
        "{refused}"
    );
}

/// Runs of simple steps compiled to machine code (`fusion::jit`) against the
/// same program with the code off, bit for bit (but NaN payloads), on values
/// that reach every special case: NaN, signed zeros, infinities, subnormals,
/// and shift amounts inside, at and past the width (and negative). `at_least` runs must have been formed, so the test fails
/// if the code stops being used. The steps must in turn agree with the
/// unfused program as `unfused_agree` says (a reduction in the fusion sums in
/// another order).
fn check_generated(
    name: &str,
    text: &str,
    args: &[Literal],
    at_least: usize,
    unfused_agree: Agree,
) {
    let text = &uniquify(text);
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
    let optimized = optimize(module, &CompileOptions::default()).unwrap();
    let entry = optimized.computation(optimized.entry);
    let runs: usize = entry
        .instructions
        .iter()
        .filter(|i| matches!(i.op, Op::Fusion { .. }))
        .map(|i| {
            fusion::plan(&optimized, i, &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{name}: plan: {e}"))
                .generated_runs()
        })
        .sum();
    if fusion::jit::supported() {
        assert!(runs >= at_least, "{name}: {runs} generated run(s)");
    } else {
        assert_eq!(runs, 0, "{name}: no code without AVX2 and FMA");
    }
    let off = CompileOptions {
        debug_options: vec![(fusion::JIT_OPTION.to_string(), "off".to_string())],
        ..CompileOptions::default()
    };
    let with_code = HostRunner::compile(text).unwrap();
    let without = HostRunner::compile_with(text, &off).unwrap();
    let unfused = HostRunner::compile_with(text, &Strategy::Unfused.options()).unwrap();
    let run = |how: &str, runner: &HostRunner| {
        runner
            .run(args)
            .unwrap_or_else(|e| panic!("{name} {how}: {e}"))
            .flatten_leaves()
    };
    let (got, steps) = (run("generated", &with_code), run("steps", &without));
    let alone = run("unfused", &unfused);
    assert_eq!(got.len(), steps.len());
    for (k, ((g, s), u)) in got.iter().zip(&steps).zip(&alone).enumerate() {
        compare(&format!("{name} generated out{k}"), g, s, Agree::Bits);
        // `compare` lets NaN payloads differ (which operand's NaN comes out
        // of an op on two NaNs is the compiler's choice of operand order, in
        // the slice kernels as in the code) and reads `pred` as truth
        // values: integers and `pred` must match byte for byte.
        let float = g
            .shape()
            .as_array()
            .is_some_and(|a| a.element_type.is_float());
        assert!(
            float || g.bytes().unwrap() == s.bytes().unwrap(),
            "{name} generated out{k}: the bytes differ"
        );
        compare(&format!("{name} steps out{k}"), s, u, unfused_agree);
    }
}

fn special_f32(n: usize, salt: u32) -> Literal {
    f32_literal(&special_values(n, salt))
}

fn f32_literal(values: &[f32]) -> Literal {
    Literal::from_bytes(
        Shape::array(ElementType::F32, vec![values.len()]),
        bytemuck_bytes(values),
    )
    .unwrap()
}

fn special_values(n: usize, salt: u32) -> Vec<f32> {
    const SPECIAL: [f32; 12] = [
        f32::NAN,
        -0.0,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
        -3e-39,
        f32::MAX,
        f32::MIN_POSITIVE,
        1.0,
        -1.5,
        3.0e38,
    ];
    let mut rng = crate::rng::Rng(0x5eed ^ salt as u64);
    (0..n)
        .map(|i| {
            if (i as u32 ^ salt).is_multiple_of(3) {
                SPECIAL[(rng.next() % SPECIAL.len() as u64) as usize]
            } else {
                (rng.unit() * 8.0 - 4.0) as f32
            }
        })
        .collect()
}

fn special_u32(ty: ElementType, n: usize, salt: u32, amounts: bool) -> Literal {
    let mut rng = crate::rng::Rng(0xb175 ^ salt as u64);
    let values: Vec<u32> = (0..n)
        .map(|_| {
            let r = rng.next();
            if amounts {
                // Shift amounts: mostly inside the width, some at or past
                // it, some negative as signed.
                match r % 8 {
                    0 => 32 + (r >> 8) as u32 % 40,
                    1 => (r >> 8) as u32 | 0x8000_0000,
                    _ => (r >> 8) as u32 % 32,
                }
            } else {
                match r % 16 {
                    0 => 0x8000_0000,
                    1 => 0x7fff_ffff,
                    2 => u32::MAX,
                    3 => 0,
                    _ => (r >> 16) as u32 ^ (r as u32),
                }
            }
        })
        .collect();
    Literal::from_bytes(Shape::array(ty, vec![n]), bytemuck_bytes(&values)).unwrap()
}

fn bytemuck_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain 4-byte numbers, read as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn scalar_literal<T: Copy>(ty: ElementType, v: T) -> Literal {
    Literal::from_bytes(Shape::scalar(ty), bytemuck_bytes(&[v])).unwrap()
}

#[test]
fn generated_code_agrees_bit_for_bit_with_the_steps() {
    // Sizes: a tail only; one vector and a tail; the two-vector loop and a
    // tail, with and without one vector between (8 lanes a vector, and 16
    // where the code is AVX-512's); several blocks over both cores with a
    // tail.
    for n in [5usize, 13, 21, 29, 45, 61, 9001] {
        // Float ops, the three contractions, maximum and minimum (NaN and
        // signed zeros on both sides), a reinterpretation and a conversion,
        // and twenty results alive at once (more than the registers hold).
        // The reinterpreted value goes through `abs` first: which operand's
        // NaN a commutative op returns is the compiler's choice, and here the
        // two NaNs differ in sign only (`k = d * -d`), which `abs` clears.
        let mut many = String::new();
        let mut outs = vec![
            "f".to_string(),
            "h".into(),
            "j".into(),
            "l".into(),
            "bits".into(),
            "mx".into(),
            "mn".into(),
            "mz".into(),
            "cv".into(),
        ];
        for k in 0..20 {
            many.push_str(&format!(
                "  c{k} = f32[] constant({}.25)\n  b{k} = f32[N] broadcast(c{k}), dimensions={{}}\n  m{k} = f32[N] multiply(a, b{k})\n  v{k} = f32[N] add(m{k}, y)\n",
                k + 1
            ));
            outs.push(format!("v{k}"));
        }
        let types = vec!["f32[N]"; 4]
            .into_iter()
            .chain(["s32[N]"])
            .chain(vec!["f32[N]"; 24])
            .collect::<Vec<_>>()
            .join(", ");
        let fused = format!(
            r#"
fc {{
  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  s = f32[] parameter(2)
  bs = f32[N] broadcast(s), dimensions={{}}
  a = f32[N] add(x, y)
  b = f32[N] subtract(a, bs)
  c = f32[N] multiply(b, x)
  d = f32[N] divide(c, y)
  e = f32[N] negate(d)
  f = f32[N] abs(e)
  g = f32[N] multiply(x, y)
  h = f32[N] add(g, bs)
  i = f32[N] multiply(a, b)
  j = f32[N] subtract(i, c)
  k = f32[N] multiply(d, e)
  l = f32[N] subtract(f, k)
  la = f32[N] abs(l)
  bits = s32[N] bitcast-convert(la)
  mx = f32[N] maximum(x, y)
  mn = f32[N] minimum(y, x)
  mz = f32[N] maximum(e, bs)
  cv = f32[N] convert(bits)
{many}  ROOT o = ({types}) tuple({})
}}
"#,
            outs.join(", ")
        );
        let entry = format!(
            r#"  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  s = f32[] parameter(2)
  ROOT r = ({types}) fusion(x, y, s), kind=kLoop, calls=fc"#
        );
        let text = module(&fused, &entry).replace("[N]", &format!("[{n}]"));
        let args = [
            special_f32(n, 1),
            special_f32(n, 2),
            scalar_literal(ElementType::F32, -0.75f32),
        ];
        check_generated(&format!("float n={n}"), &text, &args, 1, Agree::Bits);

        // Comparisons (NaN on either side), `pred` logic, selects, a `pred`
        // parameter, a uniform `pred`, and `pred` results, one of them read
        // by a byte-wise `xor` outside the fusion (so a `pred` stored as
        // anything but 0 or 1 shows).
        let fused = r#"
fc {
  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  m = pred[N] parameter(2)
  u = pred[] parameter(3)
  s = f32[] parameter(4)
  bs = f32[N] broadcast(s), dimensions={}
  bu = pred[N] broadcast(u), dimensions={}
  gt = pred[N] compare(x, y), direction=GT
  ge = pred[N] compare(x, bs), direction=GE
  lt = pred[N] compare(bs, y), direction=LT
  le = pred[N] compare(x, y), direction=LE
  eq = pred[N] compare(x, y), direction=EQ
  ne = pred[N] compare(x, x), direction=NE
  a1 = pred[N] and(gt, m)
  o1 = pred[N] or(a1, ne)
  x1 = pred[N] xor(o1, bu)
  n1 = pred[N] not(x1)
  s1 = f32[N] select(n1, x, y)
  s2 = f32[N] select(ge, bs, s1)
  s3 = f32[N] select(lt, s2, bs)
  s4 = f32[N] select(bu, s3, x)
  s5 = f32[N] select(m, s4, y)
  s6 = f32[N] add(s5, x)
  ROOT o = (f32[N], pred[N], pred[N], pred[N]) tuple(s6, le, eq, n1)
}
"#;
        let entry = r#"  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  m = pred[N] parameter(2)
  u = pred[] parameter(3)
  s = f32[] parameter(4)
  r = (f32[N], pred[N], pred[N], pred[N]) fusion(x, y, m, u, s), kind=kLoop, calls=fc
  g = pred[N] get-tuple-element(r), index=3
  t = pred[] constant(true)
  bt = pred[N] broadcast(t), dimensions={}
  nx = pred[N] xor(g, bt)
  ROOT out = ((f32[N], pred[N], pred[N], pred[N]), pred[N]) tuple(r, nx)"#;
        let mut rng = crate::rng::Rng(0x9e3 ^ n as u64);
        let mask: Vec<u8> = (0..n).map(|_| (rng.next() & 1) as u8).collect();
        // The last op as it is and as a `tanh`, whose written-out length
        // makes the run AVX-512 code where the machine has it (a short run
        // stays AVX2 code).
        for (last, u) in ["add(s5, x)", "tanh(s5)"]
            .into_iter()
            .flat_map(|l| [(l, 0u8), (l, 1)])
        {
            let text = module(fused, entry)
                .replace("[N]", &format!("[{n}]"))
                .replace("add(s5, x)", last);
            let args = [
                special_f32(n, 5),
                special_f32(n, 6),
                Literal::from_bytes(Shape::array(ElementType::Pred, vec![n]), &mask).unwrap(),
                scalar_literal(ElementType::Pred, u),
                scalar_literal(ElementType::F32, 0.5f32),
            ];
            check_generated(
                &format!("compare n={n} u={u} {last}"),
                &text,
                &args,
                1,
                Agree::Bits,
            );
        }

        // Integer ops and shifts in both types, a rotate by a uniform
        // amount, and a result written over the operand that dies at the
        // fusion.
        for ty in ["u32", "s32"] {
            let fused = r#"
fc {
  p = T[N] parameter(0)
  q = T[N] parameter(1)
  k = T[] parameter(2)
  bk = T[N] broadcast(k), dimensions={}
  w = T[] constant(32)
  rk = T[] subtract(w, k)
  brk = T[N] broadcast(rk), dimensions={}
  a = T[N] add(p, q)
  b = T[N] subtract(a, bk)
  c = T[N] multiply(b, q)
  d = T[N] xor(c, p)
  e = T[N] and(d, q)
  f = T[N] or(e, a)
  g = T[N] not(f)
  h = T[N] shift-left(p, q)
  i = T[N] shift-right-logical(p, q)
  j = T[N] shift-right-arithmetic(p, q)
  l = T[N] shift-left(a, bk)
  r = T[N] shift-right-logical(a, brk)
  rot = T[N] or(l, r)
  mx = T[N] maximum(p, q)
  mn = T[N] minimum(a, b)
  s1 = T[N] add(g, h)
  s2 = T[N] xor(s1, i)
  s3 = T[N] add(s2, j)
  s4 = T[N] xor(s3, rot)
  ng = T[N] negate(s4)
  ab = T[N] ABS(mx)
  s5 = T[N] subtract(ng, ab)
  s6 = T[N] add(s5, mn)
  u1 = T[N] shift-right-arithmetic(p, bk)
  u2 = T[N] shift-left(q, bk)
  u3 = T[N] shift-right-logical(s6, bk)
  u4 = T[N] subtract(bk, u1)
  u5 = T[N] shift-left(bk, q)
  u6 = T[N] xor(u2, u3)
  u7 = T[N] add(u4, u5)
  u8 = T[N] xor(u6, u7)
  c1 = pred[N] compare(p, q), direction=LT
  c2 = pred[N] compare(p, bk), direction=GE
  c3 = pred[N] compare(bk, q), direction=GT
  c4 = pred[N] compare(p, q), direction=LE
  c5 = pred[N] compare(p, q), direction=EQ
  c6 = pred[N] compare(u8, q), direction=NE
  t1 = T[N] select(c1, p, q)
  t2 = T[N] select(c2, t1, bk)
  t3 = T[N] select(c3, bk, t2)
  t4 = T[N] select(c4, t3, p)
  t5 = T[N] select(c5, t4, u8)
  ROOT t6 = T[N] select(c6, t5, bk)
}
"#;
            let entry = r#"  p0 = T[N] parameter(0)
  q = T[N] parameter(1)
  k = T[] parameter(2)
  p = T[N] multiply(p0, p0)
  ROOT r = T[N] fusion(p, q, k), kind=kLoop, calls=fc"#;
            // `abs` is defined for signed integers only.
            let text = module(fused, entry)
                .replace("T[", &format!("{ty}["))
                .replace("[N]", &format!("[{n}]"))
                .replace("ABS", if ty == "s32" { "abs" } else { "not" });
            let et = if ty == "u32" {
                ElementType::U32
            } else {
                ElementType::S32
            };
            // Uniform amounts inside the width, past it, and negative.
            for k in [13u32, 40, 0xffff_fff0] {
                let args = [
                    special_u32(et, n, 3, false),
                    special_u32(et, n, 4, true),
                    scalar_literal(et, k),
                ];
                check_generated(&format!("{ty} n={n} k={k}"), &text, &args, 1, Agree::Bits);
            }
        }
    }
}

/// `n` floats over the whole range, a fifth each of [`special_f32`]'s values,
/// values at the written-out functions' branch points (`tanh`'s, `exp`'s
/// clamps, the edge of s32), and arguments where `exp` is subnormal; the rest
/// any bits but NaN's: every binade from subnormals to the largest, both
/// signs.
fn wide_f32(n: usize, salt: u32) -> Literal {
    const EDGES: [f32; 20] = [
        // `tanh`: where it saturates to 1 (and clamps), and beyond.
        9.010_914,
        9.010_913,
        9.1,
        9.100_001,
        2_147_483_648.0,
        2_147_483_520.0,
        -110.0,
        -110.5,
        89.0,
        88.8,
        87.0,
        87.5,
        // `exp`: where 2^k reaches 2^128, and where the result overflows.
        88.376_26,
        88.376_27,
        88.722_83,
        88.722_84,
        // `exp`'s normal results start at -87 (`k` = -126 from -87.34).
        -87.0,
        -86.999_99,
        -87.000_01,
        -87.336_54,
    ];
    let special = special_values(n, salt);
    let mut rng = crate::rng::Rng(0xf00d ^ salt as u64);
    let values: Vec<f32> = (0..n)
        .map(|i| match rng.next() % 5 {
            0 => special[i],
            1 => EDGES[(rng.next() % EDGES.len() as u64) as usize],
            // Where `exp` is subnormal, and around it.
            2 => -80.0 - 30.0 * rng.unit() as f32,
            _ => loop {
                let v = f32::from_bits(rng.next() as u32);
                if !v.is_nan() {
                    break v;
                }
            },
        })
        .collect();
    f32_literal(&values)
}

#[test]
fn generated_code_writes_out_element_functions_bit_for_bit() {
    // Each function alone on values over the whole range and on moderate
    // ones, and inside arithmetic (elementwise_4m's shape), so that the
    // functions' values flow through registers into the ops around them;
    // roundings, clamps (uniform and elementwise bounds) and conversions.
    let fused = r#"
fc {
  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  i = s32[N] parameter(2)
  lo = f32[] parameter(3)
  e = f32[N] exponential(x)
  t = f32[N] tanh(x)
  l = f32[N] logistic(x)
  g = f32[N] log(x)
  q = f32[N] sqrt(x)
  rs = f32[N] rsqrt(x)
  ey = f32[N] exponential(y)
  ty = f32[N] tanh(y)
  ly = f32[N] logistic(y)
  gy = f32[N] log(y)
  m = f32[N] multiply(x, y)
  one = f32[] constant(1)
  b1 = f32[N] broadcast(one), dimensions={}
  a = f32[N] add(m, b1)
  th = f32[N] tanh(a)
  ab = f32[N] abs(x)
  ng = f32[N] negate(ab)
  ex = f32[N] exponential(ng)
  yy = f32[N] multiply(y, y)
  a3 = f32[N] add(yy, b1)
  d = f32[N] divide(ex, a3)
  s = f32[N] subtract(th, d)
  lg = f32[N] log(a3)
  sg = f32[N] logistic(s)
  fl = f32[N] floor(x)
  ce = f32[N] ceil(y)
  re = f32[N] round-nearest-even(x)
  blo = f32[N] broadcast(lo), dimensions={}
  six = f32[] constant(6)
  b6 = f32[N] broadcast(six), dimensions={}
  c1 = f32[N] clamp(blo, x, b6)
  c2 = f32[N] clamp(y, x, b1)
  ci = s32[N] convert(x)
  cy = s32[N] convert(y)
  z = s32[] constant(-5)
  bz = s32[N] broadcast(z), dimensions={}
  h = s32[] constant(100000)
  bh = s32[N] broadcast(h), dimensions={}
  c3 = s32[N] clamp(bz, i, bh)
  c4 = s32[N] clamp(i, cy, ci)
  p = pred[N] compare(x, y), direction=LT
  pf = f32[N] convert(p)
  pi = s32[N] convert(p)
  u = u32[N] bitcast-convert(i)
  pu = u32[N] convert(p)
  u1 = u32[] constant(7)
  bu1 = u32[N] broadcast(u1), dimensions={}
  u2 = u32[] constant(3000000000)
  bu2 = u32[N] broadcast(u2), dimensions={}
  c5 = u32[N] clamp(bu1, u, bu2)
  ROOT o = (f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], s32[N], s32[N], s32[N], s32[N], f32[N], s32[N], u32[N], u32[N]) tuple(e, t, l, g, q, rs, ey, ty, ly, gy, s, lg, sg, fl, ce, re, c1, c2, ci, cy, c3, c4, pf, pi, pu, c5)
}
"#;
    let entry = r#"  x = f32[N] parameter(0)
  y = f32[N] parameter(1)
  i = s32[N] parameter(2)
  lo = f32[] parameter(3)
  ROOT r = (f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], f32[N], s32[N], s32[N], s32[N], s32[N], f32[N], s32[N], u32[N], u32[N]) fusion(x, y, i, lo), kind=kLoop, calls=fc"#;
    for n in [13usize, 21, 45, 9001] {
        let text = module(fused, entry).replace("[N]", &format!("[{n}]"));
        let args = [
            wide_f32(n, 7),
            special_f32(n, 8),
            special_u32(ElementType::S32, n, 9, false),
            scalar_literal(ElementType::F32, -0.5f32),
        ];
        check_generated(&format!("functions n={n}"), &text, &args, 1, Agree::Bits);
    }
}

#[test]
fn generated_code_takes_row_values_and_repeated_rows() {
    // A row's sum broadcast back along the row and a bias repeated down the
    // rows, read by a run: row by row with rows of at least 64 elements,
    // expanded into blocks below that.
    for (rows, len) in [(37usize, 100usize), (9, 517), (50, 20)] {
        let fused = r#"
fc {
  x = f32[R,L] parameter(0)
  g = f32[L] parameter(1)
  z = f32[] constant(0)
  sum = f32[R] reduce(x, z), dimensions={1}, to_apply=add_f32
  bs = f32[R,L] broadcast(sum), dimensions={0}
  bg = f32[R,L] broadcast(g), dimensions={1}
  d = f32[R,L] subtract(x, bs)
  e = f32[R,L] multiply(d, bg)
  f = f32[R,L] add(e, bs)
  m = f32[R,L] maximum(f, d)
  c = pred[R,L] compare(m, bg), direction=LT
  ROOT s = f32[R,L] select(c, bs, m)
}
"#;
        let entry = r#"  x = f32[R,L] parameter(0)
  g = f32[L] parameter(1)
  ROOT r = f32[R,L] fusion(x, g), kind=kLoop, calls=fc"#;
        let text = module(fused, entry)
            .replace("R,L]", &format!("{rows},{len}]"))
            .replace("[R]", &format!("[{rows}]"))
            .replace("[L]", &format!("[{len}]"));
        // Finite values (a NaN or infinity in a row would make every row's
        // sum alike), with one row of special values.
        let mut rng = crate::rng::Rng(0x70f ^ (rows * len) as u64);
        let specials = special_f32(len, 9);
        let mut bytes = Vec::with_capacity(rows * len * 4);
        for r in 0..rows {
            if r == rows / 2 {
                bytes.extend_from_slice(specials.bytes().unwrap());
            } else {
                for _ in 0..len {
                    bytes.extend_from_slice(&((rng.unit() * 8.0 - 4.0) as f32).to_le_bytes());
                }
            }
        }
        let x =
            Literal::from_bytes(Shape::array(ElementType::F32, vec![rows, len]), &bytes).unwrap();
        let args = [x, special_f32(len, 8)];
        check_generated(
            &format!("rows {rows}x{len}"),
            &text,
            &args,
            1,
            Agree::Within(1e-5),
        );
    }
}

#[test]
fn generated_runs_take_the_bias_reads_between_their_ops() {
    // Layernorm: `(x - mean) * rstd * g + b` reads `g` and `b` after the
    // first product. Both stretches of ops form runs (two in all) only when
    // those reads come before the ops around them (`program::hoist_loads`).
    let fused = r#"
fc {
  x = f32[37,100] parameter(0)
  g = f32[100] parameter(1)
  b = f32[100] parameter(2)
  z = f32[] constant(0)
  sum = f32[37] reduce(x, z), dimensions={1}, to_apply=add_f32
  n = f32[] constant(0.01)
  bn = f32[37] broadcast(n), dimensions={}
  mean = f32[37] multiply(sum, bn)
  bm = f32[37,100] broadcast(mean), dimensions={0}
  d = f32[37,100] subtract(x, bm)
  dd = f32[37,100] multiply(d, d)
  ss = f32[37] reduce(dd, z), dimensions={1}, to_apply=add_f32
  var = f32[37] multiply(ss, bn)
  rs = f32[37] rsqrt(var)
  br = f32[37,100] broadcast(rs), dimensions={0}
  nd = f32[37,100] multiply(d, br)
  bg = f32[37,100] broadcast(g), dimensions={1}
  sc = f32[37,100] multiply(nd, bg)
  bb = f32[37,100] broadcast(b), dimensions={1}
  ROOT o = f32[37,100] add(sc, bb)
}
"#;
    let entry = r#"  x = f32[37,100] parameter(0)
  g = f32[100] parameter(1)
  b = f32[100] parameter(2)
  ROOT r = f32[37,100] fusion(x, g, b), kind=kLoop, calls=fc"#;
    let text = module(fused, entry);
    let mut rng = crate::rng::Rng(0x1a7e);
    let values: Vec<f32> = (0..37 * 100)
        .map(|_| (rng.unit() * 8.0 - 4.0) as f32)
        .collect();
    let args = [
        Literal::from_bytes(
            Shape::array(ElementType::F32, vec![37, 100]),
            bytemuck_bytes(&values),
        )
        .unwrap(),
        special_f32(100, 3),
        special_f32(100, 4),
    ];
    check_generated("layernorm", &text, &args, 2, Agree::Within(1e-5));
}
