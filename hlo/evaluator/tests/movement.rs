//! Data-movement ops, checked against index arithmetic written out by hand in
//! each test (never by re-running the implementation).

mod support;
use hlo_ir::{Code, Literal};
use support::*;

#[test]
fn broadcast_maps_operand_dims() {
    let m = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n ROOT b = f32[3,4,2] broadcast(p), dimensions={2,0} }";
    let out = eval_ok(m, vec![counting(&[2, 3])]);
    let got = f32s(&out);
    for i in 0..3 {
        for j in 0..4 {
            for k in 0..2 {
                // result[i][j][k] = operand[k][i]
                assert_eq!(got[(i * 4 + j) * 2 + k], (k * 3 + i) as f32);
            }
        }
    }
    // Scalar to array, and a mismatched dimension is an error naming the instruction.
    let s = "HloModule m\nENTRY e { p = f32[] parameter(0)\n ROOT b = f32[2,2] broadcast(p), dimensions={} }";
    assert_eq!(f32s(&eval_ok(s, vec![Literal::scalar(7.5f32)])), [7.5; 4]);
    let bad = "HloModule m\nENTRY e { p = f32[2] parameter(0)\n ROOT b = f32[3] broadcast(p), dimensions={0} }";
    assert!(eval(bad, vec![counting(&[2])])
        .unwrap_err()
        .message()
        .contains("%b"));
    // The evaluator's own check, for modules that skipped the verifier.
    let err = eval_unverified(bad, vec![counting(&[2])]).unwrap_err();
    assert!(err.message().contains("%b (broadcast)"), "{err}");
}

#[test]
fn reshape_keeps_row_major_order() {
    let m = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n ROOT r = f32[3,1,2] reshape(p) }";
    let out = eval_ok(m, vec![counting(&[2, 3])]);
    assert_eq!(out.dims(), [3, 1, 2]);
    assert_eq!(f32s(&out), [0., 1., 2., 3., 4., 5.]);
}

#[test]
fn transpose_permutes() {
    let m = "HloModule m\nENTRY e { p = f32[2,3,4] parameter(0)\n ROOT t = f32[4,2,3] transpose(p), dimensions={2,0,1} }";
    let got = f32s(&eval_ok(m, vec![counting(&[2, 3, 4])]));
    for a in 0..4 {
        for b in 0..2 {
            for c in 0..3 {
                // result[a][b][c] = operand[b][c][a]
                assert_eq!(got[(a * 2 + b) * 3 + c], ((b * 3 + c) * 4 + a) as f32);
            }
        }
    }
}

#[test]
fn slice_with_strides_and_empty_results() {
    let m = "HloModule m\nENTRY e { p = f32[5,6] parameter(0)\n ROOT s = f32[2,2] slice(p), slice={[1:5:2], [0:6:4]} }";
    // rows 1,3; cols 0,4
    assert_eq!(
        f32s(&eval_ok(m, vec![counting(&[5, 6])])),
        [6., 10., 18., 22.]
    );
    let empty = "HloModule m\nENTRY e { p = f32[5,6] parameter(0)\n ROOT s = f32[0,6] slice(p), slice={[3:3], [0:6]} }";
    assert_eq!(eval_ok(empty, vec![counting(&[5, 6])]).element_count(), 0);
    let out_of_bounds = "HloModule m\nENTRY e { p = f32[5] parameter(0)\n ROOT s = f32[3] slice(p), slice={[3:6]} }";
    assert_eq!(
        eval(out_of_bounds, vec![counting(&[5])])
            .unwrap_err()
            .code(),
        Code::InvalidArgument
    );
}

#[test]
fn dynamic_slice_clamps_start_indices() {
    let m = "HloModule m\nENTRY e { p = f32[4,5] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n ROOT d = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3} }";
    let run = |i: i32, j: i32| {
        f32s(&eval_ok(
            m,
            vec![counting(&[4, 5]), Literal::scalar(i), Literal::scalar(j)],
        ))
    };
    // In range: rows 1..3, cols 1..4.
    assert_eq!(run(1, 1), [6., 7., 8., 11., 12., 13.]);
    // Too large: clamped to rows 2..4, cols 2..5.
    assert_eq!(run(7, 100), [12., 13., 14., 17., 18., 19.]);
    // Negative: clamped to 0.
    assert_eq!(run(-3, i32::MIN), [0., 1., 2., 5., 6., 7.]);
    // Unsigned indices are never negative: u32::MAX clamps to the far end.
    let u = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n i = u32[] parameter(1)\n ROOT d = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2} }";
    assert_eq!(
        f32s(&eval_ok(u, vec![counting(&[4]), Literal::scalar(u32::MAX)])),
        [2., 3.]
    );
}

#[test]
fn dynamic_update_slice_clamps_and_writes() {
    let m = "HloModule m\nENTRY e { p = f32[3,4] parameter(0)\n u = f32[2,2] parameter(1)\n i = s32[] parameter(2)\n j = s32[] parameter(3)\n ROOT d = f32[3,4] dynamic-update-slice(p, u, i, j) }";
    let upd = Literal::from_slice(&[2, 2], &[-1f32, -2., -3., -4.]).unwrap();
    let run = |i: i32, j: i32| {
        f32s(&eval_ok(
            m,
            vec![
                counting(&[3, 4]),
                upd.clone(),
                Literal::scalar(i),
                Literal::scalar(j),
            ],
        ))
    };
    let mut want: Vec<f32> = (0..12).map(|v| v as f32).collect();
    // (5, -1) clamps to (1, 0).
    want[4] = -1.;
    want[5] = -2.;
    want[8] = -3.;
    want[9] = -4.;
    assert_eq!(run(5, -1), want);
}

#[test]
fn concatenate_along_a_dimension() {
    let m = "HloModule m\nENTRY e { a = f32[2,1] parameter(0)\n b = f32[2,2] parameter(1)\n c = f32[2,0] parameter(2)\n ROOT r = f32[2,3] concatenate(a, c, b), dimensions={1} }";
    let a = Literal::from_slice(&[2, 1], &[10f32, 20.]).unwrap();
    let b = counting(&[2, 2]);
    let c = Literal::from_slice::<f32>(&[2, 0], &[]).unwrap();
    assert_eq!(f32s(&eval_ok(m, vec![a, b, c])), [10., 0., 1., 20., 2., 3.]);
}

#[test]
fn pad_edge_negative_and_interior() {
    // [0 1 2] with low=1, high=2, interior=1 -> [9 0 9 1 9 2 9 9]
    let m = "HloModule m\nENTRY e { p = f32[3] parameter(0)\n v = f32[] parameter(1)\n ROOT r = f32[8] pad(p, v), padding=1_2_1 }";
    assert_eq!(
        f32s(&eval_ok(m, vec![counting(&[3]), Literal::scalar(9f32)])),
        [9., 0., 9., 1., 9., 2., 9., 9.]
    );
    // Negative low crops: [0 1 2 3] low=-1 high=-2 interior=1 -> full [0 9 1 9 2 9 3] cropped to [9 1 9 2]
    let n = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n v = f32[] parameter(1)\n ROOT r = f32[4] pad(p, v), padding=-1_-2_1 }";
    assert_eq!(
        f32s(&eval_ok(n, vec![counting(&[4]), Literal::scalar(9f32)])),
        [9., 1., 9., 2.]
    );
    // Two dimensions, cropping every element of one row away.
    let two = "HloModule m\nENTRY e { p = f32[2,2] parameter(0)\n v = f32[] parameter(1)\n ROOT r = f32[1,3] pad(p, v), padding=-1_0x0_1 }";
    assert_eq!(
        f32s(&eval_ok(
            two,
            vec![counting(&[2, 2]), Literal::scalar(-1f32)]
        )),
        [2., 3., -1.]
    );
    // Everything cropped: only padding remains.
    let gone = "HloModule m\nENTRY e { p = f32[2] parameter(0)\n v = f32[] parameter(1)\n ROOT r = f32[1] pad(p, v), padding=-3_2 }";
    assert_eq!(
        f32s(&eval_ok(gone, vec![counting(&[2]), Literal::scalar(5f32)])),
        [5.]
    );
}

#[test]
fn reverse_dimensions() {
    let m = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n ROOT r = f32[2,3] reverse(p), dimensions={1,0} }";
    assert_eq!(
        f32s(&eval_ok(m, vec![counting(&[2, 3])])),
        [5., 4., 3., 2., 1., 0.]
    );
    let one = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n ROOT r = f32[2,3] reverse(p), dimensions={1} }";
    assert_eq!(
        f32s(&eval_ok(one, vec![counting(&[2, 3])])),
        [2., 1., 0., 5., 4., 3.]
    );
}

#[test]
fn copy_is_identity_whatever_the_layout() {
    let m =
        "HloModule m\nENTRY e { p = f32[2,3]{1,0} parameter(0)\n ROOT c = f32[2,3]{0,1} copy(p) }";
    assert_eq!(
        f32s(&eval_ok(m, vec![counting(&[2, 3])])),
        [0., 1., 2., 3., 4., 5.]
    );
}

#[test]
fn bitcast_reinterprets_physical_bytes() {
    // f32[3,4]{1,0} and f32[4,3]{0,1} have the same bytes: the result is the transpose.
    let m = "HloModule m\nENTRY e { p = f32[3,4]{1,0} parameter(0)\n ROOT b = f32[4,3]{0,1} bitcast(p) }";
    let got = f32s(&eval_ok(m, vec![counting(&[3, 4])]));
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(got[i * 3 + j], (j * 4 + i) as f32);
        }
    }
    // Element type change of equal width: the bits of 1.0f32.
    let t = "HloModule m\nENTRY e { p = f32[] parameter(0)\n ROOT b = s32[] bitcast(p) }";
    assert_eq!(
        s32s(&eval_ok(t, vec![Literal::scalar(1.0f32)])),
        [0x3f80_0000]
    );
    // A plain reshape-bitcast.
    let r =
        "HloModule m\nENTRY e { p = f32[2,3]{1,0} parameter(0)\n ROOT b = f32[6]{0} bitcast(p) }";
    assert_eq!(
        f32s(&eval_ok(r, vec![counting(&[2, 3])])),
        [0., 1., 2., 3., 4., 5.]
    );
    // Byte size mismatch is an error.
    let bad = "HloModule m\nENTRY e { p = f32[2] parameter(0)\n ROOT b = f32[3] bitcast(p) }";
    assert!(eval(bad, vec![counting(&[2])]).is_err());
}

#[test]
fn iota_in_several_types() {
    let m = "HloModule m\nENTRY e { ROOT i = s32[2,3] iota(), iota_dimension=1 }";
    assert_eq!(s32s(&eval_ok(m, vec![])), [0, 1, 2, 0, 1, 2]);
    let f = "HloModule m\nENTRY e { ROOT i = f32[3,2] iota(), iota_dimension=0 }";
    assert_eq!(f32s(&eval_ok(f, vec![])), [0., 0., 1., 1., 2., 2.]);
    // s8 wraps past 127.
    let w = "HloModule m\nENTRY e { ROOT i = s8[130] iota(), iota_dimension=0 }";
    let got = eval_ok(w, vec![]);
    assert_eq!(got.data::<i8>().unwrap()[128], -128);
}

#[test]
fn scalars_and_empty_arrays_flow_through() {
    let m = "HloModule m\nENTRY e { p = f32[0,3] parameter(0)\n t = f32[3,0] transpose(p), dimensions={1,0}\n ROOT b = f32[2,3,0] broadcast(t), dimensions={1,2} }";
    let out = eval_ok(m, vec![Literal::from_slice::<f32>(&[0, 3], &[]).unwrap()]);
    assert_eq!(out.dims(), [2, 3, 0]);
    let s = "HloModule m\nENTRY e { p = f32[] parameter(0)\n ROOT r = f32[1,1] reshape(p) }";
    assert_eq!(f32s(&eval_ok(s, vec![Literal::scalar(3f32)])), [3.]);
}

#[test]
fn data_movement_preserves_every_bit() {
    // NaN payloads, signed zeros and infinities pass through untouched.
    let bits = [
        0x7fc0_0001u32,
        0xffc1_2345,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x0000_0001,
    ];
    let values: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
    let x = Literal::from_slice(&[2, 3], &values).unwrap();
    let m = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n t = f32[3,2] transpose(p), dimensions={1,0}\n v = f32[] constant(nan)\n ROOT r = f32[4,2] pad(t, v), padding=1_0x0_0 }";
    let out = eval_ok(m, vec![x]);
    let got: Vec<u32> = f32s(&out).iter().map(|v| v.to_bits()).collect();
    assert!(f32::from_bits(got[0]).is_nan() && f32::from_bits(got[1]).is_nan());
    // Row i+1 of the result is column i of the operand.
    assert_eq!(
        &got[2..],
        [bits[0], bits[3], bits[1], bits[4], bits[2], bits[5]]
    );
}
