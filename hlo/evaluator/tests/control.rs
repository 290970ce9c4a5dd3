//! Structure and control flow: tuples, call, fusion, map, while, conditional.
//! The loops here count with table look-ups (dynamic-slice) instead of
//! arithmetic, so they exercise control flow alone.

mod support;
use hlo_evaluator::RunContext;
use hlo_ir::{Code, Literal};
use support::*;

/// State (i, acc): i walks 0,1,2,3 through `next`; the loop runs while flags[i].
/// acc[i] is set to 10*i+? by a dynamic-update-slice each iteration.
const COUNTING_LOOP: &str = r#"HloModule loop

cond {
  cs = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  flags = pred[4] constant({true, true, true, false})
  f = pred[1] dynamic-slice(flags, ci), dynamic_slice_sizes={1}
  ROOT r = pred[] reshape(f)
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[4] get-tuple-element(s), index=1
  next = s32[4] constant({1, 2, 3, 0})
  n = s32[1] dynamic-slice(next, i), dynamic_slice_sizes={1}
  i2 = s32[] reshape(n)
  vals = f32[4] constant({10, 11, 12, 13})
  v = f32[1] dynamic-slice(vals, i), dynamic_slice_sizes={1}
  acc2 = f32[4] dynamic-update-slice(acc, v, i)
  ROOT t = (s32[], f32[4]) tuple(i2, acc2)
}

ENTRY e {
  z = s32[] constant(0)
  a = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(z, a)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT result = f32[4] get-tuple-element(w), index=1
}
"#;

#[test]
fn while_runs_until_the_condition_fails() {
    let out = eval_ok(
        COUNTING_LOOP,
        vec![Literal::from_slice(&[4], &[-1f32; 4]).unwrap()],
    );
    // Iterations i = 0, 1, 2 write 10, 11, 12; flags[3] stops the loop.
    assert_eq!(f32s(&out), [10., 11., 12., -1.]);
}

#[test]
fn while_step_limit_is_an_error_naming_the_loop() {
    let ctx = RunContext {
        while_step_limit: Some(2),
        ..RunContext::default()
    };
    let err = eval_with(
        COUNTING_LOOP,
        vec![Literal::from_slice(&[4], &[0f32; 4]).unwrap()],
        &ctx,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert!(err.message().contains("%w"), "{err}");
    assert!(err.message().contains("step limit of 2"), "{err}");
    // Exactly enough steps is fine.
    let ctx = RunContext {
        while_step_limit: Some(3),
        ..RunContext::default()
    };
    assert!(eval_with(
        COUNTING_LOOP,
        vec![Literal::from_slice(&[4], &[0f32; 4]).unwrap()],
        &ctx
    )
    .is_ok());
}

const CONDITIONAL: &str = r#"HloModule cond

b0 {
  p0 = f32[2] parameter(0)
  ROOT r0 = f32[2] reverse(p0), dimensions={0}
}

b1 {
  p1 = f32[3] parameter(0)
  ROOT r1 = f32[2] slice(p1), slice={[1:3]}
}

b2 {
  p2 = f32[] parameter(0)
  ROOT r2 = f32[2] broadcast(p2), dimensions={}
}

ENTRY e {
  i = s32[] parameter(0)
  x = f32[2] constant({1, 2})
  y = f32[3] constant({3, 4, 5})
  z = f32[] constant(6)
  ROOT c = f32[2] conditional(i, x, y, z), branch_computations={b0, b1, b2}
}
"#;

#[test]
fn conditional_index_form_and_out_of_range_runs_the_last_branch() {
    let run = |i: i32| eval(CONDITIONAL, vec![Literal::scalar(i)]);
    assert_eq!(f32s(&run(0).unwrap()), [2., 1.]);
    assert_eq!(f32s(&run(1).unwrap()), [4., 5.]);
    assert_eq!(f32s(&run(2).unwrap()), [6., 6.]);
    // XLA's rule: any index outside 0..n, negative included, runs the last.
    for out in [3, -1, i32::MIN, i32::MAX] {
        assert_eq!(f32s(&run(out).unwrap()), [6., 6.], "index {out}");
    }
}

#[test]
fn conditional_pred_form() {
    let m = r#"HloModule m
t { tp = f32[] parameter(0)
 ROOT tr = f32[1] reshape(tp) }
f { fp = f32[2] parameter(0)
 ROOT fr = f32[1] slice(fp), slice={[1:2]} }
ENTRY e {
  b = pred[] parameter(0)
  x = f32[] constant(7)
  y = f32[2] constant({8, 9})
  ROOT c = f32[1] conditional(b, x, y), true_computation=t, false_computation=f
}"#;
    let pred = |b: bool| Literal::from_bools(&[], &[b]).unwrap();
    assert_eq!(f32s(&eval_ok(m, vec![pred(true)])), [7.]);
    assert_eq!(f32s(&eval_ok(m, vec![pred(false)])), [9.]);
}

#[test]
fn tuples_call_fusion_and_barriers() {
    let m = r#"HloModule m
callee { a = f32[2] parameter(0)
 b = f32[] parameter(1)
 bb = f32[2] broadcast(b), dimensions={}
 ROOT t = (f32[2], f32[2]) tuple(bb, a) }
fused { fp = f32[2] parameter(0)
 ROOT fr = f32[2] reverse(fp), dimensions={0} }
ENTRY e {
  x = f32[2] parameter(0)
  s = f32[] constant(4)
  c = (f32[2], f32[2]) call(x, s), to_apply=callee
  g1 = f32[2] get-tuple-element(c), index=1
  f = f32[2] fusion(g1), kind=kLoop, calls=fused
  o = (f32[2], f32[2]) opt-barrier(c)
  g0 = f32[2] get-tuple-element(o), index=0
  tok = token[] after-all()
  d = f32[2] add-dependency(f, tok)
  n = s32[] get-dimension-size(x), dimensions={0}
  ROOT r = (f32[2], f32[2], s32[]) tuple(d, g0, n)
}"#;
    let out = eval_ok(m, vec![counting(&[2])]).decompose_tuple();
    assert_eq!(f32s(&out[0]), [1., 0.]);
    assert_eq!(f32s(&out[1]), [4., 4.]);
    assert_eq!(s32s(&out[2]), [2]);
}

#[test]
fn map_calls_the_computation_per_element() {
    // The mapped computation picks its second argument where a flag is set: no
    // arithmetic needed, and the per-element plumbing is what is under test.
    let m = r#"HloModule m
pick { a = f32[] parameter(0)
 b = f32[] parameter(1)
 t = (f32[], f32[]) tuple(a, b)
 ROOT r = f32[] get-tuple-element(t), index=1 }
ENTRY e {
  x = f32[2,2] parameter(0)
  y = f32[2,2] parameter(1)
  ROOT m = f32[2,2] map(x, y), dimensions={0,1}, to_apply=pick
}"#;
    let y = Literal::from_slice(&[2, 2], &[5f32, 6., 7., 8.]).unwrap();
    assert_eq!(
        f32s(&eval_ok(m, vec![counting(&[2, 2]), y])),
        [5., 6., 7., 8.]
    );
}

#[test]
fn unimplemented_ops_name_the_op_and_instruction() {
    let m = "HloModule m\nENTRY e { t = token[] after-all()\n ROOT i = ((f32[2], u32[]), token[]) infeed(t) }";
    let err = eval(m, vec![]).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("infeed") && err.message().contains("%i"),
        "{err}"
    );
}

#[test]
fn custom_call_to_an_unknown_target_is_an_error_naming_it() {
    let m = r#"HloModule m
ENTRY e { p = f32[2] parameter(0)
 ROOT c = f32[2] custom-call(p), custom_call_target="no_such_target_anywhere" }"#;
    let err = eval(m, vec![counting(&[2])]).unwrap_err();
    assert!(err.message().contains("%c"), "{err}");
}

#[test]
fn wrong_argument_count_is_an_error() {
    let m = "HloModule m\nENTRY e { p = f32[2] parameter(0)\n ROOT r = f32[2] reverse(p), dimensions={0} }";
    assert_eq!(eval(m, vec![]).unwrap_err().code(), Code::InvalidArgument);
    let err = eval(m, vec![counting(&[3])]).unwrap_err();
    assert!(
        err.message().contains("parameter 0") && err.message().contains("f32[3]"),
        "{err}"
    );
}
