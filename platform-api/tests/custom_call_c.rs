//! Custom-call targets written in C (`tests/data/custom_call/*.c`), compiled at
//! test time with the system C compiler into a shared library, loaded with
//! `load_library` and found by symbol name, as XLA resolves
//! `custom_call_target`. Nothing is registered in this test program, so every
//! target here comes from the library. Skipped (with the reason printed) only
//! when no C compiler exists.

mod custom_call_common;

use custom_call_common::{build_shared_library, custom_call, temp_dir, values};
use platform_api::custom_call::{
    call_host_target, check_instruction, load_library, loaded_libraries,
};
use platform_api::{Code, Literal};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The guide's targets in C, built and loaded once for this test program.
fn guide_library() -> Option<&'static PathBuf> {
    static LIBRARY: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            let path = build_shared_library("guide_targets.c")?;
            load_library(&path).unwrap();
            Some(path)
        })
        .as_ref()
}

#[test]
fn guide_cpu_example_written_in_c() {
    let Some(_) = guide_library() else { return };
    let cc = custom_call(
        r#"
HloModule do_it
ENTRY do_it {
  p0 = f32[128] parameter(0)
  p1 = f32[2048] parameter(1)
  ROOT cc = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call"
}
"#,
    );
    let (b, c) = (values(128, 1.0), values(2048, 2.0));
    let expected: Vec<f32> = (0..2048).map(|i| b[i % 128] + c[i]).collect();
    // A library serves every host platform.
    for platform in ["Host", "Interpreter"] {
        check_instruction(platform, &cc).unwrap();
        let out =
            call_host_target(platform, &cc, &[&Literal::vector(&b), &Literal::vector(&c)]).unwrap();
        assert_eq!(
            out.data::<f32>().unwrap(),
            expected.as_slice(),
            "{platform}"
        );
    }
}

#[test]
fn guide_tuple_example_written_in_c() {
    let Some(_) = guide_library() else { return };
    let cc = custom_call(
        r#"
HloModule tuples
ENTRY e {
  p0 = (f32[32], (f32[64], f32[128]), f32[256]) parameter(0)
  ROOT cc = (f32[512], f32[1024]) custom-call(p0), custom_call_target="tuple_custom_call"
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
    let out = call_host_target("Host", &cc, &[&p0]).unwrap();
    let scratch: Vec<f32> = (0..1024).map(|j| s1[j % 64] * s2[j % 128]).collect();
    let expected: Vec<f32> = (0..512)
        .map(|i| scratch[2 * i] + scratch[2 * i + 1] + s0[i % 32] + s3[i % 256])
        .collect();
    assert_eq!(
        out.tuple_elements()[0].data::<f32>().unwrap(),
        expected.as_slice()
    );
}

#[test]
fn unified_and_status_returning_c_targets() {
    let Some(_) = guide_library() else { return };
    let config = "opaque\tbytes; n=3";
    let cc = custom_call(&format!(
        r#"
HloModule opaque
ENTRY e {{
  ROOT cc = (u8[{}], s64[2]) custom-call(), custom_call_target="echo_opaque", api_version=API_VERSION_STATUS_RETURNING_UNIFIED, backend_config="opaque\tbytes; n=3"
}}
"#,
        config.len()
    ));
    let out = call_host_target("Host", &cc, &[]).unwrap();
    assert_eq!(
        out.tuple_elements()[0].data::<u8>().unwrap(),
        config.as_bytes()
    );
    assert_eq!(
        out.tuple_elements()[1].data::<i64>().unwrap(),
        &[config.len() as i64, 1]
    );

    let cc = custom_call(
        r#"
HloModule status
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="double_it", api_version=API_VERSION_STATUS_RETURNING
}
"#,
    );
    let out = call_host_target("Host", &cc, &[&Literal::vector(&[1f32, -2.0, 0.25, 8.0])]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[2.0, -4.0, 0.5, 16.0]);
}

#[test]
fn unknown_symbol_lists_what_the_libraries_export() {
    let Some(path) = guide_library() else { return };
    let cc = custom_call(
        r#"
HloModule unknown
ENTRY e {
  ROOT cc = f32[4] custom-call(), custom_call_target="do_custom_cal"
}
"#,
    );
    let e = check_instruction("Host", &cc).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let m = e.message();
    assert!(
        m.contains("\"do_custom_cal\"") && m.contains("\"Host\""),
        "{m}"
    );
    assert!(
        m.contains(&path.display().to_string()),
        "names the library: {m}"
    );
    assert!(
        m.contains("do_custom_call, double_it, echo_opaque, tuple_custom_call"),
        "lists its exports: {m}"
    );
    // Loading the same library again changes nothing.
    load_library(path).unwrap();
    assert_eq!(
        loaded_libraries()
            .iter()
            .filter(|p| p.ends_with("libguide_targets.so"))
            .count(),
        1
    );
}

#[test]
fn library_symbols_cannot_be_called_as_typed_ffi() {
    let Some(_) = guide_library() else { return };
    let cc = custom_call(
        r#"
HloModule typed
ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT cc = f32[4] custom-call(p0), custom_call_target="double_it", api_version=API_VERSION_TYPED_FFI
}
"#,
    );
    let e = check_instruction("Host", &cc).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("API_VERSION_TYPED_FFI")
            && e.message().contains("libguide_targets.so"),
        "{e}"
    );
}

#[test]
fn bad_libraries_are_refused_naming_the_file_and_why() {
    // Not a library at all.
    let text = temp_dir("bad").join("libnot_a_library.so");
    std::fs::write(&text, "this is not a shared library\n").unwrap();
    let e = load_library(&text).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("libnot_a_library.so") && e.message().contains("cannot be loaded"),
        "{e}"
    );
    // A file that does not exist.
    let e = load_library(&text.with_file_name("libmissing.so")).unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().contains("libmissing.so"), "{e}");
    // A real library with nothing usable in it.
    let Some(empty) = build_shared_library("no_exports.c") else {
        return;
    };
    let e = load_library(&empty).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("libno_exports.so") && e.message().contains("exports no functions"),
        "{e}"
    );
}
