//! Shared test support: a [`CallComputation`] over a parsed module, and the
//! kernel-case file written by `scripts/gen_kernel_cases.py`.

#![allow(dead_code)]

use hlo_evaluator::kernels::scalar::ScalarProgram;
use hlo_evaluator::kernels::{kernel_for, CallComputation};
use hlo_ir::{CompId, HloComputation, HloModule, Op};
use hlo_ir::{Literal, Result, Scalar, Shape};

/// Evaluates a module's scalar subcomputations with the scalar program
/// evaluator (compiled per call: this is the slow fallback path kernels take
/// for computations they could not prepare themselves). Counts calls, so tests
/// can tell whether a kernel took its fast path.
pub struct TestCalls<'m> {
    pub module: &'m HloModule,
    pub calls: usize,
}

impl<'m> TestCalls<'m> {
    pub fn new(module: &'m HloModule) -> Self {
        TestCalls { module, calls: 0 }
    }
}

impl CallComputation for TestCalls<'_> {
    fn computation(&self, id: CompId) -> &HloComputation {
        self.module.computation(id)
    }

    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal> {
        self.calls += 1;
        let program = ScalarProgram::compile(self, id).ok_or_else(|| {
            hlo_ir::Error::unimplemented(format!(
                "test evaluator cannot run %{}",
                self.module.computation(id).name
            ))
        })?;
        let scalars: Vec<Scalar> = args.iter().map(|a| a.get(0)).collect::<Result<_>>()?;
        let mut frame = program.frame();
        let mut out = vec![Scalar::Pred(false); program.output_types().len()];
        program.run(&mut frame, &scalars, &mut out)?;
        let root_is_tuple = self.module.computation(id).root_instr().shape.is_tuple();
        if root_is_tuple {
            Ok(Literal::tuple(
                out.into_iter().map(Literal::from_scalar).collect(),
            ))
        } else {
            Ok(Literal::from_scalar(out[0]))
        }
    }
}

/// Evaluates the entry of `module`, whose instructions must be parameters,
/// constants, tuples and kernel instructions, on `args`. Returns the result
/// and the number of subcomputation calls the kernels made through
/// [`CallComputation::call`].
pub fn run_root(module: &HloModule, args: &[Literal]) -> Result<(Literal, usize)> {
    let entry = module.entry();
    let mut calls = TestCalls::new(module);
    let mut values: Vec<Option<Literal>> = vec![None; entry.instructions.len()];
    for id in entry.ids() {
        let instr = entry.instr(id);
        let operands: Vec<&Literal> = instr
            .operands
            .iter()
            .map(|o| values[o.index()].as_ref().expect("operands come first"))
            .collect();
        let value = match &instr.op {
            Op::Parameter { number } => args
                .get(*number)
                .cloned()
                .ok_or_else(|| hlo_ir::Error::invalid_argument(format!("no argument {number}")))?,
            Op::Constant { literal } => literal.clone(),
            Op::Tuple => Literal::tuple(operands.into_iter().cloned().collect()),
            _ => {
                let kernel = kernel_for(instr.opcode()).ok_or_else(|| {
                    hlo_ir::Error::unimplemented(format!("no kernel for {}", instr.opcode()))
                })?;
                kernel(instr, &operands, &mut calls)?
            }
        };
        values[id.index()] = Some(value);
    }
    let root = values[entry.root.index()].take().expect("root evaluated");
    Ok((root, calls.calls))
}

/// One generated case.
pub struct Case {
    pub name: String,
    /// `None`: bit-exact; otherwise `(rtol, atol)`.
    pub tol: Option<(f64, f64)>,
    pub hlo: String,
    pub args: Vec<Literal>,
    pub outs: Vec<Literal>,
}

fn literal(shape: &str, hex: &str) -> Literal {
    let shape = Shape::parse(shape).unwrap_or_else(|e| panic!("bad shape {shape}: {e}"));
    let bytes: Vec<u8> = if hex == "-" {
        Vec::new()
    } else {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect()
    };
    Literal::from_bytes(shape, &bytes).expect("literal bytes")
}

/// Reads `tests/data/kernel_cases.txt`.
pub fn load_cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kernel_cases.txt");
    let text = std::fs::read_to_string(path).expect("kernel_cases.txt");
    let mut cases: Vec<Case> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("case") => cases.push(Case {
                name: words.next().expect("name").to_string(),
                tol: None,
                hlo: String::new(),
                args: Vec::new(),
                outs: Vec::new(),
            }),
            Some("tol") => {
                let case = cases.last_mut().expect("case");
                let rest: Vec<&str> = words.collect();
                case.tol = match rest[..] {
                    ["exact"] => None,
                    [r, a] => Some((r.parse().expect("rtol"), a.parse().expect("atol"))),
                    _ => panic!("bad tol line {line}"),
                };
            }
            Some("hlo") => {
                let case = cases.last_mut().expect("case");
                for l in lines.by_ref() {
                    if l == "end" {
                        break;
                    }
                    case.hlo.push_str(l);
                    case.hlo.push('\n');
                }
            }
            Some(kind @ ("arg" | "out")) => {
                let case = cases.last_mut().expect("case");
                let shape = words.next().expect("shape");
                let hex = words.next().expect("hex");
                let lit = literal(shape, hex);
                if kind == "arg" {
                    case.args.push(lit);
                } else {
                    case.outs.push(lit);
                }
            }
            _ => {}
        }
    }
    cases
}

/// Compares `got` with `want` (same shape; floats within tolerance or bit-exact,
/// NaN matching NaN); returns a description of the first mismatch.
pub fn compare(
    got: &Literal,
    want: &Literal,
    tol: Option<(f64, f64)>,
) -> std::result::Result<(), String> {
    if got.shape().without_layout() != want.shape().without_layout() {
        return Err(format!(
            "shape {} != expected {}",
            got.shape(),
            want.shape()
        ));
    }
    let g = got.scalars().map_err(|e| e.to_string())?;
    let w = want.scalars().map_err(|e| e.to_string())?;
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        if !scalar_close(*a, *b, tol) {
            return Err(format!("element {i}: got {a}, expected {b}"));
        }
    }
    Ok(())
}

fn parts(s: Scalar) -> Option<(f64, f64)> {
    Some(match s {
        Scalar::F16(v) => (v.to_f64(), 0.0),
        Scalar::BF16(v) => (v.to_f64(), 0.0),
        Scalar::F32(v) => (v as f64, 0.0),
        Scalar::F64(v) => (v, 0.0),
        Scalar::C64(v) => (v.re as f64, v.im as f64),
        Scalar::C128(v) => (v.re, v.im),
        _ => return None,
    })
}

fn scalar_close(a: Scalar, b: Scalar, tol: Option<(f64, f64)>) -> bool {
    let (Some((ar, ai)), Some((br, bi))) = (parts(a), parts(b)) else {
        return a == b;
    };
    let one = |x: f64, y: f64| -> bool {
        if x.is_nan() || y.is_nan() {
            return x.is_nan() && y.is_nan();
        }
        match tol {
            None => x == y && x.is_sign_negative() == y.is_sign_negative(),
            Some((rtol, atol)) => {
                if x.is_infinite() || y.is_infinite() {
                    x == y
                } else {
                    (x - y).abs() <= atol + rtol * y.abs()
                }
            }
        }
    };
    one(ar, br) && one(ai, bi)
}
