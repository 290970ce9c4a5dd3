//! One op, one answer: every elementwise op gives the same bits on the Host
//! whether it runs alone (a standalone elementwise thunk), grouped by fusion
//! (a block program), or inside a scalar program (a `map` body, a reducer),
//! on every element type it is defined for.
//!
//! Each case is a module whose entry is one `kLoop` fusion of the op alone,
//! run as a block program (the default strategy) and as a nested sequence of
//! standalone thunks (`Strategy::Unfused`), and a module that `map`s the same
//! op over the same inputs. Inputs mix every special value of the type (±0,
//! ±inf, quiet, signalling and negative NaNs, subnormals, the extremes; for
//! two operands every pair of them) with random bit patterns and values of
//! moderate magnitude, 2^17 elements, so the transcendental functions are
//! exercised where their implementations may differ. Results must agree bit
//! for bit, NaN payloads included. An op is defined for a type when either
//! path compiles it; one compiling and the other not fails the test too.

use platform_api::hlo::{BinaryOp, ComparisonDirection, Op, UnaryOp};
use platform_api::{CompileOptions, ElementType, HloModule, Literal};
use platform_host::compiler::optimize;
use platform_host::fusion::{self, Strategy};
use platform_host::runner::HostRunner;

const N: usize = 1 << 17;

const TYPES: [ElementType; 15] = ElementType::ALL;

use crate::rng::Rng;

/// A float format: total, exponent and mantissa bits.
#[derive(Clone, Copy)]
struct Format {
    bits: u32,
    mantissa: u32,
}

impl Format {
    fn of(ty: ElementType) -> Option<Format> {
        let (bits, mantissa) = match ty {
            ElementType::F16 => (16, 10),
            ElementType::BF16 => (16, 7),
            ElementType::F32 | ElementType::C64 => (32, 23),
            ElementType::F64 | ElementType::C128 => (64, 52),
            _ => return None,
        };
        Some(Format { bits, mantissa })
    }

    fn encode(self, x: f64) -> u64 {
        match (self.bits, self.mantissa) {
            (16, 10) => half::f16::from_f64(x).to_bits() as u64,
            (16, _) => half::bf16::from_f64(x).to_bits() as u64,
            (32, _) => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        }
    }

    fn specials(self) -> Vec<u64> {
        let sign = 1u64 << (self.bits - 1);
        let exp_ones = (sign - 1) & !((1u64 << self.mantissa) - 1);
        let quiet = 1u64 << (self.mantissa - 1);
        let mant_ones = (1u64 << self.mantissa) - 1;
        let mut v = vec![
            0,
            exp_ones,                                      // inf
            exp_ones | quiet,                              // quiet NaN
            exp_ones | quiet | 5,                          // NaN with a payload
            exp_ones | 1,                                  // signalling NaN
            1,                                             // smallest subnormal
            mant_ones,                                     // largest subnormal
            1 << self.mantissa,                            // smallest normal
            (exp_ones - (1 << self.mantissa)) | mant_ones, // largest finite
        ];
        for x in [
            1.0,
            0.5,
            2.0,
            3.0,
            2.5,
            0.1,
            1e-3,
            1e-8,
            10.0,
            100.0,
            88.7,
            87.5,
            103.9,
            709.0,
            745.2,
            1e10,
            1e30,
            std::f64::consts::FRAC_PI_4,
            std::f64::consts::PI,
            std::f64::consts::FRAC_PI_2,
        ] {
            v.push(self.encode(x));
        }
        let negative: Vec<u64> = v.iter().map(|b| b | sign).collect();
        v.extend(negative);
        v
    }

    /// Element `i` of operand `operand`: the pairs of specials first, then
    /// random bit patterns, moderate magnitudes and small values in turn.
    fn value(self, i: usize, operand: usize, specials: &[u64], rng: &mut Rng) -> u64 {
        let s = specials.len();
        if i < s * s {
            return specials[match operand {
                0 => i / s,
                1 => i % s,
                _ => (i * 7 + 3) % s,
            }];
        }
        let sign = if rng.next() & 1 == 1 { -1.0 } else { 1.0 };
        match i % 3 {
            0 => rng.next() & (u64::MAX >> (64 - self.bits)),
            1 => {
                let e = (rng.next() % 35) as i32 - 24;
                self.encode(sign * (1.0 + rng.unit()) * 2f64.powi(e))
            }
            _ => self.encode(sign * 20.0 * rng.unit()),
        }
    }
}

/// `N` little-endian elements of `ty` for operand `operand`.
fn input(ty: ElementType, operand: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let width = ty.byte_size();
    let mut bytes = Vec::with_capacity(N * width);
    if ty == ElementType::Pred {
        bytes.extend((0..N).map(|_| (rng.next() & 1) as u8));
        return bytes;
    }
    if let Some(f) = Format::of(ty) {
        let specials = f.specials();
        let parts = if ty.is_complex() { 2 } else { 1 };
        let part = width / parts;
        for i in 0..N {
            for p in 0..parts {
                // The real part walks the pairs of specials; the imaginary
                // part another order of them.
                let v = f.value(i, operand + 2 * p, &specials, &mut rng);
                bytes.extend_from_slice(&v.to_le_bytes()[..part]);
            }
        }
        return bytes;
    }
    let bits = 8 * width as u32;
    let min = 1u64 << (bits - 1);
    let specials: Vec<u64> = [0, 1, u64::MAX, 2, 3, min, min - 1, 7, 8]
        .into_iter()
        .chain([bits as u64 - 1, bits as u64, bits as u64 + 1, 63, 64])
        .collect();
    let s = specials.len();
    for i in 0..N {
        let v = if i < s * s {
            specials[if operand == 0 { i / s } else { i % s }]
        } else if i % 2 == 0 {
            rng.next()
        } else {
            ((rng.next() % (2 * bits as u64 + 7)) as i64 - bits as i64 - 3) as u64
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    bytes
}

/// One op to check: its operand types, result type, and how it is written.
struct Case {
    name: String,
    operands: Vec<ElementType>,
    /// Operands that are rank-0 (clamp bounds).
    scalar: Vec<bool>,
    result: ElementType,
    /// The body's instructions over operands `x0..`, the last one the root
    /// `r` (`{d}` stands for the array dimensions).
    body: String,
}

impl Case {
    fn simple(name: String, operands: Vec<ElementType>, result: ElementType, op: &str) -> Case {
        let args: Vec<String> = (0..operands.len()).map(|k| format!("x{k}")).collect();
        Case {
            scalar: vec![false; operands.len()],
            body: format!(
                "r = {result}{{d}} {op}",
                op = op.replace("$", &args.join(", "))
            ),
            name,
            operands,
            result,
        }
    }

    fn computation(&self, name: &str, prefix: &str, dims: &str) -> String {
        let mut s = format!("{name} {{\n");
        for (k, ty) in self.operands.iter().enumerate() {
            let d = if self.scalar[k] { "[]" } else { dims };
            s += &format!("  {prefix}x{k} = {ty}{d} parameter({k})\n");
        }
        let body = self.body.replace("{d}", dims);
        let lines: Vec<&str> = body.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            let mut line = line.to_string();
            for j in (0..self.operands.len()).rev() {
                line = line.replace(&format!("x{j}"), &format!("{prefix}x{j}"));
            }
            for name in ["r", "m"] {
                line = line
                    .replace(&format!("{name} = "), &format!("{prefix}{name} = "))
                    .replace(&format!("({name},"), &format!("({prefix}{name},"))
                    .replace(&format!(", {name})"), &format!(", {prefix}{name})"));
            }
            let root = if k + 1 == lines.len() { "ROOT " } else { "" };
            s += &format!("  {root}{line}\n");
        }
        s + "}\n"
    }

    fn entry(&self, call: &str) -> String {
        let mut s = "ENTRY main {\n".to_string();
        let mut args = Vec::new();
        for (k, ty) in self.operands.iter().enumerate() {
            let d = if self.scalar[k] {
                "[]".into()
            } else {
                format!("[{N}]")
            };
            s += &format!("  a{k} = {ty}{d} parameter({k})\n");
            args.push(format!("a{k}"));
        }
        s + &format!(
            "  ROOT e = {}[{N}] {}\n}}\n",
            self.result,
            call.replace("$", &args.join(", "))
        )
    }

    fn fused_module(&self) -> String {
        format!(
            "HloModule m\n{}{}",
            self.computation("fc", "f", &format!("[{N}]")),
            self.entry("fusion($), kind=kLoop, calls=fc")
        )
    }

    fn map_module(&self) -> String {
        format!(
            "HloModule m\n{}{}",
            self.computation("sc", "s", "[]"),
            self.entry("map($), dimensions={0}, to_apply=sc")
        )
    }

    fn inputs(&self) -> Vec<Literal> {
        let text = self.fused_module();
        let module = HloModule::parse(&text).unwrap();
        let seed = self
            .name
            .bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31) ^ b as u64);
        module
            .computation(module.entry)
            .program_shape()
            .parameters
            .iter()
            .enumerate()
            .map(|(k, shape)| {
                let ty = self.operands[k];
                let mut bytes = input(ty, k, seed.wrapping_add(k as u64));
                if self.scalar[k] {
                    bytes.truncate(ty.byte_size());
                }
                Literal::from_bytes(shape.clone(), &bytes).unwrap()
            })
            .collect()
    }
}

/// Whether a case's op is defined for its types.
enum Outcome {
    Undefined,
    Checked,
}

fn first_difference(a: &[u8], b: &[u8], width: usize) -> usize {
    (0..a.len() / width)
        .find(|&i| a[i * width..(i + 1) * width] != b[i * width..(i + 1) * width])
        .unwrap_or(0)
}

/// Runs `case` fused, alone and mapped, and compares the bits: a
/// description of the first difference when they differ.
fn check(case: &Case) -> Result<Outcome, String> {
    let fused_text = case.fused_module();
    let fused = HostRunner::compile(&fused_text);
    let alone = HostRunner::compile_with(&fused_text, &Strategy::Unfused.options());
    let (fused, alone) = match (fused, alone) {
        (Err(_), Err(_)) => return Ok(Outcome::Undefined),
        (Ok(f), Ok(a)) => (f, a),
        (f, a) => {
            return Err(format!(
                "{}: compiles fused: {:?}, alone: {:?}",
                case.name,
                f.err(),
                a.err()
            ))
        }
    };
    let optimized = optimize(
        HloModule::parse(&fused_text).unwrap(),
        &CompileOptions::default(),
    )
    .unwrap();
    let root = optimized.computation(optimized.entry).root_instr();
    assert!(
        matches!(root.op, Op::Fusion { .. }) && fusion::block_support(&optimized, root).is_ok(),
        "{}: the fusion is not a block program",
        case.name
    );
    let args = case.inputs();
    let width = case.result.byte_size();
    let want = alone
        .run(&args)
        .unwrap_or_else(|e| panic!("{}: alone: {e}", case.name));
    let want = want.bytes().unwrap();
    let got = fused
        .run(&args)
        .unwrap_or_else(|e| panic!("{}: fused: {e}", case.name));
    let got = got.bytes().unwrap();
    if got != want {
        let i = first_difference(got, want, width);
        let differ = (0..want.len() / width)
            .filter(|&i| got[i * width..(i + 1) * width] != want[i * width..(i + 1) * width])
            .count();
        return Err(format!(
            "{}: fused and alone differ in {differ} of {N} elements, first at {i}: \
             fused {:02x?}, alone {:02x?}, inputs {:02x?}",
            case.name,
            &got[i * width..(i + 1) * width],
            &want[i * width..(i + 1) * width],
            args.iter()
                .map(|a| {
                    let b = a.bytes().unwrap();
                    let w = b
                        .len()
                        .min(a.shape().as_array().unwrap().element_type.byte_size());
                    let j = if b.len() > w { i } else { 0 };
                    b[j * w..(j + 1) * w].to_vec()
                })
                .collect::<Vec<_>>()
        ));
    }
    if case.scalar.contains(&true) {
        // `map` takes operands of one shape only.
        return Ok(Outcome::Checked);
    }
    let map_text = case.map_module();
    let mapped = HostRunner::compile(&map_text)
        .unwrap_or_else(|e| panic!("{}: map: {e}", case.name))
        .run(&args)
        .unwrap_or_else(|e| panic!("{}: map run: {e}", case.name));
    let mapped = mapped.bytes().unwrap();
    if mapped != want {
        let i = first_difference(mapped, want, width);
        return Err(format!(
            "{}: map and alone differ, first at {i}: map {:02x?}, alone {:02x?}",
            case.name,
            &mapped[i * width..(i + 1) * width],
            &want[i * width..(i + 1) * width]
        ));
    }
    Ok(Outcome::Checked)
}

/// Checks every case and that at least `min_checked` of them were defined.
fn check_all(cases: impl IntoIterator<Item = Case>, min_checked: usize) {
    let (mut checked, mut failures) = (Vec::new(), Vec::new());
    for case in cases {
        match check(&case) {
            Ok(Outcome::Checked) => checked.push(case.name),
            Ok(Outcome::Undefined) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        checked.len() >= min_checked,
        "only {} cases defined: {checked:?}",
        checked.len()
    );
}

fn result_or_same(r: platform_api::Result<ElementType>, ty: ElementType) -> ElementType {
    r.unwrap_or(ty)
}

#[test]
fn unary_ops() {
    let cases = UnaryOp::ALL.iter().flat_map(|&op| {
        TYPES.iter().map(move |&ty| {
            let result = result_or_same(platform_api::semantics::unary_result_type(op, ty), ty);
            Case::simple(
                format!("{} {ty}", op.name()),
                vec![ty],
                result,
                &format!("{}($)", op.name()),
            )
        })
    });
    check_all(cases, 150);
}

#[test]
fn binary_ops() {
    let cases = BinaryOp::ALL.iter().flat_map(|&op| {
        TYPES.iter().map(move |&ty| {
            let result = result_or_same(platform_api::semantics::binary_result_type(op, ty), ty);
            Case::simple(
                format!("{} {ty}", op.name()),
                vec![ty; 2],
                result,
                &format!("{}($)", op.name()),
            )
        })
    });
    check_all(cases, 120);
}

#[test]
fn compares() {
    let mut cases = Vec::new();
    for dir in ComparisonDirection::ALL {
        for ty in TYPES {
            for order in ["", ", type=TOTALORDER"] {
                if !order.is_empty() && !ty.is_float() && !ty.is_complex() {
                    continue;
                }
                cases.push(Case::simple(
                    format!("compare {} {ty}{order}", dir.name()),
                    vec![ty; 2],
                    ElementType::Pred,
                    &format!("compare($), direction={}{order}", dir.name()),
                ));
            }
        }
    }
    check_all(cases, 6 * 13 + 6 * 4);
}

#[test]
fn selects_and_clamps() {
    let mut cases = Vec::new();
    for ty in TYPES {
        let mut ops = vec![ElementType::Pred, ty, ty];
        cases.push(Case::simple(
            format!("select {ty}"),
            ops.clone(),
            ty,
            "select($)",
        ));
        ops[0] = ty;
        cases.push(Case::simple(format!("clamp {ty}"), ops, ty, "clamp($)"));
        let mut c = Case::simple(
            format!("clamp scalar bounds {ty}"),
            vec![ty; 3],
            ty,
            "clamp($)",
        );
        c.scalar = vec![true, false, true];
        cases.push(c);
    }
    check_all(cases, 15 + 2 * 13);
}

#[test]
fn converts() {
    let mut cases = Vec::new();
    for from in TYPES {
        for to in TYPES {
            cases.push(Case::simple(
                format!("convert {from} to {to}"),
                vec![from],
                to,
                "convert($)",
            ));
        }
    }
    check_all(cases, 13 * 15);
}

#[test]
fn reduce_precisions() {
    let mut cases = Vec::new();
    for ty in [
        ElementType::F16,
        ElementType::BF16,
        ElementType::F32,
        ElementType::F64,
    ] {
        for (e, m) in [
            (5, 10),
            (8, 7),
            (8, 23),
            (11, 52),
            (4, 3),
            (5, 2),
            (1, 0),
            (2, 1),
        ] {
            cases.push(Case::simple(
                format!("reduce-precision e{e}m{m} {ty}"),
                vec![ty],
                ty,
                &format!("reduce-precision($), exponent_bits={e}, mantissa_bits={m}"),
            ));
        }
    }
    check_all(cases, 32);
}

#[test]
fn contracted_multiply_adds() {
    let mut cases = Vec::new();
    for ty in TYPES {
        for (name, root) in [
            ("add", "add(m, x2)"),
            ("subtract from product", "subtract(m, x2)"),
            ("subtract product", "subtract(x2, m)"),
        ] {
            let mut c = Case::simple(format!("multiply-{name} {ty}"), vec![ty; 3], ty, "");
            c.body = format!("m = {ty}{{d}} multiply(x0, x1)\nr = {ty}{{d}} {root}");
            cases.push(c);
        }
    }
    check_all(cases, 3 * 14);
}

/// A reduce over a dimension of one element computes `reducer(init, x)`:
/// the reducer's op, through the typed combiners or the scalar program,
/// gives what the op gives alone.
#[test]
fn reducers() {
    let (mut checked, mut failures) = (0, Vec::new());
    for &op in BinaryOp::ALL {
        for ty in TYPES {
            let Ok(result) = platform_api::semantics::binary_result_type(op, ty) else {
                continue;
            };
            if result != ty {
                continue;
            }
            let name = op.name();
            let alone = format!(
                "HloModule m\nENTRY main {{\n  x = {ty}[{N},1] parameter(0)\n  \
                 i = {ty}[] parameter(1)\n  b = {ty}[{N}] broadcast(i), dimensions={{}}\n  \
                 r = {ty}[{N}] reshape(x)\n  ROOT o = {ty}[{N}] {name}(b, r)\n}}\n"
            );
            let reduce = format!(
                "HloModule m\nred {{\n  a = {ty}[] parameter(0)\n  c = {ty}[] parameter(1)\n  \
                 ROOT s = {ty}[] {name}(a, c)\n}}\nENTRY main {{\n  x = {ty}[{N},1] parameter(0)\n  \
                 i = {ty}[] parameter(1)\n  ROOT o = {ty}[{N}] reduce(x, i), dimensions={{1}}, to_apply=red\n}}\n"
            );
            let x = input(ty, 0, 11);
            // A random element (the first ones are all zero).
            let w = ty.byte_size();
            let init = input(ty, 1, 12 + checked)[(N - 1) * w..].to_vec();
            let module = HloModule::parse(&reduce).unwrap();
            let shapes = module.computation(module.entry).program_shape().parameters;
            let args = [
                Literal::from_bytes(shapes[0].clone(), &x).unwrap(),
                Literal::from_bytes(shapes[1].clone(), &init).unwrap(),
            ];
            let want = HostRunner::compile_with(&alone, &Strategy::Unfused.options())
                .and_then(|r| r.run(&args))
                .unwrap_or_else(|e| panic!("{name} {ty} alone: {e}"));
            let got = HostRunner::compile(&reduce)
                .and_then(|r| r.run(&args))
                .unwrap_or_else(|e| panic!("{name} {ty} reduce: {e}"));
            let (g, w) = (got.bytes().unwrap(), want.bytes().unwrap());
            if g != w {
                let width = ty.byte_size();
                let i = first_difference(g, w, width);
                failures.push(format!(
                    "{name} {ty}: reduce and alone differ, first at {i}: {:02x?} vs {:02x?}",
                    &g[i * width..(i + 1) * width],
                    &w[i * width..(i + 1) * width]
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 60, "only {checked} reducers checked");
}

/// Compile-time folding computes with the same table: an op applied to a
/// constant gives, folded, the bits it gives at run time on a parameter.
#[test]
fn folding_matches_run_time() {
    // The folder takes results of up to 1024 elements.
    const FOLDED: usize = 1024;
    let (mut checked, mut failures) = (0, Vec::new());
    let cases = UnaryOp::ALL
        .iter()
        .map(|&u| (Op::Unary(u), 1))
        .chain(BinaryOp::ALL.iter().map(|&b| (Op::Binary(b), 2)));
    for (op, arity) in cases {
        for ty in TYPES {
            let result = match &op {
                Op::Unary(u) => platform_api::semantics::unary_result_type(*u, ty),
                Op::Binary(b) => platform_api::semantics::binary_result_type(*b, ty),
                _ => unreachable!("only unary and binary cases"),
            };
            let Ok(result) = result else { continue };
            let name = op.opcode().name();
            let params: String = (0..arity)
                .map(|k| format!("  x{k} = {ty}[{FOLDED}] parameter({k})\n"))
                .collect();
            let operands: Vec<String> = (0..arity).map(|k| format!("x{k}")).collect();
            let text = format!(
                "HloModule m\nENTRY main {{\n{params}  ROOT r = {result}[{FOLDED}] {name}({})\n}}\n",
                operands.join(", ")
            );
            let module = HloModule::parse(&text).unwrap();
            if platform_api::hlo::verifier::verify_module(&module).is_err() {
                // Defined by the semantics but not by HLO's shape rules
                // (`abs` of an unsigned integer).
                continue;
            }
            let shapes = module.computation(module.entry).program_shape().parameters;
            let width = ty.byte_size();
            let args: Vec<Literal> = (0..arity)
                .map(|k| {
                    let bytes = &input(ty, k, 40 + k as u64)[..FOLDED * width];
                    Literal::from_bytes(shapes[k].clone(), bytes).unwrap()
                })
                .collect();
            // The same program with the arguments as constants.
            let mut constant = module.clone();
            let entry = constant.entry.index();
            for (k, arg) in args.iter().enumerate() {
                constant.computations[entry].instructions[k].op = Op::Constant {
                    literal: arg.clone(),
                };
            }
            let optimized = optimize(constant.clone(), &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{name} {ty}: {e}"));
            let root = optimized.computation(optimized.entry).root_instr();
            if !matches!(root.op, Op::Constant { .. }) {
                failures.push(format!("{name} {ty}: not folded ({})", root.opcode()));
                continue;
            }
            let folded = HostRunner::compile_module(constant)
                .and_then(|r| r.run(&[]))
                .unwrap_or_else(|e| panic!("{name} {ty} folded: {e}"));
            let run = HostRunner::compile_module(module)
                .and_then(|r| r.run(&args))
                .unwrap_or_else(|e| panic!("{name} {ty} at run time: {e}"));
            let (g, w) = (folded.bytes().unwrap(), run.bytes().unwrap());
            if g != w {
                let width = result.byte_size();
                let i = first_difference(g, w, width);
                failures.push(format!(
                    "{name} {ty}: folded and run differ, first at {i}: {:02x?} vs {:02x?}",
                    &g[i * width..(i + 1) * width],
                    &w[i * width..(i + 1) * width]
                ));
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 100, "only {checked} ops checked");
}
