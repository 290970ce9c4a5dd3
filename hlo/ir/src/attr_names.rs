//! The names of `name=value` attributes in HLO text, spelled once.
//!
//! The parser looks attributes up here and the printer writes their names from
//! here, so a name cannot drift between the two directions: print → parse → print
//! depends on both sides agreeing letter for letter.
//!
//! Module attributes (after `HloModule name,`) and instruction attributes (after
//! an instruction's operands) share one table, [`AttrName`], where
//! `frontend_attributes` serves both. Each name also records the form of its
//! value, which is all the parser needs to read most values before it knows which
//! opcode will claim them. The fields inside `metadata={...}` have a table of
//! their own, [`MetadataField`].

use super::opcode::spelled_enum;
use std::fmt;

/// How an instruction attribute's value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ValueForm {
    /// A list of dimension numbers: `{0,1}`.
    DimList,
    /// One word: a number, an enumerator or `true`/`false`.
    Word,
    /// A computation name: `%add`.
    Computation,
    /// A list of computation names: `{%a, %b}`.
    Computations,
    /// A quoted string.
    Quoted,
    /// A syntax of its own (windows, slices, metadata, ...), read by a parser
    /// particular to that name.
    Structured,
    /// Not an instruction attribute: only the module header takes it.
    Module,
}

/// Declares [`AttrName`] from rows `Variant => "spelling" as Form,`: the spelling
/// and its value form stand on one line.
macro_rules! attr_table {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($variant:ident => $text:literal as $form:ident,)*
    }) => {
        spelled_enum! {
            $(#[$meta])*
            $vis enum $name { $($variant => $text,)* }
        }

        impl $name {
            /// How the value of an instruction attribute of this name is written.
            pub(crate) fn form(self) -> ValueForm {
                match self { $($name::$variant => ValueForm::$form,)* }
            }
        }
    };
}

attr_table! {
    /// One attribute name as the HLO text spells it.
    pub(crate) enum AttrName {
        // Module attributes.
        EntryComputationLayout => "entry_computation_layout" as Module,
        IsScheduled => "is_scheduled" as Module,
        ReplicaCount => "replica_count" as Module,
        NumPartitions => "num_partitions" as Module,
        InputOutputAlias => "input_output_alias" as Module,
        BufferDonor => "buffer_donor" as Module,
        // Module and instruction attribute.
        FrontendAttributes => "frontend_attributes" as Structured,
        // Attributes any instruction may carry.
        Metadata => "metadata" as Structured,
        Sharding => "sharding" as Structured,
        Statistics => "statistics" as Structured,
        BackendConfig => "backend_config" as Structured,
        ControlPredecessors => "control-predecessors" as Structured,
        ParameterReplication => "parameter_replication" as Structured,
        // Dimension lists.
        Dimensions => "dimensions" as DimList,
        DynamicSliceSizes => "dynamic_slice_sizes" as DimList,
        FftLength => "fft_length" as DimList,
        LhsBatchDims => "lhs_batch_dims" as DimList,
        RhsBatchDims => "rhs_batch_dims" as DimList,
        LhsContractingDims => "lhs_contracting_dims" as DimList,
        RhsContractingDims => "rhs_contracting_dims" as DimList,
        OffsetDims => "offset_dims" as DimList,
        CollapsedSliceDims => "collapsed_slice_dims" as DimList,
        StartIndexMap => "start_index_map" as DimList,
        OperandBatchingDims => "operand_batching_dims" as DimList,
        StartIndicesBatchingDims => "start_indices_batching_dims" as DimList,
        UpdateWindowDims => "update_window_dims" as DimList,
        InsertedWindowDims => "inserted_window_dims" as DimList,
        ScatterDimsToOperandDims => "scatter_dims_to_operand_dims" as DimList,
        InputBatchingDims => "input_batching_dims" as DimList,
        ScatterIndicesBatchingDims => "scatter_indices_batching_dims" as DimList,
        // Single numbers.
        Index => "index" as Word,
        IotaDimension => "iota_dimension" as Word,
        FeatureGroupCount => "feature_group_count" as Word,
        BatchGroupCount => "batch_group_count" as Word,
        IndexVectorDim => "index_vector_dim" as Word,
        K => "k" as Word,
        ExponentBits => "exponent_bits" as Word,
        MantissaBits => "mantissa_bits" as Word,
        FeatureIndex => "feature_index" as Word,
        CrossProgramPrefetchIndex => "cross_program_prefetch_index" as Word,
        ChannelId => "channel_id" as Word,
        Delta => "delta" as Word,
        InferredDimension => "inferred_dimension" as Word,
        Epsilon => "epsilon" as Word,
        // Enumerations.
        Direction => "direction" as Word,
        Type => "type" as Word,
        Kind => "kind" as Word,
        FftType => "fft_type" as Word,
        Distribution => "distribution" as Word,
        Algorithm => "algorithm" as Word,
        ApiVersion => "api_version" as Word,
        TransposeA => "transpose_a" as Word,
        CustomCallSchedule => "custom_call_schedule" as Word,
        // Flags.
        IsStable => "is_stable" as Word,
        IsComposite => "is_composite" as Word,
        IsReverse => "is_reverse" as Word,
        IsAssociative => "is_associative" as Word,
        IndicesAreSorted => "indices_are_sorted" as Word,
        UniqueIndices => "unique_indices" as Word,
        Largest => "largest" as Word,
        NumCarries => "num_carries" as Word,
        UseGlobalDeviceIds => "use_global_device_ids" as Word,
        ConstrainLayout => "constrain_layout" as Word,
        CustomCallHasSideEffect => "custom_call_has_side_effect" as Word,
        IsHostTransfer => "is_host_transfer" as Word,
        LeftSide => "left_side" as Word,
        Lower => "lower" as Word,
        UnitDiagonal => "unit_diagonal" as Word,
        // Called computations.
        ToApply => "to_apply" as Computation,
        Calls => "calls" as Computation,
        Condition => "condition" as Computation,
        Body => "body" as Computation,
        Select => "select" as Computation,
        Scatter => "scatter" as Computation,
        TrueComputation => "true_computation" as Computation,
        FalseComputation => "false_computation" as Computation,
        BranchComputations => "branch_computations" as Computations,
        CalledComputations => "called_computations" as Computations,
        // Quoted strings.
        CustomCallTarget => "custom_call_target" as Quoted,
        InfeedConfig => "infeed_config" as Quoted,
        OutfeedConfig => "outfeed_config" as Quoted,
        AsyncExecutionThread => "async_execution_thread" as Quoted,
        // Structured values.
        Window => "window" as Structured,
        DimLabels => "dim_labels" as Structured,
        Slice => "slice" as Structured,
        Padding => "padding" as Structured,
        OperandPrecision => "operand_precision" as Structured,
        ReplicaGroups => "replica_groups" as Structured,
        SliceSizes => "slice_sizes" as Structured,
        SourceTargetPairs => "source_target_pairs" as Structured,
        OperandLayoutConstraints => "operand_layout_constraints" as Structured,
        OutfeedShape => "outfeed_shape" as Structured,
        OutputToOperandAliasing => "output_to_operand_aliasing" as Structured,
    }
}

spelled_enum! {
    /// The fields inside an instruction's `metadata={...}`.
    pub(crate) enum MetadataField {
        OpType => "op_type",
        OpName => "op_name",
        SourceFile => "source_file",
        SourceLine => "source_line",
        SourceEndLine => "source_end_line",
        SourceColumn => "source_column",
        SourceEndColumn => "source_end_column",
        DeduplicatedName => "deduplicated_name",
        PreserveLayout => "preserve_layout",
        StackFrameId => "stack_frame_id",
        SchedulingName => "scheduling_name",
    }
}

#[cfg(test)]
mod tests {
    use super::{AttrName, MetadataField};
    use crate::parser::parse_module;
    use crate::printer::print_module;

    /// Attributes the parser reads (and checks) but does not keep, so the
    /// printer never writes them: `reshape`'s `inferred_dimension`, which XLA
    /// CPU ignores (its StableHLO form has no such attribute) and so does the
    /// dynamic-shape pass.
    const READ_AND_DROPPED: &[AttrName] = &[AttrName::InferredDimension];

    /// Hand-written modules that between them use every attribute.
    const FIXTURES: [&str; 2] = [
        include_str!("../tests/data/parser_roundtrip/all_ops.hlo"),
        include_str!("../tests/data/parser_roundtrip/module_attrs.hlo"),
    ];

    #[test]
    fn spellings_are_distinct() {
        fn check<T: Copy + std::fmt::Debug>(all: &[T], name: impl Fn(T) -> &'static str) {
            for (i, &a) in all.iter().enumerate() {
                for &b in &all[i + 1..] {
                    assert_ne!(name(a), name(b), "{a:?} and {b:?}");
                }
            }
        }
        check(AttrName::ALL, AttrName::name);
        check(MetadataField::ALL, MetadataField::name);
    }

    #[test]
    fn dropped_names_are_read_and_checked() {
        for a in READ_AND_DROPPED {
            let text = format!(
                "HloModule m\nENTRY e {{\n  x = f32[12] parameter(0)\n  ROOT r = f32[2,3,2] reshape(x), {}=1\n}}\n",
                a.name()
            );
            let module = parse_module(&text).expect("parses");
            assert!(!print_module(&module).contains(a.name()));
            let bad = text.replace("=1", "=one");
            assert!(parse_module(&bad).is_err(), "{} takes an integer", a.name());
        }
    }

    #[test]
    fn every_name_is_printed_and_read_back() {
        let mut printed = Vec::new();
        for text in FIXTURES {
            let module = parse_module(text).expect("fixture parses");
            let text = print_module(&module);
            let reread = parse_module(&text).expect("printed text parses");
            assert_eq!(module, reread);
            printed.push(text);
        }
        // Each name must be written somewhere as `name=`, preceded by the `, ` that
        // separates attributes, so the check cannot match inside another name.
        let missing: Vec<&str> = AttrName::ALL
            .iter()
            .filter(|a| !READ_AND_DROPPED.contains(a))
            .map(|a| a.name())
            .filter(|name| {
                let written = format!(", {name}=");
                !printed.iter().any(|t| t.contains(&written))
            })
            .collect();
        assert!(
            missing.is_empty(),
            "not printed by any fixture: {missing:?}"
        );
    }
}
