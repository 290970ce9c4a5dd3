//! A program from its text or bytes: HLO text, StableHLO (MLIR) text as JAX
//! prints it by default, a StableHLO portable artifact (MLIR bytecode), or a
//! serialized `jax.export` module, told apart by how they begin.

use platform_api::hlo::HloModule;
use platform_api::Result;

/// Parses `text` as StableHLO when it reads as MLIR (a `module`, a
/// `func.func` or a location alias first), else as HLO text. Errors carry the
/// reader's `line:column`.
pub fn parse_program(text: &str) -> Result<HloModule> {
    if hlo_stablehlo::looks_like_mlir(text) {
        hlo_stablehlo::parse_module(text)
    } else {
        HloModule::parse(text)
    }
}

/// [`parse_program`] for a file's bytes: StableHLO portable artifacts (MLIR
/// bytecode) and serialized `jax.export` modules too. Errors say what the
/// bytes are when they are none of these.
pub fn parse_program_bytes(bytes: &[u8]) -> Result<HloModule> {
    if hlo_stablehlo::is_bytecode(bytes) || hlo_stablehlo::is_jax_export(bytes) {
        return hlo_stablehlo::parse_module_bytes(bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_program(text),
        Err(e) => {
            let what = if bytes.starts_with(b"\x93NUMPY") {
                "a .npy array, not a program: give the module first, then its arguments".to_string()
            } else {
                format!(
                    "neither HLO or StableHLO text (invalid UTF-8 at byte {}), MLIR bytecode nor a serialized jax.export module",
                    e.valid_up_to()
                )
            };
            Err(platform_api::Error::invalid_argument(format!(
                "the program is {what}"
            )))
        }
    }
}

/// The arguments a module read from `bytes` takes, given the arguments of
/// the function it came from: a serialized `jax.export` module keeps only
/// the arguments its function uses, so when all of the function's are given
/// the unused ones are dropped. Any other program takes `args` as they are.
pub fn exported_arguments<T>(bytes: &[u8], args: Vec<T>) -> Result<Vec<T>> {
    if !hlo_stablehlo::is_jax_export(bytes) {
        return Ok(args);
    }
    let info = hlo_stablehlo::export_info(bytes)?;
    if args.len() != info.function_args || info.kept_args.len() == args.len() {
        return Ok(args);
    }
    let mut slots: Vec<Option<T>> = args.into_iter().map(Some).collect();
    info.kept_args
        .iter()
        .map(|&i| {
            slots.get_mut(i).and_then(Option::take).ok_or_else(|| {
                platform_api::Error::invalid_argument(format!(
                    "the jax.export module keeps argument {i} of {}",
                    info.function_args
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_of_one_program_parse_to_the_same_computation() {
        let hlo =
            "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n";
        let mlir = "module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    \
                    %0 = stablehlo.negate %arg0 : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n";
        let a = parse_program(hlo).unwrap();
        let b = parse_program(mlir).unwrap();
        assert_eq!(a.entry_program_shape(), b.entry_program_shape());
        let ops = |m: &HloModule| {
            m.entry()
                .instructions
                .iter()
                .map(|i| i.op.opcode())
                .collect::<Vec<_>>()
        };
        assert_eq!(ops(&a), ops(&b));
    }

    #[test]
    fn malformed_stablehlo_is_located() {
        let text = "module {\n  func.func @main() -> tensor<f32> {\n    %0 = stablehlo.frob : tensor<f32>\n    return %0 : tensor<f32>\n  }\n}\n";
        let err = parse_program(text).unwrap_err();
        assert!(
            err.to_string()
                .contains("3:5: op 'stablehlo.frob' is not supported"),
            "{err}"
        );
        let err = parse_program(&text[..60]).unwrap_err();
        assert!(err.to_string().contains("3:15:"), "{err}");
    }
}
