//! Call inlining.

mod passes_common;

use hlo_ir::Opcode;
use hlo_passes::CallInliner;
use passes_common::{assert_idempotent, count, parse, run};

#[test]
fn nested_calls_are_inlined_and_their_computations_removed() {
    let m = parse(
        "HloModule m

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

inner {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(a, z), dimensions={0}, to_apply=add_f32
  ROOT e = f32[] exponential(r)
}

middle {
  b = f32[4] parameter(0)
  c = f32[] call(b), to_apply=inner
  ROOT n = f32[] negate(c)
}

outer {
  d = f32[4] parameter(0)
  k = f32[] call(d), to_apply=middle
  ROOT t = f32[] tanh(k)
}

ENTRY e {
  p = f32[4] parameter(0)
  ROOT q = f32[] call(p), to_apply=outer
}
",
    );
    let (out, changed) = run(&mut CallInliner::new(), &m);
    assert!(changed);
    assert_eq!(count(&out, Opcode::Call), 0, "{out}");
    // Only the entry and the reducer (called by a reduce, not a call) remain.
    let names: Vec<&str> = out.computations.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{out}");
    assert!(names.contains(&"add_f32"));
    let ops: Vec<Opcode> = out
        .entry()
        .instructions
        .iter()
        .map(|i| i.opcode())
        .collect();
    assert_eq!(
        ops,
        [
            Opcode::Parameter,
            Opcode::Constant,
            Opcode::Reduce,
            Opcode::Exp,
            Opcode::Negate,
            Opcode::Tanh
        ],
        "{out}"
    );
    assert_idempotent(&mut CallInliner::new(), &out);
}

#[test]
fn a_computation_called_twice_is_copied_twice_with_unique_names() {
    let m = parse(
        "HloModule m

twice {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT s = f32[3] multiply(a, b)
}

ENTRY e {
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  c1 = f32[3] call(p, q), to_apply=twice
  c2 = f32[3] call(q, c1), to_apply=twice
  ROOT r = (f32[3], f32[3]) tuple(c1, c2)
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    assert_eq!(count(&out, Opcode::Multiply), 2, "{out}");
    assert_eq!(out.computations.len(), 1);
    let entry = out.entry();
    let muls: Vec<_> = entry
        .instructions
        .iter()
        .filter(|i| i.opcode() == Opcode::Multiply)
        .collect();
    let (p, q) = (entry.find("p").unwrap(), entry.find("q").unwrap());
    assert_eq!(muls[0].operands, vec![p, q]);
    assert_eq!(muls[1].operands[0], q);
    assert_eq!(entry.instr(muls[1].operands[1]).name, muls[0].name);
    assert_ne!(muls[0].name, muls[1].name);
}

#[test]
fn calls_inside_loop_bodies_are_inlined_there() {
    let m = parse(
        "HloModule m

step {
  s = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(s, one)
}

body {
  b = s32[] parameter(0)
  ROOT c = s32[] call(b), to_apply=step
}

cond {
  c0 = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(c0, ten), direction=LT
}

ENTRY e {
  p = s32[] parameter(0)
  z = s32[] constant(0)
  w = s32[] while(z), condition=cond, body=body
  ROOT r = s32[] add(w, p)
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    assert_eq!(count(&out, Opcode::Call), 0);
    assert!(out.find_computation("step").is_none(), "{out}");
    let body = out.computation(out.find_computation("body").unwrap());
    assert_eq!(body.root_instr().opcode(), Opcode::Add, "{out}");
    assert_eq!(count(&out, Opcode::While), 1);
}

#[test]
fn a_callee_returning_its_parameter_becomes_the_operand() {
    let m = parse(
        "HloModule m

id {
  a = f32[2] parameter(0)
  ROOT b = f32[2] parameter(1)
}

ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  c = f32[2] call(p, q), to_apply=id
  ROOT n = f32[2] negate(c)
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    let entry = out.entry();
    assert_eq!(entry.instructions.len(), 3, "{out}");
    assert_eq!(entry.root_instr().operands, vec![entry.find("q").unwrap()]);
}

#[test]
fn layout_differences_at_the_boundary_become_copies() {
    let m = parse(
        "HloModule m

colmajor {
  a = f32[2,3]{0,1} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(a)
}

ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT c = f32[2,3]{1,0} call(p), to_apply=colmajor
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    let ops: Vec<Opcode> = out
        .entry()
        .instructions
        .iter()
        .map(|i| i.opcode())
        .collect();
    assert_eq!(
        ops,
        [
            Opcode::Parameter,
            Opcode::Copy,
            Opcode::Negate,
            Opcode::Copy
        ],
        "{out}"
    );
    assert_eq!(out.entry().root_instr().shape.to_string(), "f32[2,3]{1,0}");
}

#[test]
fn an_effectful_callee_keeps_its_effect_and_loses_the_call() {
    let m = parse(
        r#"HloModule m

noisy {
  a = f32[2] parameter(0)
  log = f32[2] custom-call(a), custom_call_target="log_it", custom_call_has_side_effect=true
  ROOT n = f32[2] negate(a)
}

ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] call(p), to_apply=noisy
  ROOT r = f32[2] abs(c)
}
"#,
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    assert_eq!(count(&out, Opcode::Call), 0, "{out}");
    assert_eq!(count(&out, Opcode::CustomCall), 1, "{out}");
    assert_eq!(out.computations.len(), 1);
}

#[test]
fn no_call_means_no_change() {
    let m = parse(
        "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
    );
    let (_, changed) = run(&mut CallInliner::new(), &m);
    assert!(!changed);
}

#[test]
fn inlined_random_draws_keep_their_place_in_the_sequence() {
    // The interpreter draws `rng` values in instruction order; after inlining,
    // the callee's draw must still come before the caller's.
    let m = parse(
        "HloModule m

draw {
  lo = f32[] parameter(0)
  hi = f32[] constant(1)
  ROOT r = f32[4] rng(lo, hi), distribution=rng_uniform
}

ENTRY e {
  z = f32[] constant(0)
  first = f32[4] call(z), to_apply=draw
  one = f32[] constant(1)
  second = f32[4] rng(z, one), distribution=rng_uniform
  ROOT t = (f32[4], f32[4]) tuple(second, first)
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    let entry = out.entry();
    let rngs: Vec<&str> = entry
        .instructions
        .iter()
        .filter(|i| i.opcode() == Opcode::Rng)
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(rngs, ["r.1", "second"], "{out}");
}

#[test]
fn fusions_inlined_twice_get_their_own_computations() {
    let m = parse(
        "HloModule m

fused {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

helper {
  h = f32[4] parameter(0)
  ROOT f = f32[4] fusion(h), kind=kLoop, calls=fused
}

ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=helper
  c2 = f32[4] call(c1), to_apply=helper
  ROOT out = (f32[4], f32[4]) tuple(c1, c2)
}
",
    );
    let (out, _) = run(&mut CallInliner::new(), &m);
    let entry = out.entry();
    let called: Vec<_> = entry
        .instructions
        .iter()
        .filter_map(|i| match i.op {
            hlo_ir::Op::Fusion { calls, .. } => Some(calls),
            _ => None,
        })
        .collect();
    assert_eq!(called.len(), 2, "{out}");
    assert_ne!(
        called[0], called[1],
        "two fusions share a computation:\n{out}"
    );
    assert_eq!(out.computations.len(), 3, "{out}");
}
