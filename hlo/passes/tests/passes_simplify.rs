//! The algebraic simplifier: each rule fires where it is exact and only there.

mod passes_common;

use hlo_ir::{HloModule, Literal, Op, Opcode};
use hlo_passes::{AlgebraicSimplifier, DeadCodeElimination, SimplifierOptions};
use passes_common::{
    entry_opcodes, evaluate, parse, random_literal, run, run_assuming_quiet_nans, run_on_entry, Rng,
};

/// `ENTRY` body → module after the simplifier and dead-code elimination (each
/// checked to verify and to report its change honestly).
fn simplify_with(body: &str, options: SimplifierOptions) -> (HloModule, HloModule) {
    let m = parse(&format!("HloModule m\n\nENTRY e {{\n{body}\n}}\n"));
    let mut pass = AlgebraicSimplifier::with_options(options);
    let (s, _) = if options.assume_no_signaling_nans {
        run_assuming_quiet_nans(&mut pass, &m)
    } else {
        run(&mut pass, &m)
    };
    let (out, _) = run(&mut DeadCodeElimination::new(), &s);
    (m, out)
}

fn simplify(body: &str) -> HloModule {
    simplify_with(body, SimplifierOptions::default()).1
}

use Opcode::*;

fn assert_ops(out: &HloModule, want: &[Opcode]) {
    assert_eq!(entry_opcodes(out), want, "\n{out}");
}

#[test]
fn copies_and_trivial_reshapes_disappear() {
    let out = simplify("  p = f32[4] parameter(0)\n  c = f32[4] copy(p)\n  r = f32[4] reshape(c)\n  ROOT n = f32[4] negate(r)");
    assert_ops(&out, &[Parameter, Negate]);
}

#[test]
fn reshape_chains_collapse() {
    let out = simplify(
        "  p = f32[2,3] parameter(0)\n  a = f32[6] reshape(p)\n  ROOT b = f32[3,2] reshape(a)",
    );
    assert_ops(&out, &[Parameter, Reshape]);
    let out = simplify("  p = f32[2,3] parameter(0)\n  a = f32[6] reshape(p)\n  b = f32[2,3] reshape(a)\n  ROOT n = f32[2,3] negate(b)");
    assert_ops(&out, &[Parameter, Negate]);
}

#[test]
fn row_major_bitcasts_of_one_type_are_reshapes() {
    let out = simplify("  p = f32[2,3]{1,0} parameter(0)\n  a = f32[6]{0} reshape(p)\n  ROOT b = f32[3,2]{1,0} bitcast(a)");
    assert_ops(&out, &[Parameter, Reshape]);
    // A column-major bitcast is left for layout normalization.
    let out = simplify("  p = f32[2,3]{0,1} parameter(0)\n  ROOT b = f32[3,2]{1,0} bitcast(p)");
    assert_ops(&out, &[Parameter, Bitcast]);
}

#[test]
fn transposes_compose() {
    let out = simplify("  p = f32[2,3,4] parameter(0)\n  t = f32[3,4,2] transpose(p), dimensions={1,2,0}\n  ROOT u = f32[4,2,3] transpose(t), dimensions={1,2,0}");
    assert_ops(&out, &[Parameter, Transpose]);
    let Op::Transpose { dimensions } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert_eq!(dimensions, &[2, 0, 1]);
    let out = simplify("  p = f32[2,3] parameter(0)\n  t = f32[3,2] transpose(p), dimensions={1,0}\n  u = f32[2,3] transpose(t), dimensions={1,0}\n  i = f32[2,3] transpose(u), dimensions={0,1}\n  ROOT n = f32[2,3] negate(i)");
    assert_ops(&out, &[Parameter, Negate]);
    // Moving only a size-1 dimension keeps the element order: a reshape.
    let out =
        simplify("  p = f32[1,4] parameter(0)\n  ROOT t = f32[4,1] transpose(p), dimensions={1,0}");
    assert_ops(&out, &[Parameter, Reshape]);
}

#[test]
fn broadcasts_compose_and_lose_size_one_dimensions() {
    let out = simplify("  p = f32[3] parameter(0)\n  a = f32[2,3] broadcast(p), dimensions={1}\n  ROOT b = f32[5,2,3] broadcast(a), dimensions={1,2}");
    assert_ops(&out, &[Parameter, Broadcast]);
    let Op::Broadcast { dimensions } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert_eq!(dimensions, &[2]);

    let out = simplify(
        "  p = f32[1,3] parameter(0)\n  ROOT b = f32[4,1,3] broadcast(p), dimensions={1,2}",
    );
    assert_ops(&out, &[Parameter, Reshape, Broadcast]);
    assert_eq!(out.entry().instructions[1].shape.to_string(), "f32[3]");

    // JAX's broadcast_in_dim of a scalar through [1]: a broadcast with dimensions={}.
    let out = simplify("  c = f32[] constant(2)\n  r = f32[1] reshape(c)\n  ROOT b = f32[5,1] broadcast(r), dimensions={1}");
    assert_ops(&out, &[Constant, Broadcast]);
    let out = simplify("  p = f32[3] parameter(0)\n  b = f32[3] broadcast(p), dimensions={0}\n  ROOT n = f32[3] negate(b)");
    assert_ops(&out, &[Parameter, Negate]);
}

#[test]
fn moving_a_broadcast_scalar_is_broadcasting_it() {
    for mover in [
        "f32[3,2] transpose(b), dimensions={1,0}",
        "f32[6] reshape(b)",
        "f32[1,2] slice(b), slice={[1:2], [0:2]}",
        "f32[2,3] reverse(b), dimensions={0,1}",
    ] {
        let out = simplify(&format!("  p = f32[] parameter(0)\n  b = f32[2,3] broadcast(p), dimensions={{}}\n  ROOT m = {mover}"));
        assert_ops(&out, &[Parameter, Broadcast]);
    }
}

#[test]
fn slices_simplify() {
    let out = simplify("  p = f32[4,3] parameter(0)\n  s = f32[4,3] slice(p), slice={[0:4], [0:3]}\n  ROOT n = f32[4,3] negate(s)");
    assert_ops(&out, &[Parameter, Negate]);

    let out = simplify("  p = f32[10] parameter(0)\n  a = f32[4] slice(p), slice={[2:10:2]}\n  ROOT b = f32[2] slice(a), slice={[1:4:2]}");
    assert_ops(&out, &[Parameter, Slice]);
    let Op::Slice { slice } = &out.entry().root_instr().op else {
        unreachable!()
    };
    // Elements 1 and 3 of {2,4,6,8}: 4 and 8.
    assert_eq!((slice[0].start, slice[0].limit, slice[0].stride), (4, 9, 4));

    let out = simplify("  a = f32[3] parameter(0)\n  b = f32[4] parameter(1)\n  c = f32[7] concatenate(a, b), dimensions={0}\n  ROOT s = f32[2] slice(c), slice={[4:6]}");
    assert_ops(&out, &[Parameter, Parameter, Slice]);
    let root = out.entry().root_instr();
    assert_eq!(out.entry().instr(root.operands[0]).name, "b");
    let Op::Slice { slice } = &root.op else {
        unreachable!()
    };
    assert_eq!((slice[0].start, slice[0].limit), (1, 3));
    // Across the boundary: stays.
    let out = simplify("  a = f32[3] parameter(0)\n  b = f32[4] parameter(1)\n  c = f32[7] concatenate(a, b), dimensions={0}\n  ROOT s = f32[2] slice(c), slice={[2:4]}");
    assert_ops(&out, &[Parameter, Parameter, Concatenate, Slice]);
    // An empty slice of a slice: composing the start naively would put it past
    // the end of the parameter (found by the differential tester). The `run`
    // helper verifies the module after the pass.
    let out = simplify("  p = f32[6] parameter(0)\n  s3 = f32[1] slice(p), slice={[4:5:3]}\n  ROOT s4 = f32[0] slice(s3), slice={[1:1:2]}");
    assert_ops(&out, &[Parameter, Slice]);
    let Op::Slice { slice } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert_eq!((slice[0].start, slice[0].limit), (0, 0));
}

#[test]
fn dynamic_slices_with_constant_starts_are_static_and_clamped() {
    for (start, want) in [("3", 3), ("8", 6), ("-5", 0)] {
        let out = simplify(&format!(
            "  p = f32[10] parameter(0)\n  i = s32[] constant({start})\n  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={{4}}"
        ));
        assert_ops(&out, &[Parameter, Slice]);
        let Op::Slice { slice } = &out.entry().root_instr().op else {
            unreachable!()
        };
        assert_eq!(
            (slice[0].start, slice[0].limit),
            (want, want + 4),
            "start {start}"
        );
    }
    let out = simplify("  p = f32[10] parameter(0)\n  i = s32[] parameter(1)\n  ROOT d = f32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}");
    assert_ops(&out, &[Parameter, Parameter, DynamicSlice]);
}

#[test]
fn pads_concatenates_and_reverses_simplify() {
    let out = simplify("  p = f32[3] parameter(0)\n  z = f32[] constant(0)\n  a = f32[3] pad(p, z), padding=0_0\n  ROOT n = f32[3] negate(a)");
    assert_ops(&out, &[Parameter, Negate]);

    let out = simplify("  p = f32[3] parameter(0)\n  c = f32[3] concatenate(p), dimensions={0}\n  ROOT n = f32[3] negate(c)");
    assert_ops(&out, &[Parameter, Negate]);
    let out = simplify("  p = f32[3] parameter(0)\n  e = f32[0] parameter(1)\n  c = f32[3] concatenate(e, p, e), dimensions={0}\n  ROOT n = f32[3] negate(c)");
    assert_ops(&out, &[Parameter, Parameter, Negate]);
    let out = simplify("  p = f32[3] parameter(0)\n  q = f32[2] parameter(1)\n  c = f32[5] concatenate(p, q), dimensions={0}\n  ROOT d = f32[8] concatenate(c, p), dimensions={0}");
    assert_ops(&out, &[Parameter, Parameter, Concatenate]);
    assert_eq!(out.entry().root_instr().operands.len(), 3);

    let out = simplify("  p = f32[1,4] parameter(0)\n  r = f32[1,4] reverse(p), dimensions={0}\n  ROOT n = f32[1,4] negate(r)");
    assert_ops(&out, &[Parameter, Negate]);
    let out = simplify("  p = f32[2,4] parameter(0)\n  r = f32[2,4] reverse(p), dimensions={0,1}\n  s = f32[2,4] reverse(r), dimensions={1}\n  ROOT n = f32[2,4] negate(s)");
    assert_ops(&out, &[Parameter, Reverse, Negate]);
    let Op::Reverse { dimensions } = &out.entry().instructions[1].op else {
        unreachable!()
    };
    assert_eq!(dimensions, &[0]);
    let out = simplify("  p = f32[2,4] parameter(0)\n  r = f32[2,4] reverse(p), dimensions={1}\n  s = f32[2,4] reverse(r), dimensions={1}\n  ROOT n = f32[2,4] negate(s)");
    assert_ops(&out, &[Parameter, Negate]);
}

#[test]
fn converts_simplify_only_when_lossless() {
    let out =
        simplify("  p = f32[3] parameter(0)\n  c = f32[3] convert(p)\n  ROOT n = f32[3] negate(c)");
    assert_ops(&out, &[Parameter, Negate]);
    for (from, via) in [
        ("s8", "s32"),
        ("u8", "s16"),
        ("pred", "s32"),
        ("s16", "f32"),
        ("u8", "bf16"),
    ] {
        let out = simplify(&format!(
            "  p = {from}[3] parameter(0)\n  a = {via}[3] convert(p)\n  b = {from}[3] convert(a)\n  ROOT r = ({from}[3]) tuple(b)"
        ));
        assert_ops(&out, &[Parameter, Tuple]);
    }
    for (from, via) in [
        ("s32", "s8"),
        ("f32", "f16"),
        ("u8", "s8"),
        ("s32", "f32"),
        ("f32", "f64"),
    ] {
        let out = simplify(&format!(
            "  p = {from}[3] parameter(0)\n  a = {via}[3] convert(p)\n  b = {from}[3] convert(a)\n  ROOT r = ({from}[3]) tuple(b)"
        ));
        assert_ops(&out, &[Parameter, Convert, Convert, Tuple]);
    }
}

#[test]
fn selects_simplify() {
    let out = simplify(
        "  c = pred[3] parameter(0)\n  a = f32[3] parameter(1)\n  ROOT s = f32[3] select(c, a, a)",
    );
    assert_ops(&out, &[Parameter, Parameter]);
    let out = simplify("  t = pred[] constant(true)\n  c = pred[3] broadcast(t), dimensions={}\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT s = f32[3] select(c, a, b)");
    assert_eq!(out.entry().root_instr().name, "a", "{out}");
    let out = simplify("  f = pred[] constant(false)\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT s = f32[3] select(f, a, b)");
    assert_eq!(out.entry().root_instr().name, "b", "{out}");
    let out = simplify("  c = pred[3] parameter(0)\n  a = f32[3] parameter(1)\n  b = f32[3] parameter(2)\n  n = pred[3] not(c)\n  ROOT s = f32[3] select(n, a, b)");
    assert_ops(&out, &[Parameter, Parameter, Parameter, Select]);
    let root = out.entry().root_instr();
    let names: Vec<&str> = root
        .operands
        .iter()
        .map(|&o| out.entry().instr(o).name.as_str())
        .collect();
    assert_eq!(names, ["c", "b", "a"]);
}

#[test]
fn tuples_and_their_elements_cancel() {
    let out = simplify("  a = f32[3] parameter(0)\n  b = s32[] parameter(1)\n  t = (f32[3], s32[]) tuple(a, b)\n  g = s32[] get-tuple-element(t), index=1\n  ROOT n = s32[] negate(g)");
    assert_ops(&out, &[Parameter, Parameter, Negate]);
    let out = simplify("  t = (f32[3], s32[]) parameter(0)\n  a = f32[3] get-tuple-element(t), index=0\n  b = s32[] get-tuple-element(t), index=1\n  ROOT u = (f32[3], s32[]) tuple(a, b)");
    assert_ops(&out, &[Parameter]);
    // Out of order: not the same tuple.
    let out = simplify("  t = (f32[], f32[]) parameter(0)\n  a = f32[] get-tuple-element(t), index=0\n  b = f32[] get-tuple-element(t), index=1\n  ROOT u = (f32[], f32[]) tuple(b, a)");
    assert_ops(&out, &[Parameter, GetTupleElement, GetTupleElement, Tuple]);
}

#[test]
fn unary_pairs_cancel() {
    for ty in ["f32", "s32", "f16"] {
        let out = simplify(&format!("  p = {ty}[3] parameter(0)\n  a = {ty}[3] negate(p)\n  b = {ty}[3] negate(a)\n  ROOT r = ({ty}[3]) tuple(b)"));
        assert_ops(&out, &[Parameter, Tuple]);
        let out = simplify(&format!(
            "  p = {ty}[3] parameter(0)\n  a = {ty}[3] abs(p)\n  ROOT b = {ty}[3] abs(a)"
        ));
        assert_ops(&out, &[Parameter, Abs]);
        let out = simplify(&format!(
            "  p = {ty}[3] parameter(0)\n  a = {ty}[3] negate(p)\n  ROOT b = {ty}[3] abs(a)"
        ));
        assert_ops(&out, &[Parameter, Abs]);
    }
    for ty in ["pred", "u8"] {
        let out = simplify(&format!("  p = {ty}[3] parameter(0)\n  a = {ty}[3] not(p)\n  b = {ty}[3] not(a)\n  ROOT r = ({ty}[3]) tuple(b)"));
        assert_ops(&out, &[Parameter, Tuple]);
    }
}

#[test]
fn elementwise_ops_on_broadcast_scalars_run_once() {
    let out = simplify("  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  x = f32[64] broadcast(a), dimensions={}\n  y = f32[64] broadcast(b), dimensions={}\n  s = f32[64] add(x, y)\n  ROOT e = f32[64] exponential(s)");
    assert_ops(&out, &[Parameter, Parameter, Add, Exp, Broadcast]);
    assert!(out.entry().instructions[3].shape.is_scalar());
    let out = simplify("  a = f32[] parameter(0)\n  x = f32[64] broadcast(a), dimensions={}\n  ROOT c = s32[64] convert(x)");
    assert_ops(&out, &[Parameter, Convert, Broadcast]);
    // One operand not a broadcast scalar: unchanged.
    let out = simplify("  a = f32[] parameter(0)\n  p = f32[64] parameter(1)\n  x = f32[64] broadcast(a), dimensions={}\n  ROOT s = f32[64] add(x, p)");
    assert_ops(&out, &[Parameter, Parameter, Broadcast, Add]);
}

/// `op(x, c)` with `c` a broadcast constant: whether it simplifies, and to what.
fn identity_case(ty: &str, op: &str, c: &str, options: SimplifierOptions) -> (String, HloModule) {
    let (_, out) = simplify_with(
        &format!("  p = {ty}[4] parameter(0)\n  k = {ty}[] constant({c})\n  c = {ty}[4] broadcast(k), dimensions={{}}\n  ROOT r = {ty}[4] {op}(p, c)"),
        options,
    );
    let root = out.entry().root_instr();
    let kind = if root.name == "p" {
        "x".to_string()
    } else if root.opcode() == Opcode::Broadcast {
        "c".to_string()
    } else {
        "unchanged".to_string()
    };
    (kind, out)
}

#[test]
fn integer_and_pred_identities_hold_exactly() {
    let strict = SimplifierOptions::default();
    let cases = [
        ("s32", "add", "0", "x"),
        ("s32", "subtract", "0", "x"),
        ("s32", "multiply", "1", "x"),
        ("s32", "multiply", "0", "c"),
        ("s32", "divide", "1", "x"),
        ("s32", "remainder", "1", "unchanged"),
        ("s32", "and", "-1", "x"),
        ("u8", "and", "255", "x"),
        ("u8", "and", "0", "c"),
        ("s32", "or", "0", "x"),
        ("s32", "or", "-1", "c"),
        ("u16", "xor", "0", "x"),
        ("s32", "shift-left", "0", "x"),
        ("s32", "shift-right-arithmetic", "0", "x"),
        ("s32", "maximum", "-2147483648", "x"),
        ("s32", "minimum", "2147483647", "x"),
        ("u32", "maximum", "0", "x"),
        ("s32", "maximum", "0", "unchanged"),
        ("s32", "add", "1", "unchanged"),
        ("pred", "and", "true", "x"),
        ("pred", "and", "false", "c"),
        ("pred", "or", "false", "x"),
        ("pred", "or", "true", "c"),
        ("pred", "xor", "false", "x"),
        ("pred", "xor", "true", "unchanged"),
    ];
    for (ty, op, c, want) in cases {
        let (got, out) = identity_case(ty, op, c, strict);
        assert_eq!(got, want, "{ty} {op}(x, {c}):\n{out}");
    }
}

#[test]
fn float_rules_that_are_not_exact_are_not_applied() {
    let strict = SimplifierOptions::default();
    let lax = SimplifierOptions {
        assume_no_signaling_nans: true,
        ..SimplifierOptions::default()
    };
    // (op, constant, with the default options, with assume_no_signaling_nans)
    let cases = [
        ("add", "0", "unchanged", "unchanged"), // -0 + 0 = +0
        ("add", "-0", "unchanged", "x"),
        ("subtract", "0", "unchanged", "x"),
        ("subtract", "-0", "unchanged", "unchanged"), // -0 - -0 = +0
        ("multiply", "1", "unchanged", "x"),
        ("multiply", "0", "unchanged", "unchanged"), // inf * 0 = nan, -1 * 0 = -0
        ("divide", "1", "unchanged", "x"),
        ("maximum", "-inf", "x", "x"),
        ("minimum", "inf", "x", "x"),
        ("maximum", "inf", "unchanged", "unchanged"),
        ("maximum", "0", "unchanged", "unchanged"),
    ];
    for ty in ["f32", "f16", "bf16", "f64"] {
        for (op, c, want_strict, want_lax) in cases {
            let (got, out) = identity_case(ty, op, c, strict);
            assert_eq!(got, want_strict, "{ty} {op}(x, {c}):\n{out}");
            let (got, out) = identity_case(ty, op, c, lax);
            assert_eq!(
                got, want_lax,
                "{ty} {op}(x, {c}) assuming no signaling NaNs:\n{out}"
            );
        }
    }
}

#[test]
fn an_operation_with_itself() {
    for (ty, op, want) in [
        ("f32", "maximum", true),
        ("f32", "minimum", true),
        ("s32", "and", true),
        ("pred", "or", true),
        ("f32", "add", false),
        ("s32", "subtract", false),
    ] {
        let out = simplify(&format!(
            "  p = {ty}[3] parameter(0)\n  ROOT r = {ty}[3] {op}(p, p)"
        ));
        assert_eq!(
            out.entry().root_instr().name == "p",
            want,
            "{ty} {op}(x, x):\n{out}"
        );
    }
}

#[test]
fn layouts_are_respected_before_normalization() {
    // Replacing a {0,1} value by a {1,0} one would change what the bitcast reads.
    let out = simplify("  p = f32[2,3]{1,0} parameter(0)\n  c = f32[2,3]{0,1} copy(p)\n  ROOT b = f32[6]{0} bitcast(c)");
    assert_ops(&out, &[Parameter, Copy, Bitcast]);
}

/// The simplifier with NaN payloads left unspecified, checked on random
/// inputs with every NaN counted equal to every other.
fn simplify_free_nans(body: &str) -> HloModule {
    let options = SimplifierOptions {
        nan_payloads_unspecified: true,
        ..SimplifierOptions::default()
    };
    let (m, out, _) = run_on_entry(&mut AlgebraicSimplifier::with_options(options), body);
    let (out, _) = run(&mut DeadCodeElimination::new(), &out);
    let mut rng = Rng(7);
    let args: Vec<Literal> = m
        .entry_program_shape()
        .parameters
        .iter()
        .map(|p| random_literal(p, &mut rng))
        .collect();
    let (want, got) = (evaluate(&m, &args).unwrap(), evaluate(&out, &args).unwrap());
    let values = |l: &Literal| -> Vec<String> {
        (0..l.element_count())
            .map(|k| format!("{:?}", l.get(k).ok()))
            .collect()
    };
    assert_eq!(values(&want), values(&got), "\n{m}\n{out}");
    out
}

#[test]
fn a_transposed_product_is_the_product_with_operands_swapped() {
    // [2,3]·[3,4] transposed: [4,3]·[3,2] read as dot(b, a).
    let out = simplify_free_nans("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT t = f32[4,2] transpose(d), dimensions={1,0}");
    assert_ops(&out, &[Parameter, Parameter, Dot]);
    let root = out.entry().root_instr();
    let Op::Dot { dnums, .. } = &root.op else {
        unreachable!()
    };
    assert_eq!(dnums.lhs_contracting_dims, [0]);
    assert_eq!(dnums.rhs_contracting_dims, [1]);
    assert_eq!(root.shape.to_string(), "f32[4,2]");
    // With batch dimensions, which stay first.
    let out = simplify_free_nans("  a = f32[5,2,3] parameter(0)\n  b = f32[5,4,3] parameter(1)\n  d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n  ROOT t = f32[5,4,2] transpose(d), dimensions={0,2,1}");
    assert_ops(&out, &[Parameter, Parameter, Dot]);
    // Not when the product has another user (it would be computed twice),
    // nor when the transpose moves a batch dimension, nor by default.
    let out = simplify_free_nans("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  t = f32[4,2] transpose(d), dimensions={1,0}\n  ROOT r = (f32[2,4], f32[4,2]) tuple(d, t)");
    assert_ops(&out, &[Parameter, Parameter, Dot, Transpose, Tuple]);
    let out = simplify_free_nans("  a = f32[5,2,3] parameter(0)\n  b = f32[5,4,3] parameter(1)\n  d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}\n  ROOT t = f32[2,5,4] transpose(d), dimensions={1,0,2}");
    assert_ops(&out, &[Parameter, Parameter, Dot, Transpose]);
    let out = simplify("  a = f32[2,3] parameter(0)\n  b = f32[3,4] parameter(1)\n  d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  ROOT t = f32[4,2] transpose(d), dimensions={1,0}");
    assert_ops(&out, &[Parameter, Parameter, Dot, Transpose]);
}

#[test]
fn reductions_of_one_element_are_one_op() {
    let module = |reducer: &str, ty: &str, init: &str| {
        parse(&format!(
            "HloModule m\n\nr {{\n  a = {ty}[] parameter(0)\n  b = {ty}[] parameter(1)\n  ROOT c = {ty}[] {reducer}\n}}\n\nENTRY e {{\n  p = {ty}[6,1,3,1] parameter(0)\n  i = {ty}[] constant({init})\n  ROOT s = {ty}[6,3] reduce(p, i), dimensions={{1,3}}, to_apply=r\n}}\n"
        ))
    };
    let mut rng = Rng(7);
    for (reducer, ty, init, want) in [
        // `and` with true is `x` itself: the rule, then the pred identity.
        ("and(a, b)", "pred", "true", vec![Parameter, Reshape]),
        (
            "add(a, b)",
            "f32",
            "-0",
            vec![Parameter, Constant, Broadcast, Reshape, Add],
        ),
        (
            "subtract(b, a)",
            "s32",
            "5",
            vec![Parameter, Constant, Broadcast, Reshape, Subtract],
        ),
        ("maximum(a, b)", "f32", "-inf", vec![Parameter, Reshape]),
    ] {
        let m = module(reducer, ty, init);
        let (s, changed) = run(&mut AlgebraicSimplifier::new(), &m);
        let (out, _) = run(&mut DeadCodeElimination::new(), &s);
        assert!(changed, "{reducer}");
        assert_eq!(entry_opcodes(&out), want, "{reducer}:\n{out}");
        let params = m.entry().program_shape().parameters;
        for _ in 0..4 {
            let args: Vec<Literal> = params.iter().map(|p| random_literal(p, &mut rng)).collect();
            let (a, b) = (evaluate(&m, &args).unwrap(), evaluate(&out, &args).unwrap());
            assert_eq!(a.bytes().unwrap(), b.bytes().unwrap(), "{reducer}:\n{out}");
        }
    }
    // A reduction of more than one element, or with a reducer of more than
    // one op, stays.
    let m = parse("HloModule m\n\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[6,2] parameter(0)\n  i = f32[] constant(0)\n  ROOT s = f32[6] reduce(p, i), dimensions={1}, to_apply=r\n}\n");
    assert!(!run(&mut AlgebraicSimplifier::new(), &m).1);
    let m = parse("HloModule m\n\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  s = f32[] add(a, b)\n  ROOT c = f32[] multiply(s, b)\n}\n\nENTRY e {\n  p = f32[6,1] parameter(0)\n  i = f32[] constant(0)\n  ROOT s = f32[6] reduce(p, i), dimensions={1}, to_apply=r\n}\n");
    assert!(!run(&mut AlgebraicSimplifier::new(), &m).1);
}

#[test]
fn transposed_dot_operands_are_read_in_place() {
    // A matrix-vector product through a transposed matrix (JAX's `h @ emb.T`).
    let out = simplify("  a = f32[5,3] parameter(0)\n  t = f32[3,5] transpose(a), dimensions={1,0}\n  v = f32[3] parameter(1)\n  ROOT d = f32[5] dot(v, t), lhs_contracting_dims={0}, rhs_contracting_dims={0}");
    assert_ops(&out, &[Parameter, Parameter, Dot]);
    let Op::Dot { dnums, .. } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert_eq!(dnums.rhs_contracting_dims, [1]);
    // Batch and contracting dimensions moved on the left, both sides at once.
    let out = simplify("  x = f32[4,2,3] parameter(0)\n  t = f32[2,4,3] transpose(x), dimensions={1,0,2}\n  y = f32[5,3,2] parameter(1)\n  u = f32[2,3,5] transpose(y), dimensions={2,1,0}\n  ROOT d = f32[2,4,5] dot(t, u), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}");
    assert_ops(&out, &[Parameter, Parameter, Dot]);
    let Op::Dot { dnums, .. } = &out.entry().root_instr().op else {
        unreachable!()
    };
    assert_eq!(
        (
            &dnums.lhs_batch_dims,
            &dnums.lhs_contracting_dims,
            &dnums.rhs_batch_dims,
            &dnums.rhs_contracting_dims
        ),
        (&vec![1], &vec![2], &vec![2], &vec![1])
    );
    // A transpose that reorders the free dimensions would reorder the
    // result's: it stays.
    let out = simplify("  x = f32[3,4,5] parameter(0)\n  t = f32[4,3,5] transpose(x), dimensions={1,0,2}\n  y = f32[5,6] parameter(1)\n  ROOT d = f32[4,3,6] dot(t, y), lhs_contracting_dims={2}, rhs_contracting_dims={0}");
    assert_ops(&out, &[Parameter, Transpose, Parameter, Dot]);
}
