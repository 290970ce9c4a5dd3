//! Opcodes: the flat list of HLO operation names and their text spellings.
//!
//! [`Opcode`] is the field-less twin of [`crate::Op`]: `Op` carries each
//! operation's attributes, `Opcode` is what code dispatches on when the attributes
//! don't matter (printing, counting, registries). The elementwise families live in
//! [`UnaryOp`] and [`BinaryOp`] so a backend can handle them with one match arm each.

use std::fmt;

macro_rules! spelled_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($variant,)* }

        impl $name {
            /// Every value, in declaration order.
            // A crate-private enum may list its values only in tests.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
            /// The HLO text spelling.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
            /// Parses the HLO text spelling.
            pub fn from_name(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use spelled_enum;

spelled_enum! {
    /// Elementwise operations of one operand.
    pub enum UnaryOp {
        Abs => "abs",
        Cbrt => "cbrt",
        Ceil => "ceil",
        Clz => "count-leading-zeros",
        Cos => "cosine",
        Erf => "erf",
        Exp => "exponential",
        Expm1 => "exponential-minus-one",
        Floor => "floor",
        Imag => "imag",
        IsFinite => "is-finite",
        Log => "log",
        Log1p => "log-plus-one",
        Logistic => "logistic",
        Negate => "negate",
        Not => "not",
        PopCount => "popcnt",
        Real => "real",
        RoundNearestAfz => "round-nearest-afz",
        RoundNearestEven => "round-nearest-even",
        Rsqrt => "rsqrt",
        Sign => "sign",
        Sin => "sine",
        Sqrt => "sqrt",
        Tan => "tan",
        Tanh => "tanh",
    }
}

spelled_enum! {
    /// Elementwise operations of two operands of the same shape.
    pub enum BinaryOp {
        Add => "add",
        And => "and",
        Atan2 => "atan2",
        Complex => "complex",
        Divide => "divide",
        Maximum => "maximum",
        Minimum => "minimum",
        Multiply => "multiply",
        Or => "or",
        Power => "power",
        Remainder => "remainder",
        ShiftLeft => "shift-left",
        ShiftRightArithmetic => "shift-right-arithmetic",
        ShiftRightLogical => "shift-right-logical",
        Subtract => "subtract",
        Xor => "xor",
    }
}

spelled_enum! {
    /// Every HLO opcode this workspace knows.
    pub enum Opcode {
        Abs => "abs",
        Add => "add",
        AddDependency => "add-dependency",
        AfterAll => "after-all",
        AllGather => "all-gather",
        AllGatherDone => "all-gather-done",
        AllGatherStart => "all-gather-start",
        AllReduce => "all-reduce",
        AllReduceDone => "all-reduce-done",
        AllReduceStart => "all-reduce-start",
        AllToAll => "all-to-all",
        And => "and",
        AsyncDone => "async-done",
        AsyncStart => "async-start",
        AsyncUpdate => "async-update",
        Atan2 => "atan2",
        BatchNormGrad => "batch-norm-grad",
        BatchNormInference => "batch-norm-inference",
        BatchNormTraining => "batch-norm-training",
        Bitcast => "bitcast",
        BitcastConvert => "bitcast-convert",
        Broadcast => "broadcast",
        Call => "call",
        Cbrt => "cbrt",
        Ceil => "ceil",
        Cholesky => "cholesky",
        Clamp => "clamp",
        Clz => "count-leading-zeros",
        CollectiveBroadcast => "collective-broadcast",
        CollectivePermute => "collective-permute",
        CollectivePermuteDone => "collective-permute-done",
        CollectivePermuteStart => "collective-permute-start",
        Compare => "compare",
        Complex => "complex",
        Concatenate => "concatenate",
        Conditional => "conditional",
        Constant => "constant",
        Convert => "convert",
        Convolution => "convolution",
        Copy => "copy",
        CopyDone => "copy-done",
        CopyStart => "copy-start",
        Cos => "cosine",
        CustomCall => "custom-call",
        Divide => "divide",
        Dot => "dot",
        DynamicReshape => "dynamic-reshape",
        DynamicSlice => "dynamic-slice",
        DynamicUpdateSlice => "dynamic-update-slice",
        Erf => "erf",
        Exp => "exponential",
        Expm1 => "exponential-minus-one",
        Fft => "fft",
        Floor => "floor",
        Fusion => "fusion",
        Gather => "gather",
        GetDimensionSize => "get-dimension-size",
        GetTupleElement => "get-tuple-element",
        Imag => "imag",
        Infeed => "infeed",
        Iota => "iota",
        IsFinite => "is-finite",
        Log => "log",
        Log1p => "log-plus-one",
        Logistic => "logistic",
        Map => "map",
        Maximum => "maximum",
        Minimum => "minimum",
        Multiply => "multiply",
        Negate => "negate",
        Not => "not",
        OptimizationBarrier => "opt-barrier",
        Or => "or",
        Outfeed => "outfeed",
        Pad => "pad",
        Parameter => "parameter",
        PartitionId => "partition-id",
        PopCount => "popcnt",
        Power => "power",
        Real => "real",
        Recv => "recv",
        RecvDone => "recv-done",
        Reduce => "reduce",
        ReducePrecision => "reduce-precision",
        ReduceScatter => "reduce-scatter",
        ReduceWindow => "reduce-window",
        Remainder => "remainder",
        ReplicaId => "replica-id",
        Reshape => "reshape",
        Reverse => "reverse",
        Rng => "rng",
        RngBitGenerator => "rng-bit-generator",
        RngGetAndUpdateState => "rng-get-and-update-state",
        RoundNearestAfz => "round-nearest-afz",
        RoundNearestEven => "round-nearest-even",
        Rsqrt => "rsqrt",
        Scan => "scan",
        Scatter => "scatter",
        Select => "select",
        SelectAndScatter => "select-and-scatter",
        Send => "send",
        SendDone => "send-done",
        SetDimensionSize => "set-dimension-size",
        ShiftLeft => "shift-left",
        ShiftRightArithmetic => "shift-right-arithmetic",
        ShiftRightLogical => "shift-right-logical",
        Sign => "sign",
        Sin => "sine",
        Slice => "slice",
        Sort => "sort",
        Sqrt => "sqrt",
        StochasticConvert => "stochastic-convert",
        Subtract => "subtract",
        Tan => "tan",
        Tanh => "tanh",
        TopK => "topk",
        Transpose => "transpose",
        TriangularSolve => "triangular-solve",
        Tuple => "tuple",
        While => "while",
        Xor => "xor",
    }
}

impl UnaryOp {
    pub fn opcode(self) -> Opcode {
        Opcode::from_name(self.name()).expect("every unary op is an opcode")
    }
}

impl BinaryOp {
    pub fn opcode(self) -> Opcode {
        Opcode::from_name(self.name()).expect("every binary op is an opcode")
    }
    /// Whether `a op b == b op a` for every value (used by CSE and canonicalisation).
    pub fn is_commutative(self) -> bool {
        use BinaryOp::*;
        matches!(self, Add | And | Maximum | Minimum | Multiply | Or | Xor)
    }
}

impl Opcode {
    /// The unary elementwise op with this opcode, if it is one.
    pub fn as_unary(self) -> Option<UnaryOp> {
        UnaryOp::from_name(self.name())
    }
    /// The binary elementwise op with this opcode, if it is one.
    pub fn as_binary(self) -> Option<BinaryOp> {
        BinaryOp::from_name(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &op in Opcode::ALL {
            assert_eq!(Opcode::from_name(op.name()), Some(op));
            assert!(seen.insert(op.name()), "duplicate spelling {}", op.name());
        }
        for &u in UnaryOp::ALL {
            assert_eq!(u.opcode().as_unary(), Some(u));
        }
        for &b in BinaryOp::ALL {
            assert_eq!(b.opcode().as_binary(), Some(b));
        }
    }
}
