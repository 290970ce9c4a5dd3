//! One kernel: a grid-stride loop over the output elements of a materialized
//! instruction, computing each element from its fused producers.
//!
//! Producers that are not materialized are emitted *elementally*: the value of
//! an instruction at an output index is C code reading its operands at the
//! indices its op maps to (a broadcast drops dimensions, a transpose permutes
//! them, a slice offsets and strides, a reduce or dot loops over its reduced
//! dimensions, ...). Materialized operands are read from their buffers, each a
//! `char*` kernel parameter. Values computed at the same index in one scope are
//! emitted once.

use super::scalar::{self, ctype};
use crate::program::BufferRef;
use platform_api::hlo::analysis::scalar_program::{NoExtension, ScalarOp, ScalarProgram};
use platform_api::hlo::{HloComputation, HloInstruction, HloModule, InstrId, Op};
use platform_api::semantics::contraction::Contraction;
use platform_api::{ElementType, Error, Result, Shape};
use std::collections::HashMap;

/// What a kernel needs to know about the computation around it.
pub trait Producers {
    /// The buffer holding `id`'s (single-array) value if it is materialized.
    fn buffer(&self, id: InstrId) -> Option<BufferRef>;
    /// Which operand of add/subtract `id` is a multiply to fuse into it with
    /// one rounding (XLA CPU's contraction rule), and how.
    fn contraction(&self, id: InstrId) -> Option<(usize, Contraction)>;
}

/// Device functions shared by the kernels of one program (reducers,
/// combiners), each emitted once.
#[derive(Default)]
pub struct Functions {
    pub source: String,
    by_computation: HashMap<usize, String>,
}

impl Functions {
    /// The C function computing computation `comp` on scalars.
    pub fn scalar_function(
        &mut self,
        module: &HloModule,
        comp: platform_api::hlo::CompId,
    ) -> Result<String> {
        if let Some(name) = self.by_computation.get(&comp.index()) {
            return Ok(name.clone());
        }
        let program = ScalarProgram::<NoExtension>::compile(module, comp, &())?;
        let name = format!("comp{}", comp.index());
        self.source += &scalar::program_function(&name, &program)?;
        self.by_computation.insert(comp.index(), name.clone());
        Ok(name)
    }
}

fn array(shape: &Shape, what: &HloInstruction) -> Result<(ElementType, Vec<usize>)> {
    match shape {
        Shape::Array(a) => Ok((a.element_type, a.dims.clone())),
        _ => Err(Error::internal(format!(
            "%{} has no array shape where the CUDA code generator needs one",
            what.name
        ))),
    }
}

/// A C expression: `start` clamped into `[0, hi]` (XLA clamps dynamic and
/// gather starts so the whole slice is in bounds).
fn clamped(start: &str, hi: i64) -> String {
    format!("({start} < 0 ? 0 : ({start} > {hi}LL ? {hi}LL : {start}))")
}

fn strides(dims: &[usize]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1] as u64;
    }
    s
}

/// Builds the body of one kernel.
pub struct KernelBuilder<'a> {
    module: &'a HloModule,
    comp: &'a HloComputation,
    producers: &'a dyn Producers,
    functions: &'a mut Functions,
    /// The kernel's buffer parameters, in order.
    pub params: Vec<BufferRef>,
    pub body: String,
    fresh: usize,
    memo: Vec<HashMap<(usize, String), String>>,
}

impl<'a> KernelBuilder<'a> {
    pub fn new(
        module: &'a HloModule,
        comp: &'a HloComputation,
        producers: &'a dyn Producers,
        functions: &'a mut Functions,
    ) -> Self {
        KernelBuilder {
            module,
            comp,
            producers,
            functions,
            params: Vec::new(),
            body: String::new(),
            fresh: 0,
            memo: vec![HashMap::new()],
        }
    }

    pub fn var(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    pub fn line(&mut self, text: &str) {
        self.body += text;
        if !text.ends_with('\n') {
            self.body.push('\n');
        }
    }

    pub fn open(&mut self, header: &str) {
        self.line(&format!("{header} {{"));
        self.memo.push(HashMap::new());
    }

    pub fn close(&mut self) {
        self.line("}");
        self.memo.pop();
    }

    /// The kernel parameter name for `buffer` (added on first use).
    pub fn param(&mut self, buffer: BufferRef) -> String {
        let i = match self.params.iter().position(|b| *b == buffer) {
            Some(i) => i,
            None => {
                self.params.push(buffer);
                self.params.len() - 1
            }
        };
        format!("p{i}")
    }

    /// Binds the row-major multi-index of linear `i` over `dims` to variables.
    pub fn unravel(&mut self, i: &str, dims: &[usize]) -> Vec<String> {
        let st = strides(dims);
        let mut idx = Vec::new();
        for (d, &n) in dims.iter().enumerate() {
            let v = self.var("i");
            self.line(&format!("s64 {v} = ({i} / {}LL) % {}LL;", st[d], n.max(1)));
            idx.push(v);
        }
        idx
    }

    /// A C expression: the row-major linear index of `idx` over `dims`.
    pub fn linear(&self, idx: &[String], dims: &[usize]) -> String {
        let st = strides(dims);
        let terms: Vec<String> = idx
            .iter()
            .zip(&st)
            .map(|(v, s)| format!("{v} * {s}LL"))
            .collect();
        if terms.is_empty() {
            "0LL".to_string()
        } else {
            terms.join(" + ")
        }
    }

    fn instr(&self, id: InstrId) -> &'a HloInstruction {
        self.comp.instr(id)
    }

    /// A variable holding `id`'s value at `idx`.
    /// Declares `out` of C type `t`: the value of `then` (an instruction and
    /// the index to read it at) where every condition holds, else that of
    /// `otherwise`. Only the chosen side is read (the other may be out of
    /// range there).
    fn select_into(
        &mut self,
        t: &str,
        out: &str,
        conds: &[String],
        then: (InstrId, &[String]),
        otherwise: (InstrId, &[String]),
    ) -> Result<()> {
        self.line(&format!("{t} {out};"));
        let cond = if conds.is_empty() {
            "1".to_string()
        } else {
            conds.join(" && ")
        };
        self.open(&format!("if ({cond})"));
        let x = self.value(then.0, then.1)?;
        self.line(&format!("{out} = {x};"));
        self.close();
        self.open("else");
        let x = self.value(otherwise.0, otherwise.1)?;
        self.line(&format!("{out} = {x};"));
        self.close();
        Ok(())
    }

    pub fn value(&mut self, id: InstrId, idx: &[String]) -> Result<String> {
        let key = (id.index(), idx.join(","));
        for scope in self.memo.iter().rev() {
            if let Some(v) = scope.get(&key) {
                return Ok(v.clone());
            }
        }
        let v = match self.producers.buffer(id) {
            Some(buffer) => self.load(id, buffer, idx)?,
            None => self.compute(id, idx)?,
        };
        if let Some(scope) = self.memo.last_mut() {
            scope.insert(key, v.clone());
        }
        Ok(v)
    }

    fn load(&mut self, id: InstrId, buffer: BufferRef, idx: &[String]) -> Result<String> {
        let instr = self.instr(id);
        let (ty, dims) = array(&instr.shape, instr)?;
        let t = ctype(ty)?;
        let p = self.param(buffer);
        let v = self.var("v");
        let at = self.linear(idx, &dims);
        self.line(&format!("{t} {v} = ((const {t}*){p})[{at}];"));
        Ok(v)
    }

    /// `id`'s value at `idx` computed from its operands (it is not read from
    /// a buffer even if it has one: this is how its own kernel computes it).
    pub fn compute(&mut self, id: InstrId, idx: &[String]) -> Result<String> {
        let instr = self.instr(id);
        let (ty, dims) = array(&instr.shape, instr)?;
        let t = ctype(ty)?;
        let ops = instr.operands.clone();
        let operand_dims = |k: usize| -> Result<(ElementType, Vec<usize>)> {
            let o = self.comp.instr(ops[k]);
            array(&o.shape, o)
        };
        let element_op: Option<ScalarOp<NoExtension>> = match &instr.op {
            Op::Unary(u) => Some(ScalarOp::Unary(*u)),
            Op::Binary(b) => Some(ScalarOp::Binary(*b)),
            Op::Compare {
                direction,
                compare_type,
            } => Some(ScalarOp::Compare {
                direction: *direction,
                compare_type: *compare_type,
            }),
            Op::Select => Some(ScalarOp::Select),
            Op::Convert => Some(ScalarOp::Convert),
            Op::BitcastConvert if operand_dims(0)?.0.byte_size() == ty.byte_size() => {
                Some(ScalarOp::BitcastConvert)
            }
            _ => None,
        };
        if let Some((k, how)) = self.producers.contraction(id) {
            let mul = ops[k];
            if self.producers.buffer(mul).is_none() {
                return self.fused_multiply_add(ty, mul, ops[1 - k], how, idx);
            }
        }
        if let Some(op) = element_op {
            let mut args = Vec::new();
            for &o in &ops {
                let (oty, odims) = array(&self.comp.instr(o).shape, self.comp.instr(o))?;
                // `select` may take a scalar predicate.
                let oidx = if odims.is_empty() {
                    Vec::new()
                } else {
                    idx.to_vec()
                };
                args.push((self.value(o, &oidx)?, oty));
            }
            let out = self.var("v");
            let s = scalar::statement(&op, &out, ty, &args)?;
            self.line(&s);
            return Ok(out);
        }
        let out = self.var("v");
        match &instr.op {
            Op::Constant { literal } => {
                let bytes = literal.bytes()?;
                let size = ty.byte_size();
                if dims.iter().product::<usize>() != 1 {
                    return Err(Error::internal(format!(
                        "constant %{} is not a scalar but was not materialized",
                        instr.name
                    )));
                }
                let lit = scalar::literal(ty, &bytes[..size])?;
                self.line(&format!("{t} {out} = {lit};"));
            }
            Op::Iota { dimension } => {
                let e = scalar::convert(ElementType::S64, ty, &idx[*dimension])?;
                self.line(&format!("{t} {out} = {e};"));
            }
            Op::Broadcast { dimensions } => {
                let oidx: Vec<String> = dimensions.iter().map(|&d| idx[d].clone()).collect();
                return self.value(ops[0], &oidx);
            }
            Op::Reshape | Op::Copy | Op::OptimizationBarrier => {
                let (_, odims) = operand_dims(0)?;
                if odims == dims {
                    return self.value(ops[0], idx);
                }
                let lin = self.var("l");
                let e = self.linear(idx, &dims);
                self.line(&format!("s64 {lin} = {e};"));
                let oidx = self.unravel(&lin, &odims);
                return self.value(ops[0], &oidx);
            }
            Op::Transpose { dimensions } => {
                let mut oidx = vec![String::new(); dims.len()];
                for (k, &p) in dimensions.iter().enumerate() {
                    oidx[p] = idx[k].clone();
                }
                return self.value(ops[0], &oidx);
            }
            Op::Slice { slice } => {
                let mut oidx = Vec::new();
                for (d, s) in slice.iter().enumerate() {
                    let v = self.var("i");
                    self.line(&format!(
                        "s64 {v} = {}LL + {} * {}LL;",
                        s.start, idx[d], s.stride
                    ));
                    oidx.push(v);
                }
                return self.value(ops[0], &oidx);
            }
            Op::Reverse { dimensions } => {
                let mut oidx = idx.to_vec();
                for &d in dimensions {
                    let v = self.var("i");
                    self.line(&format!("s64 {v} = {}LL - 1 - {};", dims[d], idx[d]));
                    oidx[d] = v;
                }
                return self.value(ops[0], &oidx);
            }
            Op::Concatenate { dimension } => {
                self.line(&format!("{t} {out};"));
                let mut offset = 0usize;
                for (k, &o) in ops.iter().enumerate() {
                    let (_, odims) = operand_dims(k)?;
                    let end = offset + odims[*dimension];
                    let header = if k == 0 {
                        format!("if ({} < {end}LL)", idx[*dimension])
                    } else if k + 1 == ops.len() {
                        "else".to_string()
                    } else {
                        format!("else if ({} < {end}LL)", idx[*dimension])
                    };
                    self.open(&header);
                    let mut oidx = idx.to_vec();
                    let v = self.var("i");
                    self.line(&format!("s64 {v} = {} - {offset}LL;", idx[*dimension]));
                    oidx[*dimension] = v;
                    let x = self.value(o, &oidx)?;
                    self.line(&format!("{out} = {x};"));
                    self.close();
                    offset = end;
                }
            }
            Op::Pad { config } => {
                let (_, odims) = operand_dims(0)?;
                let mut conds = Vec::new();
                let mut oidx = Vec::new();
                for (d, p) in config.iter().enumerate() {
                    let q = self.var("i");
                    let step = p.interior as i64 + 1;
                    self.line(&format!("s64 {q} = {} - ({}LL);", idx[d], p.low));
                    conds.push(format!(
                        "{q} >= 0 && {q} % {step}LL == 0 && {q} / {step}LL < {}LL",
                        odims[d]
                    ));
                    let v = self.var("i");
                    self.line(&format!("s64 {v} = {q} / {step}LL;"));
                    oidx.push(v);
                }
                self.select_into(t, &out, &conds, (ops[0], &oidx), (ops[1], &[]))?;
            }
            Op::DynamicSlice { sizes } => {
                let (_, odims) = operand_dims(0)?;
                let mut oidx = Vec::new();
                for d in 0..dims.len() {
                    let s = self.index_value(ops[1 + d], &[])?;
                    let hi = odims[d] as i64 - sizes[d] as i64;
                    let v = self.var("i");
                    self.line(&format!("s64 {v} = {} + {};", clamped(&s, hi), idx[d]));
                    oidx.push(v);
                }
                return self.value(ops[0], &oidx);
            }
            Op::DynamicUpdateSlice => {
                let (_, udims) = operand_dims(1)?;
                let mut uidx = Vec::new();
                let mut conds = Vec::new();
                for d in 0..dims.len() {
                    let s = self.index_value(ops[2 + d], &[])?;
                    let hi = dims[d] as i64 - udims[d] as i64;
                    let v = self.var("i");
                    self.line(&format!("s64 {v} = {} - {};", idx[d], clamped(&s, hi)));
                    conds.push(format!("{v} >= 0 && {v} < {}LL", udims[d]));
                    uidx.push(v);
                }
                self.select_into(t, &out, &conds, (ops[1], &uidx), (ops[0], idx))?;
            }
            Op::Gather { .. } => return self.gather(id, idx),
            Op::Reduce { .. } => {
                let outs = self.reduce(id, idx)?;
                return Ok(outs[0].clone());
            }
            Op::ReduceWindow { .. } => {
                let outs = self.reduce_window(id, idx)?;
                return Ok(outs[0].clone());
            }
            Op::Dot { .. } => return self.dot(id, idx),
            other => {
                return Err(Error::unimplemented(format!(
                    "the CUDA code generator has no kernel for {} (%{})",
                    other.opcode(),
                    instr.name
                )))
            }
        }
        Ok(out)
    }

    /// `a * b + c` (or a subtraction form) with one rounding.
    fn fused_multiply_add(
        &mut self,
        ty: ElementType,
        mul: InstrId,
        other: InstrId,
        how: Contraction,
        idx: &[String],
    ) -> Result<String> {
        let m = self.instr(mul).operands.clone();
        let a = self.value(m[0], idx)?;
        let b = self.value(m[1], idx)?;
        let c = self.value(other, idx)?;
        let f = if ty == ElementType::F32 {
            "fmaf"
        } else {
            "fma"
        };
        let expr = match how {
            Contraction::Add => format!("{f}({a}, {b}, {c})"),
            Contraction::SubtractFromProduct => format!("{f}({a}, {b}, -{c})"),
            Contraction::SubtractProduct => format!("{f}(-{a}, {b}, {c})"),
        };
        let out = self.var("v");
        self.line(&format!("{} {out} = {expr};", ctype(ty)?));
        Ok(out)
    }

    fn gather(&mut self, id: InstrId, idx: &[String]) -> Result<String> {
        let instr = self.instr(id);
        let Op::Gather {
            dnums, slice_sizes, ..
        } = &instr.op
        else {
            return Err(Error::internal("not a gather"));
        };
        let (operand, indices) = (instr.operands[0], instr.operands[1]);
        let (_, odims) = array(&self.instr(operand).shape, self.instr(operand))?;
        let (_, idims) = array(&self.instr(indices).shape, self.instr(indices))?;
        let out_rank = idx.len();
        let batch_out: Vec<usize> = (0..out_rank)
            .filter(|d| !dnums.offset_dims.contains(d))
            .collect();
        let position_dims: Vec<usize> = (0..idims.len())
            .filter(|&d| d != dnums.index_vector_dim)
            .collect();
        let window_dims: Vec<usize> = (0..odims.len())
            .filter(|d| {
                !dnums.collapsed_slice_dims.contains(d) && !dnums.operand_batching_dims.contains(d)
            })
            .collect();
        // The index array position of this output element (without the vector component).
        let mut starts = vec!["0LL".to_string(); odims.len()];
        for (k, &od) in dnums.start_index_map.iter().enumerate() {
            let mut iidx = vec![String::new(); idims.len()];
            for (p, &d) in position_dims.iter().enumerate() {
                iidx[d] = idx[batch_out[p]].clone();
            }
            if dnums.index_vector_dim < idims.len() {
                iidx[dnums.index_vector_dim] = format!("{k}LL");
            }
            let s = self.index_value(indices, &iidx)?;
            starts[od] = format!("({} + {s})", starts[od]);
        }
        let mut oidx = Vec::new();
        for d in 0..odims.len() {
            let v = self.var("i");
            if let Some(b) = dnums.operand_batching_dims.iter().position(|&x| x == d) {
                let id_dim = dnums.start_indices_batching_dims[b];
                let p = position_dims.iter().position(|&x| x == id_dim).unwrap_or(0);
                self.line(&format!("s64 {v} = {};", idx[batch_out[p]]));
            } else {
                let hi = odims[d] as i64 - slice_sizes[d] as i64;
                let s = self.var("s");
                self.line(&format!("s64 {s} = {};", starts[d]));
                let offset = match window_dims.iter().position(|&w| w == d) {
                    Some(k) => idx[dnums.offset_dims[k]].clone(),
                    None => "0LL".to_string(),
                };
                self.line(&format!("s64 {v} = {} + {offset};", clamped(&s, hi)));
            }
            oidx.push(v);
        }
        self.value(operand, &oidx)
    }

    /// A variable holding integer `id`'s value at `idx` as `s64` (an index).
    pub fn index_value(&mut self, id: InstrId, idx: &[String]) -> Result<String> {
        let instr = self.instr(id);
        let (ty, _) = array(&instr.shape, instr)?;
        let v = self.value(id, idx)?;
        let out = self.var("x");
        let e = scalar::convert(ty, ElementType::S64, &v)?;
        self.line(&format!("s64 {out} = {e};"));
        Ok(out)
    }

    /// One accumulator variable per init value, set to it.
    fn accumulators(&mut self, inits: &[InstrId]) -> Result<Vec<(String, ElementType)>> {
        let mut accs = Vec::with_capacity(inits.len());
        for &init in inits {
            let (ty, _) = array(&self.instr(init).shape, self.instr(init))?;
            let v = self.value(init, &[])?;
            let acc = self.var("acc");
            self.line(&format!("{} {acc} = {v};", ctype(ty)?));
            accs.push((acc, ty));
        }
        Ok(accs)
    }

    /// `accs = f(accs, inputs at idx)`: one application of the reducer `f`.
    fn fold_step(
        &mut self,
        f: &str,
        inputs: &[InstrId],
        idx: &[String],
        accs: &[(String, ElementType)],
    ) -> Result<()> {
        let mut args: Vec<String> = accs.iter().map(|a| a.0.clone()).collect();
        for &x in inputs {
            args.push(self.value(x, idx)?);
        }
        let mut outs = Vec::new();
        for (acc, ty) in accs {
            let o = self.var("o");
            self.line(&format!("{} {o};", ctype(*ty)?));
            outs.push((o, acc));
        }
        args.extend(outs.iter().map(|(o, _)| format!("&{o}")));
        self.line(&format!("{f}({});", args.join(", ")));
        for (o, acc) in &outs {
            self.line(&format!("{acc} = {o};"));
        }
        Ok(())
    }

    /// What a (variadic) reduce or reduce-window at `id` starts from: its
    /// number of inputs (operands are inputs then init values), the C
    /// function of its reducer, and the first input's dimensions.
    fn reduction_head(
        &mut self,
        id: InstrId,
        reducer: platform_api::hlo::CompId,
    ) -> Result<(usize, String, Vec<usize>)> {
        let instr = self.instr(id);
        let first = *instr.operands.first().ok_or_else(|| {
            Error::invalid_argument(format!("%{} reduces no operand", instr.name))
        })?;
        let n = instr.operands.len() / 2;
        let f = self.functions.scalar_function(self.module, reducer)?;
        let (_, dims) = array(&self.instr(first).shape, self.instr(first))?;
        Ok((n, f, dims))
    }

    /// A (variadic) reduce at `idx`: one variable per output.
    pub fn reduce(&mut self, id: InstrId, idx: &[String]) -> Result<Vec<String>> {
        let instr = self.instr(id);
        let Op::Reduce {
            dimensions,
            to_apply,
        } = &instr.op
        else {
            return Err(Error::internal("not a reduce"));
        };
        let (n, f, odims) = self.reduction_head(id, *to_apply)?;
        let accs = self.accumulators(&instr.operands[n..])?;
        let mut oidx = vec![String::new(); odims.len()];
        let kept: Vec<usize> = (0..odims.len())
            .filter(|d| !dimensions.contains(d))
            .collect();
        for (k, &d) in kept.iter().enumerate() {
            oidx[d] = idx[k].clone();
        }
        for &d in dimensions {
            let r = self.var("r");
            self.open(&format!("for (s64 {r} = 0; {r} < {}LL; {r}++)", odims[d]));
            oidx[d] = r;
        }
        self.fold_step(&f, &instr.operands[..n], &oidx, &accs)?;
        for _ in dimensions {
            self.close();
        }
        Ok(accs.into_iter().map(|a| a.0).collect())
    }

    /// A (variadic) reduce-window at `idx`: one variable per output. The
    /// window's positions are visited in row-major order and those falling in
    /// padding or between dilated elements are skipped, as the evaluator does,
    /// so results agree bit for bit.
    pub fn reduce_window(&mut self, id: InstrId, idx: &[String]) -> Result<Vec<String>> {
        let instr = self.instr(id);
        let Op::ReduceWindow { window, to_apply } = &instr.op else {
            return Err(Error::internal("not a reduce-window"));
        };
        let (n, f, idims) = self.reduction_head(id, *to_apply)?;
        if window.dims.len() != idims.len() || idx.len() != idims.len() {
            return Err(Error::internal("reduce-window rank mismatch"));
        }
        let accs = self.accumulators(&instr.operands[n..])?;
        let mut iidx = Vec::new();
        let mut conds = Vec::new();
        for (d, w) in window.dims.iter().enumerate() {
            let r = self.var("w");
            self.open(&format!("for (s64 {r} = 0; {r} < {}LL; {r}++)", w.size));
            let p = self.var("p");
            self.line(&format!(
                "s64 {p} = {} * {}LL - ({}LL) + {r} * {}LL;",
                idx[d], w.stride, w.padding_low, w.window_dilation
            ));
            let bd = w.base_dilation.max(1);
            conds.push(format!("{p} >= 0"));
            if bd > 1 {
                conds.push(format!("{p} % {bd}LL == 0"));
            }
            let q = self.var("q");
            self.line(&format!("s64 {q} = {p} / {bd}LL;"));
            conds.push(format!("{q} < {}LL", idims[d]));
            iidx.push(q);
        }
        self.open(&format!("if ({})", conds.join(" && ")));
        self.fold_step(&f, &instr.operands[..n], &iidx, &accs)?;
        self.close();
        for _ in &window.dims {
            self.close();
        }
        Ok(accs.into_iter().map(|a| a.0).collect())
    }

    fn dot(&mut self, id: InstrId, idx: &[String]) -> Result<String> {
        let instr = self.instr(id);
        let Op::Dot { dnums, .. } = &instr.op else {
            return Err(Error::internal("not a dot"));
        };
        let (ty, _) = array(&instr.shape, instr)?;
        let (lhs, rhs) = (instr.operands[0], instr.operands[1]);
        let (lty, ldims) = array(&self.instr(lhs).shape, self.instr(lhs))?;
        let (rty, rdims) = array(&self.instr(rhs).shape, self.instr(rhs))?;
        let lfree: Vec<usize> = (0..ldims.len())
            .filter(|d| {
                !dnums.lhs_batch_dims.contains(d) && !dnums.lhs_contracting_dims.contains(d)
            })
            .collect();
        let rfree: Vec<usize> = (0..rdims.len())
            .filter(|d| {
                !dnums.rhs_batch_dims.contains(d) && !dnums.rhs_contracting_dims.contains(d)
            })
            .collect();
        let mut lidx = vec![String::new(); ldims.len()];
        let mut ridx = vec![String::new(); rdims.len()];
        let mut k = 0;
        for (&l, &r) in dnums.lhs_batch_dims.iter().zip(&dnums.rhs_batch_dims) {
            lidx[l] = idx[k].clone();
            ridx[r] = idx[k].clone();
            k += 1;
        }
        for &l in &lfree {
            lidx[l] = idx[k].clone();
            k += 1;
        }
        for &r in &rfree {
            ridx[r] = idx[k].clone();
            k += 1;
        }
        let t = ctype(ty)?;
        let acc = self.var("acc");
        let zero = scalar::literal(ty, &vec![0u8; ty.byte_size()])?;
        self.line(&format!("{t} {acc} = {zero};"));
        let contracting: Vec<(usize, usize)> = dnums
            .lhs_contracting_dims
            .iter()
            .copied()
            .zip(dnums.rhs_contracting_dims.iter().copied())
            .collect();
        for &(l, r) in &contracting {
            let c = self.var("c");
            self.open(&format!("for (s64 {c} = 0; {c} < {}LL; {c}++)", ldims[l]));
            lidx[l] = c.clone();
            ridx[r] = c;
        }
        let a = self.value(lhs, &lidx)?;
        let b = self.value(rhs, &ridx)?;
        let a = scalar::convert(lty, ty, &a)?;
        let b = scalar::convert(rty, ty, &b)?;
        let (pa, pb) = (self.var("a"), self.var("b"));
        self.line(&format!("{t} {pa} = {a}; {t} {pb} = {b};"));
        let prod = self.var("m");
        let s = scalar::statement(
            &ScalarOp::Binary(platform_api::hlo::BinaryOp::Multiply),
            &prod,
            ty,
            &[(pa, ty), (pb, ty)],
        )?;
        self.line(&s);
        let sum = self.var("s");
        let s = scalar::statement(
            &ScalarOp::Binary(platform_api::hlo::BinaryOp::Add),
            &sum,
            ty,
            &[(acc.clone(), ty), (prod, ty)],
        )?;
        self.line(&s);
        self.line(&format!("{acc} = {sum};"));
        for _ in &contracting {
            self.close();
        }
        Ok(acc)
    }
}
