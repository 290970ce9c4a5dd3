//! `reduce` over dimension sets whose reduced groups lie on both sides of a
//! kept one (a sum over the first and last dimensions), which the Host walks
//! outer reduced index first (`kernels::reduce`). Values are small integers
//! (exact in f32 in any order of addition), so every result must equal a
//! plain nested-loop reduction exactly, whatever the walk and the split
//! over threads.

use platform_api::Literal;
use platform_host::runner::HostRunner;

use crate::rng::Rng;

fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

/// Reduces `x` (row-major over `dims`) over `reduce` with `combine`.
fn naive(
    x: &[f32],
    dims: &[usize],
    reduce: &[usize],
    init: f32,
    combine: fn(f32, f32) -> f32,
) -> Vec<f32> {
    let kept: Vec<usize> = (0..dims.len()).filter(|d| !reduce.contains(d)).collect();
    let out_dims: Vec<usize> = kept.iter().map(|&d| dims[d]).collect();
    let out_strides = strides(&out_dims);
    let n_out: usize = out_dims.iter().product();
    let mut out = vec![init; n_out];
    let in_strides = strides(dims);
    for (flat, &v) in x.iter().enumerate() {
        let o: usize = kept
            .iter()
            .zip(&out_strides)
            .map(|(&d, &s)| (flat / in_strides[d]) % dims[d] * s)
            .sum();
        out[o] = combine(out[o], v);
    }
    out
}

#[test]
fn reductions_on_both_sides_of_a_kept_dimension() {
    check(
        &[
            (&[64, 256, 256], &[0, 2]),
            (&[16, 300, 40], &[0, 2]),
            (&[7, 33, 19], &[0, 2]),
            (&[3, 5, 4, 6], &[0, 2, 3]),
            (&[3, 5, 4, 6], &[0, 1, 3]),
            (&[2, 3, 4, 5, 6], &[0, 2, 4]),
            (&[2, 64, 64, 32, 4], &[1, 2, 4]),
        ],
        41,
    );
}

/// A run of rows folded into a short kept row (fewer than 16 elements),
/// which the Host reads as wider rows: whole wide rows and leftover rows,
/// the least count that takes the wide form and one below it.
#[test]
fn reductions_into_short_rows() {
    check(
        &[
            (&[8, 200, 3], &[1]),
            (&[4, 64, 7], &[1]),
            (&[5, 6, 40, 2], &[1, 2]),
            (&[300, 12], &[0]),
            (&[3, 63, 15], &[1]),
            (&[3, 64, 15], &[1]),
            (&[2, 1000, 1], &[1]),
            (&[1024, 1024, 3], &[1]),
        ],
        43,
    );
}

/// Each case's `add` and `maximum` against [`naive`]. (The initial values
/// are identities: StableHLO lets a reduction fold its initial value in any
/// number of times, and the Host's vectorized folds do.)
fn check(cases: &[(&[usize], &[usize])], seed: u64) {
    let mut rng = Rng(seed);
    for &(dims, reduce) in cases {
        let n: usize = dims.iter().product();
        let x: Vec<f32> = (0..n).map(|_| (rng.next() % 201) as f32 - 100.0).collect();
        let shape = |d: &[usize]| {
            d.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let out_dims: Vec<usize> = (0..dims.len())
            .filter(|d| !reduce.contains(d))
            .map(|d| dims[d])
            .collect();
        for (op, init, combine) in [
            ("add", 0.0f32, (|a, b| a + b) as fn(f32, f32) -> f32),
            ("maximum", f32::NEG_INFINITY, |a: f32, b: f32| a.max(b)),
        ] {
            let text = format!(
                "HloModule m\n\nr {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                 ROOT c = f32[] {op}(a, b)\n}}\n\nENTRY e {{\n  x = f32[{}] parameter(0)\n  \
                 i = f32[] constant({})\n  ROOT y = f32[{}] reduce(x, i), dimensions={{{}}}, \
                 to_apply=r\n}}\n",
                shape(dims),
                if init.is_infinite() {
                    "-inf".to_string()
                } else {
                    init.to_string()
                },
                shape(&out_dims),
                shape(reduce),
            );
            let runner = HostRunner::compile(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let arg = Literal::from_bytes(
                platform_api::Shape::array(platform_api::ElementType::F32, dims.to_vec()),
                &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
            )
            .unwrap();
            let got = runner.run(&[arg]).unwrap().flatten_leaves();
            let got: Vec<f32> = got[0]
                .bytes()
                .unwrap()
                .chunks(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            let want = naive(&x, dims, reduce, init, combine);
            assert_eq!(got, want, "{op} over {reduce:?} of {dims:?}");
        }
    }
}
