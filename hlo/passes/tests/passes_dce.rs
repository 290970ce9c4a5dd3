//! Dead-code elimination.

mod passes_common;

use hlo_ir::Opcode;
use hlo_passes::DeadCodeElimination;
use passes_common::{assert_idempotent, count, parse, run};

#[test]
fn unused_instructions_and_unreachable_computations_go() {
    let m = parse(
        "HloModule m

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  dead_in_reducer = f32[] multiply(x, y)
  ROOT s = f32[] add(x, y)
}

orphan {
  o = f32[] parameter(0)
  ROOT on = f32[] negate(o)
}

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  z = f32[] constant(0)
  dead1 = f32[4] exponential(p)
  dead2 = f32[4] add(dead1, q)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
  ROOT n = f32[] negate(r)
}
",
    );
    let (out, changed) = run(&mut DeadCodeElimination::new(), &m);
    assert!(changed);
    assert!(out.find_computation("orphan").is_none(), "{out}");
    let names: Vec<&str> = out
        .entry()
        .instructions
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    // The unused parameter stays: it is part of the signature.
    assert_eq!(names, ["p", "q", "z", "r", "n"], "{out}");
    assert_eq!(count(&out, Opcode::Multiply), 0, "{out}");
    assert_idempotent(&mut DeadCodeElimination::new(), &out);
}

#[test]
fn effects_are_kept_even_when_unused() {
    let m = parse(
        r#"HloModule m

quiet_body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(b, one)
}

loud_body {
  lb = s32[] parameter(0)
  lone = s32[] constant(1)
  log = s32[] custom-call(lb), custom_call_target="log_it", custom_call_has_side_effect=true
  ROOT lnext = s32[] add(lb, lone)
}

cond {
  c = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(c, ten), direction=LT
}

ENTRY e {
  p = s32[] parameter(0)
  start = s32[] constant(0)
  quiet = s32[] while(start), condition=cond, body=quiet_body
  loud = s32[] while(start), condition=cond, body=loud_body
  lo = s32[] constant(0)
  hi = s32[] constant(9)
  random = s32[] rng(lo, hi), distribution=rng_uniform
  ROOT r = s32[] negate(p)
}
"#,
    );
    let (out, _) = run(&mut DeadCodeElimination::new(), &m);
    let entry = out.entry();
    assert!(entry.find("quiet").is_none(), "{out}");
    assert!(out.find_computation("quiet_body").is_none(), "{out}");
    assert!(entry.find("loud").is_some(), "{out}");
    assert!(
        entry.find("random").is_some(),
        "rng draws must not be dropped:\n{out}"
    );
    assert_eq!(count(&out, Opcode::CustomCall), 1);
}

#[test]
fn a_clean_module_is_unchanged() {
    let m = parse(
        "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n",
    );
    let (_, changed) = run(&mut DeadCodeElimination::new(), &m);
    assert!(!changed);
}
