//! Helpers shared by the `passes_*` tests: parsing, running one pass with
//! verification and a numerics check, counting opcodes, and evaluating modules
//! on the reference evaluator.
//!
//! The numerics check: whenever the module before a pass can be evaluated by the
//! interpreter, the module after it must give bit-identical results on the same
//! inputs. Inputs are random with a large share of special values (signed zeros,
//! infinities, quiet and signaling NaNs with payloads, denormals, integer
//! extremes), where inexact rewrites show.
//!
//! Evaluation uses HLO's own semantics, every op rounded once
//! (`fp_contract=off`): that is what the passes preserve. The interpreter's
//! default also fuses a single-use multiply into its add as XLA CPU's code
//! generator does, a choice that depends on use counts, which CSE and inlining
//! change (see the `passes` module docs).

#![allow(dead_code)]

use hlo_evaluator::{PreparedModule, RunContext};
use hlo_ir::verifier::verify_module;
use hlo_ir::{ElementType, Literal, Result, Shape};
use hlo_ir::{HloModule, Opcode};
use hlo_passes::HloPass;

/// Parses and verifies HLO text (a test's input must be valid).
pub fn parse(text: &str) -> HloModule {
    let module = HloModule::parse(text).unwrap_or_else(|e| panic!("parse: {e}\n{text}"));
    verify_module(&module).unwrap_or_else(|e| panic!("input does not verify: {e}\n{text}"));
    module
}

/// Runs `pass` on a copy of `module`, checks the result verifies, and returns it
/// with the pass's `changed` answer.
pub fn run(pass: &mut dyn HloPass, module: &HloModule) -> (HloModule, bool) {
    let mut out = module.clone();
    let changed = pass
        .run(&mut out)
        .unwrap_or_else(|e| panic!("pass {} failed: {e}\n{module}", pass.name()));
    verify_module(&out).unwrap_or_else(|e| {
        panic!(
            "after {}: {e}\nbefore:\n{module}\nafter:\n{out}",
            pass.name()
        )
    });
    assert_eq!(
        changed,
        &out != module,
        "pass {} said changed={changed}\nbefore:\n{module}\nafter:\n{out}",
        pass.name()
    );
    if changed {
        assert_same_numerics(module, &out, pass.name());
    }
    (out, changed)
}

/// [`run`] for passes configured to assume no signaling NaNs: the numerics
/// check feeds only quiet NaNs.
pub fn run_assuming_quiet_nans(pass: &mut dyn HloPass, module: &HloModule) -> (HloModule, bool) {
    let mut out = module.clone();
    let changed = pass
        .run(&mut out)
        .unwrap_or_else(|e| panic!("pass {} failed: {e}\n{module}", pass.name()));
    verify_module(&out).unwrap_or_else(|e| {
        panic!(
            "after {}: {e}\nbefore:\n{module}\nafter:\n{out}",
            pass.name()
        )
    });
    if changed {
        check_numerics(module, &out, pass.name(), true);
    }
    (out, changed)
}

/// Runs `pass` on `HloModule m` with the `ENTRY` body `body`, for the passes
/// that change numbers on purpose (no numerics check): checks the result
/// verifies and that `changed` is true exactly when the module changed.
/// Returns (module, module after the pass, changed).
pub fn run_on_entry(pass: &mut dyn HloPass, body: &str) -> (HloModule, HloModule, bool) {
    let m = parse(&format!("HloModule m\n\nENTRY e {{\n{body}\n}}\n"));
    let mut out = m.clone();
    let changed = pass
        .run(&mut out)
        .unwrap_or_else(|e| panic!("pass {} failed: {e}\n{m}", pass.name()));
    verify_module(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(changed, out != m, "changed={changed}\n{out}");
    (m, out, changed)
}

/// Evaluates the entry computation on the interpreter with HLO's semantics
/// (every op rounded on its own).
pub fn evaluate(module: &HloModule, args: &[Literal]) -> Result<Literal> {
    evaluate_with(module, args, false)
}

/// Evaluates the entry computation on the interpreter, with or without XLA
/// CPU's floating-point contraction.
pub fn evaluate_with(module: &HloModule, args: &[Literal], contract: bool) -> Result<Literal> {
    let prepared = PreparedModule::new(module.clone(), contract)?;
    let ctx = RunContext {
        while_step_limit: Some(100_000),
        ..RunContext::default()
    };
    prepared.evaluate(args.to_vec(), &ctx)
}

/// `Ok` if two results have the same shapes (layouts aside) and the same bytes.
pub fn same_bits(a: &Literal, b: &Literal) -> std::result::Result<(), String> {
    if !a.shape().compatible(b.shape()) {
        return Err(format!("shapes differ: {} vs {}", a.shape(), b.shape()));
    }
    let (la, lb) = (a.clone().flatten_leaves(), b.clone().flatten_leaves());
    for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
        let (bx, by) = (
            x.bytes().map_err(|e| e.to_string())?,
            y.bytes().map_err(|e| e.to_string())?,
        );
        if bx != by {
            let size = x.element_type().map_or(1, |t| t.byte_size());
            let k = bx
                .chunks(size)
                .zip(by.chunks(size))
                .position(|(p, q)| p != q)
                .unwrap_or(0);
            return Err(format!(
                "leaf {i} differs first at element {k}: {:?} vs {:?}",
                x.get(k).ok(),
                y.get(k).ok()
            ));
        }
    }
    Ok(())
}

/// If `before` evaluates on random inputs, `after` must give the same bits.
pub fn assert_same_numerics(before: &HloModule, after: &HloModule, what: &str) {
    check_numerics(before, after, what, false)
}

fn check_numerics(before: &HloModule, after: &HloModule, what: &str, quiet_nans_only: bool) {
    let params = before.entry_program_shape().parameters;
    for seed in 1..=3u64 {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut args: Vec<Literal> = params.iter().map(|p| random_literal(p, &mut rng)).collect();
        if quiet_nans_only {
            args.iter_mut().for_each(quiet_signaling_nans);
        }
        let Ok(want) = evaluate(before, &args) else {
            // Not evaluable (an unregistered custom call, say): structure only.
            return;
        };
        let got = evaluate(after, &args).unwrap_or_else(|e| {
            panic!("after {what} the module no longer evaluates: {e}\nbefore:\n{before}\nafter:\n{after}")
        });
        if let Err(why) = same_bits(&want, &got) {
            panic!("{what} changed the results ({why}), inputs {args:?}\nbefore:\n{before}\nafter:\n{after}");
        }
    }
}

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bit patterns of special values of a float type with `bits` bits: zeros,
/// ones, infinities, quiet and signaling NaNs with payloads, the smallest
/// denormal, the largest finite value.
fn float_specials(bits: usize) -> Vec<u64> {
    let (exp_bits, man_bits) = match bits {
        16 => (5, 10),
        32 => (8, 23),
        64 => (11, 52),
        _ => (8, 7), // bf16 is handled by the caller
    };
    let sign = 1u64 << (bits - 1);
    let exp_all = ((1u64 << exp_bits) - 1) << man_bits;
    let quiet = 1u64 << (man_bits - 1);
    let one = ((1u64 << (exp_bits - 1)) - 1) << man_bits;
    vec![
        0,
        sign,
        one,
        one | sign,
        exp_all,
        exp_all | sign,
        exp_all | quiet,
        exp_all | quiet | 1,
        exp_all | quiet | sign | 3,
        exp_all | 1,
        exp_all | 5 | sign,
        1,
        1 | sign,
        exp_all - 1,
    ]
}

fn random_element(ty: ElementType, rng: &mut Rng, out: &mut [u8]) {
    let r = rng.next();
    let width = ty.byte_size();
    let bits: u64 = match ty {
        ElementType::Pred => r & 1,
        t if t.is_integer() => match rng.below(4) {
            0 => (rng.below(7) as i64 - 3) as u64,
            1 => [
                0u64,
                u64::MAX,
                1u64 << (t.bit_width() - 1),
                (1u64 << (t.bit_width() - 1)) - 1,
            ][rng.below(4)],
            _ => r,
        },
        ElementType::F16 | ElementType::F32 | ElementType::F64 | ElementType::BF16 => {
            let n = ty.bit_width();
            let (specials, nice) = if ty == ElementType::BF16 {
                (
                    float_specials(32)
                        .iter()
                        .map(|b| b >> 16)
                        .collect::<Vec<_>>(),
                    f32_to_bf16(nice(rng) as f32),
                )
            } else {
                let v = nice(rng);
                let nice_bits = match ty {
                    ElementType::F16 => half::f16::from_f64(v).to_bits() as u64,
                    ElementType::F32 => (v as f32).to_bits() as u64,
                    _ => v.to_bits(),
                };
                (float_specials(n), nice_bits)
            };
            match rng.below(4) {
                0 => specials[rng.below(specials.len())],
                1 => r,
                _ => nice,
            }
        }
        _ => r, // complex: random bits per 8-byte half
    };
    let bytes = bits.to_le_bytes();
    for (k, o) in out.iter_mut().enumerate() {
        *o = if width > 8 && k >= 8 {
            (rng.next() >> 8) as u8
        } else {
            bytes[k % 8]
        };
    }
}

/// Sets the quiet bit of every signaling NaN of a float literal.
fn quiet_signaling_nans(lit: &mut Literal) {
    let Some(ty) = lit.element_type() else { return };
    let (bits, man) = match ty {
        ElementType::F16 => (16, 10),
        ElementType::BF16 => (16, 7),
        ElementType::F32 => (32, 23),
        ElementType::F64 => (64, 52),
        _ => return,
    };
    let size = bits / 8;
    let exp_mask = ((1u64 << (bits - 1 - man)) - 1) << man;
    let man_mask = (1u64 << man) - 1;
    let Ok(bytes) = lit.bytes_mut() else { return };
    for chunk in bytes.chunks_mut(size) {
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(chunk);
        let v = u64::from_le_bytes(b);
        if v & exp_mask == exp_mask && v & man_mask != 0 {
            let q = (v | (1u64 << (man - 1))).to_le_bytes();
            chunk.copy_from_slice(&q[..size]);
        }
    }
}

fn nice(rng: &mut Rng) -> f64 {
    let v = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (v - 0.5) * 20.0
}

fn f32_to_bf16(v: f32) -> u64 {
    (half::bf16::from_f32(v).to_bits()) as u64
}

/// A random value of the shape (layouts ignored; tuples recursively).
pub fn random_literal(shape: &Shape, rng: &mut Rng) -> Literal {
    match shape {
        Shape::Token => Literal::token(),
        Shape::Tuple(t) => Literal::tuple(t.iter().map(|s| random_literal(s, rng)).collect()),
        Shape::Array(a) => {
            let size = a.element_type.byte_size();
            let mut bytes = vec![0u8; a.byte_size()];
            for chunk in bytes.chunks_mut(size) {
                random_element(a.element_type, rng, chunk);
            }
            Literal::from_bytes(Shape::array(a.element_type, a.dims.clone()), &bytes)
                .expect("sizes agree")
        }
    }
}

/// Runs `pass` twice more on its own output and checks it has nothing left to do
/// (so one run reached its fixed point).
pub fn assert_idempotent(pass: &mut dyn HloPass, module: &HloModule) {
    let (again, changed) = run(pass, module);
    assert!(
        !changed,
        "pass {} changed its own output again:\n{module}\nto\n{again}",
        pass.name()
    );
}

/// How many instructions of the whole module have this opcode.
pub fn count(module: &HloModule, opcode: Opcode) -> usize {
    module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .filter(|i| i.opcode() == opcode)
        .count()
}

/// The opcodes of the entry computation in order.
pub fn entry_opcodes(module: &HloModule) -> Vec<Opcode> {
    module
        .entry()
        .instructions
        .iter()
        .map(|i| i.opcode())
        .collect()
}

/// The opcode of the entry root.
pub fn root_opcode(module: &HloModule) -> Opcode {
    module.entry().root_instr().opcode()
}

/// The case's arguments, `arg0.npy`, `arg1.npy`, ... in order.
pub fn case_args(dir: &std::path::Path) -> Vec<Literal> {
    (0..)
        .map(|i| dir.join(format!("arg{i}.npy")))
        .take_while(|f| f.exists())
        .map(|f| Literal::read_npy(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
        .collect()
}
