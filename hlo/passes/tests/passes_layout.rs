//! Layout normalization.
//!
//! A `bitcast` of a constant, normalized and then constant-folded, must hold the
//! bytes the physical definition gives: the operand's row-major values laid out
//! in its layout (`transfer::row_major_to_layout`), read back as the result in the
//! result's layout (`transfer::layout_to_row_major`). Those helpers are the
//! transfer manager's, written independently of the pass.

mod passes_common;

use hlo_ir::literal::layout::{layout_to_row_major, row_major_to_layout};
use hlo_ir::{Code, Literal, Shape};
use hlo_ir::{HloModule, Op, Opcode};
use hlo_passes::{ConstantFolding, DeadCodeElimination, HloPass, LayoutNormalization};
use passes_common::{count, entry_opcodes, parse, run};

fn has_layout(shape: &Shape) -> bool {
    match shape {
        Shape::Array(a) => a.layout.is_some(),
        Shape::Tuple(t) => t.iter().any(has_layout),
        Shape::Token => false,
    }
}

fn normalize(m: &HloModule) -> HloModule {
    let (out, _) = run(&mut LayoutNormalization::new(), m);
    for comp in &out.computations {
        for instr in &comp.instructions {
            assert!(
                !has_layout(&instr.shape),
                "%{} keeps a layout:\n{out}",
                instr.name
            );
            assert!(
                !matches!(instr.op, Op::Bitcast | Op::Copy),
                "%{} is left:\n{out}",
                instr.name
            );
            if let Op::Constant { literal } = &instr.op {
                assert!(!has_layout(literal.shape()));
            }
        }
    }
    out
}

/// A constant of `from` holding bytes 0, 1, 2, ... (as its row-major values),
/// bitcast to `to`; returns the folded result's row-major bytes and the bytes
/// the physical definition gives.
fn bitcast_case(from: &str, to: &str) -> (Vec<u8>, Vec<u8>) {
    let from_shape = Shape::parse(from).unwrap();
    let to_shape = Shape::parse(to).unwrap();
    let fa = from_shape.as_array().unwrap();
    let bytes: Vec<u8> = (0..fa.byte_size()).map(|i| (i * 7 + 3) as u8).collect();
    let literal = Literal::from_bytes(from_shape.without_layout(), &bytes).unwrap();
    let text = format!(
        "HloModule m\n\nENTRY e {{\n  c = {from} constant({})\n  ROOT b = {to} bitcast(c)\n}}\n",
        literal.values_text()
    );
    let m = parse(&text);
    let out = normalize(&m);
    let (out, _) = run(&mut ConstantFolding::new(), &out);
    let (out, _) = run(&mut DeadCodeElimination::new(), &out);
    assert_eq!(
        entry_opcodes(&out),
        [Opcode::Constant],
        "{from} -> {to}:\n{out}"
    );
    let Op::Constant { literal: got } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert!(got.shape().compatible(&to_shape));
    let physical = row_major_to_layout(&bytes, fa);
    let want = layout_to_row_major(&physical, to_shape.as_array().unwrap());
    (got.bytes().unwrap().to_vec(), want)
}

#[test]
fn bitcasts_read_the_bytes_their_layouts_say() {
    for (from, to) in [
        ("f32[2,3]{0,1}", "f32[3,2]{1,0}"),
        ("f32[2,3]{1,0}", "f32[3,2]{0,1}"),
        ("f32[2,3]{1,0}", "f32[6]{0}"),
        ("f32[2,3,4]{0,2,1}", "f32[6,4]{0,1}"),
        ("f32[2,3,4]{2,0,1}", "f32[4,3,2]{1,2,0}"),
        ("s32[2,3]{0,1}", "f32[3,2]{1,0}"),
        ("f32[]", "s32[]"),
        ("u8[4,3]{0,1}", "s8[12]{0}"),
        ("f32[2,2]{0,1}", "u16[8]{0}"),
        ("u16[2,4]{0,1}", "s32[4]{0}"),
        ("f64[3]{0}", "u8[3,8]{0,1}"),
        ("s16[1,4,1]{2,1,0}", "s16[4,1]{0,1}"),
    ] {
        let (got, want) = bitcast_case(from, to);
        assert_eq!(got, want, "bitcast {from} -> {to}");
    }
}

#[test]
fn a_bitcast_reads_the_layout_of_its_operand_even_through_copies_and_bitcasts() {
    let text = "HloModule m

ENTRY e {
  c = s32[2,3]{1,0} constant({{0, 1, 2}, {3, 4, 5}})
  k = s32[2,3]{0,1} copy(c)
  b1 = s32[3,2]{1,0} bitcast(k)
  b2 = s32[2,3]{0,1} bitcast(b1)
  f1 = s32[6]{0} bitcast(b2)
  ROOT r = (s32[3,2], s32[6]) tuple(b1, f1)
}
";
    let m = parse(text);
    let out = normalize(&m);
    let (out, _) = run(&mut ConstantFolding::new(), &out);
    let root = out.entry().root_instr();
    let value = |i: usize| match &out.entry().instr(root.operands[i]).op {
        Op::Constant { literal } => literal.data::<i32>().unwrap().to_vec(),
        other => panic!("{} not folded:\n{out}", other.opcode()),
    };
    // k holds c column-major in memory: 0 3 1 4 2 5.
    assert_eq!(value(0), [0, 3, 1, 4, 2, 5]);
    // b2 reinterprets those bytes column-major as [2,3]; its bytes are the same,
    // so the flat view is the memory order again.
    assert_eq!(value(1), [0, 3, 1, 4, 2, 5]);
}

#[test]
fn layouts_are_stripped_everywhere_and_copies_vanish() {
    let text = "HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[3,2]{0,1}}

ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  k = f32[2,3]{1,0} copy(p)
  c = f32[3,2]{0,1} constant({{1,2},{3,4},{5,6}})
  t = f32[3,2]{0,1} transpose(k), dimensions={1,0}
  ROOT a = f32[3,2]{0,1} add(t, c)
}
";
    let m = parse(text);
    let out = normalize(&m);
    assert_eq!(
        entry_opcodes(&out),
        [
            Opcode::Parameter,
            Opcode::Constant,
            Opcode::Transpose,
            Opcode::Add
        ],
        "{out}"
    );
    let layout = out.config.entry_computation_layout.as_ref().unwrap();
    assert_eq!(layout.to_string(), "(f32[2,3])->f32[3,2]");
    // The constant's values are logical and unchanged.
    let Op::Constant { literal } = &out.entry().instructions[1].op else {
        unreachable!()
    };
    assert_eq!(literal.data::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6.]);
    let (_, changed) = run(&mut LayoutNormalization::new(), &out);
    assert!(!changed);
}

#[test]
fn row_major_bitcasts_become_a_single_reshape() {
    let m = parse("HloModule m\n\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  ROOT b = f32[3,2]{1,0} bitcast(p)\n}\n");
    let out = normalize(&m);
    assert_eq!(entry_opcodes(&out), [Opcode::Parameter, Opcode::Reshape]);
    let m = parse("HloModule m\n\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  ROOT b = s32[2,3]{1,0} bitcast(p)\n}\n");
    let out = normalize(&m);
    assert_eq!(
        entry_opcodes(&out),
        [Opcode::Parameter, Opcode::BitcastConvert]
    );
    let m = parse("HloModule m\n\nENTRY e {\n  p = f32[2,3]{0,1} parameter(0)\n  ROOT b = f32[3,2]{1,0} bitcast(p)\n}\n");
    let out = normalize(&m);
    assert_eq!(
        entry_opcodes(&out),
        [Opcode::Parameter, Opcode::Transpose],
        "{out}"
    );
    assert_eq!(count(&out, Opcode::Reshape), 0);
}

#[test]
fn tiled_layouts_are_reported_not_guessed() {
    let m = parse(
        "HloModule m\n\nENTRY e {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n  ROOT b = f32[1024]{0} bitcast(p)\n}\n",
    );
    let mut out = m.clone();
    let err = LayoutNormalization::new().run(&mut out).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(err.message().contains("%b"), "{err}");
}
