//! A C target that reports failure through `XlaCustomCallStatusSetFailure`,
//! loaded into a program of the service crate. The library links nothing of
//! ours: it only loads because `service/build.rs` links the crate's programs
//! with `-rdynamic`, so they export the status functions. Skipped (printing why)
//! only when no C compiler exists.

use crate::custom_call_common::{build_shared_library, custom_call};
use platform_api::custom_call::{call_host_target, check_instruction, load_library};
use platform_api::{Code, Literal};

const DIVIDE_HLO: &str = r#"
HloModule divide
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT cc = f32[4] custom-call(a, b), custom_call_target="checked_divide", api_version=API_VERSION_STATUS_RETURNING
}
"#;

#[test]
fn c_status_failure_reaches_the_caller_and_success_follows() {
    let Some(library) = build_shared_library("status_targets.c") else {
        return;
    };
    load_library(&library).unwrap();
    let cc = custom_call(DIVIDE_HLO);
    check_instruction("Interpreter", &cc).unwrap();
    let a = Literal::vector(&[1f32, 2.0, 3.0, 4.0]);

    let e = call_host_target(
        "Interpreter",
        &cc,
        &[&a, &Literal::vector(&[1f32, 2.0, 0.0, 4.0])],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::Internal);
    assert!(
        e.message()
            .contains("checked_divide: division by zero at index 2"),
        "{e}"
    );

    // The failure left nothing behind: the next call works.
    let out = call_host_target(
        "Interpreter",
        &cc,
        &[&a, &Literal::vector(&[2f32, 4.0, 6.0, 8.0])],
    )
    .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[0.5, 0.5, 0.5, 0.5]);
}
