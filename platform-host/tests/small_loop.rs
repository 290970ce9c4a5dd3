//! Loops on small values run as one flat list of kernel calls
//! (`thunk::small_loop`). Each program here runs with small loops on and off
//! (`host_small_loops=off`: the condition and body as nested sequences) on
//! the same inputs, and the results must be bit-identical; each also checks
//! that its loop really qualifies, so a silent fallback cannot pass.

use platform_api::hlo::Op;
use platform_api::{CompileOptions, Executable, HloModule, Literal};
use platform_host::compiler::{optimize, small_loop};
use platform_host::runner::HostRunner;

use crate::rng::Rng;

fn literal(shape: &str, rng: &mut Rng) -> Literal {
    let shape = platform_api::hlo::parser::parse_shape(shape).expect("shape");
    let a = shape.as_array().expect("array").clone();
    let mut bytes = Vec::new();
    for _ in 0..a.element_count() {
        let x = rng.unit() * 2.0 - 0.5;
        match a.element_type.name() {
            "f32" => bytes.extend_from_slice(&(x as f32).to_le_bytes()),
            "f64" => bytes.extend_from_slice(&x.to_le_bytes()),
            "bf16" => bytes.extend_from_slice(&half::bf16::from_f64(x).to_le_bytes()),
            "f16" => bytes.extend_from_slice(&half::f16::from_f64(x).to_le_bytes()),
            "s32" => bytes.extend_from_slice(&((rng.next() % 201) as i32 - 100).to_le_bytes()),
            "u8" => bytes.push(rng.next() as u8),
            "u32" => bytes.extend_from_slice(&(rng.next() as u32).to_le_bytes()),
            "pred" => bytes.push((rng.next() & 1) as u8),
            other => panic!("no generator for {other}"),
        }
    }
    Literal::from_bytes(shape, &bytes).expect("literal")
}

fn off() -> CompileOptions {
    CompileOptions {
        debug_options: vec![(small_loop::OPTION.to_string(), "off".to_string())],
        ..CompileOptions::default()
    }
}

/// Whether every `while` of the optimized module compiles as a small loop
/// (`Err` with the first reason otherwise).
fn qualifies(text: &str) -> Result<(), String> {
    let options = CompileOptions::default();
    let module = optimize(HloModule::parse(text).unwrap(), &options).unwrap();
    let mut loops = 0;
    for comp in &module.computations {
        for instr in &comp.instructions {
            if matches!(instr.op, Op::While { .. }) {
                loops += 1;
                small_loop::compile(&module, instr)?;
            }
        }
    }
    assert!(loops > 0, "the optimized module has no while loop");
    Ok(())
}

/// Runs `text` with small loops on and off on random arguments of `shapes`
/// and checks the results are the same bits.
fn check(text: &str, shapes: &[&str]) {
    if let Err(why) = qualifies(text) {
        panic!("the loop does not run as a small loop: {why}");
    }
    let mut rng = Rng(7);
    let args: Vec<Literal> = shapes.iter().map(|s| literal(s, &mut rng)).collect();
    let on = HostRunner::compile(text).unwrap().run(&args).unwrap();
    let off = HostRunner::compile_with(text, &off())
        .unwrap()
        .run(&args)
        .unwrap();
    assert_eq!(on, off, "small loop and nested sequences disagree");
}

#[test]
fn a_fori_loop_with_a_vector_carry() {
    check(
        r#"
HloModule m
body {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[16] get-tuple-element(p), index=1
  a = f32[] constant(0.999)
  ab = f32[16] broadcast(a), dimensions={}
  m = f32[16] multiply(x, ab)
  c = f32[] constant(0.001)
  cb = f32[16] broadcast(c), dimensions={}
  y = f32[16] add(m, cb)
  ROOT t = (s32[], f32[16]) tuple(i1, y)
}
cond {
  p = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[16]) tuple(z, x)
  w = (s32[], f32[16]) while(t), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
}
"#,
        &["f32[16]"],
    );
}

#[test]
fn a_data_dependent_loop_with_a_reduction_in_its_condition() {
    check(
        r#"
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
body {
  x = f32[64] parameter(0)
  c = f32[] constant(1.01)
  cb = f32[64] broadcast(c), dimensions={}
  m = f32[64] multiply(x, cb)
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  ROOT y = f32[64] add(m, ob)
}
cond {
  x = f32[64] parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  lim = f32[] constant(1e6)
  ROOT lt = pred[] compare(s, lim), direction=LT
}
ENTRY e {
  x = f32[64] parameter(0)
  ROOT w = f32[64] while(x), condition=cond, body=body
}
"#,
        &["f32[64]"],
    );
}

/// The arena bytes of the optimized module's first `while`, as a small loop.
fn arena_bytes(text: &str) -> usize {
    let options = CompileOptions::default();
    let module = optimize(HloModule::parse(text).unwrap(), &options).unwrap();
    let instr = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .find(|i| matches!(i.op, Op::While { .. }))
        .expect("a while loop");
    small_loop::compile(&module, instr).unwrap().arena_bytes
}

#[test]
fn the_arena_holds_only_what_is_live_at_once() {
    // A fori_loop whose two counters and carry are all updated in place:
    // the arena holds the condition's pred alone, not one slot per value
    // the body computed before it was moved into the state.
    let fori = r#"
HloModule m
body {
  p = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  j = s32[] get-tuple-element(p), index=1
  j1 = s32[] add(j, one)
  x = f32[16] get-tuple-element(p), index=2
  a = f32[] constant(0.999)
  ab = f32[16] broadcast(a), dimensions={}
  y = f32[16] multiply(x, ab)
  ROOT t = (s32[], s32[], f32[16]) tuple(i1, j1, y)
}
cond {
  p = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[16] parameter(0)
  z = s32[] constant(0)
  t = (s32[], s32[], f32[16]) tuple(z, z, x)
  w = (s32[], s32[], f32[16]) while(t), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=2
}
"#;
    assert_eq!(arena_bytes(fori), 1);
    check(fori, &["f32[16]"]);
    // The result (64 bytes) and the temp arena: the two counters and the
    // loop's arena, each at a multiple of 16 bytes (64-byte lines for the
    // counters and one slot per body value made this 260).
    let runner = HostRunner::compile(fori).unwrap();
    assert_eq!(runner.executable.peak_memory_bytes(), Some(64 + 33));

    // The condition's sum and pred, then the body: its result, written
    // into the state in place, takes no room; the condition's values share
    // their bytes with the body's.
    let data_dependent = r#"
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
body {
  x = f32[64] parameter(0)
  c = f32[] constant(1.01)
  cb = f32[64] broadcast(c), dimensions={}
  m = f32[64] multiply(x, cb)
  one = f32[] constant(1)
  ob = f32[64] broadcast(one), dimensions={}
  y = f32[64] add(m, ob)
  d = f32[64] multiply(y, cb)
  ROOT e = f32[64] add(d, m)
}
cond {
  x = f32[64] parameter(0)
  z = f32[] constant(0)
  s = f32[] reduce(x, z), dimensions={0}, to_apply=add
  lim = f32[] constant(1e6)
  ROOT lt = pred[] compare(s, lim), direction=LT
}
ENTRY e {
  x = f32[64] parameter(0)
  ROOT w = f32[64] while(x), condition=cond, body=body
}
"#;
    // `m` lives to the body's last step, and `y` and `d` meet at the step
    // computing `d` from `y` (a result never shares an operand's bytes
    // here): three 256-byte values at once.
    assert_eq!(arena_bytes(data_dependent), 3 * 256);
    check(data_dependent, &["f32[64]"]);
}

#[test]
fn a_body_that_swaps_and_resets_its_state() {
    // (a, b, k, i) -> (b, a + 1, 7s, i + 1): results that are old state
    // leaves, a broadcast constant, and values computed from leaves the
    // same iteration overwrites.
    check(
        r#"
HloModule m
body {
  p = (s32[4], s32[4], s32[3], s32[]) parameter(0)
  a = s32[4] get-tuple-element(p), index=0
  b = s32[4] get-tuple-element(p), index=1
  i = s32[] get-tuple-element(p), index=3
  one = s32[] constant(1)
  ob = s32[4] broadcast(one), dimensions={}
  a1 = s32[4] add(a, ob)
  i1 = s32[] add(i, one)
  seven = s32[] constant(7)
  k = s32[3] broadcast(seven), dimensions={}
  ROOT t = (s32[4], s32[4], s32[3], s32[]) tuple(b, a1, k, i1)
}
cond {
  p = (s32[4], s32[4], s32[3], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=3
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  k = s32[3] parameter(2)
  z = s32[] constant(0)
  t = (s32[4], s32[4], s32[3], s32[]) tuple(a, b, k, z)
  ROOT w = (s32[4], s32[4], s32[3], s32[]) while(t), condition=cond, body=body
}
"#,
        &["s32[4]", "s32[4]", "s32[3]"],
    );
}

#[test]
fn narrow_floats_conversions_selects_and_a_pred_in_the_state() {
    // The condition is a state leaf; the body mixes bf16, f16, u8, a
    // conversion, a clamp and a select, and a nested tuple.
    check(
        r#"
HloModule m
body {
  p = (pred[], (s32[], bf16[8]), f16[8], u8[8]) parameter(0)
  q = (s32[], bf16[8]) get-tuple-element(p), index=1
  i = s32[] get-tuple-element(q), index=0
  x = bf16[8] get-tuple-element(q), index=1
  h = f16[8] get-tuple-element(p), index=2
  u = u8[8] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i1)
  fb = bf16[] convert(fi)
  fbb = bf16[8] broadcast(fb), dimensions={}
  e = bf16[8] exponential(x)
  x1 = bf16[8] subtract(e, fbb)
  t = f16[8] tanh(h)
  hx = f16[8] convert(x1)
  h1 = f16[8] add(t, hx)
  lo = f16[] constant(-2)
  hi = f16[] constant(2)
  h2 = f16[8] clamp(lo, h1, hi)
  three = u8[] constant(3)
  tb = u8[8] broadcast(three), dimensions={}
  ud = u8[8] divide(u, tb)
  us = u8[8] add(ud, tb)
  big = pred[8] compare(u, tb), direction=GT
  u1 = u8[8] select(big, ud, us)
  n = s32[] constant(9)
  more = pred[] compare(i1, n), direction=LT
  q1 = (s32[], bf16[8]) tuple(i1, x1)
  ROOT r = (pred[], (s32[], bf16[8]), f16[8], u8[8]) tuple(more, q1, h2, u1)
}
cond {
  p = (pred[], (s32[], bf16[8]), f16[8], u8[8]) parameter(0)
  ROOT go = pred[] get-tuple-element(p), index=0
}
ENTRY e {
  x = bf16[8] parameter(0)
  h = f16[8] parameter(1)
  u = u8[8] parameter(2)
  z = s32[] constant(0)
  yes = pred[] constant(true)
  q = (s32[], bf16[8]) tuple(z, x)
  t = (pred[], (s32[], bf16[8]), f16[8], u8[8]) tuple(yes, q, h, u)
  w = (pred[], (s32[], bf16[8]), f16[8], u8[8]) while(t), condition=cond, body=body
  ROOT r = f16[8] get-tuple-element(w), index=2
}
"#,
        &["bf16[8]", "f16[8]", "u8[8]"],
    );
}

#[test]
fn a_call_and_a_reshape_inside_the_body() {
    check(
        r#"
HloModule m
step {
  x = f64[2,3] parameter(0)
  s = f64[] parameter(1)
  sb = f64[2,3] broadcast(s), dimensions={}
  ROOT y = f64[2,3] multiply(x, sb)
}
max {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT m = f64[] maximum(a, b)
}
body {
  p = (f64[6], s32[]) parameter(0)
  x = f64[6] get-tuple-element(p), index=0
  i = s32[] get-tuple-element(p), index=1
  r = f64[2,3] reshape(x)
  h = f64[] constant(0.5)
  y = f64[2,3] call(r, h), to_apply=step
  ninf = f64[] constant(-inf)
  m = f64[] reduce(y, ninf), dimensions={0,1}, to_apply=max
  mb = f64[2,3] broadcast(m), dimensions={}
  z = f64[2,3] add(y, mb)
  f = f64[6] reshape(z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (f64[6], s32[]) tuple(f, i1)
}
cond {
  p = (f64[6], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=1
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f64[6] parameter(0)
  z = s32[] constant(0)
  t = (f64[6], s32[]) tuple(x, z)
  w = (f64[6], s32[]) while(t), condition=cond, body=body
  ROOT r = f64[6] get-tuple-element(w), index=0
}
"#,
        &["f64[6]"],
    );
}

#[test]
fn loops_with_products_or_large_values_keep_the_nested_sequences() {
    let with_dot = r#"
HloModule m
body {
  p = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[4,4] get-tuple-element(p), index=1
  y = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[4,4]) tuple(i1, y)
}
cond {
  p = (s32[], f32[4,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[4,4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4,4]) tuple(z, x)
  w = (s32[], f32[4,4]) while(t), condition=cond, body=body
  ROOT r = f32[4,4] get-tuple-element(w), index=1
}
"#;
    let why = qualifies(with_dot).expect_err("a loop with a dot");
    assert!(why.contains("dot"), "{why}");
    let large = with_dot.replace("f32[4,4]", "f32[64,64]").replace(
        "y = f32[64,64] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "y = f32[64,64] add(x, x)",
    );
    let why = qualifies(&large).expect_err("a loop on 4096 elements");
    assert!(why.contains("elements"), "{why}");
    // Both still run (on the nested sequences).
    let mut rng = Rng(3);
    let x = literal("f32[4,4]", &mut rng);
    HostRunner::compile(with_dot).unwrap().run(&[x]).unwrap();
}

#[test]
fn every_op_the_interpreter_computes_itself() {
    // Scalar integer, float and pred ops (each comparison direction, select),
    // and vector f32/f64 arithmetic with both kinds of contracted
    // multiply-subtract, all fed back through the state.
    check(
        r#"
HloModule m
body {
  p = (s32[], u32[], s64[], f32[], f64[], f32[9], f64[5], pred[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  u = u32[] get-tuple-element(p), index=1
  l = s64[] get-tuple-element(p), index=2
  f = f32[] get-tuple-element(p), index=3
  d = f64[] get-tuple-element(p), index=4
  v = f32[9] get-tuple-element(p), index=5
  w = f64[5] get-tuple-element(p), index=6
  b = pred[] get-tuple-element(p), index=7
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  k = s32[] constant(-7)
  im = s32[] multiply(i1, k)
  is = s32[] subtract(im, i)
  ix = s32[] xor(is, i1)
  ia = s32[] and(ix, k)
  io = s32[] or(ia, one)
  uc = u32[] constant(2654435761)
  um = u32[] multiply(u, uc)
  us = u32[] subtract(um, uc)
  ux = u32[] xor(us, u)
  lc = s64[] constant(6364136223846793005)
  lm = s64[] multiply(l, lc)
  la = s64[] add(lm, lc)
  fc = f32[] constant(1.25)
  fm = f32[] multiply(f, fc)
  fd = f32[] divide(fm, fc)
  fs = f32[] subtract(fd, fc)
  fa = f32[] add(fs, fm)
  dc = f64[] constant(0.75)
  dd = f64[] divide(d, dc)
  ds = f64[] subtract(dd, dc)
  lt = pred[] compare(f, fa), direction=LT
  le = pred[] compare(d, ds), direction=LE
  gt = pred[] compare(i, io), direction=GT
  ge = pred[] compare(u, ux), direction=GE
  eq = pred[] compare(l, la), direction=EQ
  ne = pred[] compare(fs, fm), direction=NE
  b1 = pred[] xor(lt, le)
  b2 = pred[] or(gt, ge)
  b3 = pred[] and(eq, ne)
  b4 = pred[] xor(b1, b2)
  b5 = pred[] or(b4, b3)
  b6 = pred[] xor(b5, b)
  fsel = f32[] select(b6, fa, fs)
  fb = f32[9] broadcast(fsel), dimensions={}
  v1 = f32[9] multiply(v, fb)
  v2 = f32[9] subtract(v1, v)
  v3 = f32[9] multiply(v2, v2)
  v4 = f32[9] subtract(v, v3)
  c9 = f32[] constant(3)
  c9b = f32[9] broadcast(c9), dimensions={}
  v5 = f32[9] divide(v4, c9b)
  v6 = f32[9] add(v5, v1)
  wb = f64[5] broadcast(ds), dimensions={}
  w1 = f64[5] multiply(w, wb)
  w2 = f64[5] subtract(w1, w)
  w3 = f64[5] multiply(w, w)
  w4 = f64[5] subtract(w2, w3)
  w5 = f64[5] add(w4, wb)
  w6 = f64[5] divide(w5, wb)
  ROOT t = (s32[], u32[], s64[], f32[], f64[], f32[9], f64[5], pred[]) tuple(i1, ux, la, fsel, ds, v6, w6, b6)
}
cond {
  p = (s32[], u32[], s64[], f32[], f64[], f32[9], f64[5], pred[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  u = u32[] parameter(0)
  f = f32[] parameter(1)
  d = f64[] parameter(2)
  v = f32[9] parameter(3)
  w = f64[5] parameter(4)
  b = pred[] parameter(5)
  l = s64[] convert(u)
  z = s32[] constant(0)
  t = (s32[], u32[], s64[], f32[], f64[], f32[9], f64[5], pred[]) tuple(z, u, l, f, d, v, w, b)
  ROOT r = (s32[], u32[], s64[], f32[], f64[], f32[9], f64[5], pred[]) while(t), condition=cond, body=body
}
"#,
        &["u32[]", "f32[]", "f64[]", "f32[9]", "f64[5]", "pred[]"],
    );
}
