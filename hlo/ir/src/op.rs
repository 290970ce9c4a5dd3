//! [`Op`]: what an instruction does, with the attributes that operation needs.
//!
//! Each variant holds exactly the attributes its opcode takes, so code that matches
//! on `Op::Reduce { dimensions, to_apply }` never has to ask whether an attribute is
//! present. Subcomputations are referred to by [`CompId`], an index into the
//! module's computation list.

use super::attrs::*;
use super::opcode::{BinaryOp, Opcode, UnaryOp};
use super::CompId;
use crate::literal::Literal;
use crate::shape::Shape;

/// The operation of an instruction and its opcode-specific attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    // ---- leaves ----
    Parameter {
        number: usize,
    },
    Constant {
        literal: Literal,
    },
    Iota {
        dimension: usize,
    },
    ReplicaId,
    PartitionId,
    AfterAll,

    // ---- elementwise ----
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare {
        direction: ComparisonDirection,
        compare_type: Option<ComparisonType>,
    },
    Select,
    Clamp,
    Convert,
    BitcastConvert,
    StochasticConvert,
    ReducePrecision {
        exponent_bits: u32,
        mantissa_bits: u32,
    },
    Map {
        dimensions: Vec<usize>,
        to_apply: CompId,
    },

    // ---- data movement ----
    Broadcast {
        dimensions: Vec<usize>,
    },
    Reshape,
    DynamicReshape,
    Transpose {
        dimensions: Vec<usize>,
    },
    Slice {
        slice: Vec<SliceDim>,
    },
    DynamicSlice {
        sizes: Vec<usize>,
    },
    DynamicUpdateSlice,
    Concatenate {
        dimension: usize,
    },
    Pad {
        config: Vec<PadDim>,
    },
    Reverse {
        dimensions: Vec<usize>,
    },
    Copy,
    Bitcast,
    GetDimensionSize {
        dimension: usize,
    },
    SetDimensionSize {
        dimension: usize,
    },
    Gather {
        dnums: GatherDimensionNumbers,
        slice_sizes: Vec<usize>,
        indices_are_sorted: bool,
    },
    Scatter {
        dnums: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
        to_apply: CompId,
    },

    // ---- linear algebra ----
    Dot {
        dnums: DotDimensionNumbers,
        precision: Vec<Precision>,
        /// `algorithm=` (`None`: unset). Kept and printed; computed as a plain dot
        /// (see [`DotAlgorithm`]).
        algorithm: Option<DotAlgorithm>,
    },
    Convolution {
        window: Window,
        dnums: ConvDimensionNumbers,
        feature_group_count: usize,
        batch_group_count: usize,
        precision: Vec<Precision>,
    },
    Fft {
        fft_type: FftType,
        fft_length: Vec<usize>,
    },
    Cholesky {
        lower: bool,
    },
    TriangularSolve {
        options: TriangularSolveOptions,
    },

    // ---- reductions, windows, sorting ----
    Reduce {
        dimensions: Vec<usize>,
        to_apply: CompId,
    },
    ReduceWindow {
        window: Window,
        to_apply: CompId,
    },
    SelectAndScatter {
        window: Window,
        select: CompId,
        scatter: CompId,
    },
    Sort {
        dimension: usize,
        is_stable: bool,
        comparator: CompId,
    },
    TopK {
        k: usize,
        largest: bool,
    },
    /// `scan(inputs..., inits...)`: `to_apply(slices..., carries...)` returns
    /// `(outputs..., carries...)` for each position along `dimension` (from
    /// the last with `is_reverse`); the result is the outputs stacked along
    /// `dimension`, then the final carries. The last `num_carries` operands
    /// are the initial carries.
    Scan {
        dimension: usize,
        num_carries: usize,
        is_reverse: bool,
        /// `is_associative`, if written (XLA's tri-state: unknown when absent).
        is_associative: Option<bool>,
        to_apply: CompId,
    },
    BatchNormTraining {
        epsilon: f32,
        feature_index: usize,
    },
    BatchNormInference {
        epsilon: f32,
        feature_index: usize,
    },
    BatchNormGrad {
        epsilon: f32,
        feature_index: usize,
    },

    // ---- control flow and structure ----
    Tuple,
    GetTupleElement {
        index: usize,
    },
    While {
        condition: CompId,
        body: CompId,
    },
    /// With a `pred` selector, `branches` is `[true_computation, false_computation]`;
    /// with an `s32` selector, branch `i` runs for index `i` (out of range: the last).
    Conditional {
        branches: Vec<CompId>,
    },
    Call {
        to_apply: CompId,
        /// `is_composite=true`: the callee is the decomposition of a named
        /// composite op (`frontend_attributes` carry `composite.name`,
        /// `composite.attributes` and `composite.version`, as XLA prints
        /// them). Running the callee is its meaning.
        is_composite: bool,
    },
    Fusion {
        kind: FusionKind,
        calls: CompId,
    },
    CustomCall(Box<CustomCallAttrs>),
    OptimizationBarrier,
    AddDependency,

    // ---- randomness ----
    Rng {
        distribution: RandomDistribution,
    },
    RngBitGenerator {
        algorithm: RandomAlgorithm,
    },
    RngGetAndUpdateState {
        delta: i64,
    },

    // ---- collectives ----
    AllReduce {
        attrs: CollectiveAttrs,
        to_apply: CompId,
    },
    AllReduceStart {
        attrs: CollectiveAttrs,
        to_apply: CompId,
    },
    AllReduceDone,
    AllGather {
        attrs: CollectiveAttrs,
        dimension: usize,
    },
    AllGatherStart {
        attrs: CollectiveAttrs,
        dimension: usize,
    },
    AllGatherDone,
    ReduceScatter {
        attrs: CollectiveAttrs,
        dimension: usize,
        to_apply: CompId,
    },
    AllToAll {
        attrs: CollectiveAttrs,
        split_dimension: Option<usize>,
    },
    /// Several array operands (one each, or a combined permute: a tuple of
    /// results), or XLA's in-place form: four operands (input, output, input
    /// and output start indices) and `slice_sizes` (one list per pair). As
    /// in XLA's parser, the `slice_sizes` attribute is what makes a permute
    /// in-place; four operands without it are a combined permute.
    CollectivePermute {
        attrs: CollectiveAttrs,
        source_target_pairs: Vec<(usize, usize)>,
        slice_sizes: Option<Vec<Vec<usize>>>,
    },
    CollectivePermuteStart {
        attrs: CollectiveAttrs,
        source_target_pairs: Vec<(usize, usize)>,
        slice_sizes: Option<Vec<Vec<usize>>>,
    },
    CollectivePermuteDone,
    CollectiveBroadcast {
        attrs: CollectiveAttrs,
    },

    // ---- host communication and asynchrony (parsed and printed; no platform runs them yet) ----
    Infeed {
        config: String,
    },
    Outfeed {
        config: String,
        outfeed_shape: Option<Shape>,
    },
    Send {
        channel_id: Option<i64>,
        is_host_transfer: bool,
    },
    SendDone {
        channel_id: Option<i64>,
        is_host_transfer: bool,
    },
    Recv {
        channel_id: Option<i64>,
        is_host_transfer: bool,
    },
    RecvDone {
        channel_id: Option<i64>,
        is_host_transfer: bool,
    },
    AsyncStart {
        calls: CompId,
        execution_thread: Option<String>,
    },
    AsyncUpdate,
    AsyncDone,
    CopyStart {
        cross_program_prefetch_index: Option<i64>,
    },
    CopyDone,
}

/// Attributes of a `custom-call`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomCallAttrs {
    /// `custom_call_target`: the symbol or registered name to call.
    pub target: String,
    pub api_version: CustomCallApiVersion,
    /// Subcomputations handed to the target (e.g. `TopK`'s comparator).
    pub called_computations: Vec<CompId>,
    pub has_side_effect: bool,
    /// Layouts the target requires of its operands, one per operand.
    pub operand_layout_constraints: Option<Vec<Shape>>,
    pub output_to_operand_aliasing: Vec<OutputOperandAlias>,
    pub schedule: Option<CustomCallSchedule>,
}

impl CustomCallAttrs {
    /// A call of `target` with the convention `api_version` and nothing else:
    /// no subcomputations, side effects, layout constraints, aliasing or schedule.
    pub fn new(target: impl Into<String>, api_version: CustomCallApiVersion) -> Self {
        CustomCallAttrs {
            target: target.into(),
            api_version,
            called_computations: Vec::new(),
            has_side_effect: false,
            operand_layout_constraints: None,
            output_to_operand_aliasing: Vec::new(),
            schedule: None,
        }
    }
}

impl Op {
    /// The opcode of this operation.
    pub fn opcode(&self) -> Opcode {
        use Op::*;
        match self {
            Parameter { .. } => Opcode::Parameter,
            Constant { .. } => Opcode::Constant,
            Iota { .. } => Opcode::Iota,
            ReplicaId => Opcode::ReplicaId,
            PartitionId => Opcode::PartitionId,
            AfterAll => Opcode::AfterAll,
            Unary(u) => u.opcode(),
            Binary(b) => b.opcode(),
            Compare { .. } => Opcode::Compare,
            Select => Opcode::Select,
            Clamp => Opcode::Clamp,
            Convert => Opcode::Convert,
            BitcastConvert => Opcode::BitcastConvert,
            StochasticConvert => Opcode::StochasticConvert,
            ReducePrecision { .. } => Opcode::ReducePrecision,
            Map { .. } => Opcode::Map,
            Broadcast { .. } => Opcode::Broadcast,
            Reshape => Opcode::Reshape,
            DynamicReshape => Opcode::DynamicReshape,
            Transpose { .. } => Opcode::Transpose,
            Slice { .. } => Opcode::Slice,
            DynamicSlice { .. } => Opcode::DynamicSlice,
            DynamicUpdateSlice => Opcode::DynamicUpdateSlice,
            Concatenate { .. } => Opcode::Concatenate,
            Pad { .. } => Opcode::Pad,
            Reverse { .. } => Opcode::Reverse,
            Copy => Opcode::Copy,
            Bitcast => Opcode::Bitcast,
            GetDimensionSize { .. } => Opcode::GetDimensionSize,
            SetDimensionSize { .. } => Opcode::SetDimensionSize,
            Gather { .. } => Opcode::Gather,
            Scatter { .. } => Opcode::Scatter,
            Dot { .. } => Opcode::Dot,
            Convolution { .. } => Opcode::Convolution,
            Fft { .. } => Opcode::Fft,
            Cholesky { .. } => Opcode::Cholesky,
            TriangularSolve { .. } => Opcode::TriangularSolve,
            Reduce { .. } => Opcode::Reduce,
            ReduceWindow { .. } => Opcode::ReduceWindow,
            SelectAndScatter { .. } => Opcode::SelectAndScatter,
            Sort { .. } => Opcode::Sort,
            TopK { .. } => Opcode::TopK,
            Scan { .. } => Opcode::Scan,
            BatchNormTraining { .. } => Opcode::BatchNormTraining,
            BatchNormInference { .. } => Opcode::BatchNormInference,
            BatchNormGrad { .. } => Opcode::BatchNormGrad,
            Tuple => Opcode::Tuple,
            GetTupleElement { .. } => Opcode::GetTupleElement,
            While { .. } => Opcode::While,
            Conditional { .. } => Opcode::Conditional,
            Call { .. } => Opcode::Call,
            Fusion { .. } => Opcode::Fusion,
            CustomCall(_) => Opcode::CustomCall,
            OptimizationBarrier => Opcode::OptimizationBarrier,
            AddDependency => Opcode::AddDependency,
            Rng { .. } => Opcode::Rng,
            RngBitGenerator { .. } => Opcode::RngBitGenerator,
            RngGetAndUpdateState { .. } => Opcode::RngGetAndUpdateState,
            AllReduce { .. } => Opcode::AllReduce,
            AllReduceStart { .. } => Opcode::AllReduceStart,
            AllReduceDone => Opcode::AllReduceDone,
            AllGather { .. } => Opcode::AllGather,
            AllGatherStart { .. } => Opcode::AllGatherStart,
            AllGatherDone => Opcode::AllGatherDone,
            ReduceScatter { .. } => Opcode::ReduceScatter,
            AllToAll { .. } => Opcode::AllToAll,
            CollectivePermute { .. } => Opcode::CollectivePermute,
            CollectivePermuteStart { .. } => Opcode::CollectivePermuteStart,
            CollectivePermuteDone => Opcode::CollectivePermuteDone,
            CollectiveBroadcast { .. } => Opcode::CollectiveBroadcast,
            Infeed { .. } => Opcode::Infeed,
            Outfeed { .. } => Opcode::Outfeed,
            Send { .. } => Opcode::Send,
            SendDone { .. } => Opcode::SendDone,
            Recv { .. } => Opcode::Recv,
            RecvDone { .. } => Opcode::RecvDone,
            AsyncStart { .. } => Opcode::AsyncStart,
            AsyncUpdate => Opcode::AsyncUpdate,
            AsyncDone => Opcode::AsyncDone,
            CopyStart { .. } => Opcode::CopyStart,
            CopyDone => Opcode::CopyDone,
        }
    }

    /// The subcomputations this operation calls, in the order the text names them.
    pub fn called_computations(&self) -> Vec<CompId> {
        self.called_refs()
    }

    fn called_refs(&self) -> Vec<CompId> {
        use Op::*;
        match self {
            Map { to_apply, .. }
            | Scatter { to_apply, .. }
            | Reduce { to_apply, .. }
            | ReduceWindow { to_apply, .. }
            | Scan { to_apply, .. }
            | Call { to_apply, .. }
            | AllReduce { to_apply, .. }
            | AllReduceStart { to_apply, .. }
            | ReduceScatter { to_apply, .. } => vec![*to_apply],
            SelectAndScatter {
                select, scatter, ..
            } => vec![*select, *scatter],
            Sort { comparator, .. } => vec![*comparator],
            While { condition, body } => vec![*condition, *body],
            Conditional { branches } => branches.clone(),
            Fusion { calls, .. } | AsyncStart { calls, .. } => vec![*calls],
            CustomCall(attrs) => attrs.called_computations.clone(),
            _ => Vec::new(),
        }
    }

    /// Rewrites every called computation id in place (used when computations are
    /// renumbered: parsing, dead-computation removal, cloning between modules).
    pub fn map_called(&mut self, mut f: impl FnMut(CompId) -> CompId) {
        use Op::*;
        match self {
            Map { to_apply, .. }
            | Scatter { to_apply, .. }
            | Reduce { to_apply, .. }
            | ReduceWindow { to_apply, .. }
            | Scan { to_apply, .. }
            | Call { to_apply, .. }
            | AllReduce { to_apply, .. }
            | AllReduceStart { to_apply, .. }
            | ReduceScatter { to_apply, .. } => *to_apply = f(*to_apply),
            SelectAndScatter {
                select, scatter, ..
            } => {
                *select = f(*select);
                *scatter = f(*scatter);
            }
            Sort { comparator, .. } => *comparator = f(*comparator),
            While { condition, body } => {
                *condition = f(*condition);
                *body = f(*body);
            }
            Conditional { branches } => branches.iter_mut().for_each(|b| *b = f(*b)),
            Fusion { calls, .. } | AsyncStart { calls, .. } => *calls = f(*calls),
            CustomCall(attrs) => attrs
                .called_computations
                .iter_mut()
                .for_each(|c| *c = f(*c)),
            _ => {}
        }
    }

    /// Whether the op is elementwise over same-shaped operands (the ops a loop
    /// fusion can merge without index arithmetic).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Op::Unary(_)
                | Op::Binary(_)
                | Op::Compare { .. }
                | Op::Select
                | Op::Clamp
                | Op::Convert
                | Op::ReducePrecision { .. }
                | Op::Copy
        )
    }

    /// Whether running the op has effects beyond its result (it must not be removed
    /// or merged even when nothing uses it).
    pub fn has_side_effect(&self) -> bool {
        match self {
            Op::CustomCall(a) => a.has_side_effect,
            Op::Rng { .. }
            | Op::RngGetAndUpdateState { .. }
            | Op::Infeed { .. }
            | Op::Outfeed { .. }
            | Op::Send { .. }
            | Op::SendDone { .. }
            | Op::Recv { .. }
            | Op::RecvDone { .. } => true,
            _ => false,
        }
    }
}
