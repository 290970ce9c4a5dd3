//! The pass pipeline: order, fixed points and their bound, verification, errors.

mod passes_common;

use hlo_ir::{Code, Error, Result};
use hlo_ir::{HloModule, Op, Opcode, UnaryOp};
use hlo_passes::{standard_pipeline, HloPass, Pipeline};
use passes_common::{entry_opcodes, parse};
use std::cell::Cell;
use std::rc::Rc;

const SMALL: &str =
    "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";

/// Wraps the root in one more `negate` per run, `budget` times, then stops.
struct Grow {
    budget: usize,
    runs: Rc<Cell<usize>>,
}

impl HloPass for Grow {
    fn name(&self) -> &str {
        "grow"
    }
    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        self.runs.set(self.runs.get() + 1);
        if self.budget == 0 {
            return Ok(false);
        }
        self.budget -= 1;
        let entry = module.entry;
        let comp = module.computation_mut(entry);
        let root = comp.root;
        let mut n = comp.instr(root).clone();
        n.name = format!("grow.{}", comp.instructions.len());
        n.op = Op::Unary(UnaryOp::Negate);
        n.operands = vec![root];
        comp.instructions.push(n);
        comp.root = hlo_ir::InstrId(comp.instructions.len() as u32 - 1);
        Ok(true)
    }
}

/// Breaks the module: gives the root a wrong shape.
struct Break;

impl HloPass for Break {
    fn name(&self) -> &str {
        "break"
    }
    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        let entry = module.entry;
        let comp = module.computation_mut(entry);
        let root = comp.root;
        comp.instr_mut(root).shape = hlo_ir::Shape::scalar(hlo_ir::ElementType::S8);
        Ok(true)
    }
}

struct Fail;

impl HloPass for Fail {
    fn name(&self) -> &str {
        "fail"
    }
    fn run(&mut self, _: &mut HloModule) -> Result<bool> {
        Err(Error::unimplemented("no such thing"))
    }
}

#[test]
fn a_fixed_point_group_stops_when_nothing_changes() {
    let runs = Rc::new(Cell::new(0));
    let mut p = Pipeline::new("t");
    p.add_fixed_point(
        "g",
        10,
        vec![Box::new(Grow {
            budget: 3,
            runs: runs.clone(),
        })],
    );
    let mut m = parse(SMALL);
    assert!(p.run(&mut m).unwrap());
    // Three changing rounds and one quiet one.
    assert_eq!(runs.get(), 4);
    assert_eq!(m.entry().instructions.len(), 5);
    assert_eq!(p.log().len(), 4);
    assert!(p.log().iter().all(|r| r.pass == "g/grow"));
    assert_eq!(p.log().iter().filter(|r| r.changed).count(), 3);
    assert_eq!(p.time_per_pass().len(), 1);
}

#[test]
fn a_fixed_point_group_stops_at_its_bound() {
    let runs = Rc::new(Cell::new(0));
    let mut p = Pipeline::new("t");
    p.add_fixed_point(
        "g",
        2,
        vec![Box::new(Grow {
            budget: 100,
            runs: runs.clone(),
        })],
    );
    let mut m = parse(SMALL);
    assert!(p.run(&mut m).unwrap());
    assert_eq!(runs.get(), 2);
}

#[test]
fn verification_names_the_pass_that_broke_the_module() {
    let mut p = Pipeline::new("t");
    p.add_pass(Break).verify_after_each_pass(true);
    let err = p.run(&mut parse(SMALL)).unwrap_err();
    assert!(err.message().contains("after pass break"), "{err}");
    let mut unverified = Pipeline::new("t");
    unverified.add_pass(Break).verify_after_each_pass(false);
    assert!(unverified.run(&mut parse(SMALL)).is_ok());
}

#[test]
fn a_failing_pass_is_named_and_keeps_its_code() {
    let mut p = Pipeline::new("t");
    p.add_pass(Fail);
    let err = p.run(&mut parse(SMALL)).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(err.message().starts_with("HLO pass fail"), "{err}");
}

#[test]
fn the_standard_pipeline_cleans_up_a_jax_program() {
    // The shape of what JAX emits: a jitted function behind a call, reshapes
    // into and out of size-1 dimensions, repeated constants, and a dead value.
    let m = parse(
        "HloModule jit_f

relu {
  x = f32[8,16]{1,0} parameter(0)
  z = f32[] constant(0)
  zb = f32[8,16]{1,0} broadcast(z), dimensions={}
  ROOT m = f32[8,16]{1,0} maximum(x, zb)
}

ENTRY main {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[16]{0} parameter(1)
  b1 = f32[1,16]{1,0} reshape(b)
  b2 = f32[1,16]{1,0} broadcast(b1), dimensions={0,1}
  b3 = f32[16]{0} reshape(b2)
  b4 = f32[8,16]{1,0} broadcast(b3), dimensions={1}
  s = f32[8,16]{1,0} add(a, b4)
  r = f32[8,16]{1,0} call(s), to_apply=relu
  two = f32[] constant(2)
  two_b = f32[8,16]{1,0} broadcast(two), dimensions={}
  dead = f32[8,16]{1,0} multiply(a, two_b)
  t = f32[16,8]{0,1} transpose(r), dimensions={1,0}
  tt = f32[8,16]{1,0} transpose(t), dimensions={1,0}
  ROOT out = f32[8,16]{1,0} copy(tt)
}
",
    );
    let mut out = m.clone();
    let mut p = standard_pipeline();
    p.verify_after_each_pass(true);
    assert!(p.run(&mut out).unwrap());
    assert_eq!(out.computations.len(), 1, "{out}");
    assert_eq!(
        entry_opcodes(&out),
        [
            Opcode::Parameter,
            Opcode::Parameter,
            Opcode::Broadcast,
            Opcode::Add,
            Opcode::Constant,
            Opcode::Broadcast,
            Opcode::Maximum
        ],
        "{out}"
    );
    // Running it again finds nothing to do.
    let before = out.clone();
    assert!(!standard_pipeline().run(&mut out).unwrap());
    assert_eq!(out, before);
}

#[test]
#[should_panic(expected = "changed the results")]
fn the_numerics_check_sees_signed_zeros() {
    // `x + 0 → x` is wrong for x = -0; the test inputs must include it.
    let before = parse("HloModule m\n\nENTRY e {\n  p = f32[64] parameter(0)\n  z = f32[] constant(0)\n  b = f32[64] broadcast(z), dimensions={}\n  ROOT a = f32[64] add(p, b)\n}\n");
    let after = parse("HloModule m\n\nENTRY e {\n  ROOT p = f32[64] parameter(0)\n}\n");
    passes_common::assert_same_numerics(&before, &after, "x + 0 -> x");
}

#[test]
#[should_panic(expected = "changed the results")]
fn the_numerics_check_sees_signaling_nans() {
    // `x * 1 → x` is wrong only for signaling NaNs, which multiplication quiets.
    let before = parse("HloModule m\n\nENTRY e {\n  p = f32[64] parameter(0)\n  z = f32[] constant(1)\n  b = f32[64] broadcast(z), dimensions={}\n  ROOT a = f32[64] multiply(p, b)\n}\n");
    let after = parse("HloModule m\n\nENTRY e {\n  ROOT p = f32[64] parameter(0)\n}\n");
    passes_common::assert_same_numerics(&before, &after, "x * 1 -> x");
}
