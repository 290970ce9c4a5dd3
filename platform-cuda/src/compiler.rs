//! The CUDA compiler's device-independent half: HLO passes, legalization and
//! code generation, usable with no driver (deviceless compilation).

use crate::codegen::{self, supported_ops};
use crate::nvrtc::{self, Arch};
use crate::program::Program;
use platform_api::hlo::verifier::verify_module;
use platform_api::passes::{self, HloPass, LayoutNormalization};
use platform_api::semantics::contraction;
use platform_api::{CompileOptions, HloModule, Opcode, Result};

/// Verification, the shared standard pipeline, layout normalization and
/// legalization to what the code generator implements.
pub fn optimize(module: HloModule, _options: &CompileOptions) -> Result<HloModule> {
    verify_module(&module)?;
    let mut module = module;
    passes::standard_pipeline().run(&mut module)?;
    LayoutNormalization.run(&mut module)?;
    // Custom calls the framework knows how to expand (XLA's `TopK`) are
    // rewritten first, with custom calls left out of the declared ops; the
    // rest stay for the runtime's GPU ABI.
    let without_custom_calls = codegen::supported_ops_without(Opcode::CustomCall);
    passes::legalize::legalize_as_far_as_possible(&mut module, &without_custom_calls)?;
    platform_api::legalize(&module, &supported_ops())
}

/// [`optimize`], then code generation.
pub fn compile_program(module: &HloModule, options: &CompileOptions) -> Result<Program> {
    let contract = contraction::fp_contract_option(options.debug_option("fp_contract"))?;
    codegen::generate(&optimize(module.clone(), options)?, contract)
}

/// [`compile_program`], then NVRTC for `arch`: the program and its PTX.
pub fn compile_ptx(
    module: &HloModule,
    options: &CompileOptions,
    arch: Arch,
) -> Result<(Program, String)> {
    let program = compile_program(module, options)?;
    let ptx = nvrtc::compile_to_ptx(&program.source, &program.name, arch)?;
    Ok((program, ptx))
}
