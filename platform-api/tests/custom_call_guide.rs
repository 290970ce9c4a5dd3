//! XLA's custom-call guide, as tests, with targets written in Rust: the CPU
//! example `A[i] = B[i % 128] + C[i]`, the tuple example with scratch memory,
//! status-returning failure, the unified convention's opaque bytes, output
//! aliasing, layouts, the raw entry point, and the errors (unknown target,
//! wrong convention, duplicates).
//!
//! The instructions come from parsed HLO text and run through
//! `call_host_target`, as the Interpreter runs them.

mod custom_call_common;

use custom_call_common::{custom_call, values};
use platform_api::custom_call::{
    self, call_host_target, check_instruction, lookup, register_target, HostCustomCall, Target,
    XlaCustomCallStatus, XlaCustomCallStatusSetFailure,
};
use platform_api::{register_custom_call, Code, Literal, Shape};
use std::ffi::{c_char, c_void};

// ---------------------------------------------------------------------------
// Targets, registered as XLA_REGISTER_CUSTOM_CALL_TARGET would.

/// The guide's CPU example: `A[i] = B[i % 128] + C[i]`.
unsafe extern "C" fn do_custom_call(out: *mut c_void, ins: *const *const c_void) {
    let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), 2048) };
    let in0 = unsafe { std::slice::from_raw_parts((*ins).cast::<f32>(), 128) };
    let in1 = unsafe { std::slice::from_raw_parts((*ins.add(1)).cast::<f32>(), 2048) };
    for i in 0..2048 {
        out[i] = in0[i % 128] + in1[i];
    }
}
register_custom_call!("do_custom_call", "Interpreter", CpuOriginal(do_custom_call));

/// The guide's tuple example. Parameter `(f32[32], (f32[64], f32[128]), f32[256])`
/// arrives as a table of pointers whose second entry is itself a table; the
/// result `(f32[512], f32[1024])` is a table too, and its second element is
/// used as scratch memory.
unsafe extern "C" fn tuple_custom_call(out: *mut c_void, ins: *const *const c_void) {
    unsafe {
        let p0 = (*ins).cast::<*const c_void>();
        let sub0 = std::slice::from_raw_parts((*p0).cast::<f32>(), 32);
        let subtuple = (*p0.add(1)).cast::<*const c_void>();
        let sub1 = std::slice::from_raw_parts((*subtuple).cast::<f32>(), 64);
        let sub2 = std::slice::from_raw_parts((*subtuple.add(1)).cast::<f32>(), 128);
        let sub3 = std::slice::from_raw_parts((*p0.add(2)).cast::<f32>(), 256);
        let outputs = out.cast::<*mut c_void>();
        let out0 = std::slice::from_raw_parts_mut((*outputs).cast::<f32>(), 512);
        let scratch = std::slice::from_raw_parts_mut((*outputs.add(1)).cast::<f32>(), 1024);
        for j in 0..1024 {
            scratch[j] = sub1[j % 64] * sub2[j % 128];
        }
        for i in 0..512 {
            out0[i] = scratch[2 * i] + scratch[2 * i + 1] + sub0[i % 32] + sub3[i % 256];
        }
    }
}
register_custom_call!(
    "tuple_custom_call",
    "Interpreter",
    CpuOriginal(tuple_custom_call)
);

/// Status-returning: `out = sqrt(in)` for f32[4], failing on a negative input.
unsafe extern "C" fn checked_sqrt(
    out: *mut c_void,
    ins: *const *const c_void,
    status: *mut XlaCustomCallStatus,
) {
    let x = unsafe { std::slice::from_raw_parts((*ins).cast::<f32>(), 4) };
    let y = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), 4) };
    for i in 0..4 {
        if x[i] < 0.0 {
            let message = format!("checked_sqrt: negative input {} at index {i}", x[i]);
            // The C entry point, as a C target would call it.
            unsafe {
                XlaCustomCallStatusSetFailure(
                    status,
                    message.as_ptr().cast::<c_char>(),
                    message.len(),
                )
            };
            return;
        }
        y[i] = x[i].sqrt();
    }
}
register_custom_call!(
    "checked_sqrt",
    "Interpreter",
    CpuStatusReturning(checked_sqrt)
);

/// Unified: result `(u8[n], s64[2])` = (the opaque bytes, [their count, whether
/// a NUL follows them]).
unsafe extern "C" fn echo_opaque(
    out: *mut c_void,
    _ins: *const *const c_void,
    opaque: *const c_char,
    opaque_len: usize,
    _status: *mut XlaCustomCallStatus,
) {
    unsafe {
        let outputs = out.cast::<*mut c_void>();
        std::ptr::copy_nonoverlapping(opaque.cast::<u8>(), (*outputs).cast::<u8>(), opaque_len);
        let info = std::slice::from_raw_parts_mut((*outputs.add(1)).cast::<i64>(), 2);
        info[0] = opaque_len as i64;
        info[1] = (*opaque.add(opaque_len) == 0) as i64;
    }
}
register_custom_call!(
    "echo_opaque",
    "Interpreter",
    CpuStatusReturningUnified(echo_opaque)
);

/// In place: `out[i] += 1` for f32[8], with the output aliasing operand 0 (so
/// `out` starts out holding the operand, and `in[0]` is `out`).
unsafe extern "C" fn add_one_in_place(out: *mut c_void, ins: *const *const c_void) {
    unsafe {
        let y = std::slice::from_raw_parts_mut(out.cast::<f32>(), 8);
        let same = std::ptr::eq(*ins, out.cast_const());
        for v in y.iter_mut() {
            *v += if same { 1.0 } else { 1000.0 };
        }
    }
}
register_custom_call!(
    "add_one_in_place",
    "Interpreter",
    CpuOriginal(add_one_in_place)
);

/// Copies the 6 elements of its operand's buffer as they lie in memory.
unsafe extern "C" fn copy_six(out: *mut c_void, ins: *const *const c_void) {
    unsafe { std::ptr::copy_nonoverlapping((*ins).cast::<f32>(), out.cast::<f32>(), 6) };
}
register_custom_call!("copy_six", "Interpreter", CpuOriginal(copy_six));

unsafe extern "C" fn noop(_out: *mut c_void, _ins: *const *const c_void) {}
// Registered twice on purpose: lookups of this key must fail, naming both.
register_custom_call!("static_duplicate", "Interpreter", CpuOriginal(noop));
register_custom_call!("static_duplicate", "Interpreter", CpuOriginal(noop));

unsafe extern "C" fn gpu_noop(_s: *mut c_void, _b: *mut *mut c_void, _o: *const c_char, _l: usize) {
}
register_custom_call!("gpu_only", "Interpreter", GpuOriginal(gpu_noop));

// ---------------------------------------------------------------------------

const GUIDE_HLO: &str = r#"
HloModule do_it
ENTRY do_it {
  p0 = f32[128] parameter(0)
  p1 = f32[2048] parameter(1)
  ROOT cc = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call"
}
"#;

fn guide_expected(b: &[f32], c: &[f32]) -> Vec<f32> {
    (0..2048).map(|i| b[i % 128] + c[i]).collect()
}

#[test]
fn guide_cpu_example_with_a_rust_target() {
    let cc = custom_call(GUIDE_HLO);
    check_instruction("Interpreter", &cc).unwrap();
    let (b, c) = (values(128, 1.0), values(2048, 2.0));
    let out = call_host_target(
        "Interpreter",
        &cc,
        &[&Literal::vector(&b), &Literal::vector(&c)],
    )
    .unwrap();
    assert_eq!(
        out.data::<f32>().unwrap(),
        guide_expected(&b, &c).as_slice()
    );
    // Platform names ignore case, as everywhere else.
    let again = call_host_target(
        "interpreter",
        &cc,
        &[&Literal::vector(&b), &Literal::vector(&c)],
    )
    .unwrap();
    assert_eq!(again, out);
}

#[test]
fn guide_tuple_example_with_scratch_output() {
    let cc = custom_call(
        r#"
HloModule tuples
ENTRY e {
  p0 = (f32[32], (f32[64], f32[128]), f32[256]) parameter(0)
  cc = (f32[512], f32[1024]) custom-call(p0), custom_call_target="tuple_custom_call"
  ROOT out = f32[512] get-tuple-element(cc), index=0
}
"#,
    );
    let (s0, s1, s2, s3) = (
        values(32, 0.5),
        values(64, 1.5),
        values(128, 2.5),
        values(256, 3.5),
    );
    let p0 = Literal::tuple(vec![
        Literal::vector(&s0),
        Literal::tuple(vec![Literal::vector(&s1), Literal::vector(&s2)]),
        Literal::vector(&s3),
    ]);
    let out = call_host_target("Interpreter", &cc, &[&p0]).unwrap();
    let elements = out.tuple_elements();
    assert_eq!(elements.len(), 2);
    let scratch: Vec<f32> = (0..1024).map(|j| s1[j % 64] * s2[j % 128]).collect();
    let expected: Vec<f32> = (0..512)
        .map(|i| scratch[2 * i] + scratch[2 * i + 1] + s0[i % 32] + s3[i % 256])
        .collect();
    assert_eq!(elements[0].data::<f32>().unwrap(), expected.as_slice());
    // The scratch element was allocated in full and really written.
    assert_eq!(elements[1].data::<f32>().unwrap(), scratch.as_slice());
}

const SQRT_HLO: &str = r#"
HloModule status
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="checked_sqrt", api_version=API_VERSION_STATUS_RETURNING
}
"#;

#[test]
fn status_failure_becomes_the_error_and_the_next_call_works() {
    let cc = custom_call(SQRT_HLO);
    check_instruction("Interpreter", &cc).unwrap();
    let bad = Literal::vector(&[4.0f32, -9.0, 1.0, 0.0]);
    let e = call_host_target("Interpreter", &cc, &[&bad]).unwrap_err();
    assert_eq!(e.code(), Code::Internal);
    assert!(
        e.message()
            .contains("checked_sqrt: negative input -9 at index 1"),
        "{e}"
    );
    assert!(
        e.message().contains("%cc"),
        "the error names the instruction: {e}"
    );
    let good = Literal::vector(&[4.0f32, 9.0, 1.0, 0.0]);
    let out = call_host_target("Interpreter", &cc, &[&good]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[2.0, 3.0, 1.0, 0.0]);
}

/// Runs `echo_opaque` with `backend_config=<config>` (HLO text) and a result
/// of `n` bytes.
fn echo(config: &str, n: usize) -> (Vec<u8>, Vec<i64>) {
    let cc = custom_call(&format!(
        r#"
HloModule opaque
ENTRY e {{
  ROOT cc = (u8[{n}], s64[2]) custom-call(), custom_call_target="echo_opaque", api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config={config}
}}
"#
    ));
    check_instruction("Interpreter", &cc).unwrap();
    let out = call_host_target("Interpreter", &cc, &[]).unwrap();
    let e = out.tuple_elements();
    (
        e[0].data::<u8>().unwrap().to_vec(),
        e[1].data::<i64>().unwrap().to_vec(),
    )
}

#[test]
fn unified_convention_receives_backend_config_unchanged() {
    // A quoted string arrives unescaped: `a"b\c`, a newline, `12`: 8 bytes.
    let (bytes, info) = echo(r#""a\"b\\c\n12""#, 8);
    assert_eq!(bytes, b"a\"b\\c\n12");
    assert_eq!(info, vec![8, 1]);
    // A raw `{...}` block arrives with its braces, exactly as written.
    let raw = r#"{"k": [1, 2], "s": "x"}"#;
    let (bytes, info) = echo(raw, raw.len());
    assert_eq!(bytes, raw.as_bytes());
    assert_eq!(info, vec![raw.len() as i64, 1]);
}

#[test]
fn aliased_output_starts_with_the_operand_and_is_the_same_buffer() {
    let cc = custom_call(
        r#"
HloModule alias
ENTRY e {
  p0 = f32[8] parameter(0)
  ROOT cc = f32[8] custom-call(p0), custom_call_target="add_one_in_place", output_to_operand_aliasing={{}: (0, {})}
}
"#,
    );
    let x = values(8, 4.0);
    let out = call_host_target("Interpreter", &cc, &[&Literal::vector(&x)]).unwrap();
    let expected: Vec<f32> = x.iter().map(|v| v + 1.0).collect();
    assert_eq!(out.data::<f32>().unwrap(), expected.as_slice());
}

#[test]
fn operands_arrive_in_the_layout_their_shape_names() {
    let cc = custom_call(
        r#"
HloModule layouts
ENTRY e {
  p0 = f32[2,3]{0,1} parameter(0)
  ROOT cc = f32[6] custom-call(p0), custom_call_target="copy_six", operand_layout_constraints={f32[2,3]{0,1}}
}
"#,
    );
    // Logical [[0,1,2],[3,4,5]]; column-major memory holds 0,3,1,4,2,5.
    let m = Literal::from_slice(&[2, 3], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let out = call_host_target("Interpreter", &cc, &[&m]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    // A row-major operand where the constraint says column-major is refused.
    let wrong = Literal::vector(&[0.0f32; 6]);
    let e = call_host_target("Interpreter", &cc, &[&wrong]).unwrap_err();
    assert!(e.message().contains("operand_layout_constraints"), "{e}");
}

#[test]
fn raw_entry_point_calls_on_buffers_the_caller_laid_out() {
    let cc = custom_call(GUIDE_HLO);
    let prepared = HostCustomCall::prepare("Interpreter", &cc).unwrap();
    let (b, c) = (values(128, 5.0), values(2048, 6.0));
    let mut out = vec![0f32; 2048];
    let ins: [*const c_void; 2] = [b.as_ptr().cast(), c.as_ptr().cast()];
    let shapes = [
        Shape::array(platform_api::ElementType::F32, vec![128]),
        Shape::array(platform_api::ElementType::F32, vec![2048]),
    ];
    unsafe { prepared.call_raw(out.as_mut_ptr().cast(), ins.as_ptr(), &shapes) }.unwrap();
    assert_eq!(out, guide_expected(&b, &c));
    // Prepared once, called again.
    let mut again = vec![0f32; 2048];
    unsafe { prepared.call_raw(again.as_mut_ptr().cast(), ins.as_ptr(), &shapes) }.unwrap();
    assert_eq!(again, out);
    // A shape count that does not match the instruction is refused before any call.
    let e = unsafe { prepared.call_raw(out.as_mut_ptr().cast(), ins.as_ptr(), &shapes[..1]) }
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[test]
fn unknown_target_names_target_platform_and_what_is_registered() {
    let cc = custom_call(
        r#"
HloModule unknown
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="no_such_target"
}
"#,
    );
    for e in [
        check_instruction("Interpreter", &cc).unwrap_err(),
        call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 4])]).unwrap_err(),
    ] {
        assert_eq!(e.code(), Code::NotFound);
        let m = e.message();
        assert!(
            m.contains("\"no_such_target\"") && m.contains("\"Interpreter\""),
            "{m}"
        );
        assert!(
            m.contains("do_custom_call") && m.contains("TopK"),
            "lists registered targets: {m}"
        );
    }
    // The same target on a platform it was not registered for is unknown there.
    let cc = custom_call(GUIDE_HLO);
    let e = check_instruction("Host", &cc).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("registered for Host: TopK"), "{e}");
}

#[test]
fn wrong_convention_is_refused_naming_both() {
    let cc = custom_call(
        r#"
HloModule wrong
ENTRY e {
  p0 = f32[128] parameter(0)
  p1 = f32[2048] parameter(1)
  ROOT cc = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call", api_version=API_VERSION_STATUS_RETURNING
}
"#,
    );
    let e = check_instruction("Interpreter", &cc).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let m = e.message();
    assert!(
        m.contains("API_VERSION_ORIGINAL") && m.contains("API_VERSION_STATUS_RETURNING"),
        "{m}"
    );
    assert!(
        m.contains("XlaCustomCallStatus* status"),
        "names the signature asked for: {m}"
    );
    let e = call_host_target(
        "Interpreter",
        &cc,
        &[
            &Literal::vector(&[0f32; 128]),
            &Literal::vector(&[0f32; 2048]),
        ],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);

    // A typed call to a C target, and a C call to a typed handler.
    let cc = custom_call(
        r#"
HloModule wrong2
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="checked_sqrt", api_version=API_VERSION_TYPED_FFI
}
"#,
    );
    let m = check_instruction("Interpreter", &cc)
        .unwrap_err()
        .message()
        .to_string();
    assert!(
        m.contains("API_VERSION_STATUS_RETURNING") && m.contains("API_VERSION_TYPED_FFI"),
        "{m}"
    );

    // A GPU target on a host platform.
    let cc = custom_call(
        r#"
HloModule gpu
ENTRY e {
  ROOT cc = f32[4] custom-call(), custom_call_target="gpu_only"
}
"#,
    );
    let m = check_instruction("Interpreter", &cc)
        .unwrap_err()
        .message()
        .to_string();
    assert!(m.contains("GPU") && m.contains("CUstream"), "{m}");
}

#[test]
fn duplicate_registrations_are_errors() {
    // At run time: the second registration of a key is refused.
    register_target("registered_twice", "Interpreter", Target::CpuOriginal(noop)).unwrap();
    let e =
        register_target("registered_twice", "interpreter", Target::CpuOriginal(noop)).unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert!(e.message().contains("registered_twice"), "{e}");
    // A key a static registration holds cannot be taken at run time.
    let e =
        register_target("do_custom_call", "Interpreter", Target::CpuOriginal(noop)).unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    // The same name on another platform is another key.
    register_target(
        "registered_twice",
        "SomeOtherPlatform",
        Target::CpuOriginal(noop),
    )
    .unwrap();

    // Two static registrations of one key: every lookup fails, naming both.
    let e = lookup("static_duplicate", "Interpreter").unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert_eq!(
        e.message().matches("custom_call_guide.rs:").count(),
        2,
        "{e}"
    );
    let cc = custom_call(
        r#"
HloModule dup
ENTRY e {
  ROOT cc = f32[1] custom-call(), custom_call_target="static_duplicate"
}
"#,
    );
    assert_eq!(
        check_instruction("Interpreter", &cc).unwrap_err().code(),
        Code::AlreadyExists
    );
}

#[test]
fn registration_at_run_time_serves_the_next_call() {
    unsafe extern "C" fn negate(out: *mut c_void, ins: *const *const c_void) {
        let x = unsafe { std::slice::from_raw_parts((*ins).cast::<f32>(), 3) };
        let y = unsafe { std::slice::from_raw_parts_mut(out.cast::<f32>(), 3) };
        for (y, x) in y.iter_mut().zip(x) {
            *y = -x;
        }
    }
    let cc = custom_call(
        r#"
HloModule late
ENTRY e {
  p0 = f32[3] parameter(0)
  ROOT cc = f32[3] custom-call(p0), custom_call_target="negate_late"
}
"#,
    );
    assert_eq!(
        check_instruction("Interpreter", &cc).unwrap_err().code(),
        Code::NotFound
    );
    register_target("negate_late", "Interpreter", Target::CpuOriginal(negate)).unwrap();
    let out = call_host_target(
        "Interpreter",
        &cc,
        &[&Literal::vector(&[1.0f32, -2.0, 0.5])],
    )
    .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[-1.0, 2.0, -0.5]);
    assert!(custom_call::registered_targets("Interpreter").contains(&"negate_late".to_string()));
}

#[test]
fn operand_count_and_instruction_kind_are_checked() {
    let cc = custom_call(GUIDE_HLO);
    let e = call_host_target("Interpreter", &cc, &[&Literal::vector(&[0f32; 128])]).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("2 operand(s); 1 value(s)"), "{e}");

    let module = platform_api::HloModule::parse(GUIDE_HLO).unwrap();
    let param = module.entry().instructions[0].clone();
    let e = check_instruction("Interpreter", &param).unwrap_err();
    assert!(e.message().contains("not a custom-call"), "{e}");
}
