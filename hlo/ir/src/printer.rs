//! The HLO text printer.
//!
//! Writes one canonical form, close to what XLA's `ToString()` prints: `%`-prefixed
//! names, computation signatures, layouts as stored, attributes in a fixed order,
//! every constant value written out in full. Parsing the output gives back an equal
//! module, so print → parse → print is the identity (the conformance tests check
//! this on every program in the corpus).

use super::attr_names::{AttrName, MetadataField};
use super::attrs::*;
use super::lexer::{escape, is_plain_word, is_raw_block};
use super::op::{CustomCallAttrs, Op};
use super::{
    BackendConfig, CompId, HloComputation, HloInstruction, HloModule, InstrId, OpMetadata,
};
use std::fmt::{Display, Write};

/// The whole module as text.
pub fn print_module(module: &HloModule) -> String {
    let mut out = String::new();
    write_header(&mut out, module);
    write_stack_frames(&mut out, module);
    for (i, comp) in module.computations.iter().enumerate() {
        out.push('\n');
        let is_entry = i == module.entry.index();
        write_computation(&mut out, module, comp, is_entry);
    }
    out
}

/// One instruction as a line of text (without indentation or `ROOT`), for error
/// messages and traces.
pub fn print_instruction(
    module: &HloModule,
    comp: &HloComputation,
    instr: &HloInstruction,
) -> String {
    let mut out = String::new();
    write_instruction(&mut out, module, comp, instr);
    out
}

fn join<T: ToString>(items: &[T], sep: &str) -> String {
    items
        .iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(sep)
}

fn dims(items: &[usize]) -> String {
    format!("{{{}}}", join(items, ","))
}

fn write_header(out: &mut String, module: &HloModule) {
    let c = &module.config;
    let _ = write!(out, "HloModule {}", module.name);
    if c.is_scheduled {
        module_attr(out, AttrName::IsScheduled, true);
    }
    if !c.input_output_alias.is_empty() {
        let entries: Vec<String> = c
            .input_output_alias
            .iter()
            .map(|a| {
                format!(
                    "{}: ({}, {}, {})",
                    dims(&a.output_index),
                    a.parameter_number,
                    dims(&a.parameter_index),
                    if a.must_alias {
                        "must-alias"
                    } else {
                        "may-alias"
                    }
                )
            })
            .collect();
        module_attr(
            out,
            AttrName::InputOutputAlias,
            format_args!("{{ {} }}", entries.join(", ")),
        );
    }
    if !c.buffer_donor.is_empty() {
        let entries: Vec<String> = c
            .buffer_donor
            .iter()
            .map(|(p, index)| format!("({p}, {})", dims(index)))
            .collect();
        module_attr(
            out,
            AttrName::BufferDonor,
            format_args!("{{ {} }}", entries.join(", ")),
        );
    }
    if let Some(layout) = &c.entry_computation_layout {
        module_attr(
            out,
            AttrName::EntryComputationLayout,
            format_args!("{{{layout}}}"),
        );
    }
    for (k, v) in &c.other {
        let _ = write!(out, ", {k}={v}");
    }
    if let Some(n) = c.replica_count {
        module_attr(out, AttrName::ReplicaCount, n);
    }
    if let Some(n) = c.num_partitions {
        module_attr(out, AttrName::NumPartitions, n);
    }
    if !c.frontend_attributes.is_empty() {
        module_attr(
            out,
            AttrName::FrontendAttributes,
            str_map(&c.frontend_attributes),
        );
    }
    out.push('\n');
}

/// `, name=value` after the module's name.
fn module_attr(out: &mut String, name: AttrName, value: impl Display) {
    let _ = write!(out, ", {name}={value}");
}

fn write_stack_frames(out: &mut String, module: &HloModule) {
    let s = &module.stack_frames;
    if s.is_empty() {
        return;
    }
    out.push_str("\nFileNames\n");
    for (id, name) in &s.file_names {
        let _ = writeln!(out, "{id} \"{}\"", escape(name));
    }
    out.push_str("\nFunctionNames\n");
    for (id, name) in &s.function_names {
        let _ = writeln!(out, "{id} \"{}\"", escape(name));
    }
    out.push_str("\nFileLocations\n");
    for (id, l) in &s.file_locations {
        let _ = writeln!(
            out,
            "{id} {{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}",
            l.file_name_id, l.function_name_id, l.line, l.end_line, l.column, l.end_column
        );
    }
    out.push_str("\nStackFrames\n");
    for (id, f) in &s.stack_frames {
        let _ = writeln!(
            out,
            "{id} {{file_location_id={} parent_frame_id={}}}",
            f.file_location_id, f.parent_frame_id
        );
    }
}

fn write_computation(out: &mut String, module: &HloModule, comp: &HloComputation, is_entry: bool) {
    if is_entry {
        out.push_str("ENTRY ");
    }
    let params: Vec<String> = comp
        .parameters()
        .into_iter()
        .map(|id| {
            let p = comp.instr(id);
            format!("{}: {}", p.name, p.shape.without_layout())
        })
        .collect();
    let _ = writeln!(
        out,
        "%{} ({}) -> {} {{",
        comp.name,
        params.join(", "),
        comp.root_instr().shape.without_layout()
    );
    for id in comp.ids() {
        out.push_str("  ");
        if id == comp.root {
            out.push_str("ROOT ");
        }
        write_instruction(out, module, comp, comp.instr(id));
        out.push('\n');
    }
    out.push_str("}\n");
}

fn str_map(items: &[(String, String)]) -> String {
    let entries: Vec<String> = items
        .iter()
        .map(|(k, v)| {
            // A value read from a raw `{...}` block goes back out raw; anything else
            // (including a quoted string that merely starts with `{`) is quoted.
            let key = if is_plain_word(k) {
                k.clone()
            } else {
                format!("\"{}\"", escape(k))
            };
            if is_raw_block(v) {
                format!("{key}={v}")
            } else {
                format!("{key}=\"{}\"", escape(v))
            }
        })
        .collect();
    format!("{{{}}}", entries.join(","))
}

fn metadata(m: &OpMetadata) -> String {
    use MetadataField as F;
    let mut parts = Vec::new();
    let s = |k: F, v: &Option<String>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}=\"{}\"", escape(v)));
        }
    };
    let i = |k: F, v: Option<i64>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    };
    s(F::OpType, &m.op_type, &mut parts);
    s(F::OpName, &m.op_name, &mut parts);
    s(F::SourceFile, &m.source_file, &mut parts);
    i(F::SourceLine, m.source_line, &mut parts);
    i(F::SourceEndLine, m.source_end_line, &mut parts);
    i(F::SourceColumn, m.source_column, &mut parts);
    i(F::SourceEndColumn, m.source_end_column, &mut parts);
    s(F::DeduplicatedName, &m.deduplicated_name, &mut parts);
    if let Some(b) = m.preserve_layout {
        parts.push(format!("{}={b}", F::PreserveLayout));
    }
    i(F::StackFrameId, m.stack_frame_id, &mut parts);
    s(F::SchedulingName, &m.scheduling_name, &mut parts);
    format!("{{{}}}", parts.join(" "))
}

/// The `name=value` attributes of one instruction, in the order they are written.
struct AttrList<'m> {
    module: &'m HloModule,
    items: Vec<String>,
}

impl AttrList<'_> {
    fn add(&mut self, name: AttrName, value: impl Display) {
        self.items.push(format!("{name}={value}"));
    }

    /// `name={0,1}`.
    fn dims(&mut self, name: AttrName, d: &[usize]) {
        self.add(name, dims(d));
    }

    /// `name={0,1}`, left out when empty: an absent list reads back empty.
    fn dims_if_any(&mut self, name: AttrName, d: &[usize]) {
        if !d.is_empty() {
            self.dims(name, d);
        }
    }

    /// `name={3}`: one dimension, written as a list.
    fn dim(&mut self, name: AttrName, d: usize) {
        self.add(name, format_args!("{{{d}}}"));
    }

    /// `name=true`, left out when false: an absent flag reads back false.
    fn flag(&mut self, name: AttrName, on: bool) {
        if on {
            self.add(name, true);
        }
    }

    fn quoted(&mut self, name: AttrName, s: &str) {
        self.add(name, format_args!("\"{}\"", escape(s)));
    }

    fn comp(&mut self, name: AttrName, c: CompId) {
        let module = self.module;
        self.add(name, format_args!("%{}", module.computation(c).name));
    }

    /// `name={%a, %b}`.
    fn comps(&mut self, name: AttrName, comps: &[CompId]) {
        let module = self.module;
        let names: Vec<String> = comps
            .iter()
            .map(|&c| format!("%{}", module.computation(c).name))
            .collect();
        self.add(name, format_args!("{{{}}}", names.join(", ")));
    }

    /// The attributes every collective carries. `groups_if_any` leaves out an
    /// empty replica-group list, which other collectives write as `{}`.
    fn collective(&mut self, a: &CollectiveAttrs, groups_if_any: bool) {
        if let Some(c) = a.channel_id {
            self.add(AttrName::ChannelId, c);
        }
        if !groups_if_any || !a.replica_groups.groups.is_empty() {
            self.add(AttrName::ReplicaGroups, &a.replica_groups);
        }
        self.flag(AttrName::UseGlobalDeviceIds, a.use_global_device_ids);
        self.flag(AttrName::ConstrainLayout, a.constrain_layout);
    }

    /// `operand_precision`, left out when every operand has the default.
    fn precision(&mut self, p: &[Precision]) {
        if p.iter().any(|&x| x != Precision::Default) {
            self.add(
                AttrName::OperandPrecision,
                format_args!("{{{}}}", join(p, ",")),
            );
        }
    }
}

fn write_instruction(
    out: &mut String,
    module: &HloModule,
    comp: &HloComputation,
    instr: &HloInstruction,
) {
    let _ = write!(out, "%{} = {} {}(", instr.name, instr.shape, instr.opcode());
    match &instr.op {
        Op::Parameter { number } => {
            let _ = write!(out, "{number}");
        }
        Op::Constant { literal } => out.push_str(&literal.values_text()),
        _ => out.push_str(&instr_names(comp, &instr.operands)),
    }
    out.push(')');
    let mut attrs = AttrList {
        module,
        items: Vec::new(),
    };
    op_attrs(&mut attrs, comp, instr);
    common_attrs(&mut attrs, comp, instr);
    for a in attrs.items {
        out.push_str(", ");
        out.push_str(&a);
    }
}

/// `%a, %b`: instructions of `comp` by name.
fn instr_names(comp: &HloComputation, ids: &[InstrId]) -> String {
    let names: Vec<String> = ids
        .iter()
        .map(|&id| format!("%{}", comp.instr(id).name))
        .collect();
    names.join(", ")
}

/// The attributes of the instruction's op, by op family.
fn op_attrs(attrs: &mut AttrList, comp: &HloComputation, instr: &HloInstruction) {
    let op = &instr.op;
    match op {
        Op::Compare { .. } | Op::ReducePrecision { .. } | Op::Map { .. } => {
            elementwise_attrs(attrs, op)
        }
        Op::Iota { .. }
        | Op::Rng { .. }
        | Op::RngBitGenerator { .. }
        | Op::RngGetAndUpdateState { .. } => generator_attrs(attrs, op),
        Op::Broadcast { .. }
        | Op::Transpose { .. }
        | Op::Reverse { .. }
        | Op::Slice { .. }
        | Op::DynamicSlice { .. }
        | Op::Concatenate { .. }
        | Op::GetDimensionSize { .. }
        | Op::SetDimensionSize { .. }
        | Op::Pad { .. }
        | Op::CopyStart { .. } => data_movement_attrs(attrs, op),
        Op::Gather { .. } | Op::Scatter { .. } => gather_scatter_attrs(attrs, op),
        Op::Dot { .. }
        | Op::Convolution { .. }
        | Op::Fft { .. }
        | Op::Cholesky { .. }
        | Op::TriangularSolve { .. } => linear_algebra_attrs(attrs, op),
        Op::Reduce { .. }
        | Op::ReduceWindow { .. }
        | Op::SelectAndScatter { .. }
        | Op::Sort { .. }
        | Op::TopK { .. }
        | Op::Scan { .. }
        | Op::BatchNormTraining { .. }
        | Op::BatchNormInference { .. }
        | Op::BatchNormGrad { .. } => reduction_attrs(attrs, op),
        Op::GetTupleElement { .. }
        | Op::While { .. }
        | Op::Conditional { .. }
        | Op::Call { .. }
        | Op::Fusion { .. }
        | Op::AsyncStart { .. } => control_flow_attrs(attrs, comp, instr),
        Op::CustomCall(cc) => custom_call_attrs(attrs, cc),
        Op::AllReduce { .. }
        | Op::AllReduceStart { .. }
        | Op::AllGather { .. }
        | Op::AllGatherStart { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::CollectivePermute { .. }
        | Op::CollectivePermuteStart { .. }
        | Op::CollectiveBroadcast { .. } => collective_attrs(attrs, op),
        Op::Infeed { .. }
        | Op::Outfeed { .. }
        | Op::Send { .. }
        | Op::SendDone { .. }
        | Op::Recv { .. }
        | Op::RecvDone { .. } => transfer_attrs(attrs, op),
        Op::Parameter { .. }
        | Op::Constant { .. }
        | Op::ReplicaId
        | Op::PartitionId
        | Op::AfterAll
        | Op::Unary(_)
        | Op::Binary(_)
        | Op::Select
        | Op::Clamp
        | Op::Convert
        | Op::BitcastConvert
        | Op::StochasticConvert
        | Op::Reshape
        | Op::DynamicReshape
        | Op::DynamicUpdateSlice
        | Op::Copy
        | Op::Bitcast
        | Op::Tuple
        | Op::OptimizationBarrier
        | Op::AddDependency
        | Op::AllReduceDone
        | Op::AllGatherDone
        | Op::CollectivePermuteDone
        | Op::AsyncUpdate
        | Op::AsyncDone
        | Op::CopyDone => {}
    }
}

/// Elementwise ops beyond the plain unary and binary ones.
fn elementwise_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Compare {
            direction,
            compare_type,
        } => {
            attrs.add(N::Direction, direction);
            if let Some(t) = compare_type {
                attrs.add(N::Type, t);
            }
        }
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => {
            attrs.add(N::ExponentBits, exponent_bits);
            attrs.add(N::MantissaBits, mantissa_bits);
        }
        Op::Map {
            dimensions,
            to_apply,
        } => {
            attrs.dims(N::Dimensions, dimensions);
            attrs.comp(N::ToApply, *to_apply);
        }
        _ => {}
    }
}

/// Ops that make values from no array operand: iotas and random bits.
fn generator_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Iota { dimension } => attrs.add(N::IotaDimension, dimension),
        Op::Rng { distribution } => attrs.add(N::Distribution, distribution),
        Op::RngBitGenerator { algorithm } => attrs.add(N::Algorithm, algorithm),
        Op::RngGetAndUpdateState { delta } => attrs.add(N::Delta, delta),
        _ => {}
    }
}

/// Ops that move, copy or reinterpret elements without computing on them.
fn data_movement_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Broadcast { dimensions }
        | Op::Transpose { dimensions }
        | Op::Reverse { dimensions } => attrs.dims(N::Dimensions, dimensions),
        Op::Slice { slice } => attrs.add(N::Slice, slice_text(slice)),
        Op::DynamicSlice { sizes } => attrs.dims(N::DynamicSliceSizes, sizes),
        Op::Concatenate { dimension }
        | Op::GetDimensionSize { dimension }
        | Op::SetDimensionSize { dimension } => attrs.dim(N::Dimensions, *dimension),
        Op::Pad { config } => attrs.add(N::Padding, padding_text(config)),
        Op::CopyStart {
            cross_program_prefetch_index: Some(i),
        } => attrs.add(N::CrossProgramPrefetchIndex, i),
        _ => {}
    }
}

/// `{[0:10:2], [1:5]}`: the stride is left out when it is 1.
fn slice_text(slice: &[SliceDim]) -> String {
    let parts: Vec<String> = slice
        .iter()
        .map(|s| {
            if s.stride == 1 {
                format!("[{}:{}]", s.start, s.limit)
            } else {
                format!("[{}:{}:{}]", s.start, s.limit, s.stride)
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// `0_0x1_1_2`: `low_high`, with `_interior` when it is not 0, per dimension.
fn padding_text(config: &[PadDim]) -> String {
    let parts: Vec<String> = config
        .iter()
        .map(|p| {
            if p.interior == 0 {
                format!("{}_{}", p.low, p.high)
            } else {
                format!("{}_{}_{}", p.low, p.high, p.interior)
            }
        })
        .collect();
    parts.join("x")
}

fn gather_scatter_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Gather {
            dnums,
            slice_sizes,
            indices_are_sorted,
        } => {
            attrs.dims(N::OffsetDims, &dnums.offset_dims);
            attrs.dims(N::CollapsedSliceDims, &dnums.collapsed_slice_dims);
            attrs.dims(N::StartIndexMap, &dnums.start_index_map);
            attrs.dims_if_any(N::OperandBatchingDims, &dnums.operand_batching_dims);
            attrs.dims_if_any(
                N::StartIndicesBatchingDims,
                &dnums.start_indices_batching_dims,
            );
            attrs.add(N::IndexVectorDim, dnums.index_vector_dim);
            attrs.dims(N::SliceSizes, slice_sizes);
            attrs.flag(N::IndicesAreSorted, *indices_are_sorted);
        }
        Op::Scatter {
            dnums,
            indices_are_sorted,
            unique_indices,
            to_apply,
        } => {
            attrs.dims(N::UpdateWindowDims, &dnums.update_window_dims);
            attrs.dims(N::InsertedWindowDims, &dnums.inserted_window_dims);
            attrs.dims(
                N::ScatterDimsToOperandDims,
                &dnums.scatter_dims_to_operand_dims,
            );
            attrs.dims_if_any(N::InputBatchingDims, &dnums.input_batching_dims);
            attrs.dims_if_any(
                N::ScatterIndicesBatchingDims,
                &dnums.scatter_indices_batching_dims,
            );
            attrs.add(N::IndexVectorDim, dnums.index_vector_dim);
            attrs.flag(N::IndicesAreSorted, *indices_are_sorted);
            attrs.flag(N::UniqueIndices, *unique_indices);
            attrs.comp(N::ToApply, *to_apply);
        }
        _ => {}
    }
}

/// Dot, convolution, FFT and the matrix decompositions.
fn linear_algebra_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Dot {
            dnums,
            precision,
            algorithm,
        } => {
            attrs.dims_if_any(N::LhsBatchDims, &dnums.lhs_batch_dims);
            attrs.dims(N::LhsContractingDims, &dnums.lhs_contracting_dims);
            attrs.dims_if_any(N::RhsBatchDims, &dnums.rhs_batch_dims);
            attrs.dims(N::RhsContractingDims, &dnums.rhs_contracting_dims);
            attrs.precision(precision);
            if let Some(algorithm) = algorithm {
                attrs.add(N::Algorithm, algorithm);
            }
        }
        Op::Convolution {
            window,
            dnums,
            feature_group_count,
            batch_group_count,
            precision,
        } => {
            if !window.dims.is_empty() {
                attrs.add(N::Window, window);
            }
            attrs.add(N::DimLabels, dnums.to_labels());
            if *feature_group_count != 1 {
                attrs.add(N::FeatureGroupCount, feature_group_count);
            }
            if *batch_group_count != 1 {
                attrs.add(N::BatchGroupCount, batch_group_count);
            }
            attrs.precision(precision);
        }
        Op::Fft {
            fft_type,
            fft_length,
        } => {
            attrs.add(N::FftType, fft_type);
            attrs.dims(N::FftLength, fft_length);
        }
        Op::Cholesky { lower } => attrs.add(N::Lower, lower),
        Op::TriangularSolve { options } => {
            attrs.add(N::LeftSide, options.left_side);
            attrs.add(N::Lower, options.lower);
            attrs.add(N::UnitDiagonal, options.unit_diagonal);
            attrs.add(N::TransposeA, options.transpose_a);
        }
        _ => {}
    }
}

/// Reductions, windowed reductions, sorting and batch normalization.
fn reduction_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Reduce {
            dimensions,
            to_apply,
        } => {
            attrs.dims(N::Dimensions, dimensions);
            attrs.comp(N::ToApply, *to_apply);
        }
        Op::ReduceWindow { window, to_apply } => {
            attrs.add(N::Window, window);
            attrs.comp(N::ToApply, *to_apply);
        }
        Op::SelectAndScatter {
            window,
            select,
            scatter,
        } => {
            attrs.add(N::Window, window);
            attrs.comp(N::Select, *select);
            attrs.comp(N::Scatter, *scatter);
        }
        Op::Sort {
            dimension,
            is_stable,
            comparator,
        } => {
            attrs.dim(N::Dimensions, *dimension);
            attrs.flag(N::IsStable, *is_stable);
            attrs.comp(N::ToApply, *comparator);
        }
        Op::Scan {
            dimension,
            num_carries,
            is_reverse,
            is_associative,
            to_apply,
        } => {
            attrs.dim(N::Dimensions, *dimension);
            attrs.add(N::NumCarries, num_carries);
            attrs.flag(N::IsReverse, *is_reverse);
            if let Some(a) = is_associative {
                attrs.add(N::IsAssociative, a);
            }
            attrs.comp(N::ToApply, *to_apply);
        }
        Op::TopK { k, largest } => {
            attrs.add(N::K, k);
            attrs.add(N::Largest, largest);
        }
        Op::BatchNormTraining {
            epsilon,
            feature_index,
        }
        | Op::BatchNormInference {
            epsilon,
            feature_index,
        }
        | Op::BatchNormGrad {
            epsilon,
            feature_index,
        } => {
            // As constants are written: shortest digits, `nan`/`-nan`/`inf` spelled
            // so that they read back (Rust's `NaN` would lose the sign).
            // The attribute carries no NaN payload: a NaN is `nan` or `-nan`.
            let epsilon = if epsilon.is_nan() {
                f32::NAN.copysign(*epsilon)
            } else {
                *epsilon
            };
            attrs.add(N::Epsilon, crate::native::Scalar::F32(epsilon));
            attrs.add(N::FeatureIndex, feature_index);
        }
        _ => {}
    }
}

/// Tuple access and the ops that call other computations.
fn control_flow_attrs(attrs: &mut AttrList, comp: &HloComputation, instr: &HloInstruction) {
    use AttrName as N;
    match &instr.op {
        Op::GetTupleElement { index } => attrs.add(N::Index, index),
        Op::While { condition, body } => {
            attrs.comp(N::Condition, *condition);
            attrs.comp(N::Body, *body);
        }
        Op::Conditional { branches } => {
            // A predicate picks between two branches, which have names of their own;
            // an index picks from the list.
            let is_pred = instr
                .operands
                .first()
                .and_then(|&o| comp.instr(o).shape.element_type())
                .is_some_and(|t| t.is_pred());
            if is_pred && branches.len() == 2 {
                attrs.comp(N::TrueComputation, branches[0]);
                attrs.comp(N::FalseComputation, branches[1]);
            } else {
                attrs.comps(N::BranchComputations, branches);
            }
        }
        Op::Call {
            to_apply,
            is_composite,
        } => {
            attrs.comp(N::ToApply, *to_apply);
            attrs.flag(N::IsComposite, *is_composite);
        }
        Op::Fusion { kind, calls } => {
            attrs.add(N::Kind, kind);
            attrs.comp(N::Calls, *calls);
        }
        Op::AsyncStart {
            calls,
            execution_thread,
        } => {
            attrs.comp(N::Calls, *calls);
            if let Some(t) = execution_thread {
                attrs.quoted(N::AsyncExecutionThread, t);
            }
        }
        _ => {}
    }
}

fn custom_call_attrs(attrs: &mut AttrList, cc: &CustomCallAttrs) {
    use AttrName as N;
    attrs.quoted(N::CustomCallTarget, &cc.target);
    if !cc.called_computations.is_empty() {
        attrs.comps(N::CalledComputations, &cc.called_computations);
    }
    attrs.flag(N::CustomCallHasSideEffect, cc.has_side_effect);
    if let Some(shapes) = &cc.operand_layout_constraints {
        attrs.add(
            N::OperandLayoutConstraints,
            format_args!("{{{}}}", join(shapes, ", ")),
        );
    }
    if !cc.output_to_operand_aliasing.is_empty() {
        let parts: Vec<String> = cc
            .output_to_operand_aliasing
            .iter()
            .map(|a| {
                format!(
                    "{}: ({}, {})",
                    dims(&a.output_index),
                    a.operand,
                    dims(&a.operand_index)
                )
            })
            .collect();
        attrs.add(
            N::OutputToOperandAliasing,
            format_args!("{{{}}}", parts.join(", ")),
        );
    }
    if let Some(s) = cc.schedule {
        attrs.add(N::CustomCallSchedule, s);
    }
    if cc.api_version != CustomCallApiVersion::Original {
        attrs.add(N::ApiVersion, cc.api_version);
    }
}

/// Ops that exchange data between replicas or partitions.
fn collective_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::AllReduce { attrs: a, to_apply } | Op::AllReduceStart { attrs: a, to_apply } => {
            attrs.collective(a, false);
            attrs.comp(N::ToApply, *to_apply);
        }
        Op::AllGather {
            attrs: a,
            dimension,
        }
        | Op::AllGatherStart {
            attrs: a,
            dimension,
        } => {
            attrs.collective(a, false);
            attrs.dim(N::Dimensions, *dimension);
        }
        Op::ReduceScatter {
            attrs: a,
            dimension,
            to_apply,
        } => {
            attrs.collective(a, false);
            attrs.dim(N::Dimensions, *dimension);
            attrs.comp(N::ToApply, *to_apply);
        }
        Op::AllToAll {
            attrs: a,
            split_dimension,
        } => {
            attrs.collective(a, false);
            if let Some(d) = split_dimension {
                attrs.dim(N::Dimensions, *d);
            }
        }
        Op::CollectivePermute {
            attrs: a,
            source_target_pairs,
            slice_sizes,
        }
        | Op::CollectivePermuteStart {
            attrs: a,
            source_target_pairs,
            slice_sizes,
        } => {
            // Every collective attribute the parser accepts here is written when
            // set, so it survives a round trip.
            attrs.collective(a, true);
            let pairs: Vec<String> = source_target_pairs
                .iter()
                .map(|(s, t)| format!("{{{s},{t}}}"))
                .collect();
            attrs.add(
                N::SourceTargetPairs,
                format_args!("{{{}}}", pairs.join(",")),
            );
            if let Some(sizes) = slice_sizes {
                let lists: Vec<String> = sizes.iter().map(|s| dims(s)).collect();
                attrs.add(N::SliceSizes, format_args!("{{{}}}", lists.join(",")));
            }
        }
        Op::CollectiveBroadcast { attrs: a } => attrs.collective(a, false),
        _ => {}
    }
}

/// Infeed, outfeed, send and receive: transfers to and from outside the program.
fn transfer_attrs(attrs: &mut AttrList, op: &Op) {
    use AttrName as N;
    match op {
        Op::Infeed { config } if !config.is_empty() => attrs.quoted(N::InfeedConfig, config),
        Op::Outfeed {
            config,
            outfeed_shape,
        } => {
            if let Some(s) = outfeed_shape {
                attrs.add(N::OutfeedShape, s);
            }
            if !config.is_empty() {
                attrs.quoted(N::OutfeedConfig, config);
            }
        }
        Op::Send {
            channel_id,
            is_host_transfer,
        }
        | Op::SendDone {
            channel_id,
            is_host_transfer,
        }
        | Op::Recv {
            channel_id,
            is_host_transfer,
        }
        | Op::RecvDone {
            channel_id,
            is_host_transfer,
        } => {
            if let Some(c) = channel_id {
                attrs.add(N::ChannelId, c);
            }
            attrs.flag(N::IsHostTransfer, *is_host_transfer);
        }
        _ => {}
    }
}

/// The attributes any instruction may carry, after its op's own.
fn common_attrs(attrs: &mut AttrList, comp: &HloComputation, instr: &HloInstruction) {
    use AttrName as N;
    if let Some(r) = &instr.parameter_replication {
        attrs.add(
            N::ParameterReplication,
            format_args!("{{{}}}", join(r, ",")),
        );
    }
    if let Some(s) = &instr.sharding {
        attrs.add(N::Sharding, s);
    }
    if !instr.control_predecessors.is_empty() {
        let names = instr_names(comp, &instr.control_predecessors);
        attrs.add(N::ControlPredecessors, format_args!("{{{names}}}"));
    }
    if !instr.frontend_attributes.is_empty() {
        attrs.add(N::FrontendAttributes, str_map(&instr.frontend_attributes));
    }
    if let Some(m) = &instr.metadata {
        attrs.add(N::Metadata, metadata(m));
    }
    match &instr.backend_config {
        Some(BackendConfig::String(s)) => attrs.quoted(N::BackendConfig, s),
        Some(BackendConfig::Raw(s)) => attrs.add(N::BackendConfig, s),
        None => {}
    }
    if let Some(s) = &instr.statistics {
        attrs.add(N::Statistics, s);
    }
}
