//! The array and scalar layers of `hlo_ir::semantics`: shape and type
//! checking, error codes and messages, broadcasting of scalar operands, empty
//! arrays, layouts, and agreement between the two layers on many values. (What the
//! ops compute is checked against XLA in `semantics_xla.rs`.)

use half::{bf16, f16};
use hlo_ir::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use hlo_ir::{Code, ElementType, Layout, Literal, Scalar, Shape};
use hlo_semantics::{self as semantics, kernels};
use num_complex::Complex32;

fn f32s(values: &[f32]) -> Literal {
    Literal::vector(values)
}

fn shape(ty: ElementType, dims: &[usize]) -> Shape {
    Shape::array(ty, dims.to_vec())
}

#[test]
fn unary_checks_the_result_shape_and_names_both_sides() {
    let x = f32s(&[1.0, 2.0]);
    let err = semantics::unary(UnaryOp::Exp, &x, &shape(ElementType::F64, &[2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("f32[2]") && err.message().contains("f64[2]"),
        "{err}"
    );
    let err = semantics::unary(UnaryOp::Exp, &x, &shape(ElementType::F32, &[3])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let tuple = Literal::tuple(vec![x.clone()]);
    let err = semantics::unary(UnaryOp::Exp, &tuple, &shape(ElementType::F32, &[2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("array"), "{err}");
}

#[test]
fn ops_xla_does_not_define_are_unimplemented_and_named() {
    let x = f32s(&[1.0]);
    let err = semantics::unary(UnaryOp::Not, &x, x.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("not") && err.message().contains("f32"),
        "{err}"
    );

    let u = Literal::vector(&[1u32]);
    let err = semantics::unary(UnaryOp::Sign, &u, u.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("sign") && err.message().contains("u32"),
        "{err}"
    );

    let c = Literal::vector(&[Complex32::new(1.0, 2.0)]);
    let err = semantics::unary(UnaryOp::Cbrt, &c, c.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("cbrt") && err.message().contains("c64"),
        "{err}"
    );
    let err = semantics::binary(BinaryOp::Maximum, &c, &c, c.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let err = semantics::compare(ComparisonDirection::Lt, None, &c, &c).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(err.message().contains("LT"), "{err}");

    let s = Literal::vector(&[1i32]);
    let err = semantics::binary(BinaryOp::Atan2, &s, &s, s.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let p = Literal::from_bools(&[1], &[true]).unwrap();
    let err = semantics::binary(BinaryOp::Subtract, &p, &p, p.shape()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let h = Literal::vector(&[f16::ONE]);
    let err =
        semantics::binary(BinaryOp::Complex, &h, &h, &shape(ElementType::C64, &[1])).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    let err = semantics::reduce_precision(&s, 5, 10).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    // Complex numbers have no order in XLA's semantics (XLA CPU accepts a c64
    // clamp anyway; tests/op_matrix registers that as a gap).
    let err = semantics::clamp(&c, &c, &c).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    // pred is ordered false < true, as its maximum and minimum are or and and.
    let f = Literal::from_bools(&[], &[false]).unwrap();
    let t = Literal::from_bools(&[], &[true]).unwrap();
    let x = Literal::from_bools(&[2], &[false, true]).unwrap();
    assert_eq!(
        semantics::clamp(&f, &x, &f).unwrap(),
        Literal::from_bools(&[2], &[false, false]).unwrap()
    );
    assert_eq!(
        semantics::clamp(&t, &x, &t).unwrap(),
        Literal::from_bools(&[2], &[true, true]).unwrap()
    );
}

#[test]
fn result_types_table() {
    use ElementType::*;
    assert_eq!(
        semantics::unary_result_type(UnaryOp::Abs, C128).unwrap(),
        F64
    );
    assert_eq!(
        semantics::unary_result_type(UnaryOp::IsFinite, BF16).unwrap(),
        Pred
    );
    assert_eq!(
        semantics::unary_result_type(UnaryOp::Imag, F32).unwrap(),
        F32
    );
    assert_eq!(
        semantics::unary_result_type(UnaryOp::PopCount, U16).unwrap(),
        U16
    );
    assert!(semantics::unary_result_type(UnaryOp::Exp, S32).is_err());
    assert!(semantics::unary_result_type(UnaryOp::IsFinite, C64).is_err());
    assert_eq!(
        semantics::binary_result_type(BinaryOp::Complex, F64).unwrap(),
        C128
    );
    assert_eq!(
        semantics::binary_result_type(BinaryOp::Add, Pred).unwrap(),
        Pred
    );
    assert!(semantics::binary_result_type(BinaryOp::ShiftLeft, F32).is_err());
    assert!(semantics::binary_result_type(BinaryOp::Remainder, C64).is_err());
    // Every op is defined on some type.
    for &op in UnaryOp::ALL {
        assert!(ElementType::ALL
            .iter()
            .any(|&t| semantics::unary_result_type(op, t).is_ok()));
    }
    for &op in BinaryOp::ALL {
        assert!(ElementType::ALL
            .iter()
            .any(|&t| semantics::binary_result_type(op, t).is_ok()));
    }
}

#[test]
fn binary_rejects_mismatched_operands_naming_both_shapes() {
    let a = f32s(&[1.0, 2.0]);
    let b = f32s(&[1.0, 2.0, 3.0]);
    let err = semantics::binary(BinaryOp::Add, &a, &b, a.shape()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("f32[2]") && err.message().contains("f32[3]"),
        "{err}"
    );
    let c = Literal::vector(&[1.0f64, 2.0]);
    let err = semantics::binary(BinaryOp::Add, &a, &c, a.shape()).unwrap_err();
    assert!(err.message().contains("f64[2]"), "{err}");
    let err =
        semantics::binary(BinaryOp::Add, &a, &a, &shape(ElementType::F32, &[1, 2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = semantics::compare(ComparisonDirection::Eq, None, &a, &b).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn complex_op_builds_complex_from_parts() {
    let re = f32s(&[1.0, -0.0]);
    let im = f32s(&[2.0, f32::NAN]);
    let z = semantics::binary(BinaryOp::Complex, &re, &im, &shape(ElementType::C64, &[2])).unwrap();
    let v = z.data::<Complex32>().unwrap();
    assert_eq!(v[0], Complex32::new(1.0, 2.0));
    assert!(v[1].re.is_sign_negative() && v[1].im.is_nan());
}

#[test]
fn comparison_types_must_fit_the_operands() {
    let a = f32s(&[1.0, f32::NAN]);
    let b = f32s(&[1.0, f32::NAN]);
    let err = semantics::compare(
        ComparisonDirection::Eq,
        Some(ComparisonType::Signed),
        &a,
        &b,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("SIGNED") && err.message().contains("f32"),
        "{err}"
    );
    let s = Literal::vector(&[1u8]);
    assert!(semantics::compare(
        ComparisonDirection::Eq,
        Some(ComparisonType::Signed),
        &s,
        &s
    )
    .is_err());
    assert!(
        semantics::compare(ComparisonDirection::Eq, Some(ComparisonType::Float), &s, &s).is_err()
    );
    // NaN == NaN only under the total order.
    let partial =
        semantics::compare(ComparisonDirection::Eq, Some(ComparisonType::Float), &a, &b).unwrap();
    assert_eq!(partial.to_bools().unwrap(), vec![true, false]);
    let total = semantics::compare(
        ComparisonDirection::Eq,
        Some(ComparisonType::TotalOrder),
        &a,
        &b,
    )
    .unwrap();
    assert_eq!(total.to_bools().unwrap(), vec![true, true]);
    let default = semantics::compare(ComparisonDirection::Ne, None, &a, &b).unwrap();
    assert_eq!(default.to_bools().unwrap(), vec![false, true]);
    assert_eq!(default.shape(), &shape(ElementType::Pred, &[2]));
}

#[test]
fn select_broadcasts_a_scalar_predicate_and_checks_shapes() {
    let t = Literal::vector(&[1i64, 2, 3]);
    let f = Literal::vector(&[-1i64, -2, -3]);
    let p = Literal::from_bools(&[3], &[true, false, true]).unwrap();
    let r = semantics::select(&p, &t, &f).unwrap();
    assert_eq!(r.data::<i64>().unwrap(), &[1, -2, 3]);
    let r = semantics::select(&Literal::scalar(0u8).reshape(&[]).unwrap(), &t, &f);
    assert!(r.is_err(), "a u8 predicate is not pred");
    let ps = Literal::from_bools(&[], &[false]).unwrap();
    let r = semantics::select(&ps, &t, &f).unwrap();
    assert_eq!(r.data::<i64>().unwrap(), &[-1, -2, -3]);
    let p2 = Literal::from_bools(&[2], &[true, false]).unwrap();
    let err = semantics::select(&p2, &t, &f).unwrap_err();
    assert!(
        err.message().contains("pred[2]") && err.message().contains("s64[3]"),
        "{err}"
    );
    let err = semantics::select(&p, &t, &f32s(&[1.0, 2.0, 3.0])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    // 16-byte elements.
    let ct = Literal::vector(&[num_complex::Complex64::new(1.0, 2.0); 3]);
    let cf = Literal::vector(&[num_complex::Complex64::new(0.0, -1.0); 3]);
    let r = semantics::select(&p, &ct, &cf).unwrap();
    assert_eq!(
        r.get(1).unwrap(),
        Scalar::C128(num_complex::Complex64::new(0.0, -1.0))
    );
}

#[test]
fn clamp_takes_scalar_or_full_bounds() {
    let x = Literal::vector(&[-5i32, 0, 5, 10]);
    let lo = Literal::scalar(0i32);
    let hi = Literal::vector(&[1i32, 1, 1, 20]);
    let r = semantics::clamp(&lo, &x, &hi).unwrap();
    assert_eq!(r.data::<i32>().unwrap(), &[0, 0, 1, 10]);
    let bad = Literal::vector(&[1i32, 2]);
    let err = semantics::clamp(&bad, &x, &hi).unwrap_err();
    assert!(
        err.message().contains("s32[2]") && err.message().contains("s32[4]"),
        "{err}"
    );
    let err = semantics::clamp(&Literal::scalar(0i64), &x, &hi).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let xf = Literal::vector(&[bf16::from_f32(-3.0), bf16::NAN, bf16::from_f32(0.25)]);
    let r = semantics::clamp(
        &Literal::scalar(bf16::from_f32(-1.0)),
        &xf,
        &Literal::scalar(bf16::from_f32(1.0)),
    )
    .unwrap();
    let v = r.data::<bf16>().unwrap();
    assert_eq!(v[0].to_f32(), -1.0);
    assert!(v[1].is_nan());
    assert_eq!(v[2].to_f32(), 0.25);
}

#[test]
fn empty_and_rank_zero_arrays_work_everywhere() {
    let empty = Literal::from_slice::<f32>(&[0, 3], &[]).unwrap();
    let r = semantics::unary(UnaryOp::Exp, &empty, empty.shape()).unwrap();
    assert_eq!(r.shape(), empty.shape());
    let r = semantics::binary(BinaryOp::Add, &empty, &empty, empty.shape()).unwrap();
    assert_eq!(r.element_count(), 0);
    let r = semantics::compare(ComparisonDirection::Lt, None, &empty, &empty).unwrap();
    assert_eq!(r.shape(), &shape(ElementType::Pred, &[0, 3]));
    let r = semantics::convert(&empty, ElementType::C128).unwrap();
    assert_eq!(r.shape(), &shape(ElementType::C128, &[0, 3]));
    let p = Literal::from_bools(&[0, 3], &[]).unwrap();
    assert_eq!(
        semantics::select(&p, &empty, &empty)
            .unwrap()
            .element_count(),
        0
    );
    assert_eq!(
        semantics::reduce_precision(&empty, 5, 10)
            .unwrap()
            .element_count(),
        0
    );

    let x = Literal::scalar(-2.5f64);
    let r = semantics::unary(UnaryOp::RoundNearestAfz, &x, x.shape()).unwrap();
    assert_eq!(r.get_first().unwrap(), Scalar::F64(-3.0));
    let r = semantics::convert(&Literal::scalar(300i32), ElementType::U8).unwrap();
    assert_eq!(r.get_first().unwrap(), Scalar::U8(44));
}

#[test]
fn layouts_are_kept_as_metadata() {
    let mut x = Literal::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let layout = Layout {
        minor_to_major: vec![0, 1],
        ..Layout::default()
    };
    x.set_layout(Some(layout.clone()));
    let r = semantics::unary(UnaryOp::Negate, &x, x.shape()).unwrap();
    assert_eq!(r.shape(), x.shape());
    let c = semantics::convert(&x, ElementType::S32).unwrap();
    assert_eq!(c.array_shape().unwrap().layout, Some(layout));
    assert_eq!(c.data::<i32>().unwrap(), &[1, 2, 3, 4]);
}

#[test]
fn bitcast_convert_reinterprets_bytes_and_checks_dims() {
    let x = f32s(&[1.0, -2.0]);
    let r = semantics::bitcast_convert(&x, &shape(ElementType::U32, &[2])).unwrap();
    assert_eq!(r.data::<u32>().unwrap(), &[0x3f80_0000, 0xc000_0000]);
    let bytes = semantics::bitcast_convert(&x, &shape(ElementType::U8, &[2, 4])).unwrap();
    assert_eq!(
        bytes.data::<u8>().unwrap(),
        &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]
    );
    let back = semantics::bitcast_convert(&bytes, &shape(ElementType::F32, &[2])).unwrap();
    assert_eq!(back, x);
    let three = f32s(&[1.0, 2.0, 3.0]);
    let err = semantics::bitcast_convert(&three, &shape(ElementType::F64, &[])).unwrap_err();
    assert!(err.message().contains("last dimension must be 2"), "{err}");
    let wide = semantics::bitcast_convert(
        &bytes.reshape(&[1, 8]).unwrap(),
        &shape(ElementType::F64, &[1]),
    );
    assert!(wide.is_ok());
    for (result, what) in [
        (shape(ElementType::U8, &[2]), "dimensions"),
        (shape(ElementType::F64, &[1]), "must be []"),
        (shape(ElementType::Pred, &[2, 4]), "pred"),
        (shape(ElementType::C64, &[1]), "complex"),
    ] {
        let err = semantics::bitcast_convert(&x, &result).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(err.message().contains(what), "{what}: {err}");
    }
}

#[test]
fn reduce_precision_needs_an_exponent_bit() {
    let x = f32s(&[1.0]);
    let err = semantics::reduce_precision(&x, 0, 3).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("exponent"), "{err}");
}

#[test]
fn scalar_layer_checks_types() {
    let err =
        semantics::binary_scalar(BinaryOp::Add, Scalar::F32(1.0), Scalar::F64(1.0)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("f32") && err.message().contains("f64"),
        "{err}"
    );
    let err = semantics::unary_scalar(
        UnaryOp::Abs,
        Scalar::C64(Complex32::new(3.0, 4.0)),
        ElementType::C64,
    )
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        semantics::unary_scalar(
            UnaryOp::Abs,
            Scalar::C64(Complex32::new(3.0, 4.0)),
            ElementType::F32
        )
        .unwrap(),
        Scalar::F32(5.0)
    );
    assert_eq!(
        semantics::unary_scalar(
            UnaryOp::IsFinite,
            Scalar::F16(f16::INFINITY),
            ElementType::Pred
        )
        .unwrap(),
        Scalar::Pred(false)
    );
    let err =
        semantics::compare_scalar(ComparisonDirection::Eq, None, Scalar::S8(1), Scalar::U8(1))
            .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(
        semantics::binary_scalar(BinaryOp::Divide, Scalar::S32(i32::MIN), Scalar::S32(-1)).unwrap(),
        Scalar::S32(i32::MIN)
    );
    assert_eq!(
        semantics::binary_scalar(BinaryOp::Add, Scalar::Pred(true), Scalar::Pred(true)).unwrap(),
        Scalar::Pred(true)
    );
    assert_eq!(
        semantics::convert_scalar(Scalar::F32(-1.5), ElementType::U8),
        Scalar::U8(0)
    );
    assert_eq!(
        semantics::convert_scalar(Scalar::S16(7), ElementType::S16),
        Scalar::S16(7)
    );
    assert_eq!(
        semantics::convert_scalar(Scalar::F64(f64::NAN), ElementType::Pred),
        Scalar::Pred(true)
    );
}

#[test]
fn kernels_reject_slices_of_different_lengths() {
    let err = kernels::int_binary(BinaryOp::Add, &[1i32, 2], &[1], &mut [0, 0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = kernels::float_unary(UnaryOp::Exp, &[1.0f32], &mut [0.0, 0.0]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = kernels::select(&[1, 0], &[1u8, 2, 3], &[4, 5, 6], &mut [0; 3]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn element_function_getters_match_the_kernels() {
    let add = kernels::float_binary_fn::<f16>(BinaryOp::Add).unwrap();
    assert_eq!(
        add(f16::from_f32(1.5), f16::from_f32(2.25)),
        f16::from_f32(3.75)
    );
    let div = kernels::int_binary_fn::<i32>(BinaryOp::Divide).unwrap();
    assert_eq!(div(7, 0), -1);
    let shl = kernels::int_binary_fn::<u8>(BinaryOp::ShiftLeft).unwrap();
    assert_eq!(shl(1, 8), 0);
    let exp = kernels::float_unary_fn::<f64>(UnaryOp::Exp).unwrap();
    assert_eq!(exp(0.0), 1.0);
    let imag = kernels::float_unary_fn::<f32>(UnaryOp::Imag).unwrap();
    assert_eq!(imag(5.0).to_bits(), 0);
    let neg = kernels::complex_unary_fn::<Complex32>(UnaryOp::Negate).unwrap();
    assert_eq!(neg(Complex32::new(1.0, -2.0)), Complex32::new(-1.0, 2.0));
    let mul = kernels::complex_binary_fn::<Complex32>(BinaryOp::Multiply).unwrap();
    assert_eq!(
        mul(Complex32::new(0.0, 1.0), Complex32::new(0.0, 1.0)),
        Complex32::new(-1.0, 0.0)
    );
    assert_eq!(kernels::pred_binary_fn(BinaryOp::Add).unwrap()(1, 1), 1);
    assert_eq!(kernels::pred_unary_fn(UnaryOp::Not).unwrap()(0), 1);
    let lt = kernels::compare_float_fn::<f32>(ComparisonDirection::Lt, true);
    assert!(lt(-0.0, 0.0) && lt(1.0, f32::NAN));
    let lt = kernels::compare_float_fn::<f32>(ComparisonDirection::Lt, false);
    assert!(!lt(-0.0, 0.0) && !lt(1.0, f32::NAN));
    assert!(kernels::compare_int_fn::<u8>(ComparisonDirection::Gt)(
        200, 100
    ));
    for (err, what) in [
        (kernels::int_unary_fn::<u32>(UnaryOp::Sign).err(), "sign"),
        (kernels::float_binary_fn::<f32>(BinaryOp::Xor).err(), "xor"),
        (
            kernels::complex_unary_fn::<Complex32>(UnaryOp::Floor).err(),
            "floor",
        ),
    ] {
        let err = err.expect("undefined op");
        assert_eq!(err.code(), Code::Unimplemented);
        assert!(err.message().contains(what), "{err}");
    }
}

/// A deterministic generator of bit patterns (no external crates needed).
fn bits(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn array_and_scalar_layers_agree_on_random_bit_patterns() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let n = 512;
    for ty in [
        ElementType::S8,
        ElementType::U16,
        ElementType::S32,
        ElementType::U64,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F32,
        ElementType::F64,
    ] {
        let size = ty.byte_size();
        let mut make = || {
            let raw: Vec<u8> = (0..n * size).map(|_| bits(&mut seed) as u8).collect();
            Literal::from_bytes(shape(ty, &[n]), &raw).unwrap()
        };
        let (a, b) = (make(), make());
        for &op in BinaryOp::ALL {
            let Ok(rt) = semantics::binary_result_type(op, ty) else {
                continue;
            };
            let arr = semantics::binary(op, &a, &b, &shape(rt, &[n])).unwrap();
            for i in 0..n {
                let s = semantics::binary_scalar(op, a.get(i).unwrap(), b.get(i).unwrap()).unwrap();
                let want = arr.get(i).unwrap();
                assert!(
                    same_scalar(s, want),
                    "{op} {ty} element {i}: {s:?} vs {want:?}"
                );
            }
        }
        for &op in UnaryOp::ALL {
            let Ok(rt) = semantics::unary_result_type(op, ty) else {
                continue;
            };
            let arr = semantics::unary(op, &a, &shape(rt, &[n])).unwrap();
            for i in 0..n {
                let s = semantics::unary_scalar(op, a.get(i).unwrap(), rt).unwrap();
                let want = arr.get(i).unwrap();
                assert!(
                    same_scalar(s, want),
                    "{op} {ty} element {i}: {s:?} vs {want:?}"
                );
            }
        }
        for to in ElementType::ALL {
            let arr = semantics::convert(&a, to).unwrap();
            for i in 0..n {
                let s = semantics::convert_scalar(a.get(i).unwrap(), to);
                assert!(
                    same_scalar(s, arr.get(i).unwrap()),
                    "convert {ty}->{to} element {i}"
                );
            }
        }
    }
}

/// Equal bits (so NaNs compare equal to themselves).
fn same_scalar(a: Scalar, b: Scalar) -> bool {
    let mut x = [0u8; 16];
    let mut y = [0u8; 16];
    let n = a.element_type().byte_size();
    a.write_bytes(&mut x[..n]);
    b.write_bytes(&mut y[..n]);
    a.element_type() == b.element_type() && x == y
}
