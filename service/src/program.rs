//! A program from its text: HLO text, or StableHLO (MLIR) text as JAX prints
//! it by default, told apart by how the text begins.

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
