//! While-loop unrolling.

mod passes_common;

use hlo_ir::Opcode;
use hlo_passes::WhileLoopUnroller;
use passes_common::{assert_idempotent, assert_same_numerics, count, parse, run};

/// A `fori_loop(start, bound)` as JAX lowers it, with a counter of type
/// `ty`, a condition written `lt` (`i < bound`) or `gt` (`bound > i`), and a
/// body that updates a vector from the counter and rotates a second state
/// element (so each copy reads the one before).
fn fori(ty: &str, start: &str, bound: &str, direction: &str) -> String {
    let compare = if direction == "LT" {
        "ROOT c = pred[] compare(i, b), direction=LT".to_string()
    } else {
        "ROOT c = pred[] compare(b, i), direction=GT".to_string()
    };
    format!(
        "HloModule m

cond {{
  s = ({ty}[], f32[8], f32[8]) parameter(0)
  i = {ty}[] get-tuple-element(s), index=0
  b = {ty}[] constant({bound})
  {compare}
}}

body {{
  s = ({ty}[], f32[8], f32[8]) parameter(0)
  i = {ty}[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  y = f32[8] get-tuple-element(s), index=2
  fi = f32[] convert(i)
  bi = f32[8] broadcast(fi), dimensions={{}}
  m = f32[8] multiply(x, y)
  n = f32[8] add(m, bi)
  t = f32[8] tanh(n)
  one = {ty}[] constant(1)
  i1 = {ty}[] add(i, one)
  ROOT r = ({ty}[], f32[8], f32[8]) tuple(i1, t, x)
}}

ENTRY e {{
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  z = {ty}[] constant({start})
  init = ({ty}[], f32[8], f32[8]) tuple(z, p, q)
  w = ({ty}[], f32[8], f32[8]) while(init), condition=cond, body=body
  ROOT o = f32[8] get-tuple-element(w), index=1
}}
"
    )
}

#[test]
fn counted_loops_become_copies_of_their_body() {
    for (ty, start, bound, direction, trips) in [
        ("s32", "0", "5", "LT", 5),
        ("s32", "-2", "1", "GT", 3),
        ("u32", "3", "4", "LT", 1),
        ("s64", "7", "7", "LT", 0),
        ("s32", "9", "2", "LT", 0),
    ] {
        let m = parse(&fori(ty, start, bound, direction));
        let (out, changed) = run(&mut WhileLoopUnroller::new(), &m);
        assert!(changed, "{ty} {start}..{bound}");
        assert_eq!(count(&out, Opcode::While), 0, "{out}");
        assert_eq!(count(&out, Opcode::Tanh), trips, "{out}");
        assert_same_numerics(&m, &out, &format!("{ty} {start}..{bound}"));
        assert_idempotent(&mut WhileLoopUnroller::new(), &out);
    }
}

#[test]
fn loops_that_are_long_or_not_counted_stay_loops() {
    let long = fori("s32", "0", "1000", "LT");
    // The counter starts at a parameter.
    let dynamic_start =
        fori("s32", "0", "5", "LT").replace("z = s32[] constant(0)", "z = s32[] parameter(2)");
    // Steps of two, and a bound compared the other way.
    let step_two =
        fori("s32", "0", "5", "LT").replace("one = s32[] constant(1)", "one = s32[] constant(2)");
    let le = fori("s32", "0", "5", "LT").replace("direction=LT", "direction=LE");
    for (what, text) in [
        ("long", long),
        ("parameter start", dynamic_start),
        ("step of two", step_two),
        ("<=", le),
    ] {
        let m = parse(&text);
        let (out, changed) = run(&mut WhileLoopUnroller::new(), &m);
        assert!(!changed, "{what}: {out}");
        assert_eq!(count(&out, Opcode::While), 1, "{what}");
    }
}
