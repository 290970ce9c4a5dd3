//! f16 and bf16 matrix-vector dots (`m = 1` or `n = 1`, or both: a dot of
//! two vectors), which the Host
//! streams in place through `gemm::gemv16` where AVX-512F exists and through
//! the packed products elsewhere: every orientation (the matrix as lhs or
//! rhs, rows or columns contiguous), batches, and both result types, against
//! sums in f64 of the widened operands.

use crate::rng::Rng;
use half::{bf16, f16};
use platform_api::Literal;
use platform_host::runner::HostRunner;

/// One dot: operand and result shapes, dimension numbers.
struct Case {
    lhs: &'static str,
    rhs: &'static str,
    out: &'static str,
    dnums: &'static str,
}

const CASES: [Case; 7] = [
    // The batch dimension innermost: each batch's matrix is strided in both
    // dimensions in the operand.
    Case {
        lhs: "6,40,3",
        rhs: "40,3",
        out: "3,6",
        dnums: "lhs_batch_dims={2}, rhs_batch_dims={1}, lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    },
    // Vector · vector: a scalar.
    Case {
        lhs: "77",
        rhs: "77",
        out: "",
        dnums: "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    },
    // Matrix · vector, rows contiguous.
    Case {
        lhs: "70,45",
        rhs: "45",
        out: "70",
        dnums: "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    },
    // Transposed matrix · vector: columns contiguous.
    Case {
        lhs: "45,150",
        rhs: "45",
        out: "150",
        dnums: "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    },
    // Vector · matrix (the matrix as rhs, its columns contiguous).
    Case {
        lhs: "33",
        rhs: "33,131",
        out: "131",
        dnums: "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
    },
    // Vector · transposed matrix (rows contiguous).
    Case {
        lhs: "64",
        rhs: "19,64",
        out: "19",
        dnums: "lhs_contracting_dims={0}, rhs_contracting_dims={1}",
    },
    // Batched heads: [b, 1, k] · [b, k, n].
    Case {
        lhs: "3,1,40",
        rhs: "3,40,24",
        out: "3,1,24",
        dnums: "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}",
    },
];

fn dims(s: &str) -> Vec<usize> {
    s.split(',')
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().unwrap())
        .collect()
}

/// Row-major index arithmetic: the f64 reference of `dot` for these cases.
fn reference(case: &Case, a: &[f64], b: &[f64]) -> Vec<f64> {
    let (ld, rd, od) = (dims(case.lhs), dims(case.rhs), dims(case.out));
    let total: usize = od.iter().product();
    match (ld.len(), rd.len()) {
        (1, 1) => vec![(0..ld[0]).map(|p| a[p] * b[p]).sum()],
        (3, 2) => {
            // [m, k, b] · [k, b] -> [b, m].
            let (m, k, nb) = (ld[0], ld[1], ld[2]);
            (0..total)
                .map(|i| {
                    let (batch, r) = (i / m, i % m);
                    (0..k)
                        .map(|p| a[(r * k + p) * nb + batch] * b[p * nb + batch])
                        .sum()
                })
                .collect()
        }
        (2, 1) if case.dnums.starts_with("lhs_contracting_dims={1}") => (0..total)
            .map(|i| (0..ld[1]).map(|p| a[i * ld[1] + p] * b[p]).sum())
            .collect(),
        (2, 1) => (0..total)
            .map(|i| (0..ld[0]).map(|p| a[p * ld[1] + i] * b[p]).sum())
            .collect(),
        (1, 2) if case.dnums.ends_with("rhs_contracting_dims={0}") => (0..total)
            .map(|j| (0..rd[0]).map(|p| a[p] * b[p * rd[1] + j]).sum())
            .collect(),
        (1, 2) => (0..total)
            .map(|j| (0..rd[1]).map(|p| a[p] * b[j * rd[1] + p]).sum())
            .collect(),
        _ => {
            let (k, n) = (ld[2], rd[2]);
            (0..total)
                .map(|i| {
                    let (batch, j) = (i / n, i % n);
                    (0..k)
                        .map(|p| a[batch * k + p] * b[(batch * k + p) * n + j])
                        .sum()
                })
                .collect()
        }
    }
}

/// The two operands rounded to `T`, as literals and as the f64 values the
/// reference sums.
fn operands<T: platform_api::NativeType + Copy>(
    la: &[usize],
    va: &[f32],
    lb: &[usize],
    vb: &[f32],
    from: fn(f32) -> T,
    to: fn(T) -> f32,
) -> (Vec<Literal>, Vec<f64>, Vec<f64>) {
    let (ha, hb): (Vec<T>, Vec<T>) = (
        va.iter().map(|&v| from(v)).collect(),
        vb.iter().map(|&v| from(v)).collect(),
    );
    let wide = |h: &[T]| h.iter().map(|&v| f64::from(to(v))).collect();
    (
        vec![
            Literal::from_slice(la, &ha).unwrap(),
            Literal::from_slice(lb, &hb).unwrap(),
        ],
        wide(&ha),
        wide(&hb),
    )
}

#[test]
fn every_orientation_matches_f64_sums() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (ty, eps) in [("f16", 1.0 / 1024.0), ("bf16", 1.0 / 128.0)] {
        for case in &CASES {
            for out_ty in [ty, "f32"] {
                let text = format!(
                    "HloModule d\nENTRY e {{\n  a = {ty}[{}] parameter(0)\n  b = {ty}[{}] parameter(1)\n  \
                     ROOT d = {out_ty}[{}] dot(a, b), {}\n}}\n",
                    case.lhs, case.rhs, case.out, case.dnums
                );
                let mut values = |n: usize| -> Vec<f32> {
                    (0..n).map(|_| (rng.unit() * 4.0 - 2.0) as f32).collect()
                };
                let (la, lb) = (dims(case.lhs), dims(case.rhs));
                let (va, vb) = (values(la.iter().product()), values(lb.iter().product()));
                let (args, wa, wb) = if ty == "f16" {
                    operands(&la, &va, &lb, &vb, f16::from_f32, f16::to_f32)
                } else {
                    operands(&la, &va, &lb, &vb, bf16::from_f32, bf16::to_f32)
                };
                let want = reference(case, &wa, &wb);
                let runner = HostRunner::compile(&text).expect("compiles");
                let out = runner.run(&args).expect("runs");
                let got: Vec<f64> = match out_ty {
                    "f32" => out
                        .data::<f32>()
                        .unwrap()
                        .iter()
                        .map(|&v| f64::from(v))
                        .collect(),
                    "f16" => out
                        .data::<f16>()
                        .unwrap()
                        .iter()
                        .map(|v| f64::from(v.to_f32()))
                        .collect(),
                    _ => out
                        .data::<bf16>()
                        .unwrap()
                        .iter()
                        .map(|v| f64::from(v.to_f32()))
                        .collect(),
                };
                // f32 sums: tight; a 16-bit result: its own rounding.
                let tol = if out_ty == "f32" { 1e-5 } else { eps };
                assert_eq!(got.len(), want.len(), "{text}");
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - w).abs() <= tol * (1.0 + w.abs()),
                        "{text}element {i}: {g}, want {w}"
                    );
                }
            }
        }
    }
}
