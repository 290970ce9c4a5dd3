//! Constant folding. Expected values are computed here independently (Rust's
//! IEEE arithmetic, index arithmetic written out) or are documented XLA facts.

mod passes_common;

use hlo_ir::Literal;
use hlo_ir::{HloModule, Op, Opcode};
use hlo_passes::{ConstantFolding, DeadCodeElimination};
use passes_common::{count, entry_opcodes, parse, run};

fn fold_with(body: &str, pass: &mut ConstantFolding) -> HloModule {
    let m = parse(&format!("HloModule m\n\nENTRY e {{\n{body}\n}}\n"));
    let (folded, _) = run(pass, &m);
    run(&mut DeadCodeElimination::new(), &folded).0
}

fn fold(body: &str) -> HloModule {
    fold_with(body, &mut ConstantFolding::new())
}

/// The root's literal (the root must be a constant).
fn root_literal(m: &HloModule) -> Literal {
    match &m.entry().root_instr().op {
        Op::Constant { literal } => literal.clone(),
        other => panic!("root is {}, not a constant:\n{m}", other.opcode()),
    }
}

#[test]
fn float_arithmetic_folds_to_the_ieee_result() {
    let a = [1.5f32, 2.25, -0.0, 3.0e38, 1.0];
    let b = [2.0f32, 0.25, 0.0, 3.0e38, 3.0];
    let out = fold(
        "  a = f32[5] constant({1.5, 2.25, -0, 3e38, 1})\n  b = f32[5] constant({2, 0.25, 0, 3e38, 3})\n  s = f32[5] add(a, b)\n  d = f32[5] divide(s, b)\n  ROOT m = f32[5] multiply(d, a)",
    );
    assert_eq!(entry_opcodes(&out), [Opcode::Constant], "{out}");
    let want: Vec<u32> = (0..5)
        .map(|i| (((a[i] + b[i]) / b[i]) * a[i]).to_bits())
        .collect();
    let got: Vec<u32> = root_literal(&out)
        .data::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn integer_compare_select_and_convert_fold() {
    let out = fold(
        "  a = s32[4] constant({7, -8, 2147483647, 0})\n  z = s32[4] constant({0, 0, 0, 0})\n  q = s32[4] divide(a, z)\n  one = s32[4] constant({1, 1, 1, 1})\n  w = s32[4] add(a, one)\n  c = pred[4] compare(a, z), direction=GT\n  s = s32[4] select(c, w, q)\n  ROOT f = f32[4] convert(s)",
    );
    assert_eq!(entry_opcodes(&out), [Opcode::Constant], "{out}");
    // XLA: integer division by zero gives -1; 2147483647 + 1 wraps.
    let q = -1i32;
    let want = [
        (7i32 + 1) as f32,
        q as f32,
        2147483647i32.wrapping_add(1) as f32,
        q as f32,
    ];
    assert_eq!(root_literal(&out).data::<f32>().unwrap(), &want);
}

#[test]
fn data_movement_folds() {
    let x: Vec<i32> = (0..6).collect();
    let body = "  x = s32[2,3] constant({{0, 1, 2}, {3, 4, 5}})";
    // transpose: out[j][i] = x[i][j]
    let out = fold(&format!(
        "{body}\n  ROOT t = s32[3,2] transpose(x), dimensions={{1,0}}"
    ));
    let want: Vec<i32> = (0..3)
        .flat_map(|j| (0..2).map(move |i| i * 3 + j))
        .collect();
    assert_eq!(root_literal(&out).data::<i32>().unwrap(), &want[..]);
    // reshape keeps the row-major sequence
    let out = fold(&format!("{body}\n  ROOT r = s32[3,2] reshape(x)"));
    assert_eq!(root_literal(&out).data::<i32>().unwrap(), &x[..]);
    // slice rows 0..2, columns 1..3 step 1
    let out = fold(&format!(
        "{body}\n  ROOT s = s32[2,2] slice(x), slice={{[0:2], [1:3]}}"
    ));
    assert_eq!(root_literal(&out).data::<i32>().unwrap(), &[1, 2, 4, 5]);
    // reverse columns
    let out = fold(&format!(
        "{body}\n  ROOT r = s32[2,3] reverse(x), dimensions={{1}}"
    ));
    assert_eq!(
        root_literal(&out).data::<i32>().unwrap(),
        &[2, 1, 0, 5, 4, 3]
    );
    // concatenate along columns
    let out = fold(&format!(
        "{body}\n  ROOT c = s32[2,6] concatenate(x, x), dimensions={{1}}"
    ));
    assert_eq!(
        root_literal(&out).data::<i32>().unwrap(),
        &[0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]
    );
    // pad: one row of -1 before, interior column padding
    let out = fold(&format!(
        "{body}\n  m = s32[] constant(-1)\n  ROOT p = s32[3,5] pad(x, m), padding=1_0x0_0_1"
    ));
    assert_eq!(
        root_literal(&out).data::<i32>().unwrap(),
        &[-1, -1, -1, -1, -1, 0, -1, 1, -1, 2, 3, -1, 4, -1, 5]
    );
}

#[test]
fn iota_and_broadcast_feed_folds_but_stay_themselves() {
    let out = fold(
        "  i = s32[4] iota(), iota_dimension=0\n  k = s32[] constant(10)\n  b = s32[4] broadcast(k), dimensions={}\n  ROOT a = s32[4] add(i, b)",
    );
    assert_eq!(root_literal(&out).data::<i32>().unwrap(), &[10, 11, 12, 13]);
    let out = fold("  k = f32[] constant(1)\n  ROOT b = f32[8] broadcast(k), dimensions={}");
    assert_eq!(
        entry_opcodes(&out),
        [Opcode::Constant, Opcode::Broadcast],
        "{out}"
    );
    let out = fold("  ROOT i = f32[2,3] iota(), iota_dimension=1");
    assert_eq!(entry_opcodes(&out), [Opcode::Iota], "{out}");
}

#[test]
fn large_results_random_ops_and_parameters_are_not_folded() {
    let body = "  k = f32[] constant(1)\n  b = f32[2000] broadcast(k), dimensions={}\n  ROOT n = f32[2000] negate(b)";
    let out = fold(body);
    assert_eq!(count(&out, Opcode::Negate), 1, "{out}");
    let out = fold_with(
        "  a = f32[8] constant({1,2,3,4,5,6,7,8})\n  ROOT n = f32[8] negate(a)",
        &mut ConstantFolding::with_max_elements(4),
    );
    assert_eq!(count(&out, Opcode::Negate), 1, "{out}");

    let out = fold("  lo = f32[] constant(0)\n  hi = f32[] constant(1)\n  ROOT r = f32[3] rng(lo, hi), distribution=rng_uniform");
    assert_eq!(count(&out, Opcode::Rng), 1, "{out}");
    let out = fold(
        "  p = f32[3] parameter(0)\n  k = f32[3] constant({1,2,3})\n  ROOT a = f32[3] add(p, k)",
    );
    assert_eq!(count(&out, Opcode::Add), 1, "{out}");
}

#[test]
fn tuple_constants_give_their_elements() {
    let out = fold("  t = (s32[2], f32[]) constant(({1, 2}, 0.5))\n  ROOT g = s32[2] get-tuple-element(t), index=0");
    assert_eq!(root_literal(&out).data::<i32>().unwrap(), &[1, 2]);
}

#[test]
fn folding_keeps_nan_payloads_and_signed_zeros() {
    // negate flips only the sign bit, also of a NaN with a payload.
    let out = fold(
        "  bits = s32[3] constant({2143289345, 0, -2147483648})\n  f = f32[3] bitcast-convert(bits)\n  ROOT n = f32[3] negate(f)",
    );
    let got: Vec<u32> = root_literal(&out)
        .data::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(got, [2143289345u32 ^ 0x8000_0000, 0x8000_0000, 0]);
}
