//! Programs built with `HloBuilder`: they verify, print, and parse back to an equal
//! module; mistakes are reported at the call that makes them.

use hlo_ir::builder::{Computation, HloBuilder};
use hlo_ir::verifier::verify_module;
use hlo_ir::{
    BinaryOp, ComparisonDirection, ConvDimensionNumbers, CustomCallApiVersion, DotDimensionNumbers,
    FftType, GatherDimensionNumbers, HloModule, Op, PadDim, ScatterDimensionNumbers, UnaryOp,
    Window, WindowDim,
};
use hlo_ir::{Code, ElementType, Literal, Result, Shape};

use ElementType::{Pred, F32, S32};

fn f32s(dims: &[usize]) -> Shape {
    Shape::array(F32, dims.to_vec())
}

/// Verifies, prints, re-parses and compares; returns the text.
fn round_trip(module: &HloModule) -> String {
    verify_module(module).expect("built modules verify");
    let text = module.to_text();
    let again = HloModule::parse(&text).unwrap_or_else(|e| panic!("reparse: {e}\n{text}"));
    assert_eq!(&again, module, "print → parse changed the module:\n{text}");
    verify_module(&again).expect("the reparsed module verifies");
    assert_eq!(again.to_text(), text, "printing is not a fixed point");
    text
}

fn err_of<T: std::fmt::Debug>(r: Result<T>) -> hlo_ir::Error {
    let e = r.expect_err("the call must fail");
    assert_eq!(e.code(), Code::InvalidArgument, "{e}");
    e
}

fn assert_mentions(e: &hlo_ir::Error, fragments: &[&str]) {
    for f in fragments {
        assert!(
            e.message().contains(f),
            "message {:?} lacks {f:?}",
            e.message()
        );
    }
}

#[test]
fn custom_call_guide_do_it() -> Result<()> {
    // XLA's custom-call guide: A[i] = B[i % 128] + C[i] as a custom call.
    let mut b = HloBuilder::new("do_it");
    let p0 = b.parameter(0, Shape::array(F32, [128]), "p0")?;
    let p1 = b.parameter(1, Shape::array(F32, [2048]), "p1")?;
    let cc = b.custom_call("do_custom_call", &[p0, p1], Shape::array(F32, [2048]), b"")?;
    let module = b.build(cc)?;
    let text = round_trip(&module);
    assert!(
        text.contains("custom_call_target=\"do_custom_call\""),
        "{text}"
    );
    let entry = module.entry();
    assert_eq!(
        entry.program_shape().parameters,
        vec![f32s(&[128]), f32s(&[2048])]
    );
    assert_eq!(entry.root_instr().shape, f32s(&[2048]));
    assert!(entry.root_instr().backend_config.is_none());
    Ok(())
}

#[test]
fn custom_call_guide_with_tuples() -> Result<()> {
    // The guide's tuple example: one nested-tuple parameter, a tuple result.
    let p0_shape = Shape::tuple(vec![
        f32s(&[32]),
        Shape::tuple(vec![f32s(&[64]), f32s(&[128])]),
        f32s(&[256]),
    ]);
    let out_shape = Shape::tuple(vec![f32s(&[512]), f32s(&[1024])]);
    let mut b = HloBuilder::new("do_it");
    let p0 = b.parameter(0, p0_shape.clone(), "p0")?;
    let cc = b.custom_call("do_custom_call", &[p0], out_shape.clone(), b"")?;
    let module = b.build(cc)?;
    let text = round_trip(&module);
    assert!(
        text.contains("(f32[32], (f32[64], f32[128]), f32[256])"),
        "{text}"
    );
    assert!(text.contains("(f32[512], f32[1024])"), "{text}");
    assert_eq!(module.entry_program_shape().parameters, vec![p0_shape]);
    assert_eq!(module.entry_program_shape().result, out_shape);

    // Reading one leaf back out with get-tuple-element, as the guide suggests.
    let mut b = HloBuilder::new("unpack");
    let p0 = b.parameter(
        0,
        Shape::tuple(vec![
            f32s(&[32]),
            Shape::tuple(vec![f32s(&[64]), f32s(&[128])]),
        ]),
        "p0",
    )?;
    let inner = b.get_tuple_element(p0, 1)?;
    let leaf = b.get_tuple_element(inner, 0)?;
    assert_eq!(b.shape(leaf)?, &f32s(&[64]));
    round_trip(&b.build(leaf)?);
    Ok(())
}

#[test]
fn custom_call_opaque_and_api_version() -> Result<()> {
    let mut b = HloBuilder::new("with_opaque");
    let x = b.parameter(0, f32s(&[8]), "x")?;
    let cc = b.custom_call_with_api_version(
        "my_target",
        &[x],
        f32s(&[8]),
        b"alpha=0.5;\"quoted\"\n",
        CustomCallApiVersion::StatusReturningUnified,
    )?;
    let module = b.build(cc)?;
    let text = round_trip(&module);
    assert!(
        text.contains("api_version=API_VERSION_STATUS_RETURNING_UNIFIED"),
        "{text}"
    );
    let root = module.entry().root_instr();
    assert_eq!(
        root.backend_config.as_ref().map(|c| c.as_str()),
        Some("alpha=0.5;\"quoted\"\n")
    );
    // Opaque bytes that are not UTF-8 cannot be written as HLO text.
    let mut b = HloBuilder::new("bad_opaque");
    let x = b.parameter(0, f32s(&[8]), "x")?;
    let e = err_of(b.custom_call("t", &[x], f32s(&[8]), &[0xff, 0xfe]));
    assert_mentions(&e, &["custom-call", "UTF-8"]);
    Ok(())
}

#[test]
fn softmax_with_shared_reducers() -> Result<()> {
    let max = Computation::scalar_binary("max_f32", BinaryOp::Maximum, F32)?;
    let sum = Computation::scalar_binary("sum_f32", BinaryOp::Add, F32)?;
    let mut b = HloBuilder::new("softmax");
    let x = b.parameter(0, f32s(&[4, 10]), "x")?;
    let neg_inf = b.constant(Literal::scalar(f32::NEG_INFINITY))?;
    let zero = b.constant(Literal::scalar(0f32))?;
    let m = b.reduce(&[x], &[neg_inf], &max, &[1])?;
    assert_eq!(b.shape(m)?, &f32s(&[4]));
    let mb = b.broadcast_in_dim(m, &[4, 10], &[0])?;
    let shifted = b.binary(BinaryOp::Subtract, x, mb)?;
    let e = b.unary(UnaryOp::Exp, shifted)?;
    let s = b.reduce(&[e], &[zero], &sum, &[1])?;
    let s2 = b.reduce(&[e], &[zero], &sum, &[1])?; // the same reducer again
    let total = b.binary(BinaryOp::Add, s, s2)?;
    let sb = b.broadcast_in_dim(total, &[4, 10], &[0])?;
    let out = b.binary(BinaryOp::Divide, e, sb)?;
    let module = b.build(out)?;
    round_trip(&module);
    // Each reducer is attached once however often it is used.
    assert_eq!(module.computations.len(), 3);
    assert_eq!(module.entry().root_instr().shape, f32s(&[4, 10]));
    Ok(())
}

#[test]
fn names_stay_unique_across_computations() -> Result<()> {
    // The sub-computation and the entry both name a parameter "p0" and both
    // computations are called "f".
    let mut sb = HloBuilder::new("f");
    let p = sb.parameter(0, f32s(&[3]), "p0")?;
    let n = sb.unary(UnaryOp::Negate, p)?;
    let f = sb.build_computation(n)?;
    let mut b = HloBuilder::new("f");
    let p0 = b.parameter(0, f32s(&[3]), "p0")?;
    let c1 = b.call(&f, &[p0])?;
    let n1 = b.unary(UnaryOp::Negate, c1)?;
    let module = b.build(n1)?;
    round_trip(&module);
    let mut names: Vec<&str> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.as_str()))
        .collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "instruction names repeat: {names:?}");
    assert_ne!(module.computations[0].name, module.computations[1].name);
    Ok(())
}

#[test]
fn argsort_with_a_built_comparator() -> Result<()> {
    // Comparator over (key, index) pairs: compares keys only.
    let mut cb = HloBuilder::new("less_by_key");
    let a = cb.parameter(0, Shape::scalar(F32), "a")?;
    let b_ = cb.parameter(1, Shape::scalar(F32), "b")?;
    cb.parameter(2, Shape::scalar(S32), "ia")?;
    cb.parameter(3, Shape::scalar(S32), "ib")?;
    let lt = cb.compare(a, b_, ComparisonDirection::Lt)?;
    let less = cb.build_computation(lt)?;

    let mut b = HloBuilder::new("argsort");
    let x = b.parameter(0, f32s(&[7, 11]), "x")?;
    let idx = b.iota(Shape::array(S32, [7, 11]), 1)?;
    let sorted = b.sort(&[x, idx], &less, 1, true)?;
    assert_eq!(
        b.shape(sorted)?,
        &Shape::tuple(vec![f32s(&[7, 11]), Shape::array(S32, [7, 11])])
    );
    let indices = b.get_tuple_element(sorted, 1)?;
    round_trip(&b.build(indices)?);

    // A comparator of the wrong arity is reported at the sort call.
    let lt1 = Computation::comparator("lt", ComparisonDirection::Lt, F32)?;
    let mut b = HloBuilder::new("bad_sort");
    let x = b.parameter(0, f32s(&[5]), "x")?;
    let i = b.iota(Shape::array(S32, [5]), 0)?;
    let e = err_of(b.sort(&[x, i], &lt1, 0, false));
    assert_mentions(
        &e,
        &[
            "sort",
            "comparator %lt",
            "(f32[], f32[]) -> pred[]",
            "(f32[], f32[], s32[], s32[]) -> pred[]",
        ],
    );
    Ok(())
}

#[test]
fn while_loop_counting_to_ten() -> Result<()> {
    let state = Shape::tuple(vec![Shape::scalar(S32), f32s(&[4])]);
    // condition: i < 10
    let mut cb = HloBuilder::new("cond");
    let s = cb.parameter(0, state.clone(), "s")?;
    let i = cb.get_tuple_element(s, 0)?;
    let ten = cb.constant(Literal::scalar(10i32))?;
    let lt = cb.compare(i, ten, ComparisonDirection::Lt)?;
    let cond = cb.build_computation(lt)?;
    // body: (i + 1, v * 2)
    let mut bb = HloBuilder::new("body");
    let s = bb.parameter(0, state.clone(), "s")?;
    let i = bb.get_tuple_element(s, 0)?;
    let v = bb.get_tuple_element(s, 1)?;
    let one = bb.constant(Literal::scalar(1i32))?;
    let two = bb.constant(Literal::vector(&[2f32; 4]))?;
    let i1 = bb.binary(BinaryOp::Add, i, one)?;
    let v2 = bb.binary(BinaryOp::Multiply, v, two)?;
    let next = bb.tuple(&[i1, v2])?;
    let body = bb.build_computation(next)?;

    let mut b = HloBuilder::new("loop");
    let v = b.parameter(0, f32s(&[4]), "v")?;
    let zero = b.constant(Literal::scalar(0i32))?;
    let init = b.tuple(&[zero, v])?;
    let w = b.while_loop(&cond, &body, init)?;
    assert_eq!(b.shape(w)?, &state);
    let out = b.get_tuple_element(w, 1)?;
    round_trip(&b.build(out)?);

    // A body that changes the state's shape is rejected at the while call.
    let mut bb = HloBuilder::new("bad_body");
    let s = bb.parameter(0, state.clone(), "s")?;
    let i = bb.get_tuple_element(s, 0)?;
    let bad = bb.build_computation(i)?;
    let mut b = HloBuilder::new("bad_loop");
    let v = b.parameter(0, f32s(&[4]), "v")?;
    let zero = b.constant(Literal::scalar(0i32))?;
    let init = b.tuple(&[zero, v])?;
    let e = err_of(b.while_loop(&cond, &bad, init));
    assert_mentions(
        &e,
        &["while", "body %bad_body returns s32[]", "(s32[], f32[4])"],
    );
    Ok(())
}

#[test]
fn conditionals() -> Result<()> {
    let branch = |name: &str, op: UnaryOp| -> Result<Computation> {
        let mut b = HloBuilder::new(name);
        let x = b.parameter(0, f32s(&[3]), "x")?;
        let y = b.unary(op, x)?;
        b.build_computation(y)
    };
    let neg = branch("neg", UnaryOp::Negate)?;
    let abs = branch("abs", UnaryOp::Abs)?;
    let exp = branch("exp", UnaryOp::Exp)?;

    let mut b = HloBuilder::new("switch");
    let i = b.parameter(0, Shape::scalar(S32), "i")?;
    let x = b.parameter(1, f32s(&[3]), "x")?;
    let r = b.conditional(i, &[&neg, &abs, &exp], &[x, x, x])?;
    let p = b.parameter(2, Shape::scalar(Pred), "p")?;
    let r2 = b.if_then_else(p, r, &neg, x, &abs)?;
    let module = b.build(r2)?;
    let text = round_trip(&module);
    assert!(text.contains("branch_computations="), "{text}");
    assert!(text.contains("true_computation="), "{text}");

    let mut b = HloBuilder::new("bad_switch");
    let i = b.parameter(0, Shape::scalar(F32), "i")?;
    let x = b.parameter(1, f32s(&[3]), "x")?;
    let e = err_of(b.conditional(i, &[&neg, &abs], &[x, x]));
    assert_mentions(
        &e,
        &["conditional", "selector must be pred[] or s32[]", "f32[]"],
    );
    Ok(())
}

#[test]
fn data_movement_and_linear_algebra() -> Result<()> {
    let mut b = HloBuilder::new("kitchen_sink");
    let x = b.parameter(0, f32s(&[2, 3, 4]), "x")?;
    let t = b.transpose(x, &[2, 0, 1])?;
    assert_eq!(b.shape(t)?, &f32s(&[4, 2, 3]));
    let r = b.reshape(t, &[8, 3])?;
    let s = b.slice(r, &[1, 0], &[8, 3], &[3, 2])?;
    // ceil((8-1)/3) = 3 rows, ceil(3/2) = 2 columns.
    assert_eq!(b.shape(s)?, &f32s(&[3, 2]));
    let c = b.concatenate(&[s, s], 0)?;
    assert_eq!(b.shape(c)?, &f32s(&[6, 2]));
    let zero = b.constant(Literal::scalar(0f32))?;
    let pad = PadDim {
        low: -1,
        high: 2,
        interior: 1,
    };
    let p = b.pad(c, zero, &[pad.clone(), PadDim::default()])?;
    // -1 + 6 + 5 interior + 2 = 12.
    assert_eq!(b.shape(p)?, &f32s(&[12, 2]));
    let rev = b.reverse(p, &[0, 1])?;
    let w = b.parameter(1, f32s(&[2, 5]), "w")?;
    let d = b.dot(rev, w)?;
    assert_eq!(b.shape(d)?, &f32s(&[12, 5]));
    // Batched matmul with batch dimension last on the rhs, bf16 accumulating in f32.
    let lb = b.parameter(2, Shape::array(ElementType::BF16, [6, 2, 3]), "lb")?;
    let rb = b.parameter(3, Shape::array(ElementType::BF16, [3, 7, 6]), "rb")?;
    let dnums = DotDimensionNumbers {
        lhs_batch_dims: vec![0],
        rhs_batch_dims: vec![2],
        lhs_contracting_dims: vec![2],
        rhs_contracting_dims: vec![0],
    };
    let bd = b.dot_general(lb, rb, dnums, Some(F32))?;
    assert_eq!(b.shape(bd)?, &f32s(&[6, 2, 7]));
    let bc = b.broadcast(d, &[2])?;
    assert_eq!(b.shape(bc)?, &f32s(&[2, 12, 5]));
    let i0 = b.constant(Literal::scalar(1i32))?;
    let ds = b.dynamic_slice(bc, &[i0, i0, i0], &[1, 4, 2])?;
    let upd = b.dynamic_update_slice(bc, ds, &[i0, i0, i0])?;
    let cv = b.convert(upd, S32)?;
    let bits = b.bitcast_convert(cv, ElementType::U8)?;
    assert_eq!(
        b.shape(bits)?,
        &Shape::array(ElementType::U8, [2, 12, 5, 4])
    );
    let back = b.bitcast_convert(bits, F32)?;
    let fl = b.bitcast(back, f32s(&[120]))?;
    let out = b.tuple(&[fl, bd])?;
    round_trip(&b.build(out)?);
    Ok(())
}

#[test]
fn convolution_gather_scatter_fft() -> Result<()> {
    let mut b = HloBuilder::new("conv_gather_scatter");
    // NHWC input 1x5x5x2, HWIO kernel 3x3x2x4, stride 2, padding 1 on each side.
    let x = b.parameter(0, f32s(&[1, 5, 5, 2]), "x")?;
    let k = b.parameter(1, f32s(&[3, 3, 2, 4]), "k")?;
    let dim = |size| WindowDim {
        stride: 2,
        padding_low: 1,
        padding_high: 1,
        ..WindowDim::of_size(size)
    };
    let dnums = ConvDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 3,
        input_spatial_dimensions: vec![1, 2],
        kernel_input_feature_dimension: 2,
        kernel_output_feature_dimension: 3,
        kernel_spatial_dimensions: vec![0, 1],
        output_batch_dimension: 0,
        output_feature_dimension: 3,
        output_spatial_dimensions: vec![1, 2],
    };
    let y = b.convolution(
        x,
        k,
        Window {
            dims: vec![dim(3), dim(3)],
        },
        dnums,
        1,
        1,
        None,
    )?;
    let spatial = (5 + 1 + 1 - 3) / 2 + 1;
    assert_eq!(b.shape(y)?, &f32s(&[1, spatial, spatial, 4]));

    // Gather rows 2 and 0 of a [10, 4] table.
    let table = b.parameter(2, f32s(&[10, 4]), "table")?;
    let ids = b.constant(Literal::from_slice(&[2, 1], &[2i32, 0])?)?;
    let gdn = GatherDimensionNumbers {
        offset_dims: vec![1],
        collapsed_slice_dims: vec![0],
        start_index_map: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let rows = b.gather(table, ids, gdn, &[1, 4], false)?;
    assert_eq!(b.shape(rows)?, &f32s(&[2, 4]));

    // Scatter-add them back.
    let add = Computation::scalar_binary("add", BinaryOp::Add, F32)?;
    let sdn = ScatterDimensionNumbers {
        update_window_dims: vec![1],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    let sc = b.scatter(&[table], ids, &[rows], &add, sdn, false, false)?;
    assert_eq!(b.shape(sc)?, &f32s(&[10, 4]));

    // RFFT of length 16 keeps 16/2 + 1 = 9 frequencies.
    let sig = b.parameter(3, f32s(&[3, 16]), "sig")?;
    let spec = b.fft(sig, FftType::Rfft, &[16])?;
    assert_eq!(b.shape(spec)?, &Shape::array(ElementType::C64, [3, 9]));
    let back = b.fft(spec, FftType::Irfft, &[16])?;
    assert_eq!(b.shape(back)?, &f32s(&[3, 16]));

    let out = b.tuple(&[y, sc, back])?;
    round_trip(&b.build(out)?);
    Ok(())
}

#[test]
fn variadic_reduce_and_top_k() -> Result<()> {
    // argmax over dimension 1: reduce (value, index) pairs.
    let mut rb = HloBuilder::new("argmax");
    let av = rb.parameter(0, Shape::scalar(F32), "av")?;
    let ai = rb.parameter(1, Shape::scalar(S32), "ai")?;
    let bv = rb.parameter(2, Shape::scalar(F32), "bv")?;
    let bi = rb.parameter(3, Shape::scalar(S32), "bi")?;
    let keep_a = rb.compare(av, bv, ComparisonDirection::Ge)?;
    let v = rb.select(keep_a, av, bv)?;
    let i = rb.select(keep_a, ai, bi)?;
    let r = rb.tuple(&[v, i])?;
    let argmax = rb.build_computation(r)?;

    let mut b = HloBuilder::new("argmax_and_topk");
    let x = b.parameter(0, f32s(&[4, 6]), "x")?;
    let idx = b.iota(Shape::array(S32, [4, 6]), 1)?;
    let ninf = b.constant(Literal::scalar(f32::NEG_INFINITY))?;
    let z = b.constant(Literal::scalar(0i32))?;
    let red = b.reduce(&[x, idx], &[ninf, z], &argmax, &[1])?;
    assert_eq!(
        b.shape(red)?,
        &Shape::tuple(vec![f32s(&[4]), Shape::array(S32, [4])])
    );
    let tk = b.top_k(x, 3, true)?;
    assert_eq!(
        b.shape(tk)?,
        &Shape::tuple(vec![f32s(&[4, 3]), Shape::array(S32, [4, 3])])
    );
    let out = b.tuple(&[red, tk])?;
    round_trip(&b.build(out)?);
    Ok(())
}

#[test]
fn errors_name_the_op_and_the_shapes() -> Result<()> {
    let mut b = HloBuilder::new("errors");
    let x = b.parameter(0, f32s(&[2, 3]), "x")?;
    let y = b.parameter(1, f32s(&[3, 2]), "y")?;
    let e = err_of(b.binary(BinaryOp::Add, x, y));
    assert_mentions(&e, &["add: operand shapes f32[2,3] and f32[3,2] differ"]);
    let e = err_of(b.reshape(x, &[4]));
    assert_mentions(
        &e,
        &["reshape", "f32[2,3]", "6 elements", "f32[4]", "4 elements"],
    );
    let e = err_of(b.dot(x, x));
    assert_mentions(&e, &["dot", "f32[2,3]", "contracting"]);
    let e = err_of(b.transpose(x, &[0]));
    assert_mentions(&e, &["transpose", "{0}", "f32[2,3]"]);
    let e = err_of(b.parameter(0, f32s(&[1]), "again"));
    assert_mentions(&e, &["parameter", "already has a parameter 0"]);
    let sum = Computation::scalar_binary("sum_s32", BinaryOp::Add, S32)?;
    let z = b.constant(Literal::scalar(0f32))?;
    let e = err_of(b.reduce(&[x], &[z], &sum, &[0]));
    assert_mentions(
        &e,
        &[
            "reduce",
            "%sum_s32",
            "(s32[], s32[]) -> s32[]",
            "expected (f32[], f32[]) -> f32[]",
        ],
    );

    // A value from another builder.
    let mut other = HloBuilder::new("other");
    let o = other.parameter(0, f32s(&[2, 3]), "o")?;
    let e = err_of(b.binary(BinaryOp::Add, x, o));
    assert_mentions(&e, &["another builder"]);

    // The failed calls added nothing: the builder still builds.
    let n = b.unary(UnaryOp::Negate, x)?;
    let module = b.build(n)?;
    assert_eq!(module.entry().instructions.len(), 4);

    // Parameter numbers with a gap are reported at build.
    let mut b = HloBuilder::new("gap");
    let p = b.parameter(1, f32s(&[2]), "p")?;
    let e = err_of(b.build(p));
    assert_mentions(&e, &["parameter numbers", "0 is missing"]);
    Ok(())
}

#[test]
fn generic_add_op_covers_the_rest() -> Result<()> {
    // send/recv through the generic entry point, still shape-checked.
    let mut b = HloBuilder::new("send_recv");
    let x = b.parameter(0, f32s(&[4]), "x")?;
    let tok = b.after_all(&[])?;
    let send = b.add_op(
        Op::Send {
            channel_id: Some(1),
            is_host_transfer: false,
        },
        &[x, tok],
        Shape::tuple(vec![
            f32s(&[4]),
            Shape::scalar(ElementType::U32),
            Shape::Token,
        ]),
    )?;
    let done = b.add_op(
        Op::SendDone {
            channel_id: Some(1),
            is_host_transfer: false,
        },
        &[send],
        Shape::Token,
    )?;
    let dep = b.add_dependency(x, done)?;
    round_trip(&b.build(dep)?);

    let mut b = HloBuilder::new("bad_send");
    let x = b.parameter(0, f32s(&[4]), "x")?;
    let tok = b.after_all(&[])?;
    let e = err_of(b.add_op(
        Op::Send {
            channel_id: Some(1),
            is_host_transfer: false,
        },
        &[x, tok],
        Shape::tuple(vec![
            f32s(&[5]),
            Shape::scalar(ElementType::U32),
            Shape::Token,
        ]),
    ));
    assert_mentions(
        &e,
        &[
            "send",
            "(f32[5], u32[], token[])",
            "(f32[4], u32[], token[])",
        ],
    );
    Ok(())
}

#[test]
fn named_elementwise_methods() -> Result<()> {
    let mut b = HloBuilder::new("named");
    let x = b.parameter(0, f32s(&[4]), "x")?;
    let y = b.parameter(1, f32s(&[4]), "y")?;
    let s = b.add(x, y)?;
    let p = b.mul(s, y)?;
    let d = b.sub(p, x)?;
    let q = b.div(d, y)?;
    let m = b.max(q, x)?;
    let e = b.exp(m)?;
    let t = b.tanh(e)?;
    let lt = b.lt(t, x)?;
    let fin = b.is_finite(t)?;
    let both = b.and(lt, fin)?;
    let sel = b.select(both, t, x)?;
    assert_eq!(b.shape(both)?, &Shape::array(Pred, [4]));
    let module = b.build(sel)?;
    let text = round_trip(&module);
    for opcode in [
        "add(",
        "multiply(",
        "subtract(",
        "divide(",
        "maximum(",
        "exponential(",
        "tanh(",
        "compare(",
        "direction=LT",
        "is-finite(",
        "and(",
        "select(",
    ] {
        assert!(text.contains(opcode), "{opcode} missing from\n{text}");
    }
    Ok(())
}

#[test]
fn collectives_async_and_host_transfers() -> Result<()> {
    let sum = Computation::scalar_binary("sum", BinaryOp::Add, F32)?;
    let groups = vec![vec![0, 1, 2, 3]];
    let mut b = HloBuilder::new("collectives");
    let x = b.parameter(0, f32s(&[2, 3]), "x")?;
    let ar = b.all_reduce(&[x], &sum, &groups)?;
    let ag = b.all_gather(ar, 0, &groups)?;
    assert_eq!(b.shape(ag)?, &f32s(&[8, 3]));
    let rs = b.reduce_scatter(ag, &sum, 0, &groups)?;
    assert_eq!(b.shape(rs)?, &f32s(&[2, 3]));
    let a2a = b.all_to_all(ag, 0, &groups)?;
    let cp = b.collective_permute(rs, &[(0, 1), (1, 2), (2, 3), (3, 0)])?;
    let cb = b.collective_broadcast(cp, &groups)?;
    let rid = b.replica_id()?;
    let pid = b.partition_id()?;
    let e = err_of(b.all_gather(x, 0, &[]));
    assert_mentions(&e, &["all-gather", "replica groups"]);

    // An asynchronous computation, an asynchronous copy, a send/recv pair.
    let mut nb = HloBuilder::new("negate_async");
    let v = nb.parameter(0, f32s(&[2, 3]), "v")?;
    let n = nb.neg(v)?;
    let negate = nb.build_computation(n)?;
    let started = b.async_start(&negate, &[cb], &[Shape::scalar(S32)])?;
    let updated = b.async_update(started)?;
    let done = b.async_done(updated)?;
    let cs = b.copy_start(done)?;
    let copied = b.copy_done(cs)?;
    let tok = b.after_all(&[])?;
    let sent = b.send(copied, tok, 7, false)?;
    let sent_done = b.send_done(sent, 7, false)?;
    let received = b.recv(sent_done, f32s(&[2, 3]), 8, false)?;
    let received_done = b.recv_done(received, 8, false)?;
    let value = b.get_tuple_element(received_done, 0)?;
    let state = b.rng_get_and_update_state(4)?;
    let out = b.tuple(&[a2a, value, rid, pid, state])?;
    let module = b.build(out)?;
    let text = round_trip(&module);
    for opcode in [
        "all-reduce(",
        "all-gather(",
        "reduce-scatter(",
        "all-to-all(",
        "collective-permute(",
        "collective-broadcast(",
        "async-start(",
        "async-update(",
        "async-done(",
        "copy-start(",
        "copy-done(",
        "send(",
        "send-done(",
        "recv(",
        "recv-done(",
        "rng-get-and-update-state(",
    ] {
        assert!(text.contains(opcode), "{opcode} missing from\n{text}");
    }
    Ok(())
}

#[test]
fn windows_batch_norm_and_the_remaining_ops() -> Result<()> {
    let max = Computation::scalar_binary("max", BinaryOp::Maximum, F32)?;
    let sum = Computation::scalar_binary("sum", BinaryOp::Add, F32)?;
    let ge = Computation::comparator("ge", ComparisonDirection::Ge, F32)?;
    let mut b = HloBuilder::new("windows");
    let x = b.parameter(0, f32s(&[4, 6]), "x")?;
    let ninf = b.constant(Literal::scalar(f32::NEG_INFINITY))?;
    let zero = b.constant(Literal::scalar(0f32))?;
    let w = Window {
        dims: vec![
            WindowDim {
                stride: 2,
                ..WindowDim::of_size(2)
            },
            WindowDim {
                stride: 2,
                ..WindowDim::of_size(2)
            },
        ],
    };
    let pooled = b.reduce_window(&[x], &[ninf], &max, w.clone())?;
    assert_eq!(b.shape(pooled)?, &f32s(&[2, 3]));
    let grad = b.select_and_scatter(x, &ge, w, pooled, zero, &sum)?;
    assert_eq!(b.shape(grad)?, &f32s(&[4, 6]));
    let scale = b.parameter(1, f32s(&[6]), "scale")?;
    let offset = b.parameter(2, f32s(&[6]), "offset")?;
    let bn = b.batch_norm_training(grad, scale, offset, 1e-3, 1)?;
    let normed = b.get_tuple_element(bn, 0)?;
    let mean = b.get_tuple_element(bn, 1)?;
    let var = b.get_tuple_element(bn, 2)?;
    let inf = b.batch_norm_inference(normed, scale, offset, mean, var, 1e-3, 1)?;
    let bng = b.batch_norm_grad(inf, scale, mean, var, normed, 1e-3, 1)?;
    let gin = b.get_tuple_element(bng, 0)?;
    let rp = b.reduce_precision(gin, 5, 10)?;
    let lo = b.constant(Literal::scalar(-1f32))?;
    let hi = b.constant(Literal::scalar(1f32))?;
    let cl = b.clamp(lo, rp, hi)?;
    let mapped = b.map(&[cl, x], &sum)?;
    let barrier = b.optimization_barrier(mapped)?;
    let size = b.get_dimension_size(barrier, 1)?;
    let dynamic = b.set_dimension_size(barrier, size, 1)?;
    let rev = b.reverse(dynamic, &[1])?;
    let cp = b.copy(rev)?;
    let u = b.rng_uniform(lo, hi, f32s(&[4, 6]))?;
    let n = b.rng_normal(zero, hi, f32s(&[4, 6]))?;
    let key = b.parameter(3, Shape::array(ElementType::U64, [2]), "key")?;
    let bits = b.rng_bit_generator(
        hlo_ir::RandomAlgorithm::ThreeFry,
        key,
        Shape::array(ElementType::U32, [4, 6]),
    )?;
    let a = b.parameter(4, f32s(&[3, 3]), "a")?;
    let l = b.cholesky(a, true)?;
    let sol = b.triangular_solve(
        l,
        a,
        hlo_ir::TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: false,
            transpose_a: hlo_ir::TriangularTranspose::NoTranspose,
        },
    )?;
    let tok = b.after_all(&[])?;
    let fed = b.infeed(tok, f32s(&[2]), "")?;
    let fed_tok = b.get_tuple_element(fed, 1)?;
    let out_tok = b.outfeed(cp, fed_tok, "")?;
    let gated = b.add_dependency(u, out_tok)?;
    let out = b.tuple(&[gated, n, bits, sol])?;
    round_trip(&b.build(out)?);
    Ok(())
}
