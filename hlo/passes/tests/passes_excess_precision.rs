//! `ExcessPrecision`: a program's own conversion of a bf16 arithmetic result
//! to f32 reads the f32 value XLA CPU computed, unrounded; everything else
//! (consecutive bf16 ops, data movement, f16) keeps its rounding; the option.

mod passes_common;

use hlo_ir::{ElementType, HloModule, Literal, Opcode};
use hlo_passes::{excess_precision_option, ExcessPrecision};
use passes_common::{count, evaluate, run_on_entry};

/// `ENTRY` body → (module, module after the pass, changed).
fn rewrite(body: &str) -> (HloModule, HloModule, bool) {
    run_on_entry(&mut ExcessPrecision::new(), body)
}

fn bf16s(values: &[f32]) -> Literal {
    let v: Vec<half::bf16> = values.iter().map(|&f| half::bf16::from_f32(f)).collect();
    Literal::from_slice(&[v.len()], &v).unwrap()
}

#[test]
fn a_converted_bf16_product_is_the_f32_product() {
    let (m, out, changed) = rewrite(
        "  x = bf16[3] parameter(0)\n  y = bf16[3] parameter(1)\n  p = bf16[3] multiply(x, y)\n  ROOT c = f32[3] convert(p)",
    );
    assert!(changed);
    let entry = out.entry();
    let root = &entry.instructions[entry.root.index()];
    assert_eq!(root.opcode(), Opcode::Multiply, "{out}");
    assert_eq!(root.shape.element_type(), Some(ElementType::F32), "{out}");
    // 1 + 2^-6 and 1 + 2^-7 are bf16 numbers; their product
    // 1 + 3 * 2^-7 + 2^-13 is not.
    let (a, b) = (1.0 + 2f32.powi(-6), 1.0 + 2f32.powi(-7));
    let args = [bf16s(&[a, 3.0, -2.5]), bf16s(&[b, 5.0, 0.75])];
    let got = evaluate(&out, &args).unwrap();
    assert_eq!(got.data::<f32>().unwrap(), &[a * b, 15.0, -1.875]);
    let rounded = evaluate(&m, &args).unwrap();
    assert_ne!(rounded.data::<f32>().unwrap()[0], a * b);
}

#[test]
fn dots_and_unary_ops_are_widened_with_their_operands() {
    let (_, out, changed) = rewrite(
        "  x = bf16[2,4] parameter(0)\n  y = bf16[4,3] parameter(1)\n  d = bf16[2,3] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  c = f32[2,3] convert(d)\n  e = bf16[2,4] exponential(x)\n  f = f32[2,4] convert(e)\n  ROOT t = (f32[2,3], f32[2,4]) tuple(c, f)",
    );
    assert!(changed);
    let entry = out.entry();
    // Each op is still there (the loop below would pass on a module without
    // them), and only in f32.
    for opcode in [Opcode::Dot, Opcode::Exp] {
        assert_eq!(count(&out, opcode), 1, "{out}");
    }
    for instr in &entry.instructions {
        if matches!(instr.opcode(), Opcode::Dot | Opcode::Exp) {
            assert_eq!(instr.shape.element_type(), Some(ElementType::F32), "{out}");
        }
    }
}

#[test]
fn rounding_stays_between_ops_through_movement_and_for_other_types() {
    for body in [
        // Consecutive bf16 ops: the product is rounded before the add.
        "  x = bf16[3] parameter(0)\n  p = bf16[3] multiply(x, x)\n  ROOT a = bf16[3] add(p, x)",
        // Data movement between the op and the conversion.
        "  x = bf16[2,2] parameter(0)\n  p = bf16[2,2] multiply(x, x)\n  t = bf16[2,2] transpose(p), dimensions={1,0}\n  ROOT c = f32[2,2] convert(t)",
        // A program's own rounding: f32 -> bf16 -> f32.
        "  x = f32[3] parameter(0)\n  b = bf16[3] convert(x)\n  ROOT c = f32[3] convert(b)",
        // f16 rounds.
        "  x = f16[3] parameter(0)\n  p = f16[3] multiply(x, x)\n  ROOT c = f32[3] convert(p)",
        // Widening to f64 is not what XLA CPU's normalization produces.
        "  x = bf16[3] parameter(0)\n  p = bf16[3] multiply(x, x)\n  ROOT c = f64[3] convert(p)",
    ] {
        let (m, out, changed) = rewrite(body);
        assert!(!changed, "{m}\n->\n{out}");
    }
}

#[test]
fn the_option_is_on_by_default_and_off_on_request() {
    assert!(excess_precision_option(None).unwrap());
    assert!(excess_precision_option(Some("on")).unwrap());
    assert!(!excess_precision_option(Some("off")).unwrap());
    let err = excess_precision_option(Some("xla")).unwrap_err();
    assert!(err.message().contains("excess_precision"), "{err}");
}
