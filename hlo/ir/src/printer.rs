//! The HLO text printer.
//!
//! Writes one canonical form, close to what XLA's `ToString()` prints: `%`-prefixed
//! names, computation signatures, layouts as stored, attributes in a fixed order,
//! every constant value written out in full. Parsing the output gives back an equal
//! module, so print → parse → print is the identity (the conformance tests check
//! this on every program in the corpus).

use super::attrs::*;
use super::lexer::{escape, is_plain_word, is_raw_block};
use super::op::Op;
use super::{BackendConfig, HloComputation, HloInstruction, HloModule, OpMetadata};
use std::fmt::Write;

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
        out.push_str(", is_scheduled=true");
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
        let _ = write!(out, ", input_output_alias={{ {} }}", entries.join(", "));
    }
    if !c.buffer_donor.is_empty() {
        let entries: Vec<String> = c
            .buffer_donor
            .iter()
            .map(|(p, index)| format!("({p}, {})", dims(index)))
            .collect();
        let _ = write!(out, ", buffer_donor={{ {} }}", entries.join(", "));
    }
    if let Some(layout) = &c.entry_computation_layout {
        let _ = write!(out, ", entry_computation_layout={{{layout}}}");
    }
    for (k, v) in &c.other {
        let _ = write!(out, ", {k}={v}");
    }
    if let Some(n) = c.replica_count {
        let _ = write!(out, ", replica_count={n}");
    }
    if let Some(n) = c.num_partitions {
        let _ = write!(out, ", num_partitions={n}");
    }
    if !c.frontend_attributes.is_empty() {
        let _ = write!(
            out,
            ", frontend_attributes={}",
            str_map(&c.frontend_attributes)
        );
    }
    out.push('\n');
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
    let mut parts = Vec::new();
    let s = |k: &str, v: &Option<String>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}=\"{}\"", escape(v)));
        }
    };
    let i = |k: &str, v: Option<i64>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    };
    s("op_type", &m.op_type, &mut parts);
    s("op_name", &m.op_name, &mut parts);
    s("source_file", &m.source_file, &mut parts);
    i("source_line", m.source_line, &mut parts);
    i("source_end_line", m.source_end_line, &mut parts);
    i("source_column", m.source_column, &mut parts);
    i("source_end_column", m.source_end_column, &mut parts);
    s("deduplicated_name", &m.deduplicated_name, &mut parts);
    if let Some(b) = m.preserve_layout {
        parts.push(format!("preserve_layout={b}"));
    }
    i("stack_frame_id", m.stack_frame_id, &mut parts);
    s("scheduling_name", &m.scheduling_name, &mut parts);
    format!("{{{}}}", parts.join(" "))
}

fn collective(a: &CollectiveAttrs, attrs: &mut Vec<String>) {
    if let Some(c) = a.channel_id {
        attrs.push(format!("channel_id={c}"));
    }
    attrs.push(format!("replica_groups={}", a.replica_groups));
    if a.use_global_device_ids {
        attrs.push("use_global_device_ids=true".into());
    }
    if a.constrain_layout {
        attrs.push("constrain_layout=true".into());
    }
}

fn precision(p: &[Precision], attrs: &mut Vec<String>) {
    if p.iter().any(|&x| x != Precision::Default) {
        attrs.push(format!("operand_precision={{{}}}", join(p, ",")));
    }
}

fn write_instruction(
    out: &mut String,
    module: &HloModule,
    comp: &HloComputation,
    instr: &HloInstruction,
) {
    let cname = |c: super::CompId| format!("%{}", module.computation(c).name);
    let _ = write!(out, "%{} = {} {}(", instr.name, instr.shape, instr.opcode());
    match &instr.op {
        Op::Parameter { number } => {
            let _ = write!(out, "{number}");
        }
        Op::Constant { literal } => out.push_str(&literal.values_text()),
        _ => {
            let names: Vec<String> = instr
                .operands
                .iter()
                .map(|&o| format!("%{}", comp.instr(o).name))
                .collect();
            out.push_str(&names.join(", "));
        }
    }
    out.push(')');
    let mut attrs: Vec<String> = Vec::new();
    match &instr.op {
        Op::Iota { dimension } => attrs.push(format!("iota_dimension={dimension}")),
        Op::Compare {
            direction,
            compare_type,
        } => {
            attrs.push(format!("direction={direction}"));
            if let Some(t) = compare_type {
                attrs.push(format!("type={t}"));
            }
        }
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => {
            attrs.push(format!("exponent_bits={exponent_bits}"));
            attrs.push(format!("mantissa_bits={mantissa_bits}"));
        }
        Op::Map {
            dimensions,
            to_apply,
        } => {
            attrs.push(format!("dimensions={}", self::dims(dimensions)));
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::Broadcast { dimensions }
        | Op::Transpose { dimensions }
        | Op::Reverse { dimensions } => {
            attrs.push(format!("dimensions={}", self::dims(dimensions)))
        }
        Op::Slice { slice } => {
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
            attrs.push(format!("slice={{{}}}", parts.join(", ")));
        }
        Op::DynamicSlice { sizes } => {
            attrs.push(format!("dynamic_slice_sizes={}", self::dims(sizes)))
        }
        Op::Concatenate { dimension }
        | Op::GetDimensionSize { dimension }
        | Op::SetDimensionSize { dimension } => attrs.push(format!("dimensions={{{dimension}}}")),
        Op::Pad { config } => {
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
            attrs.push(format!("padding={}", parts.join("x")));
        }
        Op::Gather {
            dnums,
            slice_sizes,
            indices_are_sorted,
        } => {
            attrs.push(format!("offset_dims={}", self::dims(&dnums.offset_dims)));
            attrs.push(format!(
                "collapsed_slice_dims={}",
                self::dims(&dnums.collapsed_slice_dims)
            ));
            attrs.push(format!(
                "start_index_map={}",
                self::dims(&dnums.start_index_map)
            ));
            if !dnums.operand_batching_dims.is_empty() {
                attrs.push(format!(
                    "operand_batching_dims={}",
                    self::dims(&dnums.operand_batching_dims)
                ));
            }
            if !dnums.start_indices_batching_dims.is_empty() {
                attrs.push(format!(
                    "start_indices_batching_dims={}",
                    self::dims(&dnums.start_indices_batching_dims)
                ));
            }
            attrs.push(format!("index_vector_dim={}", dnums.index_vector_dim));
            attrs.push(format!("slice_sizes={}", self::dims(slice_sizes)));
            if *indices_are_sorted {
                attrs.push("indices_are_sorted=true".into());
            }
        }
        Op::Scatter {
            dnums,
            indices_are_sorted,
            unique_indices,
            to_apply,
        } => {
            attrs.push(format!(
                "update_window_dims={}",
                self::dims(&dnums.update_window_dims)
            ));
            attrs.push(format!(
                "inserted_window_dims={}",
                self::dims(&dnums.inserted_window_dims)
            ));
            attrs.push(format!(
                "scatter_dims_to_operand_dims={}",
                self::dims(&dnums.scatter_dims_to_operand_dims)
            ));
            if !dnums.input_batching_dims.is_empty() {
                attrs.push(format!(
                    "input_batching_dims={}",
                    self::dims(&dnums.input_batching_dims)
                ));
            }
            if !dnums.scatter_indices_batching_dims.is_empty() {
                attrs.push(format!(
                    "scatter_indices_batching_dims={}",
                    self::dims(&dnums.scatter_indices_batching_dims)
                ));
            }
            attrs.push(format!("index_vector_dim={}", dnums.index_vector_dim));
            if *indices_are_sorted {
                attrs.push("indices_are_sorted=true".into());
            }
            if *unique_indices {
                attrs.push("unique_indices=true".into());
            }
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::Dot { dnums, precision } => {
            if !dnums.lhs_batch_dims.is_empty() {
                attrs.push(format!(
                    "lhs_batch_dims={}",
                    self::dims(&dnums.lhs_batch_dims)
                ));
            }
            attrs.push(format!(
                "lhs_contracting_dims={}",
                self::dims(&dnums.lhs_contracting_dims)
            ));
            if !dnums.rhs_batch_dims.is_empty() {
                attrs.push(format!(
                    "rhs_batch_dims={}",
                    self::dims(&dnums.rhs_batch_dims)
                ));
            }
            attrs.push(format!(
                "rhs_contracting_dims={}",
                self::dims(&dnums.rhs_contracting_dims)
            ));
            self::precision(precision, &mut attrs);
        }
        Op::Convolution {
            window,
            dnums,
            feature_group_count,
            batch_group_count,
            precision,
        } => {
            if !window.dims.is_empty() {
                attrs.push(format!("window={window}"));
            }
            attrs.push(format!("dim_labels={}", dnums.to_labels()));
            if *feature_group_count != 1 {
                attrs.push(format!("feature_group_count={feature_group_count}"));
            }
            if *batch_group_count != 1 {
                attrs.push(format!("batch_group_count={batch_group_count}"));
            }
            self::precision(precision, &mut attrs);
        }
        Op::Fft {
            fft_type,
            fft_length,
        } => {
            attrs.push(format!("fft_type={fft_type}"));
            attrs.push(format!("fft_length={}", self::dims(fft_length)));
        }
        Op::Cholesky { lower } => attrs.push(format!("lower={lower}")),
        Op::TriangularSolve { options } => {
            attrs.push(format!("left_side={}", options.left_side));
            attrs.push(format!("lower={}", options.lower));
            attrs.push(format!("unit_diagonal={}", options.unit_diagonal));
            attrs.push(format!("transpose_a={}", options.transpose_a));
        }
        Op::Reduce {
            dimensions,
            to_apply,
        } => {
            attrs.push(format!("dimensions={}", self::dims(dimensions)));
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::ReduceWindow { window, to_apply } => {
            attrs.push(format!("window={window}"));
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::SelectAndScatter {
            window,
            select,
            scatter,
        } => {
            attrs.push(format!("window={window}"));
            attrs.push(format!("select={}", cname(*select)));
            attrs.push(format!("scatter={}", cname(*scatter)));
        }
        Op::Sort {
            dimension,
            is_stable,
            comparator,
        } => {
            attrs.push(format!("dimensions={{{dimension}}}"));
            if *is_stable {
                attrs.push("is_stable=true".into());
            }
            attrs.push(format!("to_apply={}", cname(*comparator)));
        }
        Op::TopK { k, largest } => {
            attrs.push(format!("k={k}"));
            attrs.push(format!("largest={largest}"));
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
            attrs.push(format!("epsilon={}", crate::native::Scalar::F32(epsilon)));
            attrs.push(format!("feature_index={feature_index}"));
        }
        Op::GetTupleElement { index } => attrs.push(format!("index={index}")),
        Op::While { condition, body } => {
            attrs.push(format!("condition={}", cname(*condition)));
            attrs.push(format!("body={}", cname(*body)));
        }
        Op::Conditional { branches } => {
            let is_pred = instr
                .operands
                .first()
                .and_then(|&o| comp.instr(o).shape.element_type())
                .is_some_and(|t| t.is_pred());
            if is_pred && branches.len() == 2 {
                attrs.push(format!("true_computation={}", cname(branches[0])));
                attrs.push(format!("false_computation={}", cname(branches[1])));
            } else {
                let names: Vec<String> = branches.iter().map(|&b| cname(b)).collect();
                attrs.push(format!("branch_computations={{{}}}", names.join(", ")));
            }
        }
        Op::Call { to_apply } => attrs.push(format!("to_apply={}", cname(*to_apply))),
        Op::Fusion { kind, calls } => {
            attrs.push(format!("kind={kind}"));
            attrs.push(format!("calls={}", cname(*calls)));
        }
        Op::CustomCall(cc) => {
            attrs.push(format!("custom_call_target=\"{}\"", escape(&cc.target)));
            if !cc.called_computations.is_empty() {
                let names: Vec<String> = cc.called_computations.iter().map(|&c| cname(c)).collect();
                attrs.push(format!("called_computations={{{}}}", names.join(", ")));
            }
            if cc.has_side_effect {
                attrs.push("custom_call_has_side_effect=true".into());
            }
            if let Some(shapes) = &cc.operand_layout_constraints {
                attrs.push(format!(
                    "operand_layout_constraints={{{}}}",
                    join(shapes, ", ")
                ));
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
                attrs.push(format!(
                    "output_to_operand_aliasing={{{}}}",
                    parts.join(", ")
                ));
            }
            if let Some(s) = cc.schedule {
                attrs.push(format!("custom_call_schedule={s}"));
            }
            if cc.api_version != CustomCallApiVersion::Original {
                attrs.push(format!("api_version={}", cc.api_version));
            }
        }
        Op::Rng { distribution } => attrs.push(format!("distribution={distribution}")),
        Op::RngBitGenerator { algorithm } => attrs.push(format!("algorithm={algorithm}")),
        Op::RngGetAndUpdateState { delta } => attrs.push(format!("delta={delta}")),
        Op::AllReduce { attrs: a, to_apply } | Op::AllReduceStart { attrs: a, to_apply } => {
            collective(a, &mut attrs);
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::AllGather {
            attrs: a,
            dimension,
        }
        | Op::AllGatherStart {
            attrs: a,
            dimension,
        } => {
            collective(a, &mut attrs);
            attrs.push(format!("dimensions={{{dimension}}}"));
        }
        Op::ReduceScatter {
            attrs: a,
            dimension,
            to_apply,
        } => {
            collective(a, &mut attrs);
            attrs.push(format!("dimensions={{{dimension}}}"));
            attrs.push(format!("to_apply={}", cname(*to_apply)));
        }
        Op::AllToAll {
            attrs: a,
            split_dimension,
        } => {
            collective(a, &mut attrs);
            if let Some(d) = split_dimension {
                attrs.push(format!("dimensions={{{d}}}"));
            }
        }
        Op::CollectivePermute {
            attrs: a,
            source_target_pairs,
        }
        | Op::CollectivePermuteStart {
            attrs: a,
            source_target_pairs,
        } => {
            if let Some(c) = a.channel_id {
                attrs.push(format!("channel_id={c}"));
            }
            // Collective attributes the parser accepts here: written when set, so
            // they survive a round trip.
            if !a.replica_groups.groups.is_empty() {
                attrs.push(format!("replica_groups={}", a.replica_groups));
            }
            if a.use_global_device_ids {
                attrs.push("use_global_device_ids=true".into());
            }
            if a.constrain_layout {
                attrs.push("constrain_layout=true".into());
            }
            let pairs: Vec<String> = source_target_pairs
                .iter()
                .map(|(s, t)| format!("{{{s},{t}}}"))
                .collect();
            attrs.push(format!("source_target_pairs={{{}}}", pairs.join(",")));
        }
        Op::CollectiveBroadcast { attrs: a } => collective(a, &mut attrs),
        Op::Infeed { config } => {
            if !config.is_empty() {
                attrs.push(format!("infeed_config=\"{}\"", escape(config)));
            }
        }
        Op::Outfeed {
            config,
            outfeed_shape,
        } => {
            if let Some(s) = outfeed_shape {
                attrs.push(format!("outfeed_shape={s}"));
            }
            if !config.is_empty() {
                attrs.push(format!("outfeed_config=\"{}\"", escape(config)));
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
                attrs.push(format!("channel_id={c}"));
            }
            if *is_host_transfer {
                attrs.push("is_host_transfer=true".into());
            }
        }
        Op::AsyncStart {
            calls,
            execution_thread,
        } => {
            attrs.push(format!("calls={}", cname(*calls)));
            if let Some(t) = execution_thread {
                attrs.push(format!("async_execution_thread=\"{}\"", escape(t)));
            }
        }
        Op::CopyStart {
            cross_program_prefetch_index,
        } => {
            if let Some(i) = cross_program_prefetch_index {
                attrs.push(format!("cross_program_prefetch_index={i}"));
            }
        }
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
    if let Some(r) = &instr.parameter_replication {
        attrs.push(format!("parameter_replication={{{}}}", join(r, ",")));
    }
    if let Some(s) = &instr.sharding {
        attrs.push(format!("sharding={s}"));
    }
    if !instr.control_predecessors.is_empty() {
        let names: Vec<String> = instr
            .control_predecessors
            .iter()
            .map(|&c| format!("%{}", comp.instr(c).name))
            .collect();
        attrs.push(format!("control-predecessors={{{}}}", names.join(", ")));
    }
    if !instr.frontend_attributes.is_empty() {
        attrs.push(format!(
            "frontend_attributes={}",
            str_map(&instr.frontend_attributes)
        ));
    }
    if let Some(m) = &instr.metadata {
        attrs.push(format!("metadata={}", metadata(m)));
    }
    match &instr.backend_config {
        Some(BackendConfig::String(s)) => attrs.push(format!("backend_config=\"{}\"", escape(s))),
        Some(BackendConfig::Raw(s)) => attrs.push(format!("backend_config={s}")),
        None => {}
    }
    if let Some(s) = &instr.statistics {
        attrs.push(format!("statistics={s}"));
    }
    for a in attrs {
        out.push_str(", ");
        out.push_str(&a);
    }
}
