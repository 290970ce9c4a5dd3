//! `DivideByReciprocal`: XLA CPU's division by a broadcast or a constant as a
//! multiplication by the reciprocal (the one pass that changes numbers, on
//! purpose), its bf16 form in f32, what it leaves alone, and its option.

mod passes_common;

use hlo_ir::{HloModule, Literal, Opcode};
use hlo_passes::{divide_by_reciprocal_option, DivideByReciprocal};
use passes_common::{entry_opcodes, evaluate, run_on_entry};

/// `ENTRY` body → (module, module after the pass, changed).
fn rewrite(body: &str) -> (HloModule, HloModule, bool) {
    run_on_entry(&mut DivideByReciprocal::new(), body)
}

fn f32s(lit: &Literal) -> Vec<f32> {
    lit.data::<f32>().unwrap().to_vec()
}

use Opcode::*;

#[test]
fn division_by_a_row_broadcast_multiplies_by_the_reciprocal() {
    let (m, out, changed) = rewrite(
        "  x = f32[2,3] parameter(0)\n  s = f32[2] parameter(1)\n  b = f32[2,3] broadcast(s), dimensions={0}\n  ROOT d = f32[2,3] divide(x, b)",
    );
    assert!(changed);
    let ops = entry_opcodes(&out);
    // 1 / s at s's shape, broadcast, one multiply; the old divide is gone.
    assert_eq!(ops.iter().filter(|&&o| o == Divide).count(), 1, "{out}");
    assert_eq!(ops.last(), Some(&Multiply), "{out}");
    let x = Literal::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let s = Literal::from_slice(&[2], &[3.0f32, 7.0]).unwrap();
    let got = f32s(&evaluate(&out, &[x.clone(), s.clone()]).unwrap());
    let want: Vec<f32> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
        .iter()
        .enumerate()
        .map(|(i, &v)| v * (1.0 / [3.0f32, 7.0][i / 3]))
        .collect();
    assert_eq!(got, want);
    // Not what the division gives: 2 / 3 rounds once, 2 * (1 / 3) twice.
    let divided = f32s(&evaluate(&m, &[x, s]).unwrap());
    assert_ne!(got, divided);
}

#[test]
fn division_by_a_constant_multiplies_by_its_inverse() {
    let (_, out, changed) = rewrite(
        "  x = f32[4] parameter(0)\n  c = f32[] constant(3)\n  b = f32[4] broadcast(c), dimensions={}\n  ROOT d = f32[4] divide(x, b)",
    );
    assert!(changed);
    let x = Literal::from_slice(&[4], &[1.0f32, 2.0, 5.0, -9.0]).unwrap();
    let got = f32s(&evaluate(&out, &[x]).unwrap());
    let third = 1.0f32 / 3.0;
    assert_eq!(got, vec![third, 2.0 * third, 5.0 * third, -9.0 * third]);
}

#[test]
fn bf16_divisions_compute_the_reciprocal_and_product_in_f32() {
    let (_, out, changed) = rewrite(
        "  x = bf16[2,2] parameter(0)\n  s = bf16[2] parameter(1)\n  b = bf16[2,2] broadcast(s), dimensions={0}\n  ROOT d = bf16[2,2] divide(x, b)",
    );
    assert!(changed);
    let entry = out.entry();
    let root = &entry.instructions[entry.root.index()];
    assert_eq!(root.opcode(), Convert, "{out}");
    let product = &entry.instructions[root.operands[0].index()];
    assert_eq!(product.opcode(), Multiply, "{out}");
    assert_eq!(
        product.shape.element_type(),
        Some(hlo_ir::ElementType::F32),
        "{out}"
    );
    let bf = |v: &[f32]| {
        v.iter()
            .map(|&f| half::bf16::from_f32(f))
            .collect::<Vec<_>>()
    };
    let x = Literal::from_slice(&[2, 2], &bf(&[1.0, 2.0, 3.0, 5.0])).unwrap();
    let s = Literal::from_slice(&[2], &bf(&[3.0, 7.0])).unwrap();
    let got: Vec<f32> = evaluate(&out, &[x, s])
        .unwrap()
        .data::<half::bf16>()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    let want: Vec<f32> = [1.0f32, 2.0, 3.0, 5.0]
        .iter()
        .enumerate()
        .map(|(i, &v)| half::bf16::from_f32(v * (1.0 / [3.0f32, 7.0][i / 2])).to_f32())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn full_divisors_constant_numerators_integers_and_complex_stay() {
    for body in [
        // A divisor that is a full array.
        "  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  ROOT d = f32[4] divide(x, y)",
        // A constant numerator.
        "  c = f32[4] constant({1, 2, 3, 4})\n  s = f32[] parameter(0)\n  b = f32[4] broadcast(s), dimensions={}\n  ROOT d = f32[4] divide(c, b)",
        // Integers.
        "  x = s32[4] parameter(0)\n  s = s32[] parameter(1)\n  b = s32[4] broadcast(s), dimensions={}\n  ROOT d = s32[4] divide(x, b)",
        // Complex numbers.
        "  x = c64[4] parameter(0)\n  s = c64[] parameter(1)\n  b = c64[4] broadcast(s), dimensions={}\n  ROOT d = c64[4] divide(x, b)",
    ] {
        let (m, out, changed) = rewrite(body);
        assert!(!changed, "{m}\n->\n{out}");
    }
}

#[test]
fn the_option_is_xla_by_default_and_off_on_request() {
    assert!(divide_by_reciprocal_option(None).unwrap());
    assert!(divide_by_reciprocal_option(Some("xla")).unwrap());
    assert!(!divide_by_reciprocal_option(Some("off")).unwrap());
    let err = divide_by_reciprocal_option(Some("sometimes")).unwrap_err();
    assert!(err.message().contains("divide_by_reciprocal"), "{err}");
}
