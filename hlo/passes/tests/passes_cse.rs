//! Common-subexpression elimination.

mod passes_common;

use hlo_ir::Opcode;
use hlo_passes::{CommonSubexpressionElimination as Cse, ComputationDeduplication};
use passes_common::{assert_idempotent, count, parse, run};

#[test]
fn equal_expressions_merge_transitively_in_one_run() {
    let m = parse(
        "HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a1 = f32[4] add(p, q)
  a2 = f32[4] add(p, q)
  n1 = f32[4] negate(a1)
  n2 = f32[4] negate(a2)
  c1 = f32[] constant(2.5)
  c2 = f32[] constant(2.5)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(n1, b1)
  m2 = f32[4] multiply(n2, b2)
  ROOT r = (f32[4], f32[4]) tuple(m1, m2)
}
",
    );
    let (out, changed) = run(&mut Cse::new(), &m);
    assert!(changed);
    for op in [
        Opcode::Add,
        Opcode::Negate,
        Opcode::Constant,
        Opcode::Broadcast,
        Opcode::Multiply,
    ] {
        assert_eq!(count(&out, op), 1, "{op}:\n{out}");
    }
    let root = out.entry().root_instr();
    assert_eq!(root.operands[0], root.operands[1]);
    assert_idempotent(&mut Cse::new(), &out);
}

#[test]
fn different_values_attributes_or_shapes_stay_apart() {
    let m = parse(
        "HloModule m

ENTRY e {
  p = f32[4,4] parameter(0)
  pz = f32[] constant(0)
  nz = f32[] constant(-0)
  nan1 = f32[] constant(nan)
  bits = s32[] constant(2143289345)
  nan2 = f32[] bitcast-convert(bits)
  s1 = f32[2,4] slice(p), slice={[0:2], [0:4]}
  s2 = f32[2,4] slice(p), slice={[2:4], [0:4]}
  t1 = f32[4,4]{1,0} transpose(p), dimensions={1,0}
  t2 = f32[4,4]{0,1} transpose(p), dimensions={1,0}
  ROOT r = (f32[], f32[], f32[], f32[], f32[2,4], f32[2,4], f32[4,4], f32[4,4]) tuple(pz, nz, nan1, nan2, s1, s2, t1, t2)
}
",
    );
    let (_, changed) = run(&mut Cse::new(), &m);
    assert!(
        !changed,
        "+0/-0, different slices and different layouts must not merge"
    );
}

#[test]
fn nan_constants_merge_only_with_the_same_payload() {
    let m = parse(
        "HloModule m

ENTRY e {
  a = s32[] constant(2143289345)
  b = s32[] constant(2143289346)
  c = s32[] constant(2143289345)
  fa = f32[] bitcast-convert(a)
  fb = f32[] bitcast-convert(b)
  fc = f32[] bitcast-convert(c)
  ROOT r = (f32[], f32[], f32[]) tuple(fa, fb, fc)
}
",
    );
    let (out, _) = run(&mut Cse::new(), &m);
    assert_eq!(count(&out, Opcode::Constant), 2, "{out}");
    assert_eq!(count(&out, Opcode::BitcastConvert), 2, "{out}");
}

#[test]
fn commutative_operands_are_canonical_for_integers_only() {
    let m = parse(
        "HloModule m

ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  x = f32[4] parameter(2)
  y = f32[4] parameter(3)
  i1 = s32[4] add(a, b)
  i2 = s32[4] add(b, a)
  m1 = s32[4] maximum(a, b)
  m2 = s32[4] maximum(b, a)
  s1 = s32[4] subtract(a, b)
  s2 = s32[4] subtract(b, a)
  f1 = f32[4] add(x, y)
  f2 = f32[4] add(y, x)
  ROOT r = (s32[4], s32[4], s32[4], s32[4], s32[4], s32[4], f32[4], f32[4]) tuple(i1, i2, m1, m2, s1, s2, f1, f2)
}
",
    );
    let (out, _) = run(&mut Cse::new(), &m);
    assert_eq!(
        count(&out, Opcode::Add),
        3,
        "integer adds merge, float adds do not:\n{out}"
    );
    assert_eq!(count(&out, Opcode::Maximum), 1, "{out}");
    assert_eq!(count(&out, Opcode::Subtract), 2, "{out}");
}

#[test]
fn random_and_effectful_ops_never_merge() {
    let m = parse(
        r#"HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4] rng(lo, hi), distribution=rng_uniform
  r2 = f32[4] rng(lo, hi), distribution=rng_uniform
  s = u64[2] parameter(1)
  g1 = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_default
  g2 = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_default
  e1 = f32[4] custom-call(p), custom_call_target="log_it", custom_call_has_side_effect=true
  e2 = f32[4] custom-call(p), custom_call_target="log_it", custom_call_has_side_effect=true
  c1 = f32[4] custom-call(p), custom_call_target="pure"
  c2 = f32[4] custom-call(p), custom_call_target="pure"
  ROOT r = (f32[4], f32[4], (u64[2], u32[4]), (u64[2], u32[4]), f32[4], f32[4], f32[4], f32[4]) tuple(r1, r2, g1, g2, e1, e2, c1, c2)
}
"#,
    );
    let (out, _) = run(&mut Cse::new(), &m);
    assert_eq!(count(&out, Opcode::Rng), 2, "{out}");
    assert_eq!(count(&out, Opcode::RngBitGenerator), 2, "{out}");
    // Two effectful calls stay; the two pure ones become one.
    assert_eq!(count(&out, Opcode::CustomCall), 3, "{out}");
}

#[test]
fn subcomputations_are_cleaned_too() {
    let m = parse(
        "HloModule m

add_sq {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  y2a = f32[] multiply(y, y)
  y2b = f32[] multiply(y, y)
  s = f32[] add(x, y2a)
  ROOT t = f32[] add(s, y2b)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add_sq
}
",
    );
    let (out, _) = run(&mut Cse::new(), &m);
    assert_eq!(count(&out, Opcode::Multiply), 1, "{out}");
}

#[test]
fn identical_computations_merge_and_then_their_callers_do() {
    let m = parse(
        "HloModule m

region_0 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

region_1 {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT t = f32[] add(c, d)
}

region_2 {
  e = f32[] parameter(0)
  f = f32[] parameter(1)
  ROOT u = f32[] add(f, e)
}

region_max {
  g = f32[] parameter(0)
  h = f32[] parameter(1)
  ROOT v = f32[] maximum(g, h)
}

ENTRY e {
  p = f32[4,8] parameter(0)
  z = f32[] constant(0)
  r0 = f32[4] reduce(p, z), dimensions={1}, to_apply=region_0
  r1 = f32[4] reduce(p, z), dimensions={1}, to_apply=region_1
  r2 = f32[4] reduce(p, z), dimensions={1}, to_apply=region_2
  r3 = f32[4] reduce(p, z), dimensions={1}, to_apply=region_max
  ROOT out = (f32[4], f32[4], f32[4], f32[4]) tuple(r0, r1, r2, r3)
}
",
    );
    let (dedup, changed) = run(&mut ComputationDeduplication::new(), &m);
    assert!(changed);
    // region_2 adds its operands the other way round: a different computation.
    let names: Vec<&str> = dedup.computations.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["region_0", "region_2", "region_max", "e"],
        "{dedup}"
    );
    assert_idempotent(&mut ComputationDeduplication::new(), &dedup);
    let (out, _) = run(&mut Cse::new(), &dedup);
    assert_eq!(count(&out, Opcode::Reduce), 3, "{out}");
}

#[test]
fn callers_of_merged_computations_merge_too() {
    let m = parse(
        "HloModule m

add_a {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add_b {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT t = f32[] add(c, d)
}

sum_a {
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_a
}

sum_b {
  y = f32[8] parameter(0)
  w = f32[] constant(0)
  ROOT q = f32[] reduce(y, w), dimensions={0}, to_apply=add_b
}

ENTRY e {
  p = f32[8] parameter(0)
  c1 = f32[] call(p), to_apply=sum_a
  c2 = f32[] call(p), to_apply=sum_b
  ROOT out = (f32[], f32[]) tuple(c1, c2)
}
",
    );
    let (out, _) = run(&mut ComputationDeduplication::new(), &m);
    assert_eq!(out.computations.len(), 3, "{out}");
    let (out, _) = run(&mut Cse::new(), &out);
    assert_eq!(count(&out, Opcode::Call), 1, "{out}");
}

#[test]
fn fused_computations_keep_their_single_caller() {
    let m = parse(
        "HloModule m

fused_a {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

fused_b {
  b = f32[4] parameter(0)
  ROOT k = f32[4] negate(b)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  f1 = f32[4] fusion(p), kind=kLoop, calls=fused_a
  f2 = f32[4] fusion(q), kind=kLoop, calls=fused_b
  ROOT out = (f32[4], f32[4]) tuple(f1, f2)
}
",
    );
    let (_, changed) = run(&mut ComputationDeduplication::new(), &m);
    assert!(!changed);
}
