//! `hlo_ir::semantics` against XLA CPU.
//!
//! `tests/data/semantics/` holds ~740 one-op cases whose expected outputs XLA CPU
//! computed (through jax; `scripts/gen_semantics_cases.py` regenerates them): edge
//! values for every elementwise op on every element type it accepts. Each case runs
//! through the array layer and, element by element, through the scalar layer, and
//! both must match XLA:
//! * integers and `pred`: bit for bit;
//! * floats: bit for bit (signed zeros included) for exact ops, within the case's
//!   ULP budget for transcendentals; NaN where XLA has NaN, with the same payload
//!   when the case asks (`nan_bits`); infinities exactly;
//! * one allowance: XLA CPU flushes `f32`/`f64` denormal results to zero, so a zero
//!   from XLA matches a same-signed denormal from us.
//!
//! `SEMANTICS_REPORT=1 cargo test -p hlo-semantics --test semantics_xla -- --nocapture`
//! prints the largest ULP distance from XLA of every case with a ULP budget.

use hlo_ir::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use hlo_ir::{ElementType, Literal, Scalar, Shape};
use hlo_semantics::{self as semantics, float::total_order_key};
use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/semantics");

struct Case {
    index: usize,
    kind: String,
    op: String,
    inputs: Vec<Literal>,
    output: Literal,
    ulp: u64,
    nan_bits: bool,
    json: Value,
}

impl Case {
    fn describe(&self) -> String {
        let types: Vec<String> = self.inputs.iter().map(|l| l.shape().to_string()).collect();
        format!(
            "case {} ({} {} on {} -> {})",
            self.index,
            self.kind,
            self.op,
            types.join(", "),
            self.output.shape()
        )
    }
}

fn load_cases() -> Vec<Case> {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{DATA}/cases.json")).expect("read cases.json"),
    )
    .expect("parse cases.json");
    let blob = std::fs::read(format!("{DATA}/arrays.bin")).expect("read arrays.bin");
    let arrays: Vec<Literal> = manifest["arrays"]
        .as_array()
        .expect("arrays")
        .iter()
        .map(|a| {
            let ty = ElementType::from_name(a[0].as_str().expect("dtype")).expect("known dtype");
            let dims: Vec<usize> = a[1]
                .as_array()
                .expect("shape")
                .iter()
                .map(|d| d.as_u64().expect("dim") as usize)
                .collect();
            let offset = a[2].as_u64().expect("offset") as usize;
            let shape = Shape::array(ty, dims);
            let len = shape.array_or_err().expect("array").byte_size();
            Literal::from_bytes(shape, &blob[offset..offset + len]).expect("literal")
        })
        .collect();
    manifest["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .enumerate()
        .map(|(index, c)| Case {
            index,
            kind: c["kind"].as_str().expect("kind").to_string(),
            op: c["op"].as_str().expect("op").to_string(),
            inputs: c["in"]
                .as_array()
                .expect("in")
                .iter()
                .map(|i| arrays[i.as_u64().expect("index") as usize].clone())
                .collect(),
            output: arrays[c["out"].as_u64().expect("out") as usize].clone(),
            ulp: c["ulp"].as_u64().unwrap_or(0),
            nan_bits: c["nan_bits"].as_bool().unwrap_or(false),
            json: c.clone(),
        })
        .collect()
}

/// Runs a case through the array layer.
fn run_array(case: &Case) -> hlo_ir::Result<Literal> {
    let x = &case.inputs;
    match case.kind.as_str() {
        "unary" => {
            let op = UnaryOp::from_name(&case.op).expect("unary op");
            semantics::unary(op, &x[0], case.output.shape())
        }
        "binary" => {
            let op = BinaryOp::from_name(&case.op).expect("binary op");
            semantics::binary(op, &x[0], &x[1], case.output.shape())
        }
        "compare" => {
            let dir = ComparisonDirection::from_name(&case.op).expect("direction");
            let ty = case.json["compare_type"]
                .as_str()
                .map(|t| ComparisonType::from_name(t).expect("compare type"));
            semantics::compare(dir, ty, &x[0], &x[1])
        }
        "select" => semantics::select(&x[0], &x[1], &x[2]),
        "clamp" => semantics::clamp(&x[0], &x[1], &x[2]),
        "convert" => {
            let to = ElementType::from_name(case.json["to"].as_str().expect("to")).expect("type");
            semantics::convert(&x[0], to)
        }
        "bitcast" => semantics::bitcast_convert(&x[0], case.output.shape()),
        "reduce_precision" => semantics::reduce_precision(
            &x[0],
            case.json["exponent_bits"].as_u64().expect("exponent_bits") as u32,
            case.json["mantissa_bits"].as_u64().expect("mantissa_bits") as u32,
        ),
        other => panic!("unknown case kind {other}"),
    }
}

/// Runs a case element by element through the scalar layer (for the kinds that
/// have one), building the same output literal.
fn run_scalar(case: &Case) -> Option<hlo_ir::Result<Literal>> {
    let out_ty = case.output.element_type()?;
    let n = case.output.element_count();
    let x = &case.inputs;
    let elem = |lit: &Literal, i: usize| lit.get(i).expect("element");
    let mut out = Literal::zeros(case.output.shape());
    for i in 0..n {
        let value = match case.kind.as_str() {
            "unary" => {
                let op = UnaryOp::from_name(&case.op).expect("op");
                semantics::unary_scalar(op, elem(&x[0], i), out_ty)
            }
            "binary" => {
                let op = BinaryOp::from_name(&case.op).expect("op");
                semantics::binary_scalar(op, elem(&x[0], i), elem(&x[1], i))
            }
            "compare" => {
                let dir = ComparisonDirection::from_name(&case.op).expect("direction");
                let ty = case.json["compare_type"]
                    .as_str()
                    .map(|t| ComparisonType::from_name(t).expect("compare type"));
                semantics::compare_scalar(dir, ty, elem(&x[0], i), elem(&x[1], i)).map(Scalar::Pred)
            }
            "convert" => Ok(semantics::convert_scalar(elem(&x[0], i), out_ty)),
            _ => return None,
        };
        match value {
            Ok(v) => out.set(i, v).expect("set"),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok(out))
}

/// The float bits of element `i` as (bits, width) for float and complex parts.
fn float_parts(lit: &Literal, i: usize) -> Vec<(u64, ElementType)> {
    match lit.get(i).expect("element") {
        Scalar::F16(v) => vec![(v.to_bits() as u64, ElementType::F16)],
        Scalar::BF16(v) => vec![(v.to_bits() as u64, ElementType::BF16)],
        Scalar::F32(v) => vec![(v.to_bits() as u64, ElementType::F32)],
        Scalar::F64(v) => vec![(v.to_bits(), ElementType::F64)],
        Scalar::C64(v) => vec![
            (v.re.to_bits() as u64, ElementType::F32),
            (v.im.to_bits() as u64, ElementType::F32),
        ],
        Scalar::C128(v) => vec![
            (v.re.to_bits(), ElementType::F64),
            (v.im.to_bits(), ElementType::F64),
        ],
        _ => vec![],
    }
}

struct Float {
    key: i64,
    nan: bool,
    zero: bool,
    negative: bool,
    denormal: bool,
    infinite: bool,
}

fn classify(bits: u64, ty: ElementType) -> Float {
    let (exp_bits, man_bits) = ty.float_bits().expect("float type");
    let total = 1 + exp_bits + man_bits;
    let exp = (bits >> man_bits) & ((1 << exp_bits) - 1);
    let man = bits & ((1u64 << man_bits) - 1);
    let exp_max = (1 << exp_bits) - 1;
    let key = match ty {
        ElementType::F16 => total_order_key(half::f16::from_bits(bits as u16)),
        ElementType::BF16 => total_order_key(half::bf16::from_bits(bits as u16)),
        ElementType::F32 => total_order_key(f32::from_bits(bits as u32)),
        _ => total_order_key(f64::from_bits(bits)),
    };
    Float {
        key,
        nan: exp == exp_max && man != 0,
        zero: exp == 0 && man == 0,
        negative: (bits >> (total - 1)) & 1 == 1,
        denormal: exp == 0 && man != 0,
        infinite: exp == exp_max && man == 0,
    }
}

/// Whether a float we computed matches XLA's.
fn float_matches(got: u64, want: u64, ty: ElementType, ulp: u64, nan_bits: bool) -> bool {
    let (g, w) = (classify(got, ty), classify(want, ty));
    if w.nan || g.nan {
        return w.nan && g.nan && (!nan_bits || got == want);
    }
    if got == want {
        return true;
    }
    if w.zero && g.denormal && w.negative == g.negative {
        return true; // XLA CPU flushed a denormal result.
    }
    if w.infinite || g.infinite || w.zero || g.zero {
        // Zeros and infinities are exact (ULP distance would let -0 and +0, or
        // MAX and inf, through).
        return ulp > 0 && !w.infinite && !g.infinite && (g.key - w.key).unsigned_abs() <= ulp;
    }
    (g.key - w.key).unsigned_abs() <= ulp
}

/// Complex results of XLA's formulas carry errors proportional to `|z|` in each
/// part, so finite results are compared by the error relative to `|want|`
/// (`ulp` units of the part type's epsilon); non-finite parts part by part.
fn complex_matches(got: &Literal, want: &Literal, i: usize, ulp: u64) -> bool {
    let (g, w, eps) = match (got.get(i).expect("element"), want.get(i).expect("element")) {
        (Scalar::C64(g), Scalar::C64(w)) => (
            num_complex::Complex64::new(g.re as f64, g.im as f64),
            num_complex::Complex64::new(w.re as f64, w.im as f64),
            f32::EPSILON as f64,
        ),
        (Scalar::C128(g), Scalar::C128(w)) => (g, w, f64::EPSILON),
        _ => return false,
    };
    let finite = |z: num_complex::Complex64| z.re.is_finite() && z.im.is_finite();
    if !(finite(g) && finite(w)) {
        let part_ty = want.element_type().expect("array").complex_component();
        return float_parts(got, i)
            .iter()
            .zip(float_parts(want, i))
            .all(|(&(gb, _), (wb, _))| float_matches(gb, wb, part_ty, ulp, false));
    }
    (g - w).norm() <= ulp as f64 * eps * w.norm().max(f64::MIN_POSITIVE)
}

/// Compares `got` with the case's expected output; returns a description of the
/// first mismatches.
fn mismatches(case: &Case, got: &Literal) -> Vec<String> {
    let want = &case.output;
    if got.shape().without_layout() != want.shape().without_layout() {
        return vec![format!("shape {} instead of {}", got.shape(), want.shape())];
    }
    let ty = want.element_type().expect("array");
    let mut bad = Vec::new();
    for i in 0..want.element_count() {
        let ok = if ty.is_complex() && case.ulp > 0 {
            complex_matches(got, want, i, case.ulp)
        } else if ty.is_floating_or_complex() {
            float_parts(got, i)
                .iter()
                .zip(float_parts(want, i))
                .all(|(&(g, t), (w, _))| float_matches(g, w, t, case.ulp, case.nan_bits))
        } else {
            got.get(i).expect("element") == want.get(i).expect("element")
        };
        if !ok {
            let inputs: Vec<String> = case
                .inputs
                .iter()
                .map(|l| {
                    let j = if l.element_count() == 1 { 0 } else { i };
                    format!("{:?}", l.get(j).expect("element"))
                })
                .collect();
            bad.push(format!(
                "element {i}: inputs {} gave {:?}, XLA gave {:?}",
                inputs.join(", "),
                got.get(i).expect("element"),
                want.get(i).expect("element")
            ));
        }
    }
    bad
}

/// The largest ULP distance between finite float results (real types only), for
/// `SEMANTICS_REPORT=1`.
fn max_ulp_distance(case: &Case, got: &Literal) -> Option<u64> {
    let ty = case.output.element_type()?;
    if !ty.is_float() || got.shape().without_layout() != case.output.shape().without_layout() {
        return None;
    }
    let mut worst = 0;
    for i in 0..case.output.element_count() {
        for (&(g, t), (w, _)) in float_parts(got, i).iter().zip(float_parts(&case.output, i)) {
            let (gc, wc) = (classify(g, t), classify(w, t));
            let skip = gc.nan || wc.nan || gc.infinite || wc.infinite || (wc.zero && gc.denormal);
            if !skip {
                worst = worst.max((gc.key - wc.key).unsigned_abs());
            }
        }
    }
    Some(worst)
}

#[test]
fn every_case_matches_xla_in_the_array_and_scalar_layers() {
    let cases = load_cases();
    assert!(cases.len() > 700, "only {} cases loaded", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        match run_array(case) {
            Err(e) => failures.push(format!("{}: array layer failed: {e}", case.describe())),
            Ok(got) => {
                for m in mismatches(case, &got).into_iter().take(4) {
                    failures.push(format!("{}: array layer: {m}", case.describe()));
                }
                if std::env::var_os("SEMANTICS_REPORT").is_some() && case.ulp > 0 {
                    if let Some(d) = max_ulp_distance(case, &got) {
                        println!("{}: max {d} ULP (budget {})", case.describe(), case.ulp);
                    }
                }
            }
        }
        match run_scalar(case) {
            None => {}
            Some(Err(e)) => failures.push(format!("{}: scalar layer failed: {e}", case.describe())),
            Some(Ok(got)) => {
                for m in mismatches(case, &got).into_iter().take(4) {
                    failures.push(format!("{}: scalar layer: {m}", case.describe()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches with XLA:\n{}",
        failures.len(),
        failures
            .iter()
            .take(80)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn cases_cover_every_elementwise_op() {
    let cases = load_cases();
    for op in UnaryOp::ALL {
        assert!(
            cases.iter().any(|c| c.kind == "unary" && c.op == op.name()),
            "no XLA case for unary {op}"
        );
    }
    for op in BinaryOp::ALL {
        assert!(
            cases
                .iter()
                .any(|c| c.kind == "binary" && c.op == op.name()),
            "no XLA case for binary {op}"
        );
    }
}
