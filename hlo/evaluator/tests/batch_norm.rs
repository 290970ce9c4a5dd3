//! Batch normalisation on small cases worked out by hand.

mod support;
use hlo_ir::Literal;
use support::*;

fn close(got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (*g as f64 - w).abs() <= 1e-6 * (1.0 + w.abs()),
            "got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn training_and_inference() {
    // x = [[1, 2], [3, 6]], features along dimension 1:
    // feature 0 holds {1, 3}: mean 2, variance 1; feature 1 holds {2, 6}: mean 4, variance 4.
    let x = Literal::from_slice(&[2, 2], &[1f32, 2., 3., 6.]).unwrap();
    let scale = Literal::vector(&[1f32, 2.]);
    let offset = Literal::vector(&[0f32, 1.]);
    let m = "HloModule m\nENTRY e { x = f32[2,2] parameter(0)\n s = f32[2] parameter(1)\n o = f32[2] parameter(2)\n ROOT b = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1 }";
    let out = eval_ok(m, vec![x.clone(), scale.clone(), offset.clone()]).decompose_tuple();
    // (x - mean) * scale / sqrt(var) + offset
    close(&f32s(&out[0]), &[-1., -1., 1., 3.]);
    close(&f32s(&out[1]), &[2., 4.]);
    close(&f32s(&out[2]), &[1., 4.]);
    let i = "HloModule m\nENTRY e { x = f32[2,2] parameter(0)\n s = f32[2] parameter(1)\n o = f32[2] parameter(2)\n mu = f32[2] parameter(3)\n v = f32[2] parameter(4)\n ROOT b = f32[2,2] batch-norm-inference(x, s, o, mu, v), epsilon=0, feature_index=1 }";
    let out = eval_ok(
        i,
        vec![
            x,
            scale,
            offset,
            Literal::vector(&[2f32, 4.]),
            Literal::vector(&[1f32, 4.]),
        ],
    );
    close(&f32s(&out), &[-1., -1., 1., 3.]);
}

#[test]
fn grad() {
    // One feature with x = [0, 1, 5]: mean 2, centred [-2, -1, 3], variance 14/3.
    // With dy = [1, 0, 0] and scale 1: sum(dy) = 1, sum(dy * xc) = -2, and
    // dx_i = (dy_i - 1/3 + xc_i / 7) / sigma = [8/21, -10/21, 2/21] / sigma.
    let sigma = (14.0f64 / 3.0).sqrt();
    let m = "HloModule m\nENTRY e { x = f32[3,1] parameter(0)\n s = f32[1] parameter(1)\n mu = f32[1] parameter(2)\n v = f32[1] parameter(3)\n dy = f32[3,1] parameter(4)\n ROOT g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, mu, v, dy), epsilon=0, feature_index=1 }";
    let out = eval_ok(
        m,
        vec![
            Literal::from_slice(&[3, 1], &[0f32, 1., 5.]).unwrap(),
            Literal::vector(&[1f32]),
            Literal::vector(&[2f32]),
            Literal::vector(&[(14.0f64 / 3.0) as f32]),
            Literal::from_slice(&[3, 1], &[1f32, 0., 0.]).unwrap(),
        ],
    )
    .decompose_tuple();
    close(
        &f32s(&out[0]),
        &[8.0 / 21.0 / sigma, -10.0 / 21.0 / sigma, 2.0 / 21.0 / sigma],
    );
    close(&f32s(&out[1]), &[-2.0 / sigma]);
    close(&f32s(&out[2]), &[1.0]);
}
