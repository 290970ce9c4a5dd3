//! The scale rule of `service::compare`: a correct backend passes against the
//! f64 shadow reference with the default threshold, and seeded bugs are caught
//! and reported with their element and scale.
//!
//! Every bug is seeded either in the result (`got`) or in the program the
//! backend runs, and judged against the shadow evaluation of the *unmutated*
//! program on the same arguments. Shapes are small (a 256x1024 by 1024x64
//! matmul, 1024-term reductions) so the unoptimized test build stays quick;
//! the point of each test holds at these sizes.

use platform_api::{CompileOptions, ElementType, HloModule, Literal, Scalar};
use service::{compare_scaled, shadow_reference, LocalClient, ScaleRule, ScaledComparison};

use platform_host as _;
use platform_interpreter as _;

/// Deterministic arguments uniform in [-1, 1) (a 64-bit LCG; no dependency on
/// the service's generator so a change there cannot weaken these tests).
fn uniform(dims: &[usize], seed: u64) -> Literal {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let n: usize = dims.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect();
    Literal::from_slice(dims, &values).expect("literal")
}

fn parse(text: &str) -> HloModule {
    HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"))
}

fn run_on(platform: &str, text: &str, args: &[Literal]) -> Literal {
    let client = LocalClient::for_platform(Some(platform)).expect("platform");
    let compiled = client
        .compile(&parse(text), &CompileOptions::default())
        .expect("compile");
    client.execute(&compiled.executable, args).expect("execute")
}

/// Compares `got` with the shadow evaluation of `reference` on `args`.
fn judge(got: &Literal, reference: &str, args: &[Literal]) -> Vec<ScaledComparison> {
    let shadow = shadow_reference(&parse(reference), args, &CompileOptions::default())
        .expect("shadow evaluation");
    compare_scaled(got, &shadow.value, &shadow.scale, ScaleRule::default()).expect("compare")
}

fn report(reports: &[ScaledComparison]) -> String {
    reports
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

const MATMUL: &str = r#"
HloModule matmul
ENTRY main {
  a = f32[256,1024] parameter(0)
  b = f32[1024,64] parameter(1)
  ROOT d = f32[256,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"#;

const REDUCE: &str = r#"
HloModule reduce
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT m = f32[] maximum(x, y) }
ENTRY main {
  x = f32[64,1024] parameter(0)
  zero = f32[] constant(0)
  sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  ninf = f32[] constant(-inf)
  big = f32[1024] reduce(x, ninf), dimensions={0}, to_apply=max
  ROOT t = (f32[64], f32[1024]) tuple(sum, big)
}
"#;

/// A small MLP with a softmax: dot, bias broadcast, tanh, max-reduce,
/// subtract, exp, add-reduce, divide.
const MLP_SOFTMAX: &str = r#"
HloModule mlp
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT m = f32[] maximum(x, y) }
ENTRY main {
  x = f32[32,256] parameter(0)
  w1 = f32[256,128] parameter(1)
  b1 = f32[128] parameter(2)
  w2 = f32[128,64] parameter(3)
  h = f32[32,128] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[32,128] broadcast(b1), dimensions={1}
  hb = f32[32,128] add(h, bb)
  t = f32[32,128] tanh(hb)
  l = f32[32,64] dot(t, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ninf = f32[] constant(-inf)
  m = f32[32] reduce(l, ninf), dimensions={1}, to_apply=max
  mb = f32[32,64] broadcast(m), dimensions={0}
  c = f32[32,64] subtract(l, mb)
  e = f32[32,64] exponential(c)
  zero = f32[] constant(0)
  s = f32[32] reduce(e, zero), dimensions={1}, to_apply=add
  sb = f32[32,64] broadcast(s), dimensions={0}
  ROOT p = f32[32,64] divide(e, sb)
}
"#;

const CONV: &str = r#"
HloModule conv
ENTRY main {
  x = f32[2,16,16,32] parameter(0)
  k = f32[3,3,32,16] parameter(1)
  ROOT c = f32[2,16,16,16] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"#;

fn matmul_args() -> Vec<Literal> {
    vec![uniform(&[256, 1024], 1), uniform(&[1024, 64], 2)]
}

/// Host and the Interpreter (which sums in f32 in its own order) both pass
/// with the default threshold, and with room to spare: the worst element of
/// each is far below the limit.
#[test]
fn correct_backends_pass_with_the_default_rule() {
    let cases: Vec<(&str, &str, Vec<Literal>)> = vec![
        ("matmul", MATMUL, matmul_args()),
        ("reduce", REDUCE, vec![uniform(&[64, 1024], 3)]),
        (
            "mlp_softmax",
            MLP_SOFTMAX,
            vec![
                uniform(&[32, 256], 4),
                uniform(&[256, 128], 5),
                uniform(&[128], 6),
                uniform(&[128, 64], 7),
            ],
        ),
        (
            "conv",
            CONV,
            vec![uniform(&[2, 16, 16, 32], 8), uniform(&[3, 3, 32, 16], 9)],
        ),
    ];
    for (name, text, args) in &cases {
        for platform in ["host", "interpreter"] {
            let got = run_on(platform, text, args);
            let reports = judge(&got, text, args);
            assert!(
                reports.iter().all(ScaledComparison::ok),
                "{name} on {platform}:\n{}",
                report(&reports)
            );
            let worst = reports.iter().map(|r| r.max_ulps).fold(0.0, f64::max);
            eprintln!("{name} on {platform}: worst {worst:.2} ULPs of the scale");
        }
    }
}

/// One output element off by 1%: caught, and the report names that element
/// and its scale. The element is the one of largest magnitude, where 1% is a
/// real change; 1% of an element that cancels to nearly zero can be below
/// rounding, which is exactly what the scale says.
#[test]
fn an_element_off_by_one_percent_is_caught() {
    let args = matmul_args();
    let mut got = run_on("host", MATMUL, &args);
    let values = got.data::<f32>().expect("f32").to_vec();
    let (target, _) = values
        .iter()
        .enumerate()
        .fold((0, 0.0f32), |(bi, bv), (i, &v)| {
            if v.abs() > bv {
                (i, v.abs())
            } else {
                (bi, bv)
            }
        });
    got.set(target, Scalar::F32(values[target] * 1.01))
        .expect("set");
    let reports = judge(&got, MATMUL, &args);
    let r = &reports[0];
    assert!(!r.ok(), "{r}");
    assert_eq!(r.mismatches, 1, "{r}");
    let worst = &r.worst[0];
    assert_eq!(worst.linear, target, "{r}");
    assert!(worst.scale > 0.0 && worst.ulps > r.rule.max_ulps, "{r}");
    let text = r.to_string();
    assert!(
        text.contains(&worst.index) && text.contains("scale"),
        "{text}"
    );
}

/// A reduction that drops its last term (the backend reduces a slice one
/// element short) is caught on nearly every row.
#[test]
fn a_reduction_that_drops_one_term_is_caught() {
    let dropped = r#"
HloModule reduce_dropped
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY main {
  x = f32[64,1024] parameter(0)
  short = f32[64,1023] slice(x), slice={[0:64], [0:1023]}
  zero = f32[] constant(0)
  ROOT sum = f32[64] reduce(short, zero), dimensions={1}, to_apply=add
}
"#;
    let reference = r#"
HloModule reduce_full
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY main {
  x = f32[64,1024] parameter(0)
  zero = f32[] constant(0)
  ROOT sum = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
}
"#;
    let args = vec![uniform(&[64, 1024], 10)];
    let got = run_on("host", dropped, &args);
    let r = &judge(&got, reference, &args)[0];
    assert!(!r.ok(), "{r}");
    // A term smaller than the threshold cannot be told from rounding; with
    // terms uniform in [-1, 1) that is a few percent of the rows.
    assert!(
        r.mismatches >= 56,
        "only {} of 64 rows caught:\n{r}",
        r.mismatches
    );
    assert!(r.worst[0].scale > 0.0 && r.worst[0].ulps > 100.0, "{r}");
}

/// A gather whose indices are off by one is caught on every row.
#[test]
fn an_off_by_one_gather_index_is_caught() {
    let program = |shift: bool| {
        let indices = if shift {
            "one = s32[] constant(1)\n  ones = s32[32,1] broadcast(one), dimensions={}\n  idx = s32[32,1] add(i, ones)"
        } else {
            "idx = s32[32,1] copy(i)"
        };
        format!(
            r#"
HloModule gather
ENTRY main {{
  table = f32[100,16] parameter(0)
  i = s32[32,1] parameter(1)
  {indices}
  ROOT g = f32[32,16] gather(table, idx), offset_dims={{1}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, index_vector_dim=1, slice_sizes={{1,16}}
}}
"#
        )
    };
    let rows: Vec<i32> = (0..32i32).map(|k| k * 37 % 97).collect();
    let args = vec![
        uniform(&[100, 16], 11),
        Literal::from_slice(&[32, 1], &rows).expect("indices"),
    ];
    let got = run_on("host", &program(true), &args);
    let reference = program(false);
    let passes = run_on("host", &reference, &args);
    assert!(judge(&passes, &reference, &args)[0].ok());
    let r = &judge(&got, &reference, &args)[0];
    assert!(!r.ok(), "{r}");
    assert!(r.mismatches >= 32 * 15, "{r}");
    assert_eq!(r.worst.len(), service::compare::WORST_KEPT, "{r}");
}

/// A dot that reads its left operand transposed is caught.
#[test]
fn a_transposed_operand_is_caught() {
    let program = |transpose: bool| {
        let lhs = if transpose {
            "at = f32[128,128] transpose(a), dimensions={1,0}"
        } else {
            "at = f32[128,128] copy(a)"
        };
        format!(
            r#"
HloModule dot
ENTRY main {{
  a = f32[128,128] parameter(0)
  b = f32[128,32] parameter(1)
  {lhs}
  ROOT d = f32[128,32] dot(at, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"#
        )
    };
    let args = vec![uniform(&[128, 128], 12), uniform(&[128, 32], 13)];
    let got = run_on("host", &program(true), &args);
    let r = &judge(&got, &program(false), &args)[0];
    assert!(!r.ok(), "{r}");
    assert!(r.mismatches > 128 * 32 * 9 / 10, "{r}");
    assert!(r.worst[0].ulps > 1000.0, "{r}");
}

/// The scale is measured in the element type's own ULPs: a bf16 program is
/// held to bf16's precision, not f32's.
#[test]
fn bf16_results_are_judged_in_bf16_ulps() {
    let text = r#"
HloModule bf16dot
ENTRY main {
  a = bf16[16,256] parameter(0)
  b = bf16[256,16] parameter(1)
  ROOT d = bf16[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"#;
    let to_bf16 = |l: Literal| platform_api::semantics::convert(&l, ElementType::BF16).unwrap();
    let args = vec![
        to_bf16(uniform(&[16, 256], 14)),
        to_bf16(uniform(&[256, 16], 15)),
    ];
    let got = run_on("host", text, &args);
    let reports = judge(&got, text, &args);
    assert!(reports[0].ok(), "{}", report(&reports));
}
