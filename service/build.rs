//! Build script of the service crate: makes its programs export their symbols
//! to the dynamic linker.
//!
//! A custom-call library loaded at run time (`hlorun --custom-call-lib`) calls
//! `XlaCustomCallStatusSetSuccess` / `XlaCustomCallStatusSetFailure` without
//! linking anything of ours, as XLA's ABI promises; the dynamic linker can bind
//! those calls only to symbols the executable exports. `-rdynamic` exports them
//! (platform-api keeps them from being garbage-collected: see
//! `platform-api/src/custom_call/status.rs`).
//!
//! `rustc-link-arg` rather than `rustc-link-arg-bins`: it reaches the `hlorun`
//! binary and the integration tests (which load such libraries too), and unlike
//! the `-bins` / `-tests` forms it is not an error while a target kind is absent.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match os.as_str() {
        // Apple's linker spells it differently.
        "macos" | "ios" => println!("cargo:rustc-link-arg=-Wl,-export_dynamic"),
        // A Windows DLL cannot bind to an executable's exports this way; custom-call
        // libraries there must resolve the status functions themselves.
        "windows" => {}
        _ => println!("cargo:rustc-link-arg=-rdynamic"),
    }
}
