//! Randomness: `rng-bit-generator` bit for bit against XLA (reference data made
//! by JAX on XLA CPU, see `data/gen_rng_bit_generator.py`), `rng` statistics and
//! seeding, `rng-get-and-update-state`.

mod support;
use hlo_evaluator::RunContext;
use hlo_ir::{Code, Literal};
use support::*;

fn hlo_type(dtype: &str) -> &'static str {
    match dtype {
        "uint8" => "u8",
        "uint16" => "u16",
        "uint32" => "u32",
        "uint64" => "u64",
        other => panic!("unexpected dtype {other}"),
    }
}

fn as_u64s(l: &Literal) -> Vec<u64> {
    (0..l.element_count())
        .map(|i| l.get(i).unwrap().to_i64().unwrap() as u64)
        .collect()
}

#[test]
fn rng_bit_generator_matches_xla() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rng_bit_generator.json"
    ))
    .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert!(cases.len() > 50);
    let parse = |v: &serde_json::Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().parse().unwrap())
            .collect()
    };
    for case in cases {
        let algorithm = case["algorithm"].as_str().unwrap();
        let ty = hlo_type(case["dtype"].as_str().unwrap());
        let dims: Vec<String> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.to_string())
            .collect();
        let data_shape = format!("{ty}[{}]", dims.join(","));
        let m = format!(
            "HloModule m\nENTRY e {{ s = u64[2] parameter(0)\n ROOT r = (u64[2], {data_shape}) rng-bit-generator(s), algorithm={algorithm} }}"
        );
        let state = parse(&case["state"]);
        let out = eval_ok(&m, vec![Literal::vector(&state)]).decompose_tuple();
        let what = format!("{algorithm} {data_shape} state {state:?}");
        assert_eq!(
            as_u64s(&out[0]),
            parse(&case["new_state"]),
            "new state of {what}"
        );
        assert_eq!(as_u64s(&out[1]), parse(&case["data"]), "bits of {what}");
    }
}

#[test]
fn rng_bit_generator_rejects_bad_states() {
    let m = "HloModule m\nENTRY e { s = u32[2] parameter(0)\n ROOT r = (u32[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox }";
    let err = eval(m, vec![Literal::vector(&[1u32, 2])]).unwrap_err();
    assert!(err.message().contains("%r"), "{err}");
}

const UNIFORM: &str = "HloModule m\nENTRY e { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[4000] rng(a, b), distribution=rng_uniform }";

#[test]
fn rng_uniform_is_in_range_seeded_and_spread() {
    let args = || vec![Literal::scalar(-2f32), Literal::scalar(3f32)];
    let run = |seed| {
        f32s(
            &eval_with(
                UNIFORM,
                args(),
                &RunContext {
                    rng_seed: seed,
                    ..RunContext::default()
                },
            )
            .unwrap(),
        )
    };
    let a = run(1);
    assert!(a.iter().all(|&v| (-2.0..3.0).contains(&v)));
    let mean = a.iter().map(|&v| v as f64).sum::<f64>() / a.len() as f64;
    assert!(
        (mean - 0.5).abs() < 0.15,
        "mean {mean} of U[-2,3) should be near 0.5"
    );
    assert_eq!(a, run(1), "the same seed gives the same numbers");
    assert_ne!(a, run(2), "different seeds give different numbers");
    // Integers: [a, b).
    let ints = "HloModule m\nENTRY e { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT r = s32[1000] rng(a, b), distribution=rng_uniform }";
    let got = s32s(&eval_ok(
        ints,
        vec![Literal::scalar(5i32), Literal::scalar(8i32)],
    ));
    assert!(got.iter().all(|&v| (5..8).contains(&v)));
    for v in 5..8 {
        assert!(got.contains(&v), "{v} never drawn");
    }
    // An empty integer range is an error.
    assert_eq!(
        eval(ints, vec![Literal::scalar(5i32), Literal::scalar(5i32)])
            .unwrap_err()
            .code(),
        Code::InvalidArgument
    );
}

#[test]
fn rng_normal_has_the_requested_moments() {
    let m = "HloModule m\nENTRY e { a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT r = f64[20000] rng(a, b), distribution=rng_normal }";
    let out = eval_ok(m, vec![Literal::scalar(10f64), Literal::scalar(2f64)]);
    let v = out.data::<f64>().unwrap();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    assert!((mean - 10.0).abs() < 0.1, "mean {mean}");
    assert!((var.sqrt() - 2.0).abs() < 0.1, "std {}", var.sqrt());
}

#[test]
fn rng_get_and_update_state_advances_by_delta() {
    let m = "HloModule m\nENTRY e { a = u64[2] rng-get-and-update-state(), delta=5\n b = u64[2] rng-get-and-update-state(), delta=5\n ROOT t = (u64[2], u64[2]) tuple(a, b) }";
    let ctx = RunContext {
        rng_seed: u64::MAX - 2,
        ..RunContext::default()
    };
    let out = eval_with(m, vec![], &ctx).unwrap().decompose_tuple();
    assert_eq!(as_u64s(&out[0]), [u64::MAX - 2, 0]);
    // The 128-bit state carries into its high word.
    assert_eq!(as_u64s(&out[1]), [2, 1]);
}
