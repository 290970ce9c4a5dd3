//! The typed Rust API (`API_VERSION_TYPED_FFI`): typed buffer views, attributes
//! decoded from `backend_config`, errors instead of undefined behaviour when a
//! call does not match what the handler expects, handler errors and panics.

mod custom_call_common;

use custom_call_common::{custom_call, values};
use platform_api::custom_call::{
    call_host_target, check_instruction, register_target, CallFrame, HostCustomCall, Target,
};
use platform_api::{register_custom_call, Code, ElementType, Error, Literal, Result, Shape};
use std::ffi::c_void;
use std::sync::Arc;

/// `y = x * scale + offset`, with `name` and `flag` checked, for f32 of any shape.
fn affine(call: &mut CallFrame<'_>) -> Result<()> {
    call.expect_counts(1, 1)?;
    let attrs = call.attributes();
    let scale: f32 = attrs.get("scale")?;
    let offset: i32 = attrs.get("offset")?;
    let name: String = attrs.get("name")?;
    if name != "affine" || !attrs.get::<bool>("flag")? {
        return Err(Error::invalid_argument(format!(
            "affine: called as {name:?}"
        )));
    }
    let x = call.arg_data::<f32>(0)?;
    let y = call.result_data::<f32>(0)?;
    if x.len() != y.len() {
        return Err(call.error("operand and result sizes differ"));
    }
    for (y, x) in y.iter_mut().zip(x) {
        *y = x * scale + offset as f32;
    }
    Ok(())
}
register_custom_call!("affine", "Interpreter", Typed(affine));

/// Declares its signature exactly: f32[4] in, (f32[4], s32[]) out: the sum of
/// the tuple operand's leaves and the count of negative elements.
fn sum_leaves(call: &mut CallFrame<'_>) -> Result<()> {
    call.expect_counts(2, 2)?;
    let a = call.arg(0)?.expect(ElementType::F32, &[4])?.data::<f32>()?;
    let b = call.arg(1)?.expect(ElementType::F32, &[4])?.data::<f32>()?;
    let sum = call
        .take_result(0)?
        .expect(ElementType::F32, &[4])?
        .into_data::<f32>()?;
    let negatives = call
        .take_result(1)?
        .expect(ElementType::S32, &[])?
        .into_data::<i32>()?;
    negatives[0] = 0;
    for i in 0..4 {
        sum[i] = a[i] + b[i];
        negatives[0] += (a[i] < 0.0) as i32 + (b[i] < 0.0) as i32;
    }
    Ok(())
}
register_custom_call!("sum_leaves", "Interpreter", Typed(sum_leaves));

/// Asks for an argument that is not there.
fn greedy(call: &mut CallFrame<'_>) -> Result<()> {
    let _ = call.arg_data::<f32>(3)?;
    Ok(())
}
register_custom_call!("greedy", "Interpreter", Typed(greedy));

/// Fails on purpose, with its own code.
fn refuses(call: &mut CallFrame<'_>) -> Result<()> {
    Err(Error::out_of_range(format!(
        "refuses: {} attributes",
        call.attributes().len()
    )))
}
register_custom_call!("refuses", "Interpreter", Typed(refuses));

fn panics(_call: &mut CallFrame<'_>) -> Result<()> {
    panic!("handler bug")
}
register_custom_call!("panics", "Interpreter", Typed(panics));

fn affine_hlo(shape: &str, config: &str) -> String {
    format!(
        r#"
HloModule typed
ENTRY e {{
  p0 = {shape} parameter(0)
  ROOT cc = {shape} custom-call(p0), custom_call_target="affine", api_version=API_VERSION_TYPED_FFI, backend_config={config}
}}
"#
    )
}

#[test]
fn typed_handler_gets_views_and_attributes() {
    for config in [
        // XLA prints the dictionary either way.
        r#"{scale = 2.500000e+00 : f32, offset = 3 : i32, name = "affine", flag = true}"#,
        r#""{scale = 2.5 : f32, offset = 3 : i32, name = \"affine\", flag = true}""#,
    ] {
        let cc = custom_call(&affine_hlo("f32[2,3]", config));
        check_instruction("Interpreter", &cc).unwrap();
        let x = values(6, 1.0);
        let out = call_host_target(
            "Interpreter",
            &cc,
            &[&Literal::from_slice(&[2, 3], &x).unwrap()],
        )
        .unwrap();
        let expected: Vec<f32> = x.iter().map(|v| v * 2.5 + 3.0).collect();
        assert_eq!(out.data::<f32>().unwrap(), expected.as_slice());
        assert_eq!(out.dims(), &[2, 3]);
    }
}

#[test]
fn attribute_errors_are_reported() {
    // Missing attribute: the handler's own error, naming it.
    let cc = custom_call(&affine_hlo(
        "f32[2]",
        r#"{scale = 2.5 : f32, name = "affine", flag = true}"#,
    ));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[1f32, 2.0])]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("`offset` is missing") && e.message().contains("%cc"),
        "{e}"
    );
    // Malformed dictionary: refused at compile time.
    let cc = custom_call(&affine_hlo("f32[2]", r#""{scale = }""#));
    let e = check_instruction("Interpreter", &cc).unwrap_err();
    assert!(e.message().contains("backend_config"), "{e}");
    // Wrong kind: a string where a float is read.
    let cc = custom_call(&affine_hlo(
        "f32[2]",
        r#"{scale = "big", offset = 3 : i32, name = "affine", flag = true}"#,
    ));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[1f32, 2.0])]).unwrap_err();
    assert!(
        e.message().contains("`scale`") && e.message().contains("string"),
        "{e}"
    );
}

const SUM_HLO: &str = r#"
HloModule typed_tuple
ENTRY e {
  p0 = (f32[4], f32[4]) parameter(0)
  ROOT cc = (f32[4], s32[]) custom-call(p0), custom_call_target="sum_leaves", api_version=API_VERSION_TYPED_FFI
}
"#;

#[test]
fn typed_handler_sees_tuple_leaves_flattened() {
    let cc = custom_call(SUM_HLO);
    let (a, b) = ([1f32, -2.0, 3.0, -4.0], [0.5f32, 0.5, -0.5, 0.5]);
    let p0 = Literal::tuple(vec![Literal::vector(&a), Literal::vector(&b)]);
    let out = call_host_target("Interpreter", &cc, &[&p0]).unwrap();
    let e = out.tuple_elements();
    assert_eq!(e[0].data::<f32>().unwrap(), &[1.5, -1.5, 2.5, -3.5]);
    assert_eq!(e[1].data::<i32>().unwrap(), &[3]);
}

#[test]
fn typed_shape_mismatch_is_an_error_not_undefined_behaviour() {
    // f32[5] leaves where the handler declares f32[4].
    let cc = custom_call(&SUM_HLO.replace("(f32[4], f32[4])", "(f32[5], f32[5])"));
    let p0 = Literal::tuple(vec![
        Literal::vector(&[0f32; 5]),
        Literal::vector(&[0f32; 5]),
    ]);
    let e = call_host_target("Interpreter", &cc, &[&p0]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("f32[5]") && e.message().contains("f32[4]"),
        "{e}"
    );
    // s32 leaves viewed as f32.
    let cc = custom_call(&SUM_HLO.replace("(f32[4], f32[4])", "(s32[4], s32[4])"));
    let p0 = Literal::tuple(vec![
        Literal::vector(&[0i32; 4]),
        Literal::vector(&[0i32; 4]),
    ]);
    let e = call_host_target("Interpreter", &cc, &[&p0]).unwrap_err();
    assert!(e.message().contains("s32[4]"), "{e}");
    // One operand where two leaves are expected.
    let cc = custom_call(&SUM_HLO.replace("(f32[4], f32[4])", "f32[4]"));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 4])]).unwrap_err();
    assert!(
        e.message().contains("2 argument(s)") && e.message().contains("has 1"),
        "{e}"
    );
    // An argument index past the end.
    let cc = custom_call(&affine_hlo("f32[2]", "{}").replace("\"affine\"", "\"greedy\""));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 2])]).unwrap_err();
    assert!(
        e.message().contains("argument 3") && e.message().contains("\"greedy\""),
        "{e}"
    );
}

#[test]
fn handler_errors_keep_their_code_and_panics_are_caught() {
    let cc =
        custom_call(&affine_hlo("f32[2]", "{a = 1, b = 2}").replace("\"affine\"", "\"refuses\""));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 2])]).unwrap_err();
    assert_eq!(e.code(), Code::OutOfRange);
    assert!(
        e.message().contains("refuses: 2 attributes") && e.message().contains("%cc"),
        "{e}"
    );

    let cc = custom_call(&affine_hlo("f32[2]", "{}").replace("\"affine\"", "\"panics\""));
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 2])]).unwrap_err();
    assert_eq!(e.code(), Code::Internal);
    assert!(e.message().contains("panicked: handler bug"), "{e}");
    // Still usable afterwards.
    let cc = custom_call(SUM_HLO);
    let p0 = Literal::tuple(vec![
        Literal::vector(&[1f32; 4]),
        Literal::vector(&[1f32; 4]),
    ]);
    assert!(call_host_target("Interpreter", &cc, &[&p0]).is_ok());
}

#[test]
fn closures_register_at_run_time() {
    let bias = 7.0f32;
    let handler = Arc::new(move |call: &mut CallFrame<'_>| -> Result<()> {
        let x = call.arg_data::<f32>(0)?;
        let y = call.result_data::<f32>(0)?;
        for (y, x) in y.iter_mut().zip(x) {
            *y = x + bias;
        }
        Ok(())
    });
    register_target("add_bias", "Interpreter", Target::TypedClosure(handler)).unwrap();
    let cc = custom_call(&affine_hlo("f32[3]", "{}").replace("\"affine\"", "\"add_bias\""));
    let out = call_host_target("Interpreter", &cc, &[&Literal::vector(&[1f32, 2.0, 3.0])]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[8.0, 9.0, 10.0]);
}

#[test]
fn typed_raw_call_reads_tables_and_checks_buffers() {
    let cc = custom_call(SUM_HLO);
    let prepared = HostCustomCall::prepare("Interpreter", &cc).unwrap();
    let (a, b) = ([1f32, 2.0, -3.0, 4.0], [10f32, 20.0, 30.0, 40.0]);
    let operand_table: [*const c_void; 2] = [a.as_ptr().cast(), b.as_ptr().cast()];
    let ins: [*const c_void; 1] = [operand_table.as_ptr().cast()];
    let mut sum = [0f32; 4];
    let mut negatives = [0i32; 1];
    let result_table: [*mut c_void; 2] = [sum.as_mut_ptr().cast(), negatives.as_mut_ptr().cast()];
    let shapes = [Shape::parse("(f32[4], f32[4])").unwrap()];
    unsafe {
        prepared.call_raw(
            result_table.as_ptr().cast_mut().cast(),
            ins.as_ptr(),
            &shapes,
        )
    }
    .unwrap();
    assert_eq!(sum, [11.0, 22.0, 27.0, 44.0]);
    assert_eq!(negatives, [1]);

    // A null leaf is reported, not dereferenced.
    let operand_table: [*const c_void; 2] = [a.as_ptr().cast(), std::ptr::null()];
    let ins: [*const c_void; 1] = [operand_table.as_ptr().cast()];
    let e = unsafe {
        prepared.call_raw(
            result_table.as_ptr().cast_mut().cast(),
            ins.as_ptr(),
            &shapes,
        )
    }
    .unwrap_err();
    assert!(e.message().contains("null buffer"), "{e}");
    // A misaligned leaf is reported too.
    let words = [0u32; 6];
    let odd = unsafe { words.as_ptr().cast::<u8>().add(1) };
    let operand_table: [*const c_void; 2] = [a.as_ptr().cast(), odd.cast()];
    let ins: [*const c_void; 1] = [operand_table.as_ptr().cast()];
    let e = unsafe {
        prepared.call_raw(
            result_table.as_ptr().cast_mut().cast(),
            ins.as_ptr(),
            &shapes,
        )
    }
    .unwrap_err();
    assert!(e.message().contains("aligned"), "{e}");
}
