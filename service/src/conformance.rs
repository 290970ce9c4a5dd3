//! The conformance corpus as a product: run corpus folders on a platform by
//! name and say, per case and per form, what happened.
//!
//! A corpus is a folder of cases (`tests/conformance/README.md` describes one):
//! each case folder holds `module.hlo` and `optimized.hlo` (the same program
//! before and after XLA's passes — the two *forms*), `argN.npy` inputs,
//! `outN.npy` expected outputs (a tuple result flattened to its leaves) and
//! `case.json` with the tolerances. Results are judged by the scale rule of
//! [`crate::compare`] ([`Judge::Scale`], the default): each element's error
//! against XLA CPU's value in ULPs of the error scale an f64 shadow
//! evaluation of the same program gives, so a correct summation order passes
//! and no case needs a hand-tuned tolerance. The case's own `rtol`/`atol`
//! remain as [`Judge::CaseTolerance`] (`hlorun conformance --case-tolerance`).
//!
//! # Why a status and not a string
//!
//! A backend author needs to know *why* a case fails, and a tool needs to
//! count: so every run ends in a [`Status`] that keeps the error code. An
//! `Unimplemented` error becomes [`Status::Unsupported`] with the op names its
//! message names (what to implement next), a wrong value becomes
//! [`Status::Wrong`] with the first mismatching element (where to look), any
//! other error [`Status::Error`] with its code. Loading problems of a case are
//! statuses too, so one bad folder never hides the rest of the corpus.
//!
//! # Gaps live with their backend
//!
//! A backend that knowingly fails a case registers a
//! [`platform_api::registry::ConformanceGap`] in its own crate
//! (`inventory::submit!`), so the list travels with the code it describes. A
//! failing case with a gap is [`Status::KnownGap`]; a gap whose case passes is
//! [`Status::GapNowPasses`], which counts as a failure so the list always says
//! exactly what does not work yet.
//!
//! Programs run through [`LocalClient`], exactly as users run them; this module
//! never panics and reports every problem as a status or an `Error`.

use crate::compare::{compare_arrays, compare_scaled_leaf, shadow_reference, ScaleRule, Tolerance};
use crate::{Backend, LocalClient};
use platform_api::hlo::Opcode;
use platform_api::registry::{self, ConformanceGap};
use platform_api::{
    Code, CompileOptions, ElementType, Error, HloModule, Literal, PlatformOptions, Result, Shape,
};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The repository's corpus, as seen when this crate was compiled. A binary
/// moved away from its checkout will not find it; callers then ask for a
/// corpus folder (see [`default_corpus`]).
pub const DEFAULT_CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/conformance");

/// The repository's corpus folder, or an error asking for one.
pub fn default_corpus() -> Result<PathBuf> {
    let path = Path::new(DEFAULT_CORPUS);
    if path.is_dir() {
        Ok(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()))
    } else {
        Err(Error::not_found(format!(
            "the default conformance corpus {DEFAULT_CORPUS} does not exist (this build's \
             source checkout has moved or been removed); name a corpus folder with --corpus DIR"
        )))
    }
}

/// Which of a case's programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Form {
    /// `module.hlo`: as JAX lowered it.
    Module,
    /// `optimized.hlo`: after XLA CPU's passes (fusions, layouts, bitcasts).
    Optimized,
    /// `module.mlir`: the StableHLO text JAX printed for the program, read
    /// by `hlo-stablehlo`; a case may lack it.
    StableHlo,
    /// `module.mlirbc`: the same StableHLO as a portable artifact (VHLO in
    /// MLIR bytecode, as jaxlib serializes it for a PJRT plugin or
    /// `jax.export`); a case may lack it.
    Bytecode,
    /// `module.jaxexport`: the case's function exported with `jax.export`
    /// and serialized (a flatbuffer around a portable artifact); a case may
    /// lack it.
    JaxExport,
}

impl Form {
    /// The two HLO forms every case has.
    pub const ALL: [Form; 2] = [Form::Module, Form::Optimized];

    /// `"module"`, `"optimized"` or `"stablehlo"`, as gaps and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Form::Module => "module",
            Form::Optimized => "optimized",
            Form::StableHlo => "stablehlo",
            Form::Bytecode => "bytecode",
            Form::JaxExport => "jaxexport",
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Form::Module => "module.hlo",
            Form::Optimized => "optimized.hlo",
            Form::StableHlo => "module.mlir",
            Form::Bytecode => "module.mlirbc",
            Form::JaxExport => "module.jaxexport",
        }
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One case, loaded.
#[derive(Clone, Debug)]
pub struct Case {
    /// The folder's name.
    pub name: String,
    pub dir: PathBuf,
    pub tolerance: Tolerance,
    pub args: Vec<Literal>,
    pub outputs: Vec<Literal>,
}

impl Case {
    /// Loads the case in `dir`; errors name the file at fault.
    pub fn load(dir: &Path) -> Result<Case> {
        let json_path = dir.join("case.json");
        let text = std::fs::read_to_string(&json_path)
            .map_err(|e| Error::from(e).context(json_path.display()))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::invalid_argument(format!("{}: {e}", json_path.display())))?;
        let number = |key: &str| {
            json[key].as_f64().ok_or_else(|| {
                Error::invalid_argument(format!("{}: no number \"{key}\"", json_path.display()))
            })
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        let case = Case {
            tolerance: Tolerance {
                rtol: number("rtol")?,
                atol: number("atol")?,
            },
            args: read_numbered(dir, "arg")?,
            outputs: read_numbered(dir, "out")?,
            dir: dir.to_path_buf(),
            name,
        };
        let declared = json["outputs"].as_array().map_or(0, Vec::len);
        if declared != case.outputs.len() {
            return Err(Error::invalid_argument(format!(
                "{}: lists {declared} outputs but {} outN.npy files exist",
                json_path.display(),
                case.outputs.len()
            )));
        }
        Ok(case)
    }

    /// The forms this case has: both HLO forms, and StableHLO text,
    /// bytecode and a jax.export module where their files exist.
    pub fn forms(&self) -> Vec<Form> {
        let mut forms = Form::ALL.to_vec();
        for form in [Form::StableHlo, Form::Bytecode, Form::JaxExport] {
            if self.dir.join(form.file_name()).exists() {
                forms.push(form);
            }
        }
        forms
    }

    /// The program text of one form.
    pub fn program(&self, form: Form) -> Result<String> {
        let path = self.dir.join(form.file_name());
        std::fs::read_to_string(&path).map_err(|e| Error::from(e).context(path.display()))
    }

    /// The program file of one form, as bytes (bytecode is not text).
    pub fn program_bytes(&self, form: Form) -> Result<Vec<u8>> {
        let path = self.dir.join(form.file_name());
        std::fs::read(&path).map_err(|e| Error::from(e).context(path.display()))
    }
}

/// Reads `prefix0.npy`, `prefix1.npy`, ... until one is missing.
fn read_numbered(dir: &Path, prefix: &str) -> Result<Vec<Literal>> {
    let mut out = Vec::new();
    loop {
        let path = dir.join(format!("{prefix}{}.npy", out.len()));
        if !path.is_file() {
            return Ok(out);
        }
        out.push(Literal::read_npy(&path).map_err(|e| e.context(path.display()))?);
    }
}

/// The case folders of a corpus (sub-folders holding a `case.json`), sorted by
/// name. A corpus without cases is an error: a mistyped path must not pass.
pub fn case_dirs(corpus: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(corpus)
        .map_err(|e| Error::from(e).context(format!("corpus folder {}", corpus.display())))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.join("case.json").is_file() {
            dirs.push(path);
        }
    }
    if dirs.is_empty() {
        return Err(Error::not_found(format!(
            "corpus folder {} holds no case (a case is a folder with a case.json)",
            corpus.display()
        )));
    }
    dirs.sort();
    Ok(dirs)
}

/// How one form of one case came out.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Pass,
    /// The platform said `Unimplemented`; `ops` are the op names its message
    /// names (empty when it names none).
    Unsupported {
        ops: Vec<String>,
        message: String,
    },
    /// The program ran but a value differs. `element` is the row-major index of
    /// the mismatch shown (the worst under the scale rule, the first under a
    /// tolerance), `None` when the output's shape (or the number of outputs)
    /// is wrong; then `got` / `want` describe those. `judged` says by which
    /// rule, and for the scale rule the element's error and scale.
    Wrong {
        output: usize,
        element: Option<usize>,
        got: String,
        want: String,
        mismatches: usize,
        judged: String,
    },
    /// Any other error, with its code.
    Error {
        code: Code,
        message: String,
    },
    /// Fails, as a registered gap says it does; `observed` is what happened.
    KnownGap {
        reason: String,
        observed: String,
    },
    /// A registered gap, but the case passes: the gap must be removed.
    GapNowPasses {
        reason: String,
    },
}

impl Status {
    /// A short label: `pass`, `unsupported`, `wrong`, `error`, `known-gap`,
    /// `gap-now-passes`.
    pub fn label(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Unsupported { .. } => "unsupported",
            Status::Wrong { .. } => "wrong",
            Status::Error { .. } => "error",
            Status::KnownGap { .. } => "known-gap",
            Status::GapNowPasses { .. } => "gap-now-passes",
        }
    }

    /// Passes, or fails as registered.
    pub fn is_ok(&self) -> bool {
        matches!(self, Status::Pass | Status::KnownGap { .. })
    }

    /// One line saying what happened, for people.
    pub fn detail(&self) -> String {
        match self {
            Status::Pass => String::new(),
            Status::Unsupported { ops, message } if ops.is_empty() => message.clone(),
            Status::Unsupported { ops, message } => format!("{}: {message}", ops.join(", ")),
            Status::Wrong {
                output,
                element: Some(element),
                got,
                want,
                mismatches,
                judged,
            } => format!(
                "output {output}: {mismatches} element(s) differ; at element {element}: got {got}, want {want} ({judged})"
            ),
            Status::Wrong {
                output,
                got,
                want,
                judged,
                ..
            } => format!("output {output}: got {got}, want {want} ({judged})"),
            Status::Error { code, message } => format!("{code:?}: {message}"),
            Status::KnownGap { reason, observed } => format!("{reason} ({observed})"),
            Status::GapNowPasses { reason } => format!(
                "passes, but a gap is registered for it ({reason}): remove the gap"
            ),
        }
    }
}

/// One row of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseResult {
    pub case: String,
    pub form: Form,
    pub status: Status,
}

impl CaseResult {
    /// The row as one JSON object: `case`, `form`, `status` (the label) and
    /// `detail`, plus the status' own fields (`ops`; `output`, `element`,
    /// `got`, `want`; `code`; `reason`).
    pub fn to_json(&self, platform: &str) -> serde_json::Value {
        let mut row = serde_json::json!({
            "platform": platform,
            "case": self.case,
            "form": self.form.name(),
            "status": self.status.label(),
            "detail": self.status.detail(),
        });
        let extra = match &self.status {
            Status::Unsupported { ops, .. } => serde_json::json!({ "ops": ops }),
            Status::Wrong {
                output,
                element,
                got,
                want,
                mismatches,
                judged,
            } => serde_json::json!({
                "output": output, "element": element, "got": got, "want": want,
                "mismatches": mismatches, "judged": judged,
            }),
            Status::Error { code, .. } => serde_json::json!({ "code": format!("{code:?}") }),
            Status::KnownGap { reason, .. } | Status::GapNowPasses { reason } => {
                serde_json::json!({ "reason": reason })
            }
            Status::Pass => serde_json::json!({}),
        };
        if let (Some(row), serde_json::Value::Object(extra)) = (row.as_object_mut(), extra) {
            row.extend(extra);
        }
        row
    }
}

/// Every case and form of one run on one platform.
#[derive(Clone, Debug)]
pub struct Report {
    /// The platform's canonical name.
    pub platform: &'static str,
    /// Sorted by case, then form.
    pub results: Vec<CaseResult>,
    /// The platform's gaps that matched no case run, as `case (form)`: normal
    /// for a partial corpus, a misspelt or stale gap for the full one.
    pub unmatched_gaps: Vec<String>,
}

impl Report {
    /// Everything passes or is a registered gap.
    pub fn ok(&self) -> bool {
        self.results.iter().all(|r| r.status.is_ok())
    }

    /// How many results have this label.
    pub fn count(&self, label: &str) -> usize {
        self.results
            .iter()
            .filter(|r| r.status.label() == label)
            .count()
    }

    /// `"Interpreter: 86 of 86 runs: 84 pass, 2 known-gap"` (labels with a
    /// count of zero left out).
    pub fn summary(&self) -> String {
        let labels = [
            "pass",
            "known-gap",
            "unsupported",
            "wrong",
            "error",
            "gap-now-passes",
        ];
        let counts: Vec<String> = labels
            .iter()
            .map(|l| (l, self.count(l)))
            .filter(|(_, n)| *n > 0)
            .map(|(l, n)| format!("{n} {l}"))
            .collect();
        format!(
            "{}: {} run(s): {}",
            self.platform,
            self.results.len(),
            if counts.is_empty() {
                "nothing ran".to_string()
            } else {
                counts.join(", ")
            }
        )
    }
}

/// Op names a message names: words that are HLO opcodes (`negate`,
/// `dynamic-slice`), also in the `Debug` spelling some backends print
/// (`DynamicSlice`). Opcodes that are also English words (`and`, `map`,
/// `while`, ...) count only where the message marks them as an op: quoted,
/// after "op", "opcode", "instruction", "implement" or "support(s)", or
/// followed by `(%` or `(instruction` (as the Host and the evaluator say it).
pub fn ops_named_in(message: &str) -> Vec<String> {
    const ENGLISH: &[&str] = &[
        "and",
        "or",
        "not",
        "map",
        "sort",
        "copy",
        "call",
        "while",
        "select",
        "send",
        "recv",
        "domain",
        "reduce",
        "convert",
        "gather",
        "scatter",
        "pad",
        "slice",
        "clamp",
        "power",
        "tuple",
        "constant",
        "parameter",
        "fusion",
        "after-all",
        "compare",
    ];
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out: Vec<String> = Vec::new();
    let mut previous = "";
    let mut rest = message;
    let mut offset = 0;
    while let Some(start) = rest.find(is_word) {
        let len = rest[start..]
            .find(|c| !is_word(c))
            .unwrap_or(rest.len() - start);
        let word = rest[start..start + len].trim_matches('-');
        let (before, after) = (&message[..offset + start], &rest[start + len..]);
        let name = kebab(word);
        if let Some(op) = Opcode::from_name(&name) {
            let marked = before.ends_with(['`', '"', '\''])
                || matches!(
                    previous,
                    "op" | "opcode" | "instruction" | "implement" | "support" | "supports"
                )
                || after.trim_start().starts_with("(%")
                || after.trim_start().starts_with("(instruction");
            if (marked || !ENGLISH.contains(&op.name())) && !out.iter().any(|o| o == op.name()) {
                out.push(op.name().to_string());
            }
        }
        previous = &rest[start..start + len];
        offset += start + len;
        rest = &rest[start + len..];
    }
    out
}

/// `DynamicSlice` → `dynamic-slice`; lower-case words unchanged.
fn kebab(word: &str) -> String {
    if !word.starts_with(|c: char| c.is_ascii_uppercase()) || word.contains('-') {
        return word.to_string();
    }
    let mut out = String::new();
    for (i, c) in word.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The status of an error.
fn error_status(e: &Error) -> Status {
    match e.code() {
        Code::Unimplemented => Status::Unsupported {
            ops: ops_named_in(e.message()),
            message: e.message().to_string(),
        },
        code => Status::Error {
            code,
            message: e.message().to_string(),
        },
    }
}

/// Device memory in use on all of `client`'s devices, by the ledger every
/// platform keeps.
fn memory_in_use(client: &LocalClient) -> u64 {
    client
        .backend()
        .executors()
        .iter()
        .map(|e| e.memory_usage().bytes_in_use)
        .sum()
}

/// Runs one form of a case on `client` and compares every output. Gaps are
/// not consulted (see [`with_gap`]).
pub fn run_case(client: &LocalClient, case: &Case, form: Form) -> Status {
    run_case_judged(client, case, form, Judge::default())
}

/// How a run's outputs are judged against the case's expected outputs (XLA
/// CPU's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Judge {
    /// The scale rule (`crate::compare`): each element's error against XLA's
    /// value, in ULPs of the error scale an f64 shadow evaluation of the same
    /// program on the same arguments gives. The default: it accepts any
    /// correct summation order or FMA use and needs no tolerance per case.
    Scale(ScaleRule),
    /// The case's own `rtol`/`atol` from `case.json`.
    CaseTolerance,
}

impl Default for Judge {
    fn default() -> Self {
        Judge::Scale(ScaleRule::default())
    }
}

/// [`run_case`] under a chosen [`Judge`].
pub fn run_case_judged(client: &LocalClient, case: &Case, form: Form, judge: Judge) -> Status {
    let run = case
        .program_bytes(form)
        .and_then(|bytes| crate::program::parse_program_bytes(&bytes))
        .and_then(|module| {
            let entry = module.entry();
            let args = entry
                .parameters()
                .iter()
                .zip(&case.args)
                .map(|(&p, arg)| as_narrow(arg, &entry.instr(p).shape))
                .collect::<Result<Vec<_>>>()?;
            let compiled = client.compile(&module, &CompileOptions::default())?;
            let result = client.execute(&compiled.executable, &args)?;
            Ok((module, args, result))
        });
    match (run, judge) {
        (Ok((_, _, result)), Judge::CaseTolerance) => {
            compare_outputs(result.flatten_leaves(), case)
        }
        (Ok((module, args, result)), Judge::Scale(rule)) => {
            compare_outputs_scaled(&result, case, &module, &args, rule)
        }
        (Err(e), _) => match hlo_stablehlo::known_gap(e.message()) {
            // What the StableHLO reader declares it cannot read yet is a
            // known gap on every platform.
            Some((op, why))
                if matches!(form, Form::StableHlo | Form::Bytecode | Form::JaxExport)
                    && e.code() == Code::Unimplemented =>
            {
                Status::KnownGap {
                    reason: format!("StableHLO reader: {op}: {why}"),
                    observed: e.message().to_string(),
                }
            }
            _ => error_status(&e),
        },
    }
}

/// Compares a result with the case's expected outputs under the scale rule,
/// the scale coming from the shadow evaluation of `module` on `args`; a
/// program the shadow cannot evaluate is judged by the case's tolerance.
pub fn compare_outputs_scaled(
    got: &Literal,
    case: &Case,
    module: &HloModule,
    args: &[Literal],
    rule: ScaleRule,
) -> Status {
    let leaves = got.clone().flatten_leaves();
    if leaves.len() != case.outputs.len() {
        return compare_outputs(leaves, case);
    }
    let shadow = match shadow_reference(module, args, &CompileOptions::default()) {
        Ok(shadow) => shadow,
        // A program the shadow cannot evaluate (an op it has no f64 form
        // for, a custom call registered for one platform only) is still
        // judged: by the case's tolerance, and a failure says why.
        Err(e) => {
            let mut status = compare_outputs(leaves, case);
            if let Status::Wrong { judged, .. } = &mut status {
                judged.push_str(&format!(
                    ", as the shadow reference could not evaluate the program: {}",
                    e.message()
                ));
            }
            return status;
        }
    };
    let scales = shadow.scale.flatten_leaves();
    for (i, ((g, w), scale)) in leaves.iter().zip(&case.outputs).zip(&scales).enumerate() {
        let w = &match as_narrow(w, g.shape()) {
            Ok(w) => w,
            Err(e) => return error_status(&e),
        };
        let leaf = match compare_scaled_leaf(i, g, w, scale, rule) {
            Ok(leaf) => leaf,
            Err(e) => return error_status(&e),
        };
        if leaf.ok() {
            continue;
        }
        let (element, got, want, judged) = match (&leaf.failure, leaf.worst.first()) {
            (None, Some(e)) => (
                Some(e.linear),
                g.get(e.linear).map(|s| s.to_string()).unwrap_or_default(),
                w.get(e.linear).map(|s| s.to_string()).unwrap_or_default(),
                format!(
                    "{:.1} ULPs at the error scale {:.3e}; the rule: {rule}",
                    e.ulps, e.scale
                ),
            ),
            (failure, _) => (
                None,
                g.shape().without_layout().to_string(),
                w.shape().without_layout().to_string(),
                failure.clone().unwrap_or_else(|| "mismatch".to_string()),
            ),
        };
        return Status::Wrong {
            output: i,
            element,
            got,
            want,
            mismatches: leaf.mismatches,
            judged,
        };
    }
    Status::Pass
}

/// A narrow-typed array (`s4`, `f8e4m3fn`, ...) is stored in a `.npy` file as
/// its raw bytes (what `np.save` writes for ml_dtypes arrays reads as `u8`):
/// `literal` read as `like`'s narrow element type when that is the case.
fn as_narrow(literal: &Literal, like: &Shape) -> Result<Literal> {
    match (literal.shape(), like) {
        (Shape::Array(have), Shape::Array(want))
            if have.element_type == ElementType::U8
                && want.element_type.is_narrow()
                && have.dims == want.dims =>
        {
            literal.reinterpret(want.element_type)
        }
        _ => Ok(literal.clone()),
    }
}

/// Compares the result's leaves with the case's expected outputs.
pub fn compare_outputs(got: Vec<Literal>, case: &Case) -> Status {
    if got.len() != case.outputs.len() {
        return Status::Wrong {
            output: got.len().min(case.outputs.len()),
            element: None,
            got: format!("{} output(s)", got.len()),
            want: format!("{} output(s)", case.outputs.len()),
            mismatches: 0,
            judged: "the number of outputs".to_string(),
        };
    }
    for (i, (g, w)) in got.iter().zip(&case.outputs).enumerate() {
        let w = &match as_narrow(w, g.shape()) {
            Ok(w) => w,
            Err(e) => return error_status(&e),
        };
        let leaf = match compare_arrays(i, g, w, case.tolerance) {
            Ok(leaf) => leaf,
            Err(e) => return error_status(&e),
        };
        if leaf.ok() {
            continue;
        }
        let element = leaf.first_failing_element;
        let (got, want) = match element {
            Some(e) => (
                g.get(e).map(|s| s.to_string()).unwrap_or_default(),
                w.get(e).map(|s| s.to_string()).unwrap_or_default(),
            ),
            None => (
                g.shape().without_layout().to_string(),
                w.shape().without_layout().to_string(),
            ),
        };
        return Status::Wrong {
            output: i,
            element,
            got,
            want,
            mismatches: leaf.mismatches,
            judged: format!(
                "the case's tolerance: rtol {}, atol {}",
                case.tolerance.rtol, case.tolerance.atol
            ),
        };
    }
    Status::Pass
}

/// Applies the gap registered for a result, if any: a failure becomes a
/// [`Status::KnownGap`], a pass a [`Status::GapNowPasses`].
pub fn with_gap(status: Status, gap: Option<&ConformanceGap>) -> Status {
    match (gap, status) {
        (None, status) => status,
        (Some(g), Status::Pass) => Status::GapNowPasses {
            reason: g.reason.to_string(),
        },
        (Some(g), status) => Status::KnownGap {
            reason: g.reason.to_string(),
            observed: format!("{}: {}", status.label(), status.detail()),
        },
    }
}

/// The gap among `gaps` covering this case and form.
fn gap_for<'a>(gaps: &[&'a ConformanceGap], case: &str, form: Form) -> Option<&'a ConformanceGap> {
    gaps.iter()
        .copied()
        .find(|g| g.case == case && g.form.is_none_or(|f| f == form.name()))
}

/// Runs every case and form of the corpus folders on the platform answering
/// to `platform` (a name or alias, any case), applying the gaps its crate
/// registered. Fails only when the platform cannot be used or a corpus folder
/// cannot be read; a case that cannot be loaded is an `Error` status.
pub fn run_corpus(platform: &str, corpora: &[PathBuf]) -> Result<Report> {
    run_corpus_judged(platform, corpora, Judge::default())
}

/// [`run_corpus`] under a chosen [`Judge`].
pub fn run_corpus_judged(platform: &str, corpora: &[PathBuf], judge: Judge) -> Result<Report> {
    if corpora.is_empty() {
        return Err(Error::invalid_argument("no corpus folder given"));
    }
    let mut dirs = Vec::new();
    for corpus in corpora {
        dirs.extend(case_dirs(corpus)?);
    }
    // A private platform instance: its memory ledger counts this corpus's runs
    // only, so the leak check below is not fooled by other threads of the same
    // process using the shared instance at the same time.
    let backend = Backend::with_options(Some(platform), &PlatformOptions::default())?;
    let client = LocalClient::new(Arc::new(backend));
    let canonical = client.platform_name();
    let gaps = registry::conformance_gaps(canonical);
    let mut results = Vec::new();
    for dir in dirs {
        let loaded = Case::load(&dir);
        let name = match &loaded {
            Ok(case) => case.name.clone(),
            Err(_) => dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let forms = match &loaded {
            Ok(case) => case.forms(),
            Err(_) => Form::ALL.to_vec(),
        };
        for form in forms {
            let before = memory_in_use(&client);
            let status = match &loaded {
                Ok(case) => run_case_judged(&client, case, form, judge),
                Err(e) => Status::Error {
                    code: e.code(),
                    message: format!("cannot load the case: {}", e.message()),
                },
            };
            // Every run must give back what it took, executables included.
            client.clear_cache();
            let after = memory_in_use(&client);
            let status = match status {
                Status::Pass if after > before => Status::Error {
                    code: Code::Internal,
                    message: format!(
                        "{} byte(s) of device memory still in use after the run \
                         ({before} before, {after} after)",
                        after - before
                    ),
                },
                status => status,
            };
            results.push(CaseResult {
                case: name.clone(),
                form,
                status: with_gap(status, gap_for(&gaps, &name, form)),
            });
        }
    }
    results.sort_by(|a, b| a.case.cmp(&b.case).then(a.form.cmp(&b.form)));
    let unmatched_gaps = gaps
        .iter()
        .filter(|g| {
            !results
                .iter()
                .any(|r| r.case == g.case && g.form.is_none_or(|f| f == r.form.name()))
        })
        .map(|g| format!("{} ({})", g.case, g.form.unwrap_or("both forms")))
        .collect();
    Ok(Report {
        platform: canonical,
        results,
        unmatched_gaps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_are_found_in_backend_messages() {
        assert_eq!(
            ops_named_in("op negate (%n) is not supported by X"),
            ["negate"]
        );
        assert_eq!(ops_named_in("DynamicSlice in %ds"), ["dynamic-slice"]);
        assert_eq!(
            ops_named_in("fft and `sort` of f16 are not implemented"),
            ["fft", "sort"]
        );
        assert_eq!(
            ops_named_in("iota of f16; while (%w) too"),
            ["iota", "while"]
        );
        assert!(ops_named_in("this and that are not supported").is_empty());
        assert_eq!(
            ops_named_in("the Host platform does not support sort (instruction %s)"),
            ["sort"]
        );
        assert_eq!(
            ops_named_in("the interpreter does not implement while (instruction %w)"),
            ["while"]
        );
    }

    #[test]
    fn gaps_turn_failures_into_known_gaps_and_passes_into_flags() {
        let gap = ConformanceGap {
            platform: "P",
            case: "c",
            form: Some("optimized"),
            reason: "why",
        };
        let gaps = [&gap];
        assert!(gap_for(&gaps, "c", Form::Module).is_none());
        let g = gap_for(&gaps, "c", Form::Optimized);
        assert_eq!(
            with_gap(Status::Pass, g),
            Status::GapNowPasses {
                reason: "why".into()
            }
        );
        let failed = Status::Error {
            code: Code::Internal,
            message: "boom".into(),
        };
        let known = with_gap(failed, g);
        assert!(known.is_ok(), "{known:?}");
        assert!(known.detail().contains("boom"), "{known:?}");
        assert!(!with_gap(Status::Pass, g).is_ok());
    }
}
