//! XLA's narrow element types (`s2` `s4` `u2` `u4`, the f8/f6/f4 floats) on the
//! Interpreter and the Host, against XLA CPU, bit for bit.
//!
//! `tests/narrow/` (made by `scripts/gen_narrow_cases.py`) holds real JAX
//! programs on these types, as lowered (`module.hlo`) and as XLA CPU optimized
//! them (`optimized.hlo`), with XLA CPU's results. A narrow array is stored in
//! its `.npy` file as raw bits (`u8`); the entry computation's parameter types
//! say what the bits are, and every narrow or integer output must have exactly
//! the bytes XLA CPU produced, up to the sign of a NaN (see [`matches`]).

use platform_api::{CompileOptions, HloModule, Literal, Shape};
use service::LocalClient;
use std::path::{Path, PathBuf};

use platform_host as _;
use platform_interpreter as _;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("narrow")
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/narrow exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.join("case.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn read_numbered(dir: &Path, prefix: &str) -> Vec<Literal> {
    (0..)
        .map(|i| dir.join(format!("{prefix}{i}.npy")))
        .take_while(|p| p.is_file())
        .map(|p| Literal::read_npy(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

/// The literal with the element type `want` has, when its bits were saved raw.
fn typed(raw: &Literal, want: &Shape) -> Literal {
    match (raw.shape(), want) {
        (Shape::Array(have), Shape::Array(w)) if have.element_type != w.element_type => raw
            .reinterpret(w.element_type)
            .unwrap_or_else(|e| panic!("reinterpret {} as {want}: {e}", raw.shape())),
        _ => raw.clone(),
    }
}

fn leaves(shape: &Shape) -> Vec<Shape> {
    match shape {
        Shape::Tuple(elements) => elements.iter().flat_map(leaves).collect(),
        other => vec![other.clone()],
    }
}

fn run_platform(platform: &str) -> Vec<String> {
    let client = LocalClient::for_platform(Some(platform)).expect("platform");
    let mut failures = Vec::new();
    let all = cases();
    assert!(
        all.len() >= 25,
        "expected the narrow corpus, found {} cases",
        all.len()
    );
    let forms = all
        .iter()
        .flat_map(|d| ["module.hlo", "optimized.hlo"].map(|f| (d.clone(), f)));
    for (dir, form) in forms {
        let name = format!("{} {form}", dir.file_name().unwrap().to_string_lossy());
        let text = std::fs::read_to_string(dir.join(form)).expect(form);
        let module = HloModule::parse(&text).unwrap_or_else(|e| panic!("{name}: parse: {e}"));
        let entry = module.entry();
        let params: Vec<Shape> = entry
            .parameters()
            .iter()
            .map(|&p| entry.instr(p).shape.clone())
            .collect();
        let result_leaves = leaves(&entry.root_instr().shape);
        let args: Vec<Literal> = read_numbered(&dir, "arg")
            .iter()
            .zip(&params)
            .map(|(a, s)| typed(a, s))
            .collect();
        let want: Vec<Literal> = read_numbered(&dir, "out")
            .iter()
            .zip(&result_leaves)
            .map(|(a, s)| typed(a, s))
            .collect();
        let got = client
            .compile(&module, &CompileOptions::default())
            .and_then(|c| client.execute(&c.executable, &args));
        let got = match got {
            Ok(r) => r.flatten_leaves(),
            Err(e) => {
                failures.push(format!("{platform} {name}: {e}"));
                continue;
            }
        };
        if got.len() != want.len() {
            failures.push(format!(
                "{platform} {name}: {} outputs, want {}",
                got.len(),
                want.len()
            ));
            continue;
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            if !matches(g, w) {
                failures.push(format!(
                    "{platform} {name} output {i}:\n   got {g}\n  want {w}"
                ));
            }
        }
    }
    failures
}

/// Narrow and integer outputs: the same bytes, except that a NaN may differ
/// in sign (XLA CPU's `0/0` in f8 is a positive NaN, ours the x86 default
/// negative one). Wider float outputs (`f32` after a dequantizing multiply or
/// an `f32`-accumulated dot) within 1e-6 relative: XLA CPU's fusion and FMA
/// decisions on `f32` are the conformance corpus' business, not this test's.
fn matches(got: &Literal, want: &Literal) -> bool {
    if got.shape().without_layout() != want.shape().without_layout() {
        return false;
    }
    if got.bytes().ok() == want.bytes().ok() {
        return true;
    }
    let (Ok(g), Ok(w)) = (got.scalars(), want.scalars()) else {
        return false;
    };
    let ty = want.shape().element_type();
    let float = ty.is_some_and(|t| t.is_float());
    let wide = ty.is_some_and(|t| !t.is_narrow());
    float
        && g.iter().zip(&w).all(|(g, w)| {
            let (g, w) = (g.to_f64_lossy(), w.to_f64_lossy());
            g.to_bits() == w.to_bits()
                || (g.is_nan() && w.is_nan())
                || (wide && (g - w).abs() <= 1e-6 * w.abs())
        })
}

#[test]
fn narrow_corpus_matches_xla_cpu_on_interpreter() {
    let failures = run_platform("Interpreter");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn narrow_corpus_matches_xla_cpu_on_host() {
    let failures = run_platform("Host");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `stochastic-convert` f32 → s8 and → s4 (XLA's decomposition: round the
/// magnitude up when the random bits are below the fraction times 2^32;
/// saturate at the bounds; NaN → 0), on both platforms.
#[test]
fn stochastic_convert_rounds_by_the_random_bits() {
    let text = r#"
HloModule sc
ENTRY e {
  x = f32[8] parameter(0)
  r = u32[8] parameter(1)
  a = s8[8] stochastic-convert(x, r)
  b = s4[8] stochastic-convert(x, r)
  ROOT t = (s8[8], s4[8]) tuple(a, b)
}
"#;
    let x = [2.25f32, 2.25, -2.25, 2.75, 1000.0, -1000.0, f32::NAN, 0.5];
    let r = [
        0x3fff_ffffu32,
        0x4000_0000,
        0,
        0xbfff_ffff,
        0,
        0,
        0,
        0xffff_ffff,
    ];
    let want_s8: [i8; 8] = [3, 2, -3, 3, 127, -128, 0, 0];
    let want_s4: [i8; 8] = [3, 2, -3, 3, 7, -8, 0, 0];
    let module = HloModule::parse(text).expect("parse");
    let args = [
        Literal::from_bytes(
            Shape::array(platform_api::ElementType::F32, vec![8]),
            &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap(),
        Literal::from_bytes(
            Shape::array(platform_api::ElementType::U32, vec![8]),
            &r.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        )
        .unwrap(),
    ];
    for platform in ["Interpreter", "Host"] {
        let client = LocalClient::for_platform(Some(platform)).expect("platform");
        let out = client
            .compile(&module, &CompileOptions::default())
            .and_then(|c| client.execute(&c.executable, &args))
            .unwrap_or_else(|e| panic!("{platform}: {e}"))
            .flatten_leaves();
        let s8: Vec<i8> = out[0].bytes().unwrap().iter().map(|&b| b as i8).collect();
        let s4: Vec<i8> = (0..8)
            .map(|i| out[1].get(i).unwrap().to_i64().unwrap() as i8)
            .collect();
        assert_eq!(s8, want_s8, "{platform} s8");
        assert_eq!(s4, want_s4, "{platform} s4");
    }
}

/// The CUDA code generator has no narrow types: compiling one is a clear
/// `Unimplemented` naming the type, not a failure deep in code generation.
#[test]
fn cuda_refuses_narrow_types_clearly() {
    let text = "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  ROOT b = f8e4m3fn[4] add(a, a)\n}\n";
    let module = HloModule::parse(text).expect("parse");
    let err = platform_cuda::compiler::compile_program(&module, &CompileOptions::default())
        .expect_err("CUDA has no f8e4m3fn");
    assert_eq!(err.code(), platform_api::Code::Unimplemented, "{err}");
    assert!(err.message().contains("f8e4m3fn"), "{err}");
}
