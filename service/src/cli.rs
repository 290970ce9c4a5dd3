//! `hlorun`: run, compare, benchmark, parse and conformance-check HLO programs on any
//! platform.
//!
//! The command line lives in the library so a backend crate outside this
//! repository gets the whole tool with its own platform linked: a binary of
//! two lines, `use my_backend as _;` and `fn main() -> ExitCode {
//! service::cli::main() }`.
//!
//! Every subcommand is a thin layer over the `service` library: resolve a
//! [`Backend`] by name, compile through a [`LocalClient`], run. What this file
//! adds is the user's side of it: reading HLO text and `.npy` files, choosing
//! arguments, printing results, and turning every failure into one line on
//! stderr and exit status 1 (usage errors included; `--help` exits 0). A panic
//! would be a bug.

use crate::compare::{check_threshold, DEFAULT_MAX_ULPS};
use crate::conformance::Judge;
use crate::random::{random_arguments, ArgsSpec, ValueRange};
use crate::sharded::ShardedProgram;
use crate::text::table;
use crate::watch::Watch;
use crate::{
    compare_by_scale, compare_by_tolerance, profile, resolve_platform_name, Backend,
    ExecuteOptions, LoadedExecutable, LocalClient, ScaleRule, Tolerance,
};
use clap::{Args, Parser, Subcommand};
use platform_api::hlo::sharding::HloSharding;
use platform_api::literal::text::SUMMARY_THRESHOLD;
use platform_api::registry::{self, Availability};
use platform_api::{
    CompileOptions, ElementType, Error, HloModule, Literal, PlatformOptions, ProfileSink, Progress,
    Result, Shape,
};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "hlorun",
    version,
    about = "Run HLO programs on any registered platform",
    after_help = "The platform defaults to $HLORUN_PLATFORM, else the highest-priority available one. \
                  RUST_LOG=debug turns on logging."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the registered platforms: name, aliases, priority, devices, availability.
    Platforms,
    /// Run a module on arguments from .npy files and print or save its results.
    Run(RunArgs),
    /// Run a module on a platform and on a reference platform and compare the results.
    Compare(CompareArgs),
    /// Time a module's compilation and executions.
    Bench(BenchArgs),
    /// Parse a module and print its canonical text.
    Parse(ParseArgs),
    /// Run a conformance corpus on a platform: a status per case and program form.
    Conformance(ConformanceArgs),
    /// Compile a module for a named target without a device (CUDA: PTX through NVRTC).
    Compile(CompileArgs),
    /// Draw a module's graph (fusions as clusters) as SVG, HTML or Graphviz DOT.
    Graph(GraphArgs),
}

/// `hlorun graph`.
#[derive(Args)]
struct GraphArgs {
    /// HLO text file (`-` reads standard input).
    module: String,
    /// `svg` (drawn here, no Graphviz needed), `html` (the SVG in a page with
    /// pan, zoom and tooltips) or `dot` (for Graphviz).
    #[arg(long, default_value = "svg", value_parser = ["svg", "html", "dot"])]
    format: String,
    /// Draw the module after this platform's HLO passes (for the Host: what
    /// it fused) instead of as written.
    #[arg(long, short = 'p')]
    platform: Option<String>,
    /// The computation to draw (default: the entry).
    #[arg(long, value_name = "NAME")]
    computation: Option<String>,
    /// Write to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `hlorun compile`.
#[derive(Args)]
struct CompileArgs {
    /// HLO text file (`-` reads standard input).
    module: String,
    /// Platform to compile for (deviceless compilation: CUDA).
    #[arg(long, default_value = "cuda")]
    platform: String,
    /// Target architecture (`sm_80`, `sm_90`, ...).
    #[arg(long, default_value = "sm_90")]
    target: String,
    /// What to write: `ptx` (NVRTC's output), `cuda` (the generated CUDA C) or
    /// `hlo` (the module after passes and legalization).
    #[arg(long, default_value = "ptx")]
    emit: String,
    /// Write NAME.ptx / NAME.cu / NAME.hlo into DIR instead of printing.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// What every subcommand that runs a module takes.
#[derive(Args)]
struct ProgramArgs {
    /// HLO text file (`-` reads standard input).
    module: String,
    /// Arguments as .npy files, in parameter order.
    args: Vec<PathBuf>,
    /// Platform name or alias (case-insensitive).
    #[arg(long, short = 'p')]
    platform: Option<String>,
    /// Shared library whose exported symbols serve as custom-call targets (repeatable).
    #[arg(long = "custom-call-lib", value_name = "PATH")]
    custom_call_libs: Vec<PathBuf>,
    /// A compile debug option (repeatable): `fp_contract=off`,
    /// `excess_precision=off`, `divide_by_reciprocal=off`, `host_fusion=off`, ...
    #[arg(long = "debug-option", value_name = "KEY=VALUE")]
    debug_options: Vec<String>,
    /// Floating-point contraction: `on` (the default, as XLA CPU: a multiply
    /// feeding an add is one FMA) or `off` (every op rounds separately).
    /// Shorthand for `--debug-option fp_contract=VALUE`.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    fp_contract: Option<String>,
    /// Write the module after each pass that changed it, and the platform's
    /// own account of the compile (the Host's fusions and buffer plan, the
    /// CUDA kernels), into DIR, numbered in order. Shorthand for
    /// `--debug-option dump_to=DIR`.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

impl ProgramArgs {
    /// The debug options, the shorthands included.
    fn all_debug_options(&self) -> Vec<String> {
        let mut options = self.debug_options.clone();
        if let Some(v) = &self.fp_contract {
            options.push(format!("fp_contract={v}"));
        }
        if let Some(dir) = &self.dump {
            options.push(format!("dump_to={}", dir.display()));
        }
        options
    }
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// Write results to DIR/out0.npy, out1.npy, ... (tuples flattened) instead of printing them.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write a Chrome trace (open in Perfetto or chrome://tracing) of the execution.
    #[arg(long, value_name = "TRACE.json")]
    profile: Option<PathBuf>,
    /// Replicas to run (default: the module's replica_count, else 1); each gets the same arguments.
    #[arg(long)]
    replicas: Option<usize>,
    /// A partitioned program (num_partitions > 1) takes global arrays, cut by
    /// its parameters' shardings, and returns global arrays; with this it takes
    /// and returns per-device shards instead: the arguments of device 0, then
    /// of device 1, ... (device = replica * partitions + partition), and the
    /// results printed per device or written to DIR/device<i>/.
    #[arg(long)]
    per_device: bool,
    /// The sharding of each result of a partitioned program, in HLO syntax
    /// (`{devices=[4,1]<=[4]}`, `{replicated}`), one per result leaf in order,
    /// for programs whose text does not say it (XLA prints no sharding on the
    /// ROOT); without it and without one on the ROOT, results must be the same
    /// on every partition.
    #[arg(long, value_name = "SHARDING", conflicts_with = "per_device")]
    out_sharding: Vec<String>,
    /// How the devices of a multi-device program meet: `local` (a thread per
    /// device in this process) or `mpi` (under `mpirun -np P`, P dividing
    /// the device count: each process runs DEVICES / P of them as threads,
    /// rank r devices r*K .. r*K+K-1; rank 0 prints or writes the results;
    /// needs a build with the `mpi` feature).
    #[arg(long, default_value = "local", value_parser = ["local", "mpi"])]
    collectives: String,
    /// Seed for the program's `rng` instructions.
    #[arg(long, default_value_t = 0)]
    rng_seed: u64,
    /// Print every element of large results (by default arrays of more than
    /// 1000 elements are summarised as NumPy does; `--out` saves them whole).
    #[arg(long)]
    full: bool,
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// The platform to check against under the tolerance rule (`--rtol`/`--atol`);
    /// the scale rule's reference is the Interpreter's evaluator in f64 mode.
    #[arg(long, default_value = "interpreter")]
    reference: String,
    /// Relative tolerance: switches to the tolerance rule (default with it: the
    /// case.json beside the module, else 1e-4).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance: switches to the tolerance rule (default with it: the
    /// case.json beside the module, else 1e-5).
    #[arg(long)]
    atol: Option<f64>,
    /// The scale rule's threshold in ULPs of the error scale (default 16).
    #[arg(long, conflicts_with_all = ["rtol", "atol"])]
    max_ulps: Option<f64>,
    /// Expected outputs (one .npy per output, in order), e.g. XLA CPU's saved from
    /// JAX: the platform's results are checked against these instead of the
    /// reference's values (under the scale rule, the scale still comes from the
    /// shadow evaluation on the same arguments).
    #[arg(long, value_name = "OUT.npy")]
    expected: Vec<PathBuf>,
    /// Seed for random arguments (used when no .npy files are given).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    program: ProgramArgs,
    /// Timed executions (after one warm-up).
    #[arg(long, conflicts_with = "seconds")]
    iters: Option<usize>,
    /// Time budget for the timed executions, at least one runs (default 1).
    #[arg(long)]
    seconds: Option<f64>,
    /// Print one JSON line instead of text.
    #[arg(long)]
    json: bool,
    /// Seed for random arguments (used when no .npy files are given).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// After timing, profile warm runs: write their Chrome trace (Perfetto,
    /// chrome://tracing) with op, shape, JAX op name and source line per
    /// event, and print the ops that took the most time.
    #[arg(long, value_name = "TRACE.json")]
    profile: Option<PathBuf>,
    /// Warm runs to profile (default: as many as were timed, at most 20).
    #[arg(long, value_name = "N", requires = "profile")]
    profile_runs: Option<usize>,
    /// Rows of the profile's table of ops.
    #[arg(long, value_name = "N", default_value_t = 15, requires = "profile")]
    top: usize,
}

#[derive(Args)]
struct ParseArgs {
    /// HLO text file (`-` reads standard input).
    module: String,
    /// Also run the verifier (shape checks) on the parsed module.
    #[arg(long)]
    verify: bool,
}

#[derive(Args)]
struct ConformanceArgs {
    /// Platform name or alias (case-insensitive).
    #[arg(long, short = 'p')]
    platform: Option<String>,
    /// Corpus folder of case folders (repeatable; default: the repository's tests/conformance).
    #[arg(long, value_name = "DIR")]
    corpus: Vec<PathBuf>,
    /// Print one JSON object per line (case, form, status, detail, ...) instead of a table.
    #[arg(long)]
    json: bool,
    /// Judge outputs by each case's rtol/atol (case.json) instead of the scale
    /// rule (error in ULPs of the f64 shadow evaluation's error scale).
    #[arg(long)]
    case_tolerance: bool,
    /// The scale rule's threshold in ULPs of the error scale (default 16).
    #[arg(long, conflicts_with = "case_tolerance")]
    max_ulps: Option<f64>,
}

/// Runs `hlorun` on this process's arguments. Every error is one line on
/// stderr and exit status 1.
pub fn main() -> ExitCode {
    // Results come back as fresh multi-megabyte literals every run: keep freed
    // memory instead of faulting it in again (see `crate::process`).
    crate::process::retain_freed_memory();
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let outcome = match cli.command {
        Command::Platforms => platforms(),
        Command::Run(args) => run(args),
        Command::Compare(args) => compare(args),
        Command::Bench(args) => bench(args),
        Command::Parse(args) => parse(args),
        Command::Conformance(args) => conformance(args),
        Command::Compile(args) => compile_deviceless(args),
        Command::Graph(args) => graph(args),
    };
    match outcome {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Failure(message)) => {
            eprintln!("hlorun: {}", one_line(&message));
            ExitCode::FAILURE
        }
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hlorun: error: {}", one_line(e.message()));
            ExitCode::FAILURE
        }
    }
}

/// A message as one readable line: line breaks and other control characters
/// escaped (names and strings from the input can hold them), and the middle
/// of a very long message elided.
fn one_line(message: &str) -> String {
    const MAX_CHARS: usize = 2000;
    let mut escaped = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    let count = escaped.chars().count();
    if count <= MAX_CHARS {
        return escaped;
    }
    let head: String = escaped.chars().take(MAX_CHARS / 2).collect();
    let tail: String = escaped.chars().skip(count - MAX_CHARS / 2).collect();
    format!("{head} [... {} characters ...] {tail}", count - MAX_CHARS)
}

/// How a subcommand that ran to the end came out.
enum Outcome {
    Success,
    /// A clean "no" (a comparison that found differences): exit 1 with this line.
    Failure(String),
}

const BROKEN_PIPE: &str = "standard output was closed";

fn is_broken_pipe(e: &Error) -> bool {
    e.message() == BROKEN_PIPE
}

/// Writes to standard output; a reader that went away (`| head`) ends the
/// program quietly rather than with a panic.
fn print_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Error::unavailable(BROKEN_PIPE),
            _ => Error::from(e).context("writing to standard output"),
        })
}

// ---------------------------------------------------------------------------
// Inputs

/// Reads and parses a module (HLO or StableHLO text, a StableHLO portable
/// artifact, a serialized `jax.export` module); errors name the file (and the
/// reader's line:column, or the bytecode's operation).
fn load_module(source: &str) -> Result<(HloModule, String)> {
    let (bytes, name) = if source == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Error::from(e).context("reading the module from standard input"))?;
        (bytes, "<stdin>".to_string())
    } else {
        let bytes = std::fs::read(source).map_err(|e| Error::from(e).context(source))?;
        (bytes, source.to_string())
    };
    let module = if hlo_stablehlo::is_bytecode(&bytes) || hlo_stablehlo::is_jax_export(&bytes) {
        crate::program::parse_program_bytes(&bytes)
    } else {
        module_text(bytes, &name).and_then(|text| crate::program::parse_program(&text))
    }
    .map_err(|e| e.context(&name))?;
    Ok((module, name))
}

/// The module file's text, or an error that says what the file is instead.
fn module_text(bytes: Vec<u8>, source: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let what = if bytes.starts_with(b"\x93NUMPY") {
            "is a .npy array, not HLO text: give the module first, then its arguments".to_string()
        } else if bytes.starts_with(b"\x7fELF") {
            "is a binary (ELF) file, not HLO text".to_string()
        } else {
            format!(
                "is not HLO text: invalid UTF-8 at byte {}",
                e.utf8_error().valid_up_to()
            )
        };
        Error::invalid_argument(format!("{source} {what}"))
    })
}

fn load_custom_call_libraries(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        // The library's errors name the file already.
        platform_api::custom_call::load_library(path)?;
    }
    Ok(())
}

/// `%name: shape` for each parameter, for messages about argument counts.
fn signature(exe: &LoadedExecutable) -> String {
    let params: Vec<String> = exe
        .parameters()
        .iter()
        .map(|p| format!("%{}: {}", p.name, p.shape.without_layout()))
        .collect();
    format!("({})", params.join(", "))
}

/// Reads the .npy arguments and checks them against the parameters, naming the
/// file that does not fit.
fn load_arguments(
    paths: &[PathBuf],
    exe: &LoadedExecutable,
    module_name: &str,
) -> Result<Vec<Literal>> {
    let params = exe.parameters();
    if paths.len() != params.len() {
        return Err(Error::invalid_argument(format!(
            "{module_name}: the module takes {} argument(s) {} but {} .npy file(s) were given",
            params.len(),
            signature(exe),
            paths.len()
        )));
    }
    paths
        .iter()
        .zip(params)
        .enumerate()
        .map(|(i, (path, param))| {
            let mut literal = Literal::read_npy(path)?;
            // Narrow types are saved by np.save as raw bytes (`<V1`; see
            // `literal::npy`): the parameter says what they are.
            if let (Shape::Array(have), Shape::Array(want)) = (literal.shape(), &param.shape) {
                if have.element_type == ElementType::U8
                    && want.element_type.is_narrow()
                    && have.dims == want.dims
                {
                    literal = literal.reinterpret(want.element_type)?;
                }
            }
            if !literal.shape().compatible(&param.shape) {
                return Err(Error::invalid_argument(format!(
                    "{}: holds {} but parameter {i} (%{}) expects {}",
                    path.display(),
                    literal.shape().without_layout(),
                    param.name,
                    param.shape.without_layout()
                )));
            }
            Ok(literal)
        })
        .collect()
}

/// The argument files for a program: for a serialized `jax.export` module
/// given all of its function's arguments, those the module kept (it drops
/// the unused ones); else as given.
fn exported_paths(program: &ProgramArgs) -> Result<Vec<PathBuf>> {
    if program.module == "-" {
        return Ok(program.args.clone());
    }
    match std::fs::read(&program.module) {
        Ok(bytes) => crate::program::exported_arguments(&bytes, program.args.clone()),
        Err(_) => Ok(program.args.clone()),
    }
}

/// The spec file beside a module (`NAME.json` for `NAME.hlo`), if there is one.
fn spec_path(module: &str) -> Option<PathBuf> {
    let path = Path::new(module);
    if module == "-" || path.extension().is_none_or(|e| e != "hlo") {
        return None;
    }
    let spec = path.with_extension("json");
    spec.is_file().then_some(spec)
}

/// The .npy arguments if given, else seeded random ones (ranges from the spec
/// file beside the module when there is one).
fn arguments_or_random(
    program: &ProgramArgs,
    exe: &LoadedExecutable,
    module_name: &str,
    seed: u64,
) -> Result<Vec<Literal>> {
    if !program.args.is_empty() || exe.parameters().is_empty() {
        return load_arguments(&exported_paths(program)?, exe, module_name);
    }
    let shapes: Vec<Shape> = exe.parameters().iter().map(|p| p.shape.clone()).collect();
    let ranges: Vec<Option<ValueRange>> = match spec_path(&program.module) {
        Some(path) => {
            let source = path.display().to_string();
            ArgsSpec::read(&path)?.ranges_for(&shapes, &source)?
        }
        None => Vec::new(),
    };
    random_arguments(&shapes, seed, &ranges)
}

/// The most replicas × partitions one command runs: each is a simulated device
/// with a thread of its own.
const MAX_INSTANCES: usize = 1024;

/// Compile options from the module's header, with an optional replica override,
/// and the number of (replica, partition) instances they run; an error when
/// that is more than one machine can simulate.
fn compile_options(
    module: &HloModule,
    replicas: Option<usize>,
    debug: &[String],
) -> Result<(CompileOptions, usize)> {
    let mut options = CompileOptions {
        replica_count: replicas.or(module.config.replica_count).unwrap_or(1).max(1),
        num_partitions: module.config.num_partitions.unwrap_or(1).max(1),
        ..CompileOptions::default()
    };
    for option in debug {
        let (key, value) = option.split_once('=').ok_or_else(|| {
            Error::invalid_argument(format!("--debug-option {option:?}: expected KEY=VALUE"))
        })?;
        options
            .debug_options
            .push((key.to_string(), value.to_string()));
    }
    let instances = options
        .replica_count
        .checked_mul(options.num_partitions)
        .filter(|&n| n <= MAX_INSTANCES)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} replica(s) x {} partition(s) is more than the {MAX_INSTANCES} devices hlorun \
                 simulates in one process",
                options.replica_count, options.num_partitions
            ))
        })?;
    Ok((options, instances))
}

/// A client for `platform`; one with enough devices when the program spans several.
fn client_for(platform: Option<&str>, devices: usize) -> Result<LocalClient> {
    let backend = if devices > 1 {
        Backend::with_options(
            platform,
            &PlatformOptions {
                device_count: Some(devices),
            },
        )?
    } else {
        Backend::new(platform)?
    };
    Ok(LocalClient::new(Arc::new(backend)))
}

fn compile(
    client: &LocalClient,
    module: &HloModule,
    options: &CompileOptions,
    name: &str,
) -> Result<Arc<LoadedExecutable>> {
    let compiled = client
        .compile(module, options)
        .map_err(|e| e.context(name))?;
    Ok(compiled.executable)
}

// ---------------------------------------------------------------------------
// Subcommands

fn platforms() -> Result<Outcome> {
    let listing = registry::list_platforms()?;
    let default = registry::default_platform_name().ok();
    let mut rows = vec![[
        "NAME".to_string(),
        "ALIASES".to_string(),
        "PRIORITY".to_string(),
        "DEVICES".to_string(),
        "STATUS".to_string(),
    ]];
    for p in &listing {
        let (devices, mut status) = match &p.availability {
            Availability::Available { devices } => {
                let mark = if default == Some(p.name) {
                    " (default)"
                } else {
                    ""
                };
                (devices.to_string(), format!("available{mark}"))
            }
            Availability::Unavailable(why) => ("-".to_string(), format!("unavailable: {why}")),
        };
        if !p.problems.is_empty() {
            status.push_str(" [registration problems: see below]");
        }
        let aliases = if p.aliases.is_empty() {
            "-".to_string()
        } else {
            p.aliases.join(",")
        };
        rows.push([
            p.name.to_string(),
            aliases,
            p.priority.to_string(),
            devices,
            status,
        ]);
    }
    let mut text = table(&rows);
    if listing.is_empty() {
        text.push_str("(no platform is registered: no backend crate is linked into this build)\n");
    }
    // Mistakes in the registrations (shared names, missing pieces, pieces for
    // a platform that does not exist) would otherwise go unnoticed until used.
    let problems = registry::problems();
    if !problems.is_empty() {
        text.push_str("\nproblems in the registrations:\n");
        for p in &problems {
            text.push_str(&format!("  - {p}\n"));
        }
    }
    print_out(&text)?;
    Ok(Outcome::Success)
}

fn conformance(args: ConformanceArgs) -> Result<Outcome> {
    let corpora = if args.corpus.is_empty() {
        vec![crate::conformance::default_corpus()?]
    } else {
        args.corpus
    };
    let platform = resolve_platform_name(args.platform.as_deref())?;
    let judge = if args.case_tolerance {
        Judge::CaseTolerance
    } else {
        let mut rule = ScaleRule::default();
        check_threshold("--max-ulps", args.max_ulps)?;
        if let Some(max_ulps) = args.max_ulps {
            rule.max_ulps = max_ulps;
        }
        Judge::Scale(rule)
    };
    let report = crate::conformance::run_corpus_judged(platform, &corpora, judge)?;
    let mut text = String::new();
    if args.json {
        for r in &report.results {
            text.push_str(&r.to_json(report.platform).to_string());
            text.push('\n');
        }
    } else {
        let mut rows = vec![[
            "CASE".to_string(),
            "FORM".to_string(),
            "STATUS".to_string(),
            "DETAIL".to_string(),
        ]];
        for r in &report.results {
            // One line per row, however long the backend's message.
            let detail = r.status.detail().replace('\n', " ");
            rows.push([
                r.case.clone(),
                r.form.to_string(),
                r.status.label().to_string(),
                detail,
            ]);
        }
        text = table(&rows);
        text.push_str(&format!("\n{}\n", report.summary()));
    }
    if !report.unmatched_gaps.is_empty() {
        // Normal for a partial corpus, so a note rather than a failure.
        eprintln!(
            "hlorun: note: {}'s gaps for {} matched no case run",
            report.platform,
            report.unmatched_gaps.join(", ")
        );
    }
    print_out(&text)?;
    if report.ok() {
        if args.json {
            eprintln!("hlorun: {}", report.summary());
        }
        Ok(Outcome::Success)
    } else {
        Ok(Outcome::Failure(report.summary()))
    }
}

fn run(args: RunArgs) -> Result<Outcome> {
    let (module, name) = load_module(&args.program.module)?;
    load_custom_call_libraries(&args.program.custom_call_libs)?;
    let (options, instances) =
        compile_options(&module, args.replicas, &args.program.all_debug_options())?;
    // Under MPI the world must match the program's devices before anything runs.
    let world = match args.collectives.as_str() {
        "mpi" => Some(start_mpi(instances).map_err(|e| e.context(&name))?),
        _ => None,
    };
    let client = client_for(args.program.platform.as_deref(), instances)?;
    let exe = compile(&client, &module, &options, &name)?;
    let out_shardings = args
        .out_sharding
        .iter()
        .map(|t| HloSharding::parse(t).map_err(|e| e.context("--out-sharding")))
        .collect::<Result<Vec<_>>>()?;
    let plan = if options.num_partitions > 1 && !args.per_device {
        Some(ShardedProgram::new(
            &module,
            options.replica_count,
            options.num_partitions,
            &out_shardings,
        )?)
    } else if !out_shardings.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{name}: --out-sharding is for partitioned programs (num_partitions > 1)"
        )));
    } else {
        None
    };
    let per_instance: Vec<Vec<Literal>> = match &plan {
        Some(plan) => {
            let globals = exported_paths(&args.program)?
                .iter()
                .map(Literal::read_npy)
                .collect::<Result<Vec<_>>>()?;
            plan.split(&globals).map_err(|e| e.context(&name))?
        }
        None if args.per_device && instances > 1 => {
            let n = exe.parameters().len();
            if args.program.args.len() != n * instances {
                return Err(Error::invalid_argument(format!(
                    "{name}: --per-device takes {n} argument(s) for each of {instances} devices                      ({}), {} .npy file(s) were given",
                    n * instances,
                    args.program.args.len()
                )));
            }
            args.program
                .args
                .chunks(n.max(1))
                .map(|chunk| load_arguments(chunk, &exe, &name))
                .collect::<Result<Vec<_>>>()?
        }
        None => vec![load_arguments(&exported_paths(&args.program)?, &exe, &name)?; instances],
    };

    let sink = args.profile.as_ref().map(|_| Arc::new(ProfileSink::new()));
    let progress = Arc::new(Progress::new());
    let run_options = ExecuteOptions {
        profile: sink.clone(),
        rng_seed: args.rng_seed,
        progress: Some(progress.clone()),
        ..ExecuteOptions::default()
    };
    let on = |e: Error| e.context(&name);
    let started = Instant::now();
    let watch = Watch::start(
        format!("{} on {}", module.name, client.platform_name()),
        progress,
    );
    let results: Vec<Literal> = if let Some(world) = &world {
        match execute_mpi(world, &client, &exe, &per_instance, &run_options, &options)? {
            Some(all) => all,
            // Rank 0 reports for the job.
            None => return finish_mpi(world),
        }
    } else if instances > 1 {
        client
            .execute_replicated(&exe, &per_instance, &run_options)
            .map_err(on)?
    } else {
        let arguments = per_instance.into_iter().next().unwrap_or_default();
        vec![
            client
                .execute_with(&exe, &arguments, &run_options)
                .map_err(on)?
                .result,
        ]
    };
    // Each result with the name it is printed and saved under: global results
    // per replica, or per-device ones.
    let labelled: Vec<(Option<(String, String)>, Literal)> = match &plan {
        Some(plan) => {
            let globals = plan.assemble(results).map_err(on)?;
            let several = globals.len() > 1;
            globals
                .into_iter()
                .enumerate()
                .map(|(r, g)| {
                    let label = several.then(|| (format!("replica {r}"), format!("replica{r}")));
                    (label, g)
                })
                .collect()
        }
        None => {
            let partitions = options.num_partitions;
            let several = results.len() > 1;
            results
                .into_iter()
                .enumerate()
                .map(|(i, r)| {
                    let label = several.then(|| {
                        if partitions > 1 {
                            (
                                format!(
                                    "device {i} (replica {}, partition {})",
                                    i / partitions,
                                    i % partitions
                                ),
                                format!("device{i}"),
                            )
                        } else {
                            (format!("replica {i}"), format!("replica{i}"))
                        }
                    });
                    (label, r)
                })
                .collect()
        }
    };
    let wall = started.elapsed();
    drop(watch);

    if let (Some(path), Some(sink)) = (&args.profile, &sink) {
        let events = sink.events();
        profile::write_chrome_trace(path, sink, client.platform_name())?;
        let spans = events
            .iter()
            .filter(|e| e.category != "execute" && e.category != "transfer")
            .count();
        eprintln!(
            "hlorun: wrote {} ({} event(s), {spans} from the backend; {:.3} ms with transfers)",
            path.display(),
            events.len(),
            wall.as_secs_f64() * 1e3
        );
    }
    for (label, result) in labelled {
        match &args.out {
            Some(dir) => {
                let dir = match &label {
                    Some((_, sub)) => dir.join(sub),
                    None => dir.clone(),
                };
                std::fs::create_dir_all(&dir).map_err(|e| Error::from(e).context(dir.display()))?;
                let mut written = String::new();
                for (i, leaf) in result.flatten_leaves().into_iter().enumerate() {
                    let path = dir.join(format!("out{i}.npy"));
                    leaf.write_npy(&path)?;
                    written.push_str(&format!(
                        "{}: {}\n",
                        path.display(),
                        leaf.shape().without_layout()
                    ));
                }
                print_out(&written)?;
            }
            None => {
                let text = if args.full {
                    result.to_string()
                } else {
                    result.summary_text(SUMMARY_THRESHOLD, SUMMARY_EDGE_ITEMS)
                };
                match &label {
                    Some((name, _)) => print_out(&format!("{name}: {text}\n"))?,
                    None => print_out(&format!("{text}\n"))?,
                }
            }
        }
    }
    if let Some(world) = &world {
        return finish_mpi(world);
    }
    Ok(Outcome::Success)
}

#[cfg(feature = "mpi")]
use crate::mpi::MpiWorld;

/// Stands in for the MPI world in a build without the `mpi` feature, where
/// none can be made.
#[cfg(not(feature = "mpi"))]
enum MpiWorld {}

/// Joins the MPI world and routes every collective through it, each rank
/// running an equal share of the program's devices; a world size that does
/// not divide the device count is an error on every rank, before anything
/// runs.
#[cfg(feature = "mpi")]
fn start_mpi(instances: usize) -> Result<MpiWorld> {
    let world = MpiWorld::start()?;
    let placement = world.placement(instances)?;
    platform_api::evaluator::collectives::set_transport(Some(world.transport_for(placement)))?;
    Ok(world)
}

#[cfg(not(feature = "mpi"))]
fn start_mpi(_: usize) -> Result<MpiWorld> {
    Err(Error::unimplemented(
        "--collectives mpi: this hlorun was built without MPI (build it with \
         `cargo build -p service --features mpi`, which needs libopenmpi-dev and libclang-dev)",
    ))
}

/// Runs this rank's devices (each on its own thread when there are
/// several) and gathers every device's result at rank 0 (`None` on the other
/// ranks). A failing device ends the whole job (`MPI_Abort`) at once after
/// printing its error, so no device, here or on another rank, waits for it.
#[cfg(feature = "mpi")]
fn execute_mpi(
    world: &MpiWorld,
    client: &LocalClient,
    exe: &LoadedExecutable,
    per_instance: &[Vec<Literal>],
    run_options: &ExecuteOptions,
    options: &CompileOptions,
) -> Result<Option<Vec<Literal>>> {
    use crate::multiprocess::ProcessLink;
    let rank = world.rank();
    let placement = world.placement(per_instance.len())?;
    let partitions = options.num_partitions.max(1);
    let fail = |what: String, e: Error| -> ! {
        eprintln!("hlorun: rank {rank}: error: {what}{e}");
        world.abort(1)
    };
    let run_device = |device: usize| -> Vec<u8> {
        let (replica, partition) = (device / partitions, device % partitions);
        let run = || -> Result<Vec<u8>> {
            let args = per_instance
                .get(device)
                .ok_or_else(|| Error::internal(format!("no arguments for device {device}")))?;
            let result = client.execute_device(exe, args, run_options, replica, partition)?;
            let mut bytes = Vec::new();
            for leaf in result.flatten_leaves() {
                bytes.extend_from_slice(leaf.bytes()?);
            }
            Ok(bytes)
        };
        run().unwrap_or_else(|e| {
            let what = if placement.per_process() > 1 {
                format!("device {device} (replica {replica}, partition {partition}): ")
            } else {
                String::new()
            };
            fail(what, e)
        })
    };
    let mine: Vec<Vec<u8>> = if placement.per_process() == 1 {
        vec![run_device(rank)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = placement
                .local()
                .map(|device| {
                    std::thread::Builder::new()
                        .name(format!("device-{device}"))
                        .spawn_scoped(scope, move || run_device(device))
                        .unwrap_or_else(|e| {
                            fail(
                                format!("device {device}: "),
                                Error::resource_exhausted(format!("could not start a thread: {e}")),
                            )
                        })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        fail(String::new(), Error::internal("a device's thread panicked"))
                    })
                })
                .collect()
        })
    };
    // Every device's result has this program's result shape.
    let shape = exe.result_shape().clone();
    let leaves: Vec<Shape> = shape
        .leaves()
        .into_iter()
        .map(|(_, a)| Shape::Array(a.clone()))
        .collect();
    let size: usize = leaves
        .iter()
        .map(|s| s.array_or_err().map(|a| a.byte_size()))
        .sum::<Result<usize>>()?;
    // Each rank's results, its devices' one after another, to rank 0.
    let link = world.link();
    if rank != 0 {
        let message = mine.concat();
        if let Err(e) = link.swap("the results", &[0], vec![message]) {
            fail(String::new(), e)
        }
        return Ok(None);
    }
    let peers: Vec<usize> = (1..placement.processes()).collect();
    let received = link
        .swap("the results", &peers, vec![Vec::new(); peers.len()])
        .unwrap_or_else(|e| fail(String::new(), e));
    let k = placement.per_process();
    let mut all: Vec<Vec<u8>> = mine;
    for (q, message) in peers.iter().zip(received) {
        if message.len() != k * size {
            return Err(Error::internal(format!(
                "rank {q} sent {} bytes of results, {k} device(s) x {size} expected",
                message.len()
            )));
        }
        all.extend((0..k).map(|d| message[d * size..(d + 1) * size].to_vec()));
    }
    all.into_iter()
        .enumerate()
        .map(|(device, bytes)| {
            let mut at = 0;
            let parts = leaves
                .iter()
                .map(|s| {
                    let n = s.array_or_err()?.byte_size();
                    let part = bytes.get(at..at + n).ok_or_else(|| {
                        Error::internal(format!("device {device} sent a short result"))
                    })?;
                    at += n;
                    Literal::from_bytes(s.clone(), part)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(if shape.is_tuple() {
                Literal::tuple(parts)
            } else {
                parts
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::internal("no result"))?
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

#[cfg(not(feature = "mpi"))]
fn execute_mpi(
    world: &MpiWorld,
    _: &LocalClient,
    _: &LoadedExecutable,
    _: &[Vec<Literal>],
    _: &ExecuteOptions,
    _: &CompileOptions,
) -> Result<Option<Vec<Literal>>> {
    match *world {}
}

/// Leaves the MPI world: collectives go back to this process.
fn finish_mpi(_world: &MpiWorld) -> Result<Outcome> {
    platform_api::evaluator::collectives::set_transport(None)?;
    Ok(Outcome::Success)
}

/// `rtol` and `atol` from a conformance `case.json` beside the module.
fn case_tolerance(module: &str) -> Option<Tolerance> {
    if module == "-" {
        return None;
    }
    let case = Path::new(module).parent()?.join("case.json");
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case).ok()?).ok()?;
    Some(Tolerance {
        rtol: value.get("rtol")?.as_f64()?,
        atol: value.get("atol")?.as_f64()?,
    })
}

/// The expected outputs of `--expected`, as one result literal (a tuple when
/// there are several).
fn expected_result(paths: &[PathBuf], got: &Literal) -> Result<Literal> {
    let leaves = paths
        .iter()
        .map(Literal::read_npy)
        .collect::<Result<Vec<_>>>()?;
    crate::compare::expected_result(leaves, got, "--expected file(s)", |i| {
        format!("{}:", paths[i].display())
    })
}

fn compare(args: CompareArgs) -> Result<Outcome> {
    check_threshold("--rtol", args.rtol)?;
    check_threshold("--atol", args.atol)?;
    check_threshold("--max-ulps", args.max_ulps)?;
    let (module, name) = load_module(&args.program.module)?;
    load_custom_call_libraries(&args.program.custom_call_libs)?;
    let (options, instances) = compile_options(&module, None, &args.program.all_debug_options())?;
    let platform = resolve_platform_name(args.program.platform.as_deref())?;
    let tested = client_for(Some(platform), instances)?;
    let tested_exe = compile(&tested, &module, &options, &name)?;
    let arguments = arguments_or_random(&args.program, &tested_exe, &name, args.seed)?;

    let execute = |client: &LocalClient, exe: &LoadedExecutable| -> Result<Vec<Literal>> {
        let on = |e: Error| e.context(&name);
        if instances > 1 {
            let per_instance = vec![arguments.clone(); instances];
            client
                .execute_replicated(exe, &per_instance, &ExecuteOptions::default())
                .map_err(on)
        } else {
            Ok(vec![client.execute(exe, &arguments).map_err(on)?])
        }
    };
    let got = execute(&tested, &tested_exe)?;

    let report = if args.rtol.is_none() && args.atol.is_none() {
        // The scale rule: the reference is the f64 shadow evaluation.
        if instances > 1 {
            return Err(Error::unimplemented(format!(
                "{name}: the scale rule does not evaluate replicated modules ({instances} \
                 instances); pass --rtol/--atol to compare with the reference platform"
            )));
        }
        let got = got
            .first()
            .ok_or_else(|| Error::internal("the platform returned no result"))?;
        let expected = if args.expected.is_empty() {
            None
        } else {
            Some((
                expected_result(&args.expected, got)?,
                "the --expected arrays",
            ))
        };
        let rule = ScaleRule {
            max_ulps: args.max_ulps.unwrap_or(DEFAULT_MAX_ULPS),
        };
        compare_by_scale(
            &module, &options, &arguments, got, expected, rule, &name, platform,
        )?
    } else {
        let (want, against) = if args.expected.is_empty() {
            let reference = resolve_platform_name(Some(&args.reference))?;
            let checker = client_for(Some(reference), instances)?;
            let reference_exe = compile(&checker, &module, &options, &name)?;
            (execute(&checker, &reference_exe)?, reference.to_string())
        } else {
            let want = got
                .iter()
                .map(|g| expected_result(&args.expected, g))
                .collect::<Result<Vec<_>>>()?;
            (want, "the --expected arrays".to_string())
        };
        let fallback = case_tolerance(&args.program.module).unwrap_or_default();
        let tolerance = Tolerance {
            rtol: args.rtol.unwrap_or(fallback.rtol),
            atol: args.atol.unwrap_or(fallback.atol),
        };
        compare_by_tolerance(&got, &want, tolerance, &name, platform, against)?
    };
    print_out(&report.text)?;
    Ok(match report.failure(&name, platform) {
        Some(line) => Outcome::Failure(line),
        None => Outcome::Success,
    })
}

/// Entries kept at each end of a summarised dimension (NumPy's `edgeitems`).
const SUMMARY_EDGE_ITEMS: usize = 3;

/// The longest `bench --seconds` accepts (a week).
const MAX_BENCH_SECONDS: u64 = 7 * 24 * 3600;

fn bench(args: BenchArgs) -> Result<Outcome> {
    let (module, name) = load_module(&args.program.module)?;
    load_custom_call_libraries(&args.program.custom_call_libs)?;
    let budget = match args.seconds {
        None => Duration::from_secs(1),
        Some(s) => Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| d.as_secs() <= MAX_BENCH_SECONDS)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "--seconds must be a number of seconds from 0 to {MAX_BENCH_SECONDS}, not {s}"
                ))
            })?,
    };
    let (options, instances) = compile_options(&module, None, &args.program.all_debug_options())?;
    if instances > 1 {
        return Err(Error::unimplemented(format!(
            "{name}: bench runs single-device programs; this one has {} replica(s) x {} partition(s)",
            options.replica_count, options.num_partitions
        )));
    }
    let client = client_for(args.program.platform.as_deref(), 1)?;
    let compiled = client
        .compile(&module, &options)
        .map_err(|e| e.context(&name))?;
    let compile_time = compiled.elapsed;
    let exe = compiled.executable;
    let arguments = arguments_or_random(&args.program, &exe, &name, args.seed)?;
    let buffers = arguments
        .iter()
        .enumerate()
        .map(|(i, lit)| client.to_device_for(&exe, i, lit, 0))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = buffers.iter().collect();
    let on = |e: Error| e.context(&name);
    let run_once = || -> Result<Duration> {
        let start = Instant::now();
        let out = client
            .execute_buffers(&exe, &refs, &ExecuteOptions::default())
            .map_err(on)?;
        // As jax hands a result to NumPy: the Host platform adopts the
        // result's memory rather than copying it; other platforms copy.
        let result = client.into_literal(out.result).map_err(on)?;
        let elapsed = start.elapsed();
        drop(result);
        Ok(elapsed)
    };

    run_once()?; // warm-up
    let mut times = Vec::new();
    match args.iters {
        Some(n) => {
            for _ in 0..n.max(1) {
                times.push(run_once()?);
            }
        }
        None => {
            let start = Instant::now();
            while times.is_empty() || start.elapsed() < budget {
                times.push(run_once()?);
            }
        }
    }
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let median = if times.len() % 2 == 1 {
        ms(times[times.len() / 2])
    } else {
        (ms(times[times.len() / 2 - 1]) + ms(times[times.len() / 2])) / 2.0
    };
    let min = ms(times[0]);
    let peak_bytes = exe.peak_memory_bytes().unwrap_or_else(|| {
        client.backend().executors()[0]
            .memory_usage()
            .peak_bytes_in_use
    });

    let profile_text = match &args.profile {
        Some(path) => {
            let runs = args
                .profile_runs
                .unwrap_or_else(|| times.len().min(20))
                .max(1);
            profile_warm_runs(&client, &exe, &refs, path, runs, args.top).map_err(on)?
        }
        None => String::new(),
    };
    let text = if args.json {
        // Written field by field to keep the documented key order (a JSON
        // object built by serde_json would sort its keys).
        let fields = [
            ("platform", serde_json::json!(client.platform_name())),
            ("compile_ms", serde_json::json!(ms(compile_time))),
            ("execute_ms_median", serde_json::json!(median)),
            ("execute_ms_min", serde_json::json!(min)),
            ("iters", serde_json::json!(times.len())),
            ("peak_bytes", serde_json::json!(peak_bytes)),
        ];
        let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", body.join(","))
    } else {
        format!(
            "{name} on {}: compile {:.3} ms; execute median {median:.3} ms, min {min:.3} ms over {} iteration(s); peak memory {peak_bytes} bytes",
            client.platform_name(),
            ms(compile_time),
            times.len()
        )
    };
    print_out(&format!("{text}\n"))?;
    if !profile_text.is_empty() {
        if args.json {
            // Standard output stays one JSON line.
            eprint!("{profile_text}");
        } else {
            print_out(&profile_text)?;
        }
    }
    Ok(Outcome::Success)
}

/// Runs `runs` more (warm) executions with a profile, writes their Chrome
/// trace to `path`, and returns the table of the ops that took the most time.
fn profile_warm_runs(
    client: &LocalClient,
    exe: &LoadedExecutable,
    args: &[&crate::DeviceBuffer],
    path: &Path,
    runs: usize,
    top: usize,
) -> Result<String> {
    let sink = Arc::new(ProfileSink::new());
    let options = ExecuteOptions {
        profile: Some(sink.clone()),
        ..ExecuteOptions::default()
    };
    for _ in 0..runs {
        let out = client.execute_buffers(exe, args, &options)?;
        drop(client.into_literal(out.result)?);
    }
    profile::write_chrome_trace(path, &sink, client.platform_name())?;
    let events = sink.events();
    let executions: Vec<f64> = events
        .iter()
        .filter(|e| e.category == "execute")
        .map(|e| e.duration_us)
        .collect();
    let run_us = executions.iter().sum::<f64>() / executions.len().max(1) as f64;
    let rows = profile::op_summary(&events);
    let mut text = format!(
        "profile of {runs} warm run(s) ({:.3} ms each, with profiling on): {} \
         (open in ui.perfetto.dev)\n",
        run_us / 1e3,
        path.display()
    );
    if rows.is_empty() {
        text.push_str(&format!(
            "{} reports no spans of its own; the trace holds the executions only\n",
            client.platform_name()
        ));
    } else {
        text.push_str(&profile::format_op_summary(&rows, runs, run_us, top));
    }
    Ok(text)
}

#[cfg(feature = "cuda")]
fn compile_deviceless(args: CompileArgs) -> Result<Outcome> {
    use platform_cuda::{compiler, nvrtc};
    if !matches!(args.platform.to_ascii_lowercase().as_str(), "cuda" | "gpu") {
        return Err(Error::invalid_argument(format!(
            "deviceless compilation is available for CUDA only, not {:?}",
            args.platform
        )));
    }
    let arch = nvrtc::Arch::parse(&args.target)?;
    let (module, name) = load_module(&args.module)?;
    let (options, _) = compile_options(&module, None, &[])?;
    let (text, extension) = match args.emit.as_str() {
        "hlo" => (
            compiler::optimize(module.clone(), &options)?.to_text(),
            "hlo",
        ),
        "cuda" => (compiler::compile_program(&module, &options)?.source, "cu"),
        "ptx" => (compiler::compile_ptx(&module, &options, arch)?.1, "ptx"),
        other => {
            return Err(Error::invalid_argument(format!(
                "--emit must be ptx, cuda or hlo, not {other:?}"
            )))
        }
    };
    match args.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| Error::from(e).context(dir.display()))?;
            let path = dir.join(format!("{}.{extension}", module.name));
            std::fs::write(&path, &text).map_err(|e| Error::from(e).context(path.display()))?;
            eprintln!("{name}: wrote {}", path.display());
        }
        None => print_out(&text)?,
    }
    Ok(Outcome::Success)
}

#[cfg(not(feature = "cuda"))]
fn compile_deviceless(_args: CompileArgs) -> Result<Outcome> {
    Err(Error::unimplemented(
        "this hlorun was built without the CUDA platform (feature `cuda`)",
    ))
}

fn graph(args: GraphArgs) -> Result<Outcome> {
    let (module, name) = load_module(&args.module)?;
    let module = match &args.platform {
        None => module,
        Some(platform) => {
            let backend = Backend::new(Some(platform))?;
            let (options, _) = compile_options(&module, None, &[])?;
            backend
                .compiler()
                .run_hlo_passes(module, backend.executor(0)?, &options)
                .map_err(|e| e.context(&name))?
        }
    };
    let comp = crate::graph::pick_computation(&module, args.computation.as_deref())?;
    let text = match args.format.as_str() {
        "dot" => crate::graph::to_dot(&module, comp)?,
        "html" => crate::graph::to_html(&module, comp)?,
        _ => crate::graph::to_svg(&module, comp)?,
    };
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| Error::from(e).context(path.display()))?;
            eprintln!("{name}: wrote {}", path.display());
        }
        None => print_out(&text)?,
    }
    Ok(Outcome::Success)
}

fn parse(args: ParseArgs) -> Result<Outcome> {
    let (module, name) = load_module(&args.module)?;
    if args.verify {
        platform_api::hlo::verifier::verify_module(&module).map_err(|e| e.context(name))?;
    }
    let mut text = module.to_text();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    print_out(&text)?;
    Ok(Outcome::Success)
}
