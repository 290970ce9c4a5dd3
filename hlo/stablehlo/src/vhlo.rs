//! VHLO, StableHLO's versioned form: what portable artifacts (and
//! `jax.export`) hold, read from MLIR bytecode into the text reader's
//! syntax tree.
//!
//! A portable artifact is a `builtin.module` of `vhlo.func_v1` functions
//! whose ops are VHLO ops (`vhlo.add_v1`, `vhlo.gather_v2`, ...) with VHLO
//! attributes and types, each a versioned copy of a StableHLO op, attribute or
//! type. This module decodes VHLO's attribute and type encodings (StableHLO's
//! `VhloBytecode.cpp` defines them; the codes are facts of the format) and
//! turns each op into the StableHLO op it versions, with its attributes in the
//! form the StableHLO text reader produces for the generic form of that op.
//! The conversion that follows is the text reader's, so the two inputs cannot
//! disagree.
//!
//! Versions: every VHLO op of StableHLO 0.9.0 to 1.20 is known by name
//! ([`crate::vhlo_ops`], generated from `VhloOps.td`), with its inherent
//! attributes in the order the properties encoding writes them. An op of a
//! version this table lacks is refused with its name; so are the quantized
//! types, and ops StableHLO's own deserializer would also reject.

use std::rc::Rc;

use hlo_ir::{Error, Result};

use crate::bytecode::{self, BAttr, BModule, BOp, BType, EntryReader};
use crate::syntax::*;
use crate::vhlo_ops::VHLO_OPS;

/// Reads VHLO's attributes and types.
pub(crate) struct VhloDecoder;

const ENUMS: &[(&str, &[(u64, &str)])] = &[
    (
        "comparison_direction",
        &[
            (0, "EQ"),
            (1, "NE"),
            (2, "GE"),
            (3, "GT"),
            (4, "LE"),
            (5, "LT"),
        ],
    ),
    (
        "comparison_type",
        &[
            (0, "NOTYPE"),
            (1, "FLOAT"),
            (2, "TOTALORDER"),
            (3, "SIGNED"),
            (4, "UNSIGNED"),
        ],
    ),
    (
        "api_version",
        &[
            (0, "API_VERSION_UNSPECIFIED"),
            (1, "API_VERSION_ORIGINAL"),
            (2, "API_VERSION_STATUS_RETURNING"),
            (3, "API_VERSION_STATUS_RETURNING_UNIFIED"),
            (4, "API_VERSION_TYPED_FFI"),
        ],
    ),
    (
        "fft_type",
        &[(0, "FFT"), (1, "IFFT"), (2, "RFFT"), (3, "IRFFT")],
    ),
    ("precision", &[(0, "DEFAULT"), (1, "HIGH"), (2, "HIGHEST")]),
    (
        "rng_algorithm",
        &[(0, "DEFAULT"), (1, "THREE_FRY"), (2, "PHILOX")],
    ),
    ("rng_distribution", &[(1, "UNIFORM"), (2, "NORMAL")]),
    (
        "transpose",
        &[
            (0, "TRANSPOSE_INVALID"),
            (1, "NO_TRANSPOSE"),
            (2, "TRANSPOSE"),
            (3, "ADJOINT"),
        ],
    ),
    (
        "result_accuracy_mode",
        &[(0, "DEFAULT"), (1, "HIGHEST"), (2, "TOLERANCE")],
    ),
];

fn read_enum(r: &mut EntryReader<'_, '_>, kind: &'static str) -> Result<BAttr> {
    let v = r.varint()?;
    let (_, values) = ENUMS.iter().find(|(k, _)| *k == kind).expect("known enum");
    values
        .iter()
        .find(|(n, _)| *n == v)
        .map(|(_, name)| BAttr::Enum(kind, name))
        .ok_or_else(|| r.err(format!("{v} is not a value of VHLO's {kind}")))
}

impl bytecode::DialectDecoder for VhloDecoder {
    fn attribute(&self, r: &mut EntryReader<'_, '_>) -> Result<BAttr> {
        let code = r.varint()?;
        Ok(match code {
            1 => BAttr::Array(r.attributes()?),
            2 => match r.varint()? {
                0 => BAttr::Bool(false),
                1 => BAttr::Bool(true),
                v => return Err(r.err(format!("a boolean of value {v}"))),
            },
            3 => read_enum(r, "comparison_direction")?,
            4 => read_enum(r, "comparison_type")?,
            5 => read_enum(r, "api_version")?,
            6 => BAttr::Dict(r.dictionary()?),
            7 => read_enum(r, "fft_type")?,
            8 => {
                let t = r.ty()?;
                let v = bytecode::read_float(r, &t)?;
                BAttr::Float(v, t)
            }
            9 => {
                let t = r.ty()?;
                let (width, unsigned) = match &*t {
                    BType::Int(w, s) => (*w, *s == Some(false)),
                    BType::Index => (64, false),
                    other => return Err(r.err(format!("an integer attribute of type {other:?}"))),
                };
                let v = r.apint(width)?;
                let v = if unsigned {
                    v as i128
                } else {
                    bytecode::sign_extend(v, width)
                };
                BAttr::Int(v, t)
            }
            10 => BAttr::OutputOperandAlias {
                output_tuple_indices: r.signed_varints()?,
                operand_index: r.signed_varint()?,
                operand_tuple_indices: r.signed_varints()?,
            },
            11 => read_enum(r, "precision")?,
            12 => read_enum(r, "rng_algorithm")?,
            13 => read_enum(r, "rng_distribution")?,
            14 => BAttr::Str(r.string()?),
            15 => {
                let t = r.ty()?;
                let blob = r.blob()?;
                let data = bytecode::unpack_bools(&t, blob);
                BAttr::Tensor(t, data)
            }
            16 => read_enum(r, "transpose")?,
            17 => BAttr::Type(r.ty()?),
            18 => BAttr::TypeExtensions(r.signed_varints()?),
            19 => read_enum(r, "result_accuracy_mode")?,
            20 => {
                // atol, rtol (f64), ulps, mode: an accuracy request the
                // Host's transcendentals do not take; kept for its name.
                r.apint(64)?;
                r.apint(64)?;
                r.signed_varint()?;
                r.attribute()?;
                BAttr::Unsupported("#vhlo.result_accuracy_v1".into())
            }
            21 => {
                r.signed_varint()?;
                r.signed_varint()?;
                BAttr::Unsupported("#vhlo.sub_axis_info_v1".into())
            }
            22 => {
                r.attribute()?;
                if r.varint()? != 0 {
                    r.attribute()?;
                }
                BAttr::Unsupported("#vhlo.axis_ref_v1 (a mesh axis reference)".into())
            }
            23 => {
                r.attribute()?;
                r.attribute()?;
                BAttr::Unsupported("#vhlo.replica_group_mesh_axes_v1 (mesh replica groups)".into())
            }
            24 => {
                r.attribute()?;
                r.signed_varint()?;
                BAttr::Unsupported("#vhlo.mesh_axis_v1".into())
            }
            25 => {
                r.attribute()?;
                r.optional_attribute()?;
                BAttr::Unsupported("#vhlo.mesh_v1".into())
            }
            other => {
                return Err(Error::unimplemented(format!(
                    "MLIR bytecode, byte offset {}: VHLO attribute code {other} is not supported (read: 1 to 25, StableHLO 1.20)",
                    r.cur.offset()
                )))
            }
        })
    }

    fn ty(&self, r: &mut EntryReader<'_, '_>) -> Result<BType> {
        let code = r.varint()?;
        let int = |w: u32, signless: bool| BType::Int(w, if signless { None } else { Some(false) });
        Ok(match code {
            0 => BType::Bool,
            1 => BType::Complex(r.ty()?),
            2 => BType::Float("bf16"),
            3 => BType::Float("f16"),
            4 => BType::Float("f32"),
            5 => BType::Float("f64"),
            6 => BType::Float("f8E4M3FN"),
            7 => BType::Float("f8E5M2"),
            8 => BType::Function(r.types()?, r.types()?),
            9 => BType::Index,
            10 => int(4, true),
            11 => int(8, true),
            12 => int(16, true),
            13 => int(32, true),
            14 => int(64, true),
            15 => int(4, false),
            16 => int(8, false),
            17 => int(16, false),
            18 => int(32, false),
            19 => int(64, false),
            20 | 21 => r.tensor_type(code == 21)?,
            22 => BType::Token,
            23 => BType::Tuple(r.types()?),
            24 | 30 => BType::Unsupported("a uniform quantized type".into()),
            25 => BType::UnrankedTensor(r.ty()?),
            26 => BType::Unsupported("!vhlo.witness_v1 (shape witnesses)".into()),
            27 => BType::Float("f8E4M3FNUZ"),
            28 => BType::Float("f8E5M2FNUZ"),
            29 => BType::Float("f8E4M3B11FNUZ"),
            31 => int(2, true),
            32 => int(2, false),
            33 => BType::None,
            34 => BType::Float("tf32"),
            35 => BType::Float("f8E4M3"),
            36 => BType::Float("f8E3M4"),
            37 => BType::Float("f4E2M1FN"),
            38 => BType::Float("f6E2M3FN"),
            39 => BType::Float("f6E3M2FN"),
            40 => BType::Float("f8E8M0FNU"),
            41 => BType::Unsupported("!vhlo.buffer_v1 (buffers)".into()),
            42 => BType::Unsupported("!vhlo.future_v1 (async futures)".into()),
            other => {
                return Err(Error::unimplemented(format!(
                    "MLIR bytecode, byte offset {}: VHLO type code {other} is not supported (read: 0 to 42, StableHLO 1.20)",
                    r.cur.offset()
                )))
            }
        })
    }
}

/// Reads a StableHLO portable artifact (VHLO in MLIR bytecode) into the
/// syntax tree.
pub(crate) fn read(data: &[u8]) -> Result<Module> {
    let (vhlo, sdy) = (VhloDecoder, crate::sdy::SdyDecoder);
    let m = bytecode::read(
        data,
        vec![
            ("vhlo", &vhlo as &dyn bytecode::DialectDecoder),
            ("sdy", &sdy as &dyn bytecode::DialectDecoder),
        ],
    )?;
    let mut c = Converter {
        m: &m,
        meshes: Vec::new(),
    };
    c.module().map_err(|e| {
        e.context(format_args!(
            "reading a StableHLO portable artifact (producer '{}', bytecode format {})",
            m.producer, m.version
        ))
    })
}

struct Converter<'m, 'a> {
    m: &'m BModule<'a>,
    /// The module's `sdy.mesh` definitions, by name.
    meshes: Vec<(String, Rc<BAttr>)>,
}

fn pos(op: &BOp) -> Pos {
    Pos {
        line: op.ordinal,
        col: 0,
    }
}

fn rank_of(t: &BType) -> usize {
    match t {
        BType::Tensor { dims, .. } => dims.len(),
        _ => 0,
    }
}

fn value_name(id: u32) -> String {
    format!("%{id}")
}

impl Converter<'_, '_> {
    fn module(&mut self) -> Result<Module> {
        let top = match self.m.ops.as_slice() {
            [op] if op.name == "builtin.module" => op,
            ops => {
                return Err(Error::invalid_argument(format!(
                    "expected one builtin.module at the top level, found {}",
                    ops.iter()
                        .map(|o| o.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        };
        let mut module = Module::default();
        // builtin.module's properties: its optional name and visibility.
        if let Some(span) = top.properties {
            let mut r = self.m.properties(span);
            for field in ["sym_name", "sym_visibility"] {
                let v = r.cur.varint()?;
                if v & 1 == 1 {
                    let a = self.m.tables.attribute(v >> 1, &r.cur)?;
                    if let (BAttr::Str(s), "sym_name") = (&*a, field) {
                        module.name = Some(s.clone());
                    }
                }
            }
        }
        for (k, v) in &top.attrs {
            match k.as_str() {
                "sym_name" => {
                    if let BAttr::Str(s) = &**v {
                        module.name = Some(s.clone());
                    }
                }
                _ => module.attrs.push((k.clone(), self.attr(v, top)?)),
            }
        }
        let body = top
            .regions
            .first()
            .and_then(|r| r.blocks.first())
            .ok_or_else(|| Error::invalid_argument("the module has no body".to_string()))?;
        for op in &body.ops {
            if op.name == "sdy.mesh" {
                // Properties `mesh` and `sym_name`, in that (sorted) order.
                if let Some(span) = op.properties {
                    let mut r = self.m.properties(span);
                    let mesh = r.attribute()?;
                    if let BAttr::Str(name) = &*r.attribute()? {
                        self.meshes.push((name.clone(), mesh));
                    }
                }
                continue;
            }
        }
        for op in &body.ops {
            if op.name == "sdy.mesh" {
                continue;
            }
            if op.name != "vhlo.func_v1" {
                return Err(Error::unimplemented(format!(
                    "{}: '{}' at the module level is not supported (only vhlo.func_v1)",
                    pos(op),
                    op.name
                )));
            }
            module.funcs.push(self.func(op)?);
        }
        Ok(module)
    }

    /// An op's attributes by name: its properties (in the order its VHLO
    /// definition declares them), then its attribute dictionary.
    fn named_attrs(&self, op: &BOp) -> Result<Vec<(String, Rc<BAttr>)>> {
        let mut out = Vec::new();
        if let Some(span) = op.properties {
            let short = op.name.strip_prefix("vhlo.").unwrap_or(&op.name);
            let names = VHLO_OPS
                .iter()
                .find(|(n, ..)| *n == short)
                .map(|(_, _, _, a)| *a)
                .ok_or_else(|| self.unknown_op(op))?;
            let mut r = self.m.properties(span);
            for name in names {
                out.push((name.to_string(), r.attribute()?));
            }
            if !r.cur.is_empty() {
                return Err(r.err(format!("trailing bytes in the properties of '{}'", op.name)));
            }
        }
        out.extend(op.attrs.iter().cloned());
        Ok(out)
    }

    fn unknown_op(&self, op: &BOp) -> Error {
        Error::unimplemented(format!(
            "{}: op '{}' is not supported (VHLO ops of StableHLO 0.9.0 to 1.20 are read)",
            pos(op),
            op.name
        ))
    }

    fn func(&self, op: &BOp) -> Result<Func> {
        let attrs = self.named_attrs(op)?;
        let get = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let name = match get("sym_name").as_deref() {
            Some(BAttr::Str(s)) => s.clone(),
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{}: a function without a name",
                    pos(op)
                )))
            }
        };
        let public =
            !matches!(get("sym_visibility").as_deref(), Some(BAttr::Str(s)) if s == "private");
        let (inputs, outputs) = match get("function_type").as_deref() {
            Some(BAttr::Type(t)) => match &**t {
                BType::Function(i, o) => (i.clone(), o.clone()),
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "{}: @{name}'s type is not a function type",
                        pos(op)
                    )))
                }
            },
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{}: @{name} has no function type",
                    pos(op)
                )))
            }
        };
        // Each argument's and result's attributes; a Shardy sharding becomes
        // the HLO sharding XLA would give it (`mhlo.sharding`).
        let dicts = |a: Option<Rc<BAttr>>,
                     types: &[Rc<BType>]|
         -> Result<Vec<Vec<(String, Attr)>>> {
            let mut out = vec![Vec::new(); types.len()];
            if let Some(a) = a {
                if let BAttr::Array(items) = &*a {
                    for ((slot, item), t) in out.iter_mut().zip(items).zip(types) {
                        if let BAttr::Dict(d) = &**item {
                            for (k, v) in d {
                                let value = match (k.as_str(), &**v) {
                                    ("sdy.sharding", BAttr::Sdy(sh)) => {
                                        let rank = match &**t {
                                            BType::Tensor { dims, .. } => dims.len(),
                                            _ => 0,
                                        };
                                        let text = crate::sdy::hlo_sharding(sh, rank, &self.meshes)
                                            .map_err(|e| {
                                                e.context(format_args!("{}: @{name}", pos(op)))
                                            })?;
                                        slot.push(("mhlo.sharding".to_string(), Attr::Str(text)));
                                        continue;
                                    }
                                    _ => self.attr(v, op)?,
                                };
                                slot.push((k.clone(), value));
                            }
                        }
                    }
                }
            }
            Ok(out)
        };
        let arg_attrs = dicts(get("arg_attrs"), &inputs)?;
        let res_attrs = dicts(get("res_attrs"), &outputs)?;
        let region = op
            .regions
            .first()
            .and_then(|r| r.blocks.first())
            .ok_or_else(|| Error::invalid_argument(format!("{}: @{name} has no body", pos(op))))?;
        if region.args.len() != inputs.len() {
            return Err(Error::invalid_argument(format!(
                "{}: @{name} declares {} arguments but its body takes {}",
                pos(op),
                inputs.len(),
                region.args.len()
            )));
        }
        let mut args = Vec::new();
        let mut renames = Vec::new();
        for ((i, (id, ty, loc)), a) in region.args.iter().enumerate().zip(arg_attrs) {
            // Named as JAX's text names them, so parameters read the same.
            renames.push((*id, format!("%arg{i}")));
            args.push(Argument {
                name: format!("%arg{i}"),
                ty: self.ty(ty, op)?,
                attrs: a,
                loc: loc.as_ref().and_then(|l| loc_of(l)),
            });
        }
        let results = outputs
            .iter()
            .zip(res_attrs)
            .map(|(t, a)| Ok((self.ty(t, op)?, a)))
            .collect::<Result<_>>()?;
        let mut body = Region {
            args: Vec::new(),
            ops: region
                .ops
                .iter()
                .map(|o| self.op(o))
                .collect::<Result<_>>()?,
            pos: pos(op),
        };
        rename_uses(&mut body, &renames);
        Ok(Func {
            name,
            public,
            args,
            results,
            attrs: Vec::new(),
            body,
            pos: pos(op),
        })
    }

    /// A `sdy.manual_computation`'s shardings, as HLO sharding texts
    /// (`in_shardings`, `out_shardings`: lists of strings), once its manual
    /// axes are checked to be all of its mesh's.
    fn manual_attrs(&self, op: &BOp) -> Result<Vec<(String, Attr)>> {
        let mut found = Vec::new();
        if let Some(span) = op.properties {
            let mut r = self.m.properties(span);
            while !r.cur.is_empty() {
                found.push(r.attribute()?);
            }
        }
        found.extend(op.attrs.iter().map(|(_, v)| v.clone()));
        let mut per_value = Vec::new();
        let mut manual = None;
        for a in &found {
            if let BAttr::Sdy(s) = &**a {
                match &**s {
                    // In declaration (and name) order: in_shardings first.
                    crate::sdy::Sdy::PerValue(list) => per_value.push(list.clone()),
                    crate::sdy::Sdy::ManualAxes(axes) => manual = Some(axes.clone()),
                    _ => {}
                }
            }
        }
        let (Some(manual), [ins, outs]) = (manual, per_value.as_slice()) else {
            return Err(Error::invalid_argument(format!(
                "{}: sdy.manual_computation without its in_shardings, out_shardings and \
                 manual_axes",
                pos(op)
            )));
        };
        let ranks_in: Vec<usize> = op
            .regions
            .first()
            .and_then(|r| r.blocks.first())
            .map(|b| b.args.iter().map(|(_, t, _)| rank_of(t)).collect())
            .unwrap_or_default();
        let ranks_out: Vec<usize> = op.result_types.iter().map(|t| rank_of(t)).collect();
        let texts = |list: &[Rc<BAttr>], ranks: &[usize], what: &str| -> Result<Attr> {
            if list.len() != ranks.len() {
                return Err(Error::invalid_argument(format!(
                    "{}: sdy.manual_computation has {} {what} for {} values",
                    pos(op),
                    list.len(),
                    ranks.len()
                )));
            }
            let mut out = Vec::new();
            for (a, &rank) in list.iter().zip(ranks) {
                let BAttr::Sdy(sh) = &**a else {
                    return Err(Error::invalid_argument(format!(
                        "{}: a sharding of sdy.manual_computation is not sdy's",
                        pos(op)
                    )));
                };
                crate::sdy::manual_axes_cover_mesh(&manual, sh, &self.meshes)
                    .map_err(|e| e.context(format_args!("{}", pos(op))))?;
                let text = crate::sdy::hlo_sharding(sh, rank, &self.meshes)
                    .map_err(|e| e.context(format_args!("{}: {what}", pos(op))))?;
                out.push(Attr::Str(text));
            }
            Ok(Attr::List(out))
        };
        Ok(vec![
            (
                "in_shardings".to_string(),
                texts(ins, &ranks_in, "in_shardings")?,
            ),
            (
                "out_shardings".to_string(),
                texts(outs, &ranks_out, "out_shardings")?,
            ),
        ])
    }

    fn op(&self, op: &BOp) -> Result<Operation> {
        hlo_ir::stack::deep(|| self.op_inner(op))
    }

    /// The StableHLO op a VHLO op versions, and its attributes in the text
    /// reader's form.
    fn vhlo_name_and_attrs(&self, op: &BOp) -> Result<(String, Vec<(String, Attr)>)> {
        let short = op.name.strip_prefix("vhlo.").ok_or_else(|| {
            Error::unimplemented(format!(
                "{}: op '{}' is not supported (only VHLO ops are read from bytecode)",
                pos(op),
                op.name
            ))
        })?;
        let base = match short.rfind("_v") {
            Some(i) if short[i + 2..].chars().all(|c| c.is_ascii_digit()) => &short[..i],
            _ => return Err(self.unknown_op(op)),
        };
        if !VHLO_OPS.iter().any(|(n, ..)| *n == short) {
            return Err(self.unknown_op(op));
        }
        let mut attrs = self
            .named_attrs(op)?
            .iter()
            .map(|(k, v)| Ok((k.clone(), self.attr(v, op)?)))
            .collect::<Result<Vec<_>>>()?;
        restructure(base, &mut attrs);
        let name = match base {
            "return" => "stablehlo.return".to_string(),
            "call" => "func.call".to_string(),
            other => format!("stablehlo.{other}"),
        };
        Ok((name, attrs))
    }

    fn op_inner(&self, op: &BOp) -> Result<Operation> {
        // Shardy's sharding constraints only say where a value should live;
        // on the one global program the reader builds they are the identity
        // (a reshape to the same shape).
        // A portable artifact that keeps other dialects' ops (Shardy's) wraps
        // them in `unrealized_conversion_cast`s between VHLO and builtin
        // types: the identity too.
        let identity = matches!(
            op.name.as_str(),
            "sdy.sharding_constraint" | "sdy.reshard" | "builtin.unrealized_conversion_cast"
        ) && op.operands.len() == 1
            && op.result_types.len() == 1;
        let (name, attrs) = if identity {
            ("stablehlo.reshape".to_string(), Vec::new())
        } else if op.name == "sdy.manual_computation" {
            ("sdy.manual_computation".to_string(), self.manual_attrs(op)?)
        } else if op.name == "sdy.return" {
            ("stablehlo.return".to_string(), Vec::new())
        } else {
            self.vhlo_name_and_attrs(op)?
        };
        let regions = op
            .regions
            .iter()
            .map(|r| {
                let block = match r.blocks.as_slice() {
                    [b] => b,
                    [] => return Ok(Region::default()),
                    _ => {
                        return Err(Error::unimplemented(format!(
                            "{}: '{}' has a region of several blocks",
                            pos(op),
                            op.name
                        )))
                    }
                };
                Ok(Region {
                    args: block
                        .args
                        .iter()
                        .map(|(id, ty, loc)| {
                            Ok(Argument {
                                name: value_name(*id),
                                ty: self.ty(ty, op)?,
                                attrs: Vec::new(),
                                loc: loc.as_ref().and_then(|l| loc_of(l)),
                            })
                        })
                        .collect::<Result<_>>()?,
                    ops: block
                        .ops
                        .iter()
                        .map(|o| self.op(o))
                        .collect::<Result<_>>()?,
                    pos: pos(op),
                })
            })
            .collect::<Result<_>>()?;
        Ok(Operation {
            results: op.results.iter().map(|&id| (value_name(id), 1)).collect(),
            name,
            operands: op
                .operands
                .iter()
                .map(|&id| ValueRef {
                    name: value_name(id),
                    index: 0,
                    pos: pos(op),
                })
                .collect(),
            attrs,
            regions,
            operand_types: Vec::new(),
            result_types: op
                .result_types
                .iter()
                .map(|t| self.ty(t, op))
                .collect::<Result<_>>()?,
            loc: loc_of(&op.loc),
            pos: pos(op),
        })
    }

    fn ty(&self, t: &BType, op: &BOp) -> Result<Type> {
        Ok(match t {
            BType::Tensor {
                dims,
                elem,
                encoding,
            } => Type::Tensor {
                dims: dims.iter().map(|&d| usize::try_from(d).ok()).collect(),
                elem: ElemType(elem_name(elem).ok_or_else(|| {
                    Error::unimplemented(format!(
                        "{}: '{}': tensors of {} are not supported",
                        pos(op),
                        op.name,
                        describe_type(elem)
                    ))
                })?),
                encoding: match encoding.as_deref() {
                    None => None,
                    Some(BAttr::TypeExtensions(b)) => Some(format!(
                        "#stablehlo.bounds<{}>",
                        b.iter()
                            .map(|&x| if x < 0 {
                                "?".to_string()
                            } else {
                                x.to_string()
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                    Some(other) => Some(format!("{other:?}")),
                },
            },
            BType::Token => Type::Token,
            BType::Tuple(ts) => {
                Type::Tuple(ts.iter().map(|t| self.ty(t, op)).collect::<Result<_>>()?)
            }
            other => match elem_name(other) {
                Some(n) => Type::Scalar(ElemType(n)),
                None => {
                    return Err(Error::unimplemented(format!(
                        "{}: '{}': {} is not supported",
                        pos(op),
                        op.name,
                        describe_type(other)
                    )))
                }
            },
        })
    }

    fn attr(&self, a: &BAttr, op: &BOp) -> Result<Attr> {
        hlo_ir::stack::deep(|| self.attr_inner(a, op))
    }

    fn attr_inner(&self, a: &BAttr, op: &BOp) -> Result<Attr> {
        Ok(match a {
            BAttr::Array(items) => Attr::List(
                items
                    .iter()
                    .map(|x| self.attr(x, op))
                    .collect::<Result<_>>()?,
            ),
            BAttr::Dict(entries) => {
                let fields: Vec<(String, Attr)> = entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.attr(v, op)?)))
                    .collect::<Result<_>>()?;
                let text = mlir_text(a);
                Attr::Dict(fields, text)
            }
            BAttr::Str(s) => Attr::Str(s.clone()),
            BAttr::Symbol(s) => Attr::Symbol(s.clone()),
            BAttr::Bool(b) => Attr::Bool(*b),
            BAttr::Unit => Attr::Unit,
            BAttr::Int(v, _) => Attr::Int(*v),
            BAttr::Float(v, _) => Attr::Float(format!("{v:?}")),
            // Types as attribute values (a dot's algorithm types, a custom
            // call's) the conversion may not need: one this reader cannot
            // represent is kept as its description.
            BAttr::Type(t) => match self.ty(t, op) {
                Ok(t) => Attr::Type(t),
                Err(_) => Attr::Raw(describe_type(t)),
            },
            BAttr::Tensor(t, data) => Attr::Dense(Dense::Hex(data.clone()), self.ty(t, op)?),
            BAttr::DenseArray(t, _, data) => {
                let ints = match &**t {
                    BType::Int(w, sign) => le_ints(data, *w, *sign != Some(false)),
                    BType::Bool => le_ints(data, 1, false),
                    _ => None,
                };
                match ints {
                    Some(v) => Attr::IntArray(v),
                    None => Attr::Raw(format!("array<{}: ...>", describe_type(t))),
                }
            }
            BAttr::Enum(kind, v) => {
                if *kind == "api_version" {
                    let n = ENUMS
                        .iter()
                        .find(|(k, _)| k == kind)
                        .and_then(|(_, vs)| vs.iter().find(|(_, name)| name == v))
                        .map(|(n, _)| *n)
                        .unwrap_or(0);
                    Attr::Int(i128::from(n))
                } else {
                    Attr::Enum(v.to_string())
                }
            }
            BAttr::OutputOperandAlias {
                output_tuple_indices,
                operand_index,
                operand_tuple_indices,
            } => Attr::Struct(
                "stablehlo.output_operand_alias".into(),
                vec![
                    (
                        "output_tuple_indices".into(),
                        int_list(output_tuple_indices),
                    ),
                    (
                        "operand_index".into(),
                        Attr::Int(i128::from(*operand_index)),
                    ),
                    (
                        "operand_tuple_indices".into(),
                        int_list(operand_tuple_indices),
                    ),
                ],
            ),
            BAttr::TypeExtensions(b) => Attr::Raw(format!("#stablehlo.bounds<{b:?}>")),
            BAttr::Loc(_) => Attr::Unit,
            BAttr::Unsupported(what) => Attr::Raw(what.clone()),
            BAttr::Sdy(s) => Attr::Raw(format!("{s:?}")),
        })
    }
}

/// Names block arguments as MLIR's printer does (`%argN`, numbered on from
/// the function's arguments in the order regions appear), so the HLO read
/// from bytecode names its parameters as the HLO read from text does; uses
/// are renamed with them.
fn rename_uses(region: &mut Region, renames: &[(u32, String)]) {
    let mut map: std::collections::HashMap<String, String> = renames
        .iter()
        .map(|(id, name)| (value_name(*id), name.clone()))
        .collect();
    let mut next = renames.len();
    rename_in(region, &mut map, &mut next);
}

fn rename_in(
    region: &mut Region,
    map: &mut std::collections::HashMap<String, String>,
    next: &mut usize,
) {
    for op in &mut region.ops {
        for v in &mut op.operands {
            if let Some(n) = map.get(&v.name) {
                v.name = n.clone();
            }
        }
        for r in &mut op.regions {
            for a in &mut r.args {
                let name = format!("%arg{next}");
                *next += 1;
                map.insert(std::mem::replace(&mut a.name, name.clone()), name);
            }
            hlo_ir::stack::deep(|| rename_in(r, map, next));
        }
    }
}

fn int_list(v: &[i64]) -> Attr {
    Attr::List(v.iter().map(|&x| Attr::Int(i128::from(x))).collect())
}

/// A location attribute as the syntax tree's location (none if it carries
/// nothing).
fn loc_of(a: &BAttr) -> Option<Location> {
    match a {
        BAttr::Loc(l) if l.name.is_some() || l.file.is_some() => Some(l.clone()),
        _ => None,
    }
}

/// MLIR's name of an element type.
fn elem_name(t: &BType) -> Option<String> {
    Some(match t {
        BType::Bool => "i1".into(),
        BType::Int(w, None) => format!("i{w}"),
        BType::Int(w, Some(true)) => format!("si{w}"),
        BType::Int(w, Some(false)) => format!("ui{w}"),
        BType::Float(n) => (*n).to_string(),
        BType::Index => "index".into(),
        BType::Complex(e) => format!("complex<{}>", elem_name(e)?),
        _ => return None,
    })
}

fn describe_type(t: &BType) -> String {
    match t {
        BType::Unsupported(w) => w.clone(),
        BType::Tensor { .. } => "a tensor type".into(),
        BType::UnrankedTensor(_) => "unranked tensors".into(),
        BType::Function(..) => "a function type".into(),
        BType::None => "the none type".into(),
        other => elem_name(other).unwrap_or_else(|| format!("{other:?}")),
    }
}

/// The StableHLO attributes VHLO spells out field by field: the ops, the
/// structured attribute the text reader's generic form has, its dialect
/// name, and its fields.
const GROUPED: &[(&[&str], &str, &str, &[&str])] = &[
    (
        &["gather", "dynamic_gather"],
        "dimension_numbers",
        "stablehlo.gather",
        &[
            "offset_dims",
            "collapsed_slice_dims",
            "operand_batching_dims",
            "start_indices_batching_dims",
            "start_index_map",
            "index_vector_dim",
        ],
    ),
    (
        &["scatter"],
        "scatter_dimension_numbers",
        "stablehlo.scatter",
        &[
            "update_window_dims",
            "inserted_window_dims",
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
        ],
    ),
    (
        &["dot_general"],
        "dot_dimension_numbers",
        "stablehlo.dot",
        &[
            "lhs_batching_dimensions",
            "rhs_batching_dimensions",
            "lhs_contracting_dimensions",
            "rhs_contracting_dimensions",
        ],
    ),
];

/// A convolution's dimension fields, in VHLO.
const CONV_FIELDS: &[&str] = &[
    "input_batch_dimension",
    "input_feature_dimension",
    "input_spatial_dimensions",
    "kernel_input_feature_dimension",
    "kernel_output_feature_dimension",
    "kernel_spatial_dimensions",
    "output_batch_dimension",
    "output_feature_dimension",
    "output_spatial_dimensions",
];

/// Attributes VHLO writes as strings where the text has symbols (`@f`).
const SYMBOLS: &[(&str, &str)] = &[
    ("call", "callee"),
    ("composite", "decomposition"),
    ("custom_call", "called_computations"),
];

const COLLECTIVES: &[&str] = &[
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "collective_permute",
    "collective_broadcast",
    "all_to_all",
];

/// Removes the named attributes (those present), their integer tensors as
/// lists, as the text's structured attributes hold them.
fn take(attrs: &mut Vec<(String, Attr)>, names: &[&str]) -> Vec<(String, Attr)> {
    let mut out = Vec::new();
    for n in names {
        if let Some(i) = attrs.iter().position(|(k, _)| k == n) {
            let (k, v) = attrs.remove(i);
            out.push((k, dense_to_list(v)));
        }
    }
    out
}

/// A string (or a list of strings) as symbols.
fn to_symbol(a: &mut Attr) {
    match a {
        Attr::Str(s) => *a = Attr::Symbol(std::mem::take(s)),
        Attr::List(items) => items.iter_mut().for_each(to_symbol),
        _ => {}
    }
}

/// VHLO spells some StableHLO attributes out field by field; the text
/// reader's generic form keeps them as one structured attribute. Puts them
/// back together, and gives the others the text's forms (symbols, channel
/// handles).
fn restructure(op: &str, attrs: &mut Vec<(String, Attr)>) {
    for (ops, name, dialect, fields) in GROUPED {
        if ops.contains(&op) {
            let f = take(attrs, fields);
            attrs.push((name.to_string(), Attr::Struct(dialect.to_string(), f)));
        }
    }
    if matches!(op, "convolution" | "dynamic_conv") {
        if let Some(text) = conv_layout_text(&take(attrs, CONV_FIELDS)) {
            attrs.push(("dimension_numbers".into(), Attr::Raw(text)));
        }
    }
    if COLLECTIVES.contains(&op) {
        if let Some(i) = attrs.iter().position(|(k, _)| k == "channel_id") {
            if let (_, Attr::Int(h)) = attrs.remove(i) {
                let fields = vec![
                    ("handle".into(), Attr::Int(h)),
                    ("type".into(), Attr::Int(1)),
                ];
                attrs.push((
                    "channel_handle".into(),
                    Attr::Struct("stablehlo.channel_handle".into(), fields),
                ));
            }
        }
    }
    for (o, name) in SYMBOLS {
        if *o == op {
            if let Some((_, v)) = attrs.iter_mut().find(|(k, _)| k == name) {
                to_symbol(v);
            }
        }
    }
}

/// A 1-D integer tensor as a list of integers (the structured attributes'
/// fields are lists).
fn dense_to_list(a: Attr) -> Attr {
    match &a {
        Attr::Dense(d, t @ Type::Tensor { dims, .. }) if dims.len() <= 1 => {
            match crate::convert::dense_ints(d, t, Pos::default()) {
                Ok(v) => Attr::List(v.into_iter().map(|x| Attr::Int(i128::from(x))).collect()),
                Err(_) => a,
            }
        }
        _ => a,
    }
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` from VHLO's convolution
/// dimension fields.
fn conv_layout_text(f: &[(String, Attr)]) -> Option<String> {
    let int = |n: &str| -> Option<i64> {
        match f.iter().find(|(k, _)| k == n)?.1 {
            Attr::Int(v) => i64::try_from(v).ok(),
            _ => None,
        }
    };
    let list = |n: &str| -> Option<Vec<i64>> {
        match &f.iter().find(|(k, _)| k == n)?.1 {
            Attr::List(items) => items
                .iter()
                .map(|x| match x {
                    Attr::Int(v) => i64::try_from(*v).ok(),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    };
    let side = |a: i64, a_name: &str, b: i64, b_name: &str, spatial: &[i64]| -> Option<String> {
        let rank = spatial.len() + 2;
        let mut slots = vec![String::new(); rank];
        let mut put = |i: i64, s: String| -> Option<()> {
            let slot = slots.get_mut(usize::try_from(i).ok()?)?;
            slot.push_str(&s);
            Some(())
        };
        put(a, a_name.into())?;
        put(b, b_name.into())?;
        for (k, &d) in spatial.iter().enumerate() {
            put(d, k.to_string())?;
        }
        Some(format!("[{}]", slots.join(", ")))
    };
    let lhs = side(
        int("input_batch_dimension")?,
        "b",
        int("input_feature_dimension")?,
        "f",
        &list("input_spatial_dimensions")?,
    )?;
    let rhs = side(
        int("kernel_input_feature_dimension")?,
        "i",
        int("kernel_output_feature_dimension")?,
        "o",
        &list("kernel_spatial_dimensions")?,
    )?;
    let out = side(
        int("output_batch_dimension")?,
        "b",
        int("output_feature_dimension")?,
        "f",
        &list("output_spatial_dimensions")?,
    )?;
    Some(format!("{lhs}x{rhs}->{out}"))
}

/// An attribute in MLIR's text form, as the typed-FFI attribute parser and
/// composite attributes read it.
fn mlir_text(a: &BAttr) -> String {
    let mut s = String::new();
    write_mlir(&mut s, a);
    s
}

fn write_mlir(s: &mut String, a: &BAttr) {
    use std::fmt::Write;
    match a {
        BAttr::Dict(entries) => {
            s.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(k);
                if !matches!(&**v, BAttr::Unit) {
                    s.push_str(" = ");
                    write_mlir(s, v);
                }
            }
            s.push('}');
        }
        BAttr::Array(items) => {
            s.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_mlir(s, v);
            }
            s.push(']');
        }
        BAttr::Str(v) => {
            s.push('"');
            for c in v.chars() {
                match c {
                    '"' => s.push_str("\\22"),
                    '\\' => s.push_str("\\\\"),
                    c if (c as u32) < 0x20 => {
                        let _ = write!(s, "\\{:02X}", c as u32);
                    }
                    c => s.push(c),
                }
            }
            s.push('"');
        }
        BAttr::Symbol(v) => {
            let _ = write!(s, "@{v}");
        }
        BAttr::Bool(b) => {
            let _ = write!(s, "{b}");
        }
        BAttr::Unit => s.push_str("unit"),
        BAttr::Int(v, t) => {
            let _ = write!(s, "{v} : {}", elem_name(t).unwrap_or_else(|| "i64".into()));
        }
        BAttr::Float(v, t) => {
            let _ = write!(
                s,
                "{v:e} : {}",
                elem_name(t).unwrap_or_else(|| "f64".into())
            );
        }
        BAttr::Tensor(t, data) => {
            // A 1-D integer tensor is what a dense array becomes in VHLO.
            if let BType::Tensor { dims, elem, .. } = &**t {
                if let (1, BType::Int(w, sign)) = (dims.len(), &**elem) {
                    if let Some(v) = le_ints(data, *w, *sign != Some(false)) {
                        let name = elem_name(elem).unwrap_or_default();
                        let _ = write!(s, "array<{name}");
                        for (i, x) in v.iter().enumerate() {
                            let _ = write!(s, "{}{x}", if i == 0 { ": " } else { ", " });
                        }
                        s.push('>');
                        return;
                    }
                }
            }
            let _ = write!(s, "dense<\"0x");
            for b in data {
                let _ = write!(s, "{b:02X}");
            }
            s.push_str("\">");
        }
        BAttr::Enum(_, v) => s.push_str(v),
        other => {
            let _ = write!(s, "{other:?}");
        }
    }
}
