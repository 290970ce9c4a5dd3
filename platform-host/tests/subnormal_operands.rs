//! `dot` and `convolution` treat subnormal operands as zero, as XLA CPU does
//! (it runs with FTZ/DAZ). The Host's GEMM flushes them while packing, so
//! neither kernel scans its operands first; these programs would show it if
//! a subnormal reached the multiply: 1e-40 · 1e38 is 0.01, not 0.

use platform_api::Literal;
use platform_host::runner::HostRunner;

fn run(text: &str, args: &[Literal]) -> Vec<f32> {
    let runner = HostRunner::compile(text).expect("compiles");
    let out = runner.run(args).expect("runs");
    out.data::<f32>().expect("f32 result").to_vec()
}

#[test]
fn dot_flushes_subnormal_operands() {
    let text = "HloModule d\nENTRY e {\n  a = f32[1,2] parameter(0)\n  b = f32[2,2] parameter(1)\n  ROOT d = f32[1,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let a = Literal::from_slice::<f32>(&[1, 2], &[1e-40, 1.0]).expect("literal");
    let b = Literal::from_slice::<f32>(&[2, 2], &[1e38, 0.0, 3.0, 1e-39]).expect("literal");
    // Row [0, 1] · B, with B's subnormal 1e-39 flushed too: [3, 0].
    assert_eq!(run(text, &[a, b]), vec![3.0, 0.0]);
}

#[test]
fn f64_dot_flushes_subnormal_operands() {
    let text = "HloModule d\nENTRY e {\n  a = f64[2] parameter(0)\n  b = f64[2] parameter(1)\n  ROOT d = f64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
    let a = Literal::vector(&[1e-310f64, 1.0]);
    let b = Literal::vector(&[1e300f64, 2.0]);
    let runner = HostRunner::compile(text).expect("compiles");
    let out = runner.run(&[a, b]).expect("runs");
    assert_eq!(out.data::<f64>().expect("f64 result"), &[2.0]);
}

#[test]
fn convolution_flushes_subnormal_operands() {
    let text = "HloModule c\nENTRY e {\n  x = f32[1,2,1,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n  ROOT c = f32[1,2,1,1] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n";
    let x = Literal::from_slice::<f32>(&[1, 2, 1, 1], &[1e-40, 2.0]).expect("literal");
    let k = Literal::from_slice::<f32>(&[1, 1, 1, 1], &[1e38]).expect("literal");
    assert_eq!(run(text, &[x, k]), vec![0.0, 2e38]);
}

#[test]
fn shifted_window_convolution_flushes_subnormal_inputs() {
    // A SAME 3x3 convolution into three channels reads its windows in place
    // from the padded input (the row-dot kernel): a subnormal at (1, 1) next
    // to a 1 at (5, 5), both times 1e38.
    let text = "HloModule c\nENTRY e {\n  x = f32[1,8,8,1] parameter(0)\n  k = f32[3,3,1,3] parameter(1)\n  ROOT c = f32[1,8,8,3] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
    let mut xs = vec![0f32; 64];
    xs[8 + 1] = 1e-40;
    xs[5 * 8 + 5] = 1.0;
    let x = Literal::from_slice::<f32>(&[1, 8, 8, 1], &xs).expect("literal");
    let k = Literal::from_slice::<f32>(&[3, 3, 1, 3], &[1e38; 27]).expect("literal");
    let want: Vec<f32> = (0..64)
        .flat_map(|p: usize| {
            let near = (p / 8).abs_diff(5) <= 1 && (p % 8).abs_diff(5) <= 1;
            [if near { 1e38 } else { 0.0 }; 3]
        })
        .collect();
    assert_eq!(run(text, &[x, k]), want);
}
