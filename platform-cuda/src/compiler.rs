//! The CUDA compiler's device-independent half: HLO passes, legalization and
//! code generation, usable with no driver (deviceless compilation).

use crate::codegen::{self, supported_ops};
use crate::nvrtc::{self, Arch};
use crate::program::Program;
use platform_api::hlo::verifier::verify_module;
use platform_api::passes::dump::{Dump, DUMP_OPTION};
use platform_api::passes::{self, HloPass, LayoutNormalization};
use platform_api::semantics::contraction;
use platform_api::{CompileOptions, HloModule, Result};

/// Verification, the shared standard pipeline and layout normalization:
/// `Compiler::run_hlo_passes`.
pub fn run_passes(module: HloModule) -> Result<HloModule> {
    verify_module(&module)?;
    refuse_narrow_types(&module)?;
    let mut module = module;
    passes::standard_pipeline().run(&mut module)?;
    LayoutNormalization.run(&mut module)?;
    Ok(module)
}

/// The code generator has no narrow types (`s4`, `f8e4m3fn`, ...; see
/// `hlo_passes::legalize::narrow`): a module using one is refused up front,
/// naming the first instruction and its type, rather than failing in code
/// generation.
fn refuse_narrow_types(module: &HloModule) -> Result<()> {
    for comp in &module.computations {
        for instr in &comp.instructions {
            let narrow = instr
                .shape
                .leaves()
                .into_iter()
                .map(|(_, a)| a.element_type)
                .find(|t| t.is_narrow());
            if let Some(ty) = narrow {
                return Err(platform_api::Error::unimplemented(format!(
                    "the CUDA platform does not support the narrow type {ty} yet (%{} in {})",
                    instr.name, comp.name
                )));
            }
        }
    }
    Ok(())
}

/// [`run_passes`], then legalization to what the code generator implements:
/// the module [`codegen::generate`] takes (what `Compiler::compile` hands
/// `run_backend`).
pub fn optimize(module: HloModule, _options: &CompileOptions) -> Result<HloModule> {
    platform_api::legalize(&run_passes(module)?, &supported_ops())
}

/// [`optimize`], then code generation.
pub fn compile_program(module: &HloModule, options: &CompileOptions) -> Result<Program> {
    let contract = contraction::fp_contract_option(options.debug_option("fp_contract"))?;
    let dump = Dump::open(options.debug_option(DUMP_OPTION), module)?;
    if let Some(d) = &dump {
        d.module("input", module)?;
    }
    let optimized = optimize(module.clone(), options)?;
    let program = codegen::generate(&optimized, contract)?;
    if let Some(d) = &dump {
        d.module("cuda-passes-and-legalization", &optimized)?;
        d.text("cuda-kernels", "cu", &program.source)?;
    }
    Ok(program)
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
