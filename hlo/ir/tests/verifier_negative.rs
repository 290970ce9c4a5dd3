//! Malformed modules are rejected with messages that say what is wrong and where.
//!
//! Most cases are HLO text the parser accepts (it checks grammar, not shapes);
//! the rest corrupt a parsed module directly, as a buggy pass or hostile input
//! could. The last test mutates every corpus program many ways and checks the
//! verifier never panics.

use hlo_ir::verifier::verify_module;
use hlo_ir::{Code, Shape};
use hlo_ir::{CompId, HloModule, InstrId, Op};
use std::path::PathBuf;

fn parse(text: &str) -> HloModule {
    HloModule::parse(text).unwrap_or_else(|e| panic!("test text must parse: {e}\n{text}"))
}

/// Verifies `module`, expects failure, and checks the message contains every
/// fragment.
fn rejects(module: &HloModule, fragments: &[&str]) {
    let err = verify_module(module).expect_err("the module must be rejected");
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    for f in fragments {
        assert!(
            err.message().contains(f),
            "message {:?} lacks {f:?}",
            err.message()
        );
    }
}

fn rejects_text(text: &str, fragments: &[&str]) {
    rejects(&parse(text), fragments);
}

/// A one-computation module around the given instructions.
fn entry(body: &str) -> String {
    format!("HloModule m\n\nENTRY %main {{\n{body}\n}}\n")
}

const ADD_F32: &str = "%add_f32 {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n";

#[test]
fn the_baseline_modules_verify() {
    // The negative cases below are small edits of modules like these.
    let m = parse(&entry(
        "  %p = f32[2,3] parameter(0)\n  %q = f32[2,3] parameter(1)\n  ROOT %r = f32[2,3] add(%p, %q)",
    ));
    verify_module(&m).unwrap();
    let m = parse(&format!(
        "HloModule m\n\n{ADD_F32}\nENTRY %main {{\n  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[3] reduce(%p, %z), dimensions={{0}}, to_apply=%add_f32\n}}\n"
    ));
    verify_module(&m).unwrap();
}

#[test]
fn wrong_operand_counts() {
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] add(%p)"),
        &["%main", "%r", "add", "expects 2 operands, got 1"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] negate(%p, %p)"),
        &["%r", "negate", "expects 1 operand, got 2"],
    );
    rejects_text(
        &entry("  %p = pred[] parameter(0)\n  %x = f32[2] parameter(1)\n  ROOT %r = f32[2] select(%p, %x)"),
        &["%r", "select", "expects 3 operands, got 2"],
    );
}

#[test]
fn reshape_must_keep_the_element_count() {
    rejects_text(
        &entry("  %p = f32[2,3] parameter(0)\n  ROOT %r = f32[4] reshape(%p)"),
        &[
            "%r",
            "reshape",
            "f32[2,3]",
            "6 elements",
            "f32[4]",
            "4 elements",
        ],
    );
    rejects_text(
        &entry("  %p = f32[2,3] parameter(0)\n  ROOT %r = s32[6] reshape(%p)"),
        &["%r", "reshape", "declared shape s32[6]", "f32[6]"],
    );
}

#[test]
fn shape_mismatches_name_both_shapes() {
    rejects_text(
        &entry("  %p = f32[2,3] parameter(0)\n  %q = f32[3,2] parameter(1)\n  ROOT %r = f32[2,3] add(%p, %q)"),
        &["%main", "%r", "add: operand shapes f32[2,3] and f32[3,2] differ"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  %q = s32[2] parameter(1)\n  ROOT %r = f32[2] multiply(%p, %q)"),
        &["%r", "multiply", "f32[2]", "s32[2]"],
    );
    // The declared shape disagrees with what the operands give.
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[3] add(%p, %p)"),
        &["%r", "add", "declared shape f32[3]", "inferred", "f32[2]"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] compare(%p, %p), direction=LT"),
        &["%r", "compare", "declared shape f32[2]", "pred[2]"],
    );
    rejects_text(
        &entry("  %p = f32[4,8] parameter(0)\n  %q = f32[9,2] parameter(1)\n  ROOT %r = f32[4,2] dot(%p, %q), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
        &["%r", "dot", "f32[4,8]", "f32[9,2]", "contracting"],
    );
}

#[test]
fn element_type_rules() {
    rejects_text(
        &entry("  %p = s32[2] parameter(0)\n  ROOT %r = s32[2] exponential(%p)"),
        &["%r", "exponential", "floating point or complex", "s32[2]"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] and(%p, %p)"),
        &["%r", "and", "pred or integers", "f32[2]"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] is-finite(%p)"),
        &["%r", "is-finite", "declared shape f32[2]", "pred[2]"],
    );
    rejects_text(
        &entry("  %p = u8[3] parameter(0)\n  ROOT %r = s32[] bitcast-convert(%p)"),
        &["%r", "bitcast-convert", "u8[3]", "last dimension of size 4"],
    );
    rejects_text(
        &entry("  %p = f32[2] parameter(0)\n  ROOT %r = f64[2] bitcast(%p)"),
        &["%r", "bitcast", "f32[2]", "8 bytes", "f64[2]", "16 bytes"],
    );
}

#[test]
fn unknown_or_invalid_computation_references() {
    let mut m = parse(&format!(
        "HloModule m\n\n{ADD_F32}\nENTRY %main {{\n  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[3] reduce(%p, %z), dimensions={{0}}, to_apply=%add_f32\n}}\n"
    ));
    let main = m.entry;
    let root = m.computation(main).root;
    if let Op::Reduce { to_apply, .. } = &mut m.computation_mut(main).instr_mut(root).op {
        *to_apply = CompId(7);
    } else {
        panic!("root is the reduce");
    }
    rejects(
        &m,
        &["%main", "%r", "reduce", "computation #7", "does not exist"],
    );

    // An entry id past the end.
    let mut m = parse(&entry("  ROOT %p = f32[] parameter(0)"));
    m.entry = CompId(3);
    rejects(&m, &["entry computation id #3", "out of range"]);

    // Calling a computation of the wrong kind: a while body that is a reducer.
    rejects_text(
        &format!(
            "HloModule m\n\n{ADD_F32}\n%cond {{\n  %c = f32[] parameter(0)\n  ROOT %t = pred[] constant(true)\n}}\n\nENTRY %main {{\n  %p = f32[] parameter(0)\n  ROOT %w = f32[] while(%p), condition=%cond, body=%add_f32\n}}\n"
        ),
        &["%w", "while", "body %add_f32", "(f32[], f32[]) -> f32[]", "given (f32[])"],
    );
}

#[test]
fn call_cycles_are_rejected() {
    rejects_text(
        "HloModule m\n\n%f {\n  %x = f32[] parameter(0)\n  ROOT %y = f32[] call(%x), to_apply=%g\n}\n\n%g {\n  %u = f32[] parameter(0)\n  ROOT %v = f32[] call(%u), to_apply=%f\n}\n\nENTRY %main {\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] call(%p), to_apply=%f\n}\n",
        &["cycle", "%f calls %g calls %f"],
    );
    // A computation calling itself.
    rejects_text(
        "HloModule m\n\n%f {\n  %x = f32[] parameter(0)\n  ROOT %y = f32[] call(%x), to_apply=%f\n}\n\nENTRY %main {\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] call(%p), to_apply=%f\n}\n",
        &["cycle", "%f calls %f"],
    );
}

#[test]
fn duplicate_names_are_rejected() {
    // Text may reuse a name in another computation (XLA allows it): the parser
    // makes names unique module-wide, so the module verifies.
    let m = parse(
        "HloModule m\n\n%f {\n  %x = f32[] parameter(0)\n  ROOT %p = f32[] negate(%x)\n}\n\nENTRY %main {\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] call(%p), to_apply=%f\n}\n",
    );
    verify_module(&m).expect("names made unique by the parser");
    // A module built or rewritten with a repeated name is still rejected.
    let mut m = parse(&entry(
        "  %p = f32[] parameter(0)\n  ROOT %q = f32[] negate(%p)",
    ));
    let e = m.entry;
    m.computation_mut(e).instr_mut(InstrId(1)).name = "p".into();
    rejects(&m, &["%p", "already used"]);
}

#[test]
fn parameter_numbers_must_be_dense() {
    rejects_text(
        &entry(
            "  %a = f32[] parameter(0)\n  %b = f32[] parameter(2)\n  ROOT %r = f32[] add(%a, %b)",
        ),
        &["%main", "parameter numbers are {0,2}", "0..2"],
    );
    rejects_text(
        &entry(
            "  %a = f32[] parameter(0)\n  %b = f32[] parameter(0)\n  ROOT %r = f32[] add(%a, %b)",
        ),
        &["%main", "parameter numbers are {0,0}"],
    );
}

#[test]
fn operands_must_be_defined_before_use() {
    let mut m = parse(&entry(
        "  %p = f32[] parameter(0)\n  %q = f32[] negate(%p)\n  ROOT %r = f32[] negate(%q)",
    ));
    let e = m.entry;
    // %q now uses %r, which comes after it.
    m.computation_mut(e).instr_mut(InstrId(1)).operands = vec![InstrId(2)];
    rejects(&m, &["%q", "operand 0", "%r", "not defined before it"]);
    m.computation_mut(e).instr_mut(InstrId(1)).operands = vec![InstrId(40)];
    rejects(&m, &["%q", "operand 0", "#40", "out of range"]);
    m.computation_mut(e).instr_mut(InstrId(1)).operands = vec![InstrId(0)];
    m.computation_mut(e).root = InstrId(9);
    rejects(&m, &["%main", "root id #9", "out of range"]);
}

#[test]
fn bad_dimension_numbers() {
    rejects_text(
        &entry("  %p = f32[4,8] parameter(0)\n  %q = f32[8,2] parameter(1)\n  ROOT %r = f32[4,2] dot(%p, %q), lhs_contracting_dims={5}, rhs_contracting_dims={0}"),
        &["%r", "dot", "lhs batch and contracting dimensions", "5", "rank 2", "f32[4,8]", "f32[8,2]"],
    );
    rejects_text(
        &entry(
            "  %p = f32[4,8] parameter(0)\n  ROOT %r = f32[8,4] transpose(%p), dimensions={0,0}",
        ),
        &["%r", "transpose", "dimensions {0,0}", "twice"],
    );
    rejects_text(
        &entry("  %p = f32[1,5,5,2] parameter(0)\n  %k = f32[3,3,3,4] parameter(1)\n  ROOT %r = f32[1,3,3,4] convolution(%p, %k), window={size=3x3}, dim_labels=b01f_01io->b01f"),
        &["%r", "convolution", "input features (2)", "kernel's input features (3)", "f32[1,5,5,2]", "f32[3,3,3,4]"],
    );
    rejects_text(
        &entry("  %p = f32[10,4] parameter(0)\n  %i = s32[3,1] parameter(1)\n  ROOT %r = f32[3,4] gather(%p, %i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={2}, index_vector_dim=1, slice_sizes={1,4}"),
        &["%r", "gather", "start_index_map {2}", "out of range"],
    );
    rejects_text(
        &entry("  %p = f32[4] parameter(0)\n  ROOT %r = f32[2] slice(%p), slice={[0:6:3]}"),
        &["%r", "slice", "[0:6:3]", "f32[4]"],
    );
}

#[test]
fn out_of_range_dimensions() {
    rejects_text(
        &format!(
            "HloModule m\n\n{ADD_F32}\nENTRY %main {{\n  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[2] reduce(%p, %z), dimensions={{3}}, to_apply=%add_f32\n}}\n"
        ),
        &["%r", "reduce", "dimension 3", "rank 2", "f32[2,3]"],
    );
    rejects_text(
        &entry("  %p = f32[3] parameter(0)\n  ROOT %r = f32[2,3] broadcast(%p), dimensions={2}"),
        &["%r", "broadcast", "dimension 2", "rank 2"],
    );
    rejects_text(
        &entry(
            "  %p = f32[3] parameter(0)\n  ROOT %r = f32[6] concatenate(%p, %p), dimensions={1}",
        ),
        &["%r", "concatenate", "dimension 1", "f32[3]"],
    );
    rejects_text(
        &entry("  ROOT %r = s32[4] iota(), iota_dimension=1"),
        &["%r", "iota", "iota_dimension 1", "s32[4]"],
    );
}

#[test]
fn reducers_with_the_wrong_signature() {
    // Three parameters where two are needed.
    rejects_text(
        "HloModule m\n\n%bad {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  %c = f32[] parameter(2)\n  ROOT %s = f32[] add(%a, %b)\n}\n\nENTRY %main {\n  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[3] reduce(%p, %z), dimensions={0}, to_apply=%bad\n}\n",
        &["%r", "reduce", "%bad", "(f32[], f32[], f32[]) -> f32[]", "expected (f32[], f32[]) -> f32[]", "2 parameters"],
    );
    // Returns the wrong type.
    rejects_text(
        "HloModule m\n\n%bad {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = pred[] compare(%a, %b), direction=LT\n}\n\nENTRY %main {\n  %p = f32[2,3] parameter(0)\n  %z = f32[] constant(0)\n  ROOT %r = f32[3] reduce(%p, %z), dimensions={0}, to_apply=%bad\n}\n",
        &["%r", "reduce", "%bad", "-> pred[]", "result 0 must be f32[]"],
    );
    // A sort comparator that does not return pred[].
    rejects_text(
        &format!("HloModule m\n\n{ADD_F32}\nENTRY %main {{\n  %p = f32[5] parameter(0)\n  ROOT %r = f32[5] sort(%p), dimensions={{0}}, to_apply=%add_f32\n}}\n"),
        &["%r", "sort", "comparator %add_f32", "expected (f32[], f32[]) -> pred[]"],
    );
    // A variadic reduce whose reducer returns a scalar.
    rejects_text(
        &format!("HloModule m\n\n{ADD_F32}\nENTRY %main {{\n  %p = f32[4] parameter(0)\n  %q = f32[4] parameter(1)\n  %z = f32[] constant(0)\n  ROOT %r = (f32[], f32[]) reduce(%p, %q, %z, %z), dimensions={{0}}, to_apply=%add_f32\n}}\n"),
        &["%r", "reduce", "%add_f32", "4 parameters"],
    );
}

#[test]
fn control_flow_signatures() {
    rejects_text(
        "HloModule m\n\n%cond {\n  %c = s32[] parameter(0)\n  ROOT %k = s32[] constant(1)\n}\n\n%body {\n  %b = s32[] parameter(0)\n  ROOT %n = s32[] negate(%b)\n}\n\nENTRY %main {\n  %p = s32[] parameter(0)\n  ROOT %w = s32[] while(%p), condition=%cond, body=%body\n}\n",
        &["%w", "while", "condition %cond must return pred[]", "s32[]"],
    );
    rejects_text(
        "HloModule m\n\n%t {\n  %x = f32[2] parameter(0)\n  ROOT %y = f32[2] negate(%x)\n}\n\n%f {\n  %u = s32[2] parameter(0)\n  ROOT %v = s32[2] negate(%u)\n}\n\nENTRY %main {\n  %c = pred[] parameter(0)\n  %a = f32[2] parameter(1)\n  ROOT %r = f32[2] conditional(%c, %a, %a), true_computation=%t, false_computation=%f\n}\n",
        &["%r", "conditional", "branch 1 %f", "(s32[2]) -> s32[2]", "given (f32[2])"],
    );
    rejects_text(
        "HloModule m\n\n%fused {\n  %x = f32[3] parameter(0)\n  ROOT %y = f32[3] negate(%x)\n}\n\nENTRY %main {\n  %p = f32[4] parameter(0)\n  ROOT %r = f32[3] fusion(%p), kind=kLoop, calls=%fused\n}\n",
        &["%r", "fusion", "fused computation %fused", "(f32[3]) -> f32[3]", "given (f32[4])"],
    );
}

#[test]
fn entry_computation_layout_must_match() {
    rejects_text(
        "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\n\nENTRY %main {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] negate(%p)\n}\n",
        &["entry_computation_layout parameter 0 is f32[3]", "%main has f32[2]"],
    );
    rejects_text(
        "HloModule m, entry_computation_layout={(f32[2]{0}, f32[2]{0})->f32[2]{0}}\n\nENTRY %main {\n  %p = f32[2] parameter(0)\n  ROOT %r = f32[2] negate(%p)\n}\n",
        &["entry_computation_layout has 2 parameters", "%main has 1"],
    );
}

#[test]
fn malformed_shapes_are_rejected() {
    let mut m = parse(&entry(
        "  %p = f32[2,3] parameter(0)\n  ROOT %r = f32[2,3] negate(%p)",
    ));
    let e = m.entry;
    if let Shape::Array(a) = &mut m.computation_mut(e).instr_mut(InstrId(1)).shape {
        a.layout = Some(hlo_ir::Layout {
            minor_to_major: vec![0, 0],
            ..Default::default()
        });
    }
    rejects(&m, &["%r", "not a permutation"]);
}

// ------------------------------------------------------------------ robustness

fn corpus_modules() -> Vec<HloModule> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&root).expect("tests/conformance exists") {
        let dir = entry.expect("directory entry").path();
        for name in ["module.hlo", "optimized.hlo"] {
            if dir.join(name).exists() {
                files.push(dir.join(name));
            }
        }
    }
    files.sort();
    files
        .iter()
        .map(|f| parse(&std::fs::read_to_string(f).expect("readable")))
        .collect()
}

/// A small deterministic generator (xorshift) so the mutations are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_corpus_programs_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut rejected, mut total) = (0, 0);
    for module in corpus_modules() {
        for _ in 0..25 {
            let mut m = module.clone();
            let c = rng.below(m.computations.len());
            let comp = &mut m.computations[c];
            let n = comp.instructions.len();
            let i = rng.below(n);
            match rng.below(7) {
                0 => {
                    // An operand id anywhere, including past the end.
                    let instr = &mut comp.instructions[i];
                    if !instr.operands.is_empty() {
                        let k = rng.below(instr.operands.len());
                        instr.operands[k] = InstrId(rng.below(n + 3) as u32);
                    }
                }
                1 => comp.root = InstrId(rng.below(n + 2) as u32),
                2 => {
                    let count = m.computations.len();
                    let instr = &mut m.computations[c].instructions[i];
                    instr.op.map_called(|_| CompId(rng.below(count + 2) as u32));
                }
                3 => {
                    // A dimension changed.
                    if let Shape::Array(a) = &mut comp.instructions[i].shape {
                        if !a.dims.is_empty() {
                            let d = rng.below(a.dims.len());
                            a.dims[d] = rng.below(5);
                        }
                    }
                }
                4 => {
                    // Operands dropped or duplicated.
                    let instr = &mut comp.instructions[i];
                    if rng.below(2) == 0 {
                        instr.operands.pop();
                    } else if let Some(&o) = instr.operands.first() {
                        instr.operands.push(o);
                    }
                }
                5 => {
                    // A huge dimension, to provoke overflow.
                    if let Shape::Array(a) = &mut comp.instructions[i].shape {
                        if !a.dims.is_empty() {
                            let d = rng.below(a.dims.len());
                            a.dims[d] = usize::MAX / 3;
                        }
                    }
                }
                _ => {
                    // Instructions removed from the end (dangling uses, lost root).
                    let keep = rng.below(n).max(1);
                    comp.instructions.truncate(keep);
                }
            }
            total += 1;
            if verify_module(&m).is_err() {
                rejected += 1;
            }
        }
    }
    // Most mutations break something; the verifier must notice most of them.
    assert!(
        rejected * 2 > total,
        "only {rejected} of {total} mutations rejected"
    );
}
