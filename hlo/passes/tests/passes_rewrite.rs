//! `hlo::rewrite`: the computation editor, names, the call graph and the
//! module-level edits.

mod passes_common;

use hlo_ir::rewrite::{
    add_computation, clone_computation, effectful_computations, reachable_computations,
    remove_computations, remove_unreachable_computations, CallGraph, ComputationEditor, NameGen,
};
use hlo_ir::verifier::verify_module;
use hlo_ir::{Code, ElementType, Shape};
use hlo_ir::{CompId, HloModule, InstrId, Op, Opcode, UnaryOp};
use passes_common::parse;

const CHAIN: &str = "HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  neg = f32[4] negate(p)
  unused = f32[4] exponential(q)
  ROOT add = f32[4] add(neg, neg)
}
";

fn id(module: &HloModule, name: &str) -> InstrId {
    module
        .entry()
        .find(name)
        .unwrap_or_else(|| panic!("no %{name}"))
}

fn edit(module: &mut HloModule, f: impl FnOnce(&mut ComputationEditor)) -> bool {
    let effectful = effectful_computations(module);
    let mut names = NameGen::for_instructions(module);
    let entry = module.entry;
    let mut ed = ComputationEditor::new(module.computation_mut(entry), &mut names);
    f(&mut ed);
    ed.finish(&effectful).expect("finish")
}

#[test]
fn appended_instructions_are_sorted_before_their_users_and_dead_ones_removed() {
    let mut m = parse(CHAIN);
    let (p, neg) = (id(&m, "p"), id(&m, "neg"));
    let changed = edit(&mut m, |ed| {
        let abs = ed.add_op(
            "abs",
            Shape::array(ElementType::F32, [4]),
            Op::Unary(UnaryOp::Abs),
            vec![p],
        );
        assert_eq!(ed.users(neg).len(), 1);
        ed.replace_all_uses(neg, abs).unwrap();
        assert!(ed.users(neg).is_empty());
        assert_eq!(ed.users(abs).len(), 1);
    });
    assert!(changed);
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    let names: Vec<&str> = m
        .entry()
        .instructions
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    // `neg` and `unused` are dead; parameters stay even when unused; `abs`
    // moved before `add`, which uses it.
    assert_eq!(names, ["p", "q", "abs", "add"], "{m}");
    let add = m.entry().root_instr();
    assert_eq!(add.operands, vec![InstrId(2), InstrId(2)]);
}

#[test]
fn replacing_the_root_moves_the_root() {
    let mut m = parse(CHAIN);
    let (add, neg) = (id(&m, "add"), id(&m, "neg"));
    edit(&mut m, |ed| ed.replace_all_uses(add, neg).unwrap());
    verify_module(&m).unwrap();
    assert_eq!(m.entry().root_instr().name, "neg");
    assert_eq!(m.entry().instructions.len(), 3, "{m}");
}

#[test]
fn unchanged_edit_reports_no_change_but_dead_code_counts() {
    let text =
        "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
    let mut m = parse(text);
    let before = m.clone();
    assert!(!edit(&mut m, |_| {}));
    assert_eq!(m, before);
    let mut m = parse(CHAIN);
    assert!(edit(&mut m, |_| {}), "removing %unused is a change");
    assert!(m.entry().find("unused").is_none());
}

#[test]
fn side_effects_survive_and_explicit_removal_of_a_used_instruction_fails() {
    let text = r#"HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  log = f32[4] custom-call(p), custom_call_target="log_it", custom_call_has_side_effect=true
  pure = f32[4] custom-call(p), custom_call_target="pure_fn"
  ROOT n = f32[4] negate(p)
}
"#;
    let mut m = parse(text);
    edit(&mut m, |_| {});
    assert!(m.entry().find("log").is_some(), "side effect removed:\n{m}");
    assert!(
        m.entry().find("pure").is_none(),
        "dead pure call kept:\n{m}"
    );

    let mut m = parse(CHAIN);
    let neg = id(&m, "neg");
    let effectful = effectful_computations(&m);
    let mut names = NameGen::for_instructions(&m);
    let entry = m.entry;
    let mut ed = ComputationEditor::new(m.computation_mut(entry), &mut names);
    ed.remove(neg);
    let err = ed.finish(&effectful).unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert!(err.message().contains("%neg"), "{err}");
}

#[test]
fn a_cycle_is_an_error_not_a_hang() {
    let mut m = parse(CHAIN);
    let (p, neg, add) = (id(&m, "p"), id(&m, "neg"), id(&m, "add"));
    let _ = p;
    let effectful = effectful_computations(&m);
    let mut names = NameGen::for_instructions(&m);
    let entry = m.entry;
    let mut ed = ComputationEditor::new(m.computation_mut(entry), &mut names);
    ed.set_operands(neg, vec![add]);
    let err = ed.finish(&effectful).unwrap_err();
    assert!(err.message().contains("cycle"), "{err}");
}

#[test]
fn replacing_with_a_different_shape_is_refused() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[2] parameter(1)\n  ROOT n = f32[4] negate(p)\n}\n";
    let mut m = parse(text);
    let (n, q) = (id(&m, "n"), id(&m, "q"));
    let mut names = NameGen::for_instructions(&m);
    let entry = m.entry;
    let mut ed = ComputationEditor::new(m.computation_mut(entry), &mut names);
    let err = ed.replace_all_uses(n, q).unwrap_err();
    assert!(
        err.message().contains("f32[2]") && err.message().contains("f32[4]"),
        "{err}"
    );
}

#[test]
fn control_edges_follow_a_replacement() {
    let text = r#"HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] abs(p)
  log = f32[4] custom-call(p), custom_call_target="log_it", custom_call_has_side_effect=true, control-predecessors={a}
  ROOT r = f32[4] add(a, b)
}
"#;
    let mut m = parse(text);
    let (a, b) = (id(&m, "a"), id(&m, "b"));
    edit(&mut m, |ed| ed.replace_all_uses(a, b).unwrap());
    verify_module(&m).unwrap();
    let log = m.entry().instr(id(&m, "log"));
    let preds: Vec<&str> = log
        .control_predecessors
        .iter()
        .map(|&c| m.entry().instr(c).name.as_str())
        .collect();
    assert_eq!(preds, ["b"], "{m}");
    assert!(m.entry().find("a").is_none());
}

#[test]
fn new_names_are_unique_in_the_module() {
    let text = "HloModule m

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add.1 = f32[] add(x, y)
}

ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT add = f32[] reduce(p, z), dimensions={0}, to_apply=add_f32
}
";
    let mut m = parse(text);
    let p = id(&m, "p");
    edit(&mut m, |ed| {
        let a = ed.add_op(
            "add",
            Shape::array(ElementType::F32, [4]),
            Op::Unary(UnaryOp::Negate),
            vec![p],
        );
        let b = ed.add_op(
            "add.1",
            Shape::array(ElementType::F32, [4]),
            Op::Unary(UnaryOp::Negate),
            vec![a],
        );
        let c = ed.add_op(
            "x",
            Shape::array(ElementType::F32, [4]),
            Op::Unary(UnaryOp::Negate),
            vec![b],
        );
        assert_eq!(ed.instr(a).name, "add.2");
        assert_eq!(ed.instr(b).name, "add.3");
        assert_eq!(ed.instr(c).name, "x.1");
        let root = ed.root();
        let reduce = ed.instr(root).clone();
        let mut new_reduce = reduce.clone();
        new_reduce.operands = vec![c, reduce.operands[1]];
        let r = ed.add(new_reduce);
        ed.replace_all_uses(root, r).unwrap();
    });
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{m}"));
}

const CALLS: &str = "HloModule m

unused {
  u = f32[] parameter(0)
  ROOT un = f32[] negate(u)
}

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

helper {
  h = f32[4] parameter(0)
  hz = f32[] constant(0)
  ROOT hr = f32[] reduce(h, hz), dimensions={0}, to_apply=add_f32
}

ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] call(p), to_apply=helper
  ROOT n = f32[] negate(c)
}
";

#[test]
fn call_graph_and_reachability() {
    let m = parse(CALLS);
    let comp = |name: &str| m.find_computation(name).unwrap();
    let graph = CallGraph::build(&m);
    assert_eq!(graph.callees(m.entry), &[comp("helper")]);
    assert_eq!(graph.callees(comp("helper")), &[comp("add_f32")]);
    let sites = graph.call_sites(comp("add_f32"));
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0].caller, comp("helper"));
    assert_eq!(
        m.computation(sites[0].caller)
            .instr(sites[0].instruction)
            .name,
        "hr"
    );
    let order = graph.post_order(&m).unwrap();
    assert_eq!(order, vec![comp("add_f32"), comp("helper"), m.entry]);
    let reach = reachable_computations(&m);
    assert!(!reach[comp("unused").index()]);
    assert!(reach[comp("add_f32").index()] && reach[comp("helper").index()]);
}

#[test]
fn removing_computations_renumbers_every_reference() {
    let mut m = parse(CALLS);
    let before = m.clone();
    let helper = m.find_computation("helper").unwrap();
    // A computation still called cannot go; nothing changes.
    let mut remove = vec![false; m.computations.len()];
    remove[m.find_computation("add_f32").unwrap().index()] = true;
    let err = remove_computations(&mut m, &remove).unwrap_err();
    assert!(err.message().contains("%hr"), "{err}");
    assert_eq!(m, before);
    let mut remove_entry = vec![false; m.computations.len()];
    remove_entry[m.entry.index()] = true;
    assert!(remove_computations(&mut m, &remove_entry).is_err());

    assert_eq!(remove_unreachable_computations(&mut m).unwrap(), 1);
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    assert!(m.find_computation("unused").is_none());
    assert_ne!(
        m.find_computation("helper"),
        Some(helper),
        "ids shifted down"
    );
    let text = m.to_text();
    assert!(
        text.contains("to_apply=%helper") && text.contains("to_apply=%add_f32"),
        "{text}"
    );
}

#[test]
fn cloned_computations_get_fresh_names_and_can_be_used() {
    let mut m = parse(CALLS);
    let add = m.find_computation("add_f32").unwrap();
    let mut names = NameGen::for_instructions(&m);
    let copy = clone_computation(&m, add, &mut names).unwrap();
    assert!(copy
        .instructions
        .iter()
        .all(|i| m.entry().find(&i.name).is_none()));
    assert_eq!(copy.instructions[2].name, "s.1");
    let new = add_computation(&mut m, copy);
    assert_eq!(m.computation(new).name, "add_f32.1");
    // Point the reduce at the copy: still valid, and the original is now unused.
    let helper = m.find_computation("helper").unwrap();
    let root = m.computation(helper).root;
    if let Op::Reduce { to_apply, .. } = &mut m.computation_mut(helper).instr_mut(root).op {
        *to_apply = new;
    }
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    assert_eq!(remove_unreachable_computations(&mut m).unwrap(), 2);
    verify_module(&m).unwrap();
    assert!(m.find_computation("add_f32.1").is_some());
    assert!(clone_computation(&m, CompId(99), &mut names).is_err());
}

#[test]
fn inline_computation_binds_parameters_to_arguments() {
    let mut m = parse(CALLS);
    let helper = m.find_computation("helper").unwrap();
    let callee = m.computation(helper).clone();
    let effectful = effectful_computations(&m);
    let mut names = NameGen::for_instructions(&m);
    let entry = m.entry;
    let mut ed = ComputationEditor::new(m.computation_mut(entry), &mut names);
    let call = ed.computation().find("c").unwrap();
    let p = ed.computation().find("p").unwrap();
    let root = ed.inline_computation(&callee, &[p]).unwrap();
    assert_eq!(ed.instr(root).opcode(), Opcode::Reduce);
    assert_eq!(ed.instr(root).name, "hr.1");
    assert_eq!(ed.instr(root).operands[0], p);
    // Wrong argument counts and shapes are errors.
    assert!(ed.inline_computation(&callee, &[]).is_err());
    ed.replace_all_uses(call, root).unwrap();
    ed.finish(&effectful).unwrap();
    verify_module(&m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    assert!(m.entry().find("c").is_none());
}

#[test]
fn effects_propagate_through_callers() {
    let text = r#"HloModule m

body {
  b = s32[] parameter(0)
  one = s32[] constant(1)
  log = s32[] custom-call(b), custom_call_target="log_it", custom_call_has_side_effect=true
  ROOT next = s32[] add(b, one)
}

cond {
  c = s32[] parameter(0)
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(c, ten), direction=LT
}

ENTRY e {
  p = s32[] parameter(0)
  w = s32[] while(p), condition=cond, body=body
  ROOT r = s32[] negate(p)
}
"#;
    let mut m = parse(text);
    let effectful = effectful_computations(&m);
    assert!(effectful[m.find_computation("body").unwrap().index()]);
    assert!(!effectful[m.find_computation("cond").unwrap().index()]);
    assert!(effectful[m.entry.index()]);
    edit(&mut m, |_| {});
    assert!(
        m.entry().find("w").is_some(),
        "an effectful while was removed:\n{m}"
    );
}

#[test]
fn an_insertion_point_places_new_instructions_before_it() {
    let mut m = parse(CHAIN);
    let (p, add) = (id(&m, "p"), id(&m, "add"));
    edit(&mut m, |ed| {
        // Used by nothing, kept for its side effect, and placed before %add.
        ed.set_insertion_point(Some(add));
        let log = hlo_ir::HloInstruction::new(
            "log",
            Shape::array(ElementType::F32, [4]),
            Op::CustomCall(Box::new(hlo_ir::CustomCallAttrs {
                target: "log_it".into(),
                api_version: hlo_ir::CustomCallApiVersion::Original,
                called_computations: vec![],
                has_side_effect: true,
                operand_layout_constraints: None,
                output_to_operand_aliasing: vec![],
                schedule: None,
            })),
            vec![p],
        );
        ed.add(log);
        ed.set_insertion_point(None);
    });
    verify_module(&m).unwrap();
    let names: Vec<&str> = m
        .entry()
        .instructions
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, ["p", "q", "neg", "log", "add"], "{m}");
}
