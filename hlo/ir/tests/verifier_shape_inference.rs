//! `infer_shape` on every opcode: one valid case per opcode at least (the test
//! checks the list covers `Opcode::ALL`), with the result XLA's operation
//! semantics give, and the rules that reject malformed uses.

use hlo_ir::shape_inference::infer_shape;
use hlo_ir::*;
use hlo_ir::{Literal, ProgramShape, Result, Shape};
use std::collections::HashSet;

/// The shape `f32[usize::MAX/2, 4]`: the parser refuses shapes whose byte size
/// overflows, but shapes built in code can still be that large, and inference
/// must answer them with errors.
const HUGE: &str = "HUGE";

fn s(text: &str) -> Shape {
    if text == HUGE {
        return Shape::array(hlo_ir::ElementType::F32, vec![usize::MAX / 2, 4]);
    }
    Shape::parse(text).unwrap_or_else(|e| panic!("bad test shape {text}: {e}"))
}

fn program(params: &[&str], result: &str) -> ProgramShape {
    ProgramShape {
        parameters: params.iter().map(|p| s(p)).collect(),
        result: s(result),
    }
}

/// The called computations the cases refer to, by index.
fn computations() -> Vec<ProgramShape> {
    vec![
        program(&["f32[]", "f32[]"], "f32[]"),            // 0: add_f32
        program(&["f32[]", "f32[]"], "pred[]"),           // 1: compare f32
        program(&["(s32[], f32[4])"], "pred[]"),          // 2: loop condition
        program(&["(s32[], f32[4])"], "(s32[], f32[4])"), // 3: loop body
        program(&["f32[3]"], "f32[3]"),                   // 4: f32[3] -> f32[3]
        program(&["f32[]", "f32[]", "s32[]", "s32[]"], "pred[]"), // 5: key/index comparator
        program(&["f32[]", "s32[]", "f32[]", "s32[]"], "(f32[], s32[])"), // 6: argmax reducer
        program(&["f32[4]"], "f32[4]"),                   // 7: async-wrapped op
        program(&["f32[]"], "s32[]"),                     // 8: scalar f32 -> s32
        program(&["f32[3]", "f32[]"], "(f32[3], f32[])"), // 9: scan step, one carry
    ]
}

fn c(i: u32) -> CompId {
    CompId(i)
}

struct Cases {
    covered: HashSet<Opcode>,
    table: Vec<ProgramShape>,
}

impl Cases {
    fn new() -> Self {
        Cases {
            covered: HashSet::new(),
            table: computations(),
        }
    }

    fn infer(&self, op: &Op, operands: &[&str], declared: &str) -> Result<Shape> {
        let shapes: Vec<Shape> = operands.iter().map(|t| s(t)).collect();
        let refs: Vec<&Shape> = shapes.iter().collect();
        let table = &self.table;
        let lookup = |id: CompId| -> Result<ProgramShape> {
            table
                .get(id.index())
                .cloned()
                .ok_or_else(|| hlo_ir::Error::invalid_argument("no such computation"))
        };
        infer_shape(op, &refs, &s(declared), &lookup)
    }

    /// `op` on `operands` with `declared` infers exactly `expected`.
    fn ok(&mut self, op: Op, operands: &[&str], declared: &str, expected: &str) {
        self.covered.insert(op.opcode());
        let got = self
            .infer(&op, operands, declared)
            .unwrap_or_else(|e| panic!("{} on {operands:?}: {e}", op.opcode()));
        assert_eq!(got, s(expected), "{} on {operands:?}", op.opcode());
    }

    /// `op` is rejected with a message containing every fragment.
    fn bad(&self, op: Op, operands: &[&str], declared: &str, fragments: &[&str]) {
        let e = self
            .infer(&op, operands, declared)
            .expect_err(&format!("{} on {operands:?} must fail", op.opcode()));
        for f in fragments {
            assert!(
                e.message().contains(f),
                "{}: message {:?} lacks {f:?}",
                op.opcode(),
                e.message()
            );
        }
    }
}

fn window(dims: &[(usize, usize, i64, i64, usize, usize)]) -> Window {
    Window {
        dims: dims
            .iter()
            .map(|&(size, stride, lo, hi, base, win)| WindowDim {
                size,
                stride,
                padding_low: lo,
                padding_high: hi,
                base_dilation: base,
                window_dilation: win,
                window_reversal: false,
            })
            .collect(),
    }
}

fn nhwc() -> ConvDimensionNumbers {
    ConvDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 3,
        input_spatial_dimensions: vec![1, 2],
        kernel_input_feature_dimension: 2,
        kernel_output_feature_dimension: 3,
        kernel_spatial_dimensions: vec![0, 1],
        output_batch_dimension: 0,
        output_feature_dimension: 3,
        output_spatial_dimensions: vec![1, 2],
    }
}

fn conv(window: Window, fgc: usize, bgc: usize) -> Op {
    Op::Convolution {
        window,
        dnums: nhwc(),
        feature_group_count: fgc,
        batch_group_count: bgc,
        precision: vec![],
    }
}

fn groups(g: &[&[usize]]) -> CollectiveAttrs {
    CollectiveAttrs {
        replica_groups: ReplicaGroups {
            groups: g.iter().map(|x| x.to_vec()).collect(),
        },
        ..Default::default()
    }
}

/// Output size of a window sliding over `n` elements, written from the definition
/// (dilate the base, pad, dilate the window, count strided fits).
fn window_out(n: i64, size: i64, stride: i64, lo: i64, hi: i64, base: i64, win: i64) -> i64 {
    let dilated = if n == 0 { 0 } else { (n - 1) * base + 1 };
    let padded = lo + dilated + hi;
    let span = (size - 1) * win + 1;
    if padded < span {
        0
    } else {
        (padded - span) / stride + 1
    }
}

#[test]
fn every_opcode_has_a_valid_case() {
    let mut t = Cases::new();

    // ---- leaves
    t.ok(
        Op::Parameter { number: 0 },
        &[],
        "(f32[2]{0}, s32[])",
        "(f32[2], s32[])",
    );
    t.ok(
        Op::Constant {
            literal: Literal::vector(&[1f32, 2.0, 3.0]),
        },
        &[],
        "f32[3]",
        "f32[3]",
    );
    t.ok(Op::Iota { dimension: 1 }, &[], "s32[4,5]", "s32[4,5]");
    t.ok(Op::ReplicaId, &[], "u32[]", "u32[]");
    t.ok(Op::PartitionId, &[], "u32[]", "u32[]");
    t.ok(Op::AfterAll, &["token[]", "token[]"], "token[]", "token[]");

    // ---- elementwise
    for &u in UnaryOp::ALL {
        let (input, output) = match u {
            UnaryOp::Clz | UnaryOp::PopCount | UnaryOp::Not => ("s32[2,3]", "s32[2,3]"),
            UnaryOp::IsFinite => ("f32[2,3]", "pred[2,3]"),
            _ => ("f32[2,3]", "f32[2,3]"),
        };
        t.ok(Op::Unary(u), &[input], output, output);
    }
    for u in [UnaryOp::Abs, UnaryOp::Real, UnaryOp::Imag] {
        t.ok(Op::Unary(u), &["c64[4]"], "f32[4]", "f32[4]");
        t.ok(Op::Unary(u), &["c128[4]"], "f64[4]", "f64[4]");
    }
    t.ok(Op::Unary(UnaryOp::Not), &["pred[4]"], "pred[4]", "pred[4]");
    t.ok(Op::Unary(UnaryOp::Sign), &["s8[4]"], "s8[4]", "s8[4]");
    for &b in BinaryOp::ALL {
        let (input, output) = match b {
            BinaryOp::ShiftLeft
            | BinaryOp::ShiftRightArithmetic
            | BinaryOp::ShiftRightLogical
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor => ("u32[5]", "u32[5]"),
            BinaryOp::Complex => ("f32[5]", "c64[5]"),
            _ => ("f32[5]", "f32[5]"),
        };
        t.ok(Op::Binary(b), &[input, input], output, output);
    }
    t.ok(
        Op::Binary(BinaryOp::Complex),
        &["f64[]", "f64[]"],
        "c128[]",
        "c128[]",
    );
    t.ok(
        Op::Binary(BinaryOp::And),
        &["pred[2]", "pred[2]"],
        "pred[2]",
        "pred[2]",
    );
    let cmp = Op::Compare {
        direction: ComparisonDirection::Lt,
        compare_type: None,
    };
    t.ok(
        cmp.clone(),
        &["f32[2,3]", "f32[2,3]"],
        "pred[2,3]",
        "pred[2,3]",
    );
    t.ok(
        Op::Compare {
            direction: ComparisonDirection::Eq,
            compare_type: Some(ComparisonType::Unsigned),
        },
        &["u8[4]", "u8[4]"],
        "pred[4]",
        "pred[4]",
    );
    t.ok(
        Op::Select,
        &["pred[4]", "f32[4]", "f32[4]"],
        "f32[4]",
        "f32[4]",
    );
    t.ok(
        Op::Select,
        &["pred[]", "s32[4]", "s32[4]"],
        "s32[4]",
        "s32[4]",
    );
    t.ok(Op::Clamp, &["f32[]", "f32[5]", "f32[]"], "f32[5]", "f32[5]");
    t.ok(
        Op::Clamp,
        &["s32[5]", "s32[5]", "s32[5]"],
        "s32[5]",
        "s32[5]",
    );
    t.ok(Op::Convert, &["s32[3]"], "f16[3]", "f16[3]");
    // Narrowing adds a minor dimension, widening removes one.
    t.ok(Op::BitcastConvert, &["f64[2]"], "s32[2,2]", "s32[2,2]");
    t.ok(Op::BitcastConvert, &["u8[3,4]"], "f32[3]", "f32[3]");
    t.ok(Op::BitcastConvert, &["f32[3]"], "s32[3]", "s32[3]");
    t.ok(
        Op::StochasticConvert,
        &["f32[4]", "u32[4]"],
        "bf16[4]",
        "bf16[4]",
    );
    t.ok(
        Op::ReducePrecision {
            exponent_bits: 5,
            mantissa_bits: 10,
        },
        &["f32[4]"],
        "f32[4]",
        "f32[4]",
    );
    t.ok(
        Op::Map {
            dimensions: vec![0],
            to_apply: c(0),
        },
        &["f32[3]", "f32[3]"],
        "f32[3]",
        "f32[3]",
    );
    t.ok(
        Op::Map {
            dimensions: vec![0, 1],
            to_apply: c(8),
        },
        &["f32[2,3]"],
        "s32[2,3]",
        "s32[2,3]",
    );

    // ---- data movement
    t.ok(
        Op::Broadcast {
            dimensions: vec![1],
        },
        &["f32[3]"],
        "f32[2,3]",
        "f32[2,3]",
    );
    t.ok(
        Op::Broadcast { dimensions: vec![] },
        &["s32[]"],
        "s32[4,4]",
        "s32[4,4]",
    );
    t.ok(Op::Reshape, &["f32[2,3]"], "f32[3,1,2]", "f32[3,1,2]");
    t.ok(
        Op::DynamicReshape,
        &["f32[6]", "s32[]", "s32[]"],
        "f32[<=2,3]",
        "f32[<=2,3]",
    );
    t.ok(
        Op::Transpose {
            dimensions: vec![2, 0, 1],
        },
        &["f32[2,3,4]"],
        "f32[4,2,3]",
        "f32[4,2,3]",
    );
    let slice = |start, limit, stride| SliceDim {
        start,
        limit,
        stride,
    };
    t.ok(
        Op::Slice {
            slice: vec![slice(1, 8, 3)],
        },
        &["f32[10]"],
        "f32[3]",
        "f32[3]",
    );
    t.ok(
        Op::Slice {
            slice: vec![slice(0, 0, 1), slice(2, 4, 1)],
        },
        &["f32[3,4]"],
        "f32[0,2]",
        "f32[0,2]",
    );
    t.ok(
        Op::DynamicSlice { sizes: vec![2, 3] },
        &["f32[8,8]", "s32[]", "s32[]"],
        "f32[2,3]",
        "f32[2,3]",
    );
    t.ok(
        Op::DynamicUpdateSlice,
        &["f32[8,8]", "f32[2,3]", "u32[]", "u32[]"],
        "f32[8,8]",
        "f32[8,8]",
    );
    t.ok(
        Op::Concatenate { dimension: 0 },
        &["f32[2,3]", "f32[4,3]", "f32[1,3]"],
        "f32[7,3]",
        "f32[7,3]",
    );
    // 1 + 5 + (5-1)*1 - 2 = 8.
    t.ok(
        Op::Pad {
            config: vec![PadDim {
                low: 1,
                high: -2,
                interior: 1,
            }],
        },
        &["f32[5]", "f32[]"],
        "f32[8]",
        "f32[8]",
    );
    t.ok(
        Op::Reverse {
            dimensions: vec![0, 1],
        },
        &["f32[2,3]"],
        "f32[2,3]",
        "f32[2,3]",
    );
    t.ok(
        Op::Copy,
        &["(f32[2], s32[])"],
        "(f32[2], s32[])",
        "(f32[2], s32[])",
    );
    t.ok(Op::Bitcast, &["f32[]"], "s32[]", "s32[]");
    t.ok(Op::Bitcast, &["f32[4,8]{1,0}"], "f32[32]{0}", "f32[32]");
    t.ok(Op::Bitcast, &["f32[2,3]"], "u8[24]", "u8[24]");
    t.ok(
        Op::GetDimensionSize { dimension: 1 },
        &["f32[3,4]"],
        "s32[]",
        "s32[]",
    );
    t.ok(
        Op::SetDimensionSize { dimension: 1 },
        &["f32[3,4]", "s32[]"],
        "f32[3,<=4]",
        "f32[3,<=4]",
    );
    // Embedding lookup: 5 ids into a [50, 8] table.
    t.ok(
        Op::Gather {
            dnums: GatherDimensionNumbers {
                offset_dims: vec![1],
                collapsed_slice_dims: vec![0],
                start_index_map: vec![0],
                index_vector_dim: 1,
                ..Default::default()
            },
            slice_sizes: vec![1, 8],
            indices_are_sorted: false,
        },
        &["f32[50,8]", "s32[5,1]"],
        "f32[5,8]",
        "f32[5,8]",
    );
    // Batched gather: per batch element b, 3 rows of operand[b].
    t.ok(
        Op::Gather {
            dnums: GatherDimensionNumbers {
                offset_dims: vec![2],
                collapsed_slice_dims: vec![1],
                start_index_map: vec![1],
                operand_batching_dims: vec![0],
                start_indices_batching_dims: vec![0],
                index_vector_dim: 2,
            },
            slice_sizes: vec![1, 1, 4],
            indices_are_sorted: false,
        },
        &["f32[2,10,4]", "s32[2,3,1]"],
        "f32[2,3,4]",
        "f32[2,3,4]",
    );
    // Implicit index vector dimension (== rank of the indices).
    t.ok(
        Op::Gather {
            dnums: GatherDimensionNumbers {
                offset_dims: vec![2],
                collapsed_slice_dims: vec![0],
                start_index_map: vec![0],
                index_vector_dim: 2,
                ..Default::default()
            },
            slice_sizes: vec![1, 8],
            indices_are_sorted: false,
        },
        &["f32[50,8]", "s32[4,6]"],
        "f32[4,6,8]",
        "f32[4,6,8]",
    );
    let sdn = ScatterDimensionNumbers {
        update_window_dims: vec![1],
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
        ..Default::default()
    };
    t.ok(
        Op::Scatter {
            dnums: sdn.clone(),
            indices_are_sorted: false,
            unique_indices: false,
            to_apply: c(0),
        },
        &["f32[10,4]", "s32[2,1]", "f32[2,4]"],
        "f32[10,4]",
        "f32[10,4]",
    );
    t.ok(
        Op::Scatter {
            dnums: sdn,
            indices_are_sorted: false,
            unique_indices: false,
            to_apply: c(6),
        },
        &["f32[10,4]", "s32[10,4]", "s32[2,1]", "f32[2,4]", "s32[2,4]"],
        "(f32[10,4], s32[10,4])",
        "(f32[10,4], s32[10,4])",
    );

    // ---- linear algebra
    let dot = |lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]| Op::Dot {
        dnums: DotDimensionNumbers {
            lhs_batch_dims: lb.to_vec(),
            rhs_batch_dims: rb.to_vec(),
            lhs_contracting_dims: lc.to_vec(),
            rhs_contracting_dims: rc.to_vec(),
        },
        precision: vec![],
        algorithm: None,
    };
    t.ok(
        dot(&[], &[], &[1], &[0]),
        &["f32[4,8]", "f32[8,2]"],
        "f32[4,2]",
        "f32[4,2]",
    );
    t.ok(
        dot(&[0], &[0], &[2], &[1]),
        &["f32[2,3,4]", "f32[2,4,5]"],
        "f32[2,3,5]",
        "f32[2,3,5]",
    );
    // Batch and contracting dimensions in any position: batch, lhs free, rhs free.
    t.ok(
        dot(&[1], &[2], &[0], &[1]),
        &["f32[4,2,3]", "f32[5,4,2]"],
        "f32[2,3,5]",
        "f32[2,3,5]",
    );
    t.ok(
        dot(&[], &[], &[], &[]),
        &["f32[3]", "f32[4]"],
        "f32[3,4]",
        "f32[3,4]",
    );
    // Mixed precision: the declared result type wins where XLA allows it.
    t.ok(
        dot(&[], &[], &[1], &[0]),
        &["bf16[4,8]", "bf16[8,2]"],
        "f32[4,2]",
        "f32[4,2]",
    );
    t.ok(
        dot(&[], &[], &[1], &[0]),
        &["s8[4,8]", "s8[8,2]"],
        "s32[4,2]",
        "s32[4,2]",
    );
    t.ok(
        dot(&[], &[], &[1], &[0]),
        &["f32[4,8]", "bf16[8,2]"],
        "f32[4,2]",
        "f32[4,2]",
    );

    let o = window_out(5, 3, 2, 1, 1, 1, 1) as usize;
    t.ok(
        conv(window(&[(3, 2, 1, 1, 1, 1), (3, 2, 1, 1, 1, 1)]), 1, 1),
        &["f32[1,5,5,2]", "f32[3,3,2,4]"],
        "f32[1,3,3,4]",
        &format!("f32[1,{o},{o},4]"),
    );
    // lhs dilation 2 (transposed convolution) and rhs dilation 2 (atrous).
    let o1 = window_out(5, 3, 1, 0, 0, 2, 1) as usize;
    let o2 = window_out(9, 3, 1, 0, 0, 1, 2) as usize;
    t.ok(
        conv(window(&[(3, 1, 0, 0, 2, 1), (3, 1, 0, 0, 1, 2)]), 1, 1),
        &["f32[1,5,9,1]", "f32[3,3,1,1]"],
        "f32[1,7,5,1]",
        &format!("f32[1,{o1},{o2},1]"),
    );
    // Depthwise: 6 input features in 3 groups of 2.
    t.ok(
        conv(window(&[(3, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]), 3, 1),
        &["f32[1,8,8,6]", "f32[3,3,2,6]"],
        "f32[1,6,6,6]",
        "f32[1,6,6,6]",
    );
    // Batch groups (weight gradients): batch 4 in 2 groups.
    t.ok(
        conv(window(&[(3, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]), 1, 2),
        &["f32[4,5,5,2]", "f32[3,3,2,4]"],
        "f32[2,3,3,4]",
        "f32[2,3,3,4]",
    );
    // Other dimension orders: NCHW input, OIHW kernel, NCHW output.
    let nchw = ConvDimensionNumbers {
        input_batch_dimension: 0,
        input_feature_dimension: 1,
        input_spatial_dimensions: vec![2, 3],
        kernel_input_feature_dimension: 1,
        kernel_output_feature_dimension: 0,
        kernel_spatial_dimensions: vec![2, 3],
        output_batch_dimension: 0,
        output_feature_dimension: 1,
        output_spatial_dimensions: vec![2, 3],
    };
    t.ok(
        Op::Convolution {
            window: window(&[(2, 2, 0, 0, 1, 1), (3, 1, 1, 1, 1, 1)]),
            dnums: nchw,
            feature_group_count: 1,
            batch_group_count: 1,
            precision: vec![],
        },
        &["f32[2,3,8,8]", "f32[5,3,2,3]"],
        "f32[2,5,4,8]",
        "f32[2,5,4,8]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Fft,
            fft_length: vec![16],
        },
        &["c64[3,16]"],
        "c64[3,16]",
        "c64[3,16]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Ifft,
            fft_length: vec![4, 16],
        },
        &["c128[3,4,16]"],
        "c128[3,4,16]",
        "c128[3,4,16]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Rfft,
            fft_length: vec![16],
        },
        &["f32[3,16]"],
        "c64[3,9]",
        "c64[3,9]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Rfft,
            fft_length: vec![5],
        },
        &["f64[5]"],
        "c128[3]",
        "c128[3]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Irfft,
            fft_length: vec![16],
        },
        &["c64[3,9]"],
        "f32[3,16]",
        "f32[3,16]",
    );
    t.ok(
        Op::Fft {
            fft_type: FftType::Irfft,
            fft_length: vec![4, 15],
        },
        &["c64[4,8]"],
        "f32[4,15]",
        "f32[4,15]",
    );
    t.ok(
        Op::Cholesky { lower: true },
        &["f32[2,4,4]"],
        "f32[2,4,4]",
        "f32[2,4,4]",
    );
    let ts = |left_side| Op::TriangularSolve {
        options: TriangularSolveOptions {
            left_side,
            lower: true,
            unit_diagonal: false,
            transpose_a: TriangularTranspose::NoTranspose,
        },
    };
    t.ok(ts(true), &["f32[3,3]", "f32[3,5]"], "f32[3,5]", "f32[3,5]");
    t.ok(ts(false), &["f32[3,3]", "f32[5,3]"], "f32[5,3]", "f32[5,3]");

    // ---- reductions
    t.ok(
        Op::Reduce {
            dimensions: vec![0, 2],
            to_apply: c(0),
        },
        &["f32[2,3,4]", "f32[]"],
        "f32[3]",
        "f32[3]",
    );
    t.ok(
        Op::Reduce {
            dimensions: vec![1],
            to_apply: c(6),
        },
        &["f32[4,6]", "s32[4,6]", "f32[]", "s32[]"],
        "(f32[4], s32[4])",
        "(f32[4], s32[4])",
    );
    t.ok(
        Op::ReduceWindow {
            window: window(&[(2, 2, 0, 0, 1, 1), (2, 2, 0, 0, 1, 1)]),
            to_apply: c(0),
        },
        &["f32[4,6]", "f32[]"],
        "f32[2,3]",
        "f32[2,3]",
    );
    let o = window_out(6, 3, 1, 1, 1, 1, 1) as usize;
    t.ok(
        Op::ReduceWindow {
            window: window(&[(3, 1, 1, 1, 1, 1)]),
            to_apply: c(6),
        },
        &["f32[6]", "s32[6]", "f32[]", "s32[]"],
        "(f32[6], s32[6])",
        &format!("(f32[{o}], s32[{o}])"),
    );
    t.ok(
        Op::SelectAndScatter {
            window: window(&[(2, 2, 0, 0, 1, 1), (2, 2, 0, 0, 1, 1)]),
            select: c(1),
            scatter: c(0),
        },
        &["f32[4,6]", "f32[2,3]", "f32[]"],
        "f32[4,6]",
        "f32[4,6]",
    );
    t.ok(
        Op::Sort {
            dimension: 0,
            is_stable: true,
            comparator: c(1),
        },
        &["f32[7]"],
        "f32[7]",
        "f32[7]",
    );
    t.ok(
        Op::Sort {
            dimension: 1,
            is_stable: false,
            comparator: c(5),
        },
        &["f32[2,7]", "s32[2,7]"],
        "(f32[2,7], s32[2,7])",
        "(f32[2,7], s32[2,7])",
    );
    t.ok(
        Op::Scan {
            dimension: 1,
            num_carries: 1,
            is_reverse: false,
            is_associative: None,
            to_apply: c(9),
        },
        &["f32[3,5]", "f32[]"],
        "(f32[3,5], f32[])",
        "(f32[3,5], f32[])",
    );
    t.ok(
        Op::TopK {
            k: 3,
            largest: true,
        },
        &["f32[4,6]"],
        "(f32[4,3], s32[4,3])",
        "(f32[4,3], s32[4,3])",
    );
    t.ok(
        Op::BatchNormTraining {
            epsilon: 1e-3,
            feature_index: 1,
        },
        &["f32[2,4,5]", "f32[4]", "f32[4]"],
        "(f32[2,4,5], f32[4], f32[4])",
        "(f32[2,4,5], f32[4], f32[4])",
    );
    t.ok(
        Op::BatchNormInference {
            epsilon: 1e-3,
            feature_index: 2,
        },
        &["f32[2,4,5]", "f32[5]", "f32[5]", "f32[5]", "f32[5]"],
        "f32[2,4,5]",
        "f32[2,4,5]",
    );
    t.ok(
        Op::BatchNormGrad {
            epsilon: 1e-3,
            feature_index: 0,
        },
        &["f32[2,4]", "f32[2]", "f32[2]", "f32[2]", "f32[2,4]"],
        "(f32[2,4], f32[2], f32[2])",
        "(f32[2,4], f32[2], f32[2])",
    );

    // ---- structure and control flow
    t.ok(
        Op::Tuple,
        &["f32[2]{0}", "token[]"],
        "(f32[2], token[])",
        "(f32[2], token[])",
    );
    t.ok(
        Op::GetTupleElement { index: 1 },
        &["(f32[2], (s32[], pred[3]))"],
        "(s32[], pred[3])",
        "(s32[], pred[3])",
    );
    t.ok(
        Op::While {
            condition: c(2),
            body: c(3),
        },
        &["(s32[], f32[4])"],
        "(s32[], f32[4])",
        "(s32[], f32[4])",
    );
    t.ok(
        Op::Conditional {
            branches: vec![c(4), c(4)],
        },
        &["pred[]", "f32[3]", "f32[3]"],
        "f32[3]",
        "f32[3]",
    );
    t.ok(
        Op::Conditional {
            branches: vec![c(4), c(4), c(4)],
        },
        &["s32[]", "f32[3]", "f32[3]", "f32[3]"],
        "f32[3]",
        "f32[3]",
    );
    t.ok(
        Op::Call {
            to_apply: c(0),
            is_composite: false,
        },
        &["f32[]", "f32[]"],
        "f32[]",
        "f32[]",
    );
    t.ok(
        Op::Fusion {
            kind: FusionKind::Loop,
            calls: c(4),
        },
        &["f32[3]{0}"],
        "f32[3]{0}",
        "f32[3]",
    );
    let custom = CustomCallAttrs {
        target: "TopK".into(),
        api_version: CustomCallApiVersion::Original,
        called_computations: vec![c(1)],
        has_side_effect: false,
        operand_layout_constraints: Some(vec![s("f32[4,6]{1,0}")]),
        output_to_operand_aliasing: vec![],
        schedule: None,
    };
    t.ok(
        Op::CustomCall(Box::new(custom)),
        &["f32[4,6]"],
        "(f32[4,3]{1,0}, s32[4,3]{1,0})",
        "(f32[4,3], s32[4,3])",
    );
    t.ok(
        Op::OptimizationBarrier,
        &["(f32[2], s32[])"],
        "(f32[2], s32[])",
        "(f32[2], s32[])",
    );
    t.ok(
        Op::AddDependency,
        &["f32[2]", "token[]"],
        "f32[2]",
        "f32[2]",
    );

    // ---- randomness
    t.ok(
        Op::Rng {
            distribution: RandomDistribution::Uniform,
        },
        &["f32[]", "f32[]"],
        "f32[3,4]",
        "f32[3,4]",
    );
    t.ok(
        Op::Rng {
            distribution: RandomDistribution::Normal,
        },
        &["f64[]", "f64[]"],
        "f64[5]",
        "f64[5]",
    );
    t.ok(
        Op::RngBitGenerator {
            algorithm: RandomAlgorithm::ThreeFry,
        },
        &["u64[2]"],
        "(u64[2], u32[5,5])",
        "(u64[2], u32[5,5])",
    );
    t.ok(
        Op::RngGetAndUpdateState { delta: 4 },
        &[],
        "u64[2]",
        "u64[2]",
    );

    // ---- collectives
    let four: &[&[usize]] = &[&[0, 1, 2, 3]];
    t.ok(
        Op::AllReduce {
            attrs: groups(&[&[0, 1], &[2, 3]]),
            to_apply: c(0),
        },
        &["f32[8]"],
        "f32[8]",
        "f32[8]",
    );
    t.ok(
        Op::AllReduce {
            attrs: groups(&[]),
            to_apply: c(0),
        },
        &["f32[8]", "f32[2]"],
        "(f32[8], f32[2])",
        "(f32[8], f32[2])",
    );
    t.ok(
        Op::AllReduceStart {
            attrs: groups(&[]),
            to_apply: c(0),
        },
        &["f32[8]"],
        "f32[8]",
        "f32[8]",
    );
    t.ok(Op::AllReduceDone, &["f32[8]"], "f32[8]", "f32[8]");
    t.ok(
        Op::AllGather {
            attrs: groups(four),
            dimension: 0,
        },
        &["f32[2,3]"],
        "f32[8,3]",
        "f32[8,3]",
    );
    // No groups: every replica takes part; the count comes from the declared shape.
    t.ok(
        Op::AllGather {
            attrs: groups(&[]),
            dimension: 1,
        },
        &["f32[2,3]"],
        "f32[2,6]",
        "f32[2,6]",
    );
    t.ok(
        Op::AllGatherStart {
            attrs: groups(four),
            dimension: 0,
        },
        &["f32[2,3]"],
        "(f32[2,3], f32[8,3])",
        "(f32[2,3], f32[8,3])",
    );
    t.ok(
        Op::AllGatherDone,
        &["(f32[2,3], f32[8,3])"],
        "f32[8,3]",
        "f32[8,3]",
    );
    t.ok(
        Op::ReduceScatter {
            attrs: groups(four),
            dimension: 0,
            to_apply: c(0),
        },
        &["f32[8,3]"],
        "f32[2,3]",
        "f32[2,3]",
    );
    t.ok(
        Op::AllToAll {
            attrs: groups(four),
            split_dimension: Some(0),
        },
        &["f32[8,3]"],
        "f32[8,3]",
        "f32[8,3]",
    );
    t.ok(
        Op::AllToAll {
            attrs: groups(&[&[0, 1]]),
            split_dimension: None,
        },
        &["f32[3]", "f32[3]"],
        "(f32[3], f32[3])",
        "(f32[3], f32[3])",
    );
    let permute_with = |start: bool, slice_sizes: Option<Vec<Vec<usize>>>| {
        let pairs = vec![(0, 1), (1, 0)];
        if start {
            Op::CollectivePermuteStart {
                attrs: CollectiveAttrs::default(),
                source_target_pairs: pairs,
                slice_sizes,
            }
        } else {
            Op::CollectivePermute {
                attrs: CollectiveAttrs::default(),
                source_target_pairs: pairs,
                slice_sizes,
            }
        }
    };
    let permute = |start: bool| permute_with(start, None);
    t.ok(permute(false), &["f32[4]"], "f32[4]", "f32[4]");
    t.ok(
        permute(true),
        &["f32[4]"],
        "(f32[4], f32[4], u32[], u32[])",
        "(f32[4], f32[4], u32[], u32[])",
    );
    // A combined permute (several operands, XLA's
    // InferCollectivePermuteShape/-StartShape): a tuple result, and a
    // start whose element 0 is the tuple of the operands too. Four operands
    // without slice_sizes are a combined permute, not the in-place form.
    t.ok(
        permute(false),
        &["f32[4]", "s32[2,3]"],
        "(f32[4], s32[2,3])",
        "(f32[4], s32[2,3])",
    );
    t.ok(
        permute(true),
        &["f32[4]", "s32[2,3]"],
        "((f32[4], s32[2,3]), (f32[4], s32[2,3]), u32[], u32[])",
        "((f32[4], s32[2,3]), (f32[4], s32[2,3]), u32[], u32[])",
    );
    t.ok(
        permute(false),
        &["f32[4]", "f32[4]", "s32[]", "s32[]"],
        "(f32[4], f32[4], s32[], s32[])",
        "(f32[4], f32[4], s32[], s32[])",
    );
    // The in-place form: the output buffer, and (input, output) in a start.
    let sizes = Some(vec![vec![2], vec![2]]);
    let in_place = ["f32[4]", "f32[6]", "(s32[])", "(s32[])"];
    t.ok(
        permute_with(false, sizes.clone()),
        &in_place,
        "f32[6]",
        "f32[6]",
    );
    t.ok(
        permute_with(true, sizes.clone()),
        &in_place,
        "(f32[4], f32[6], u32[], u32[])",
        "(f32[4], f32[6], u32[], u32[])",
    );
    t.bad(
        permute_with(false, sizes),
        &["f32[4]", "f32[4]"],
        "f32[4]",
        &["four operands"],
    );
    t.ok(
        Op::CollectivePermuteDone,
        &["(f32[4], f32[4], u32[], u32[])"],
        "f32[4]",
        "f32[4]",
    );
    t.ok(
        Op::CollectiveBroadcast {
            attrs: groups(&[&[0, 1]]),
        },
        &["f32[4]"],
        "f32[4]",
        "f32[4]",
    );

    // ---- host communication and asynchrony
    t.ok(
        Op::Infeed {
            config: String::new(),
        },
        &["token[]"],
        "(f32[3], token[])",
        "(f32[3], token[])",
    );
    t.ok(
        Op::Outfeed {
            config: String::new(),
            outfeed_shape: Some(s("f32[3]")),
        },
        &["f32[3]", "token[]"],
        "token[]",
        "token[]",
    );
    let (ch, host) = (Some(1), false);
    t.ok(
        Op::Send {
            channel_id: ch,
            is_host_transfer: host,
        },
        &["f32[3]", "token[]"],
        "(f32[3], u32[], token[])",
        "(f32[3], u32[], token[])",
    );
    t.ok(
        Op::SendDone {
            channel_id: ch,
            is_host_transfer: host,
        },
        &["(f32[3], u32[], token[])"],
        "token[]",
        "token[]",
    );
    t.ok(
        Op::Recv {
            channel_id: ch,
            is_host_transfer: host,
        },
        &["token[]"],
        "(f32[3], u32[], token[])",
        "(f32[3], u32[], token[])",
    );
    t.ok(
        Op::RecvDone {
            channel_id: ch,
            is_host_transfer: host,
        },
        &["(f32[3], u32[], token[])"],
        "(f32[3], token[])",
        "(f32[3], token[])",
    );
    t.ok(
        Op::AsyncStart {
            calls: c(7),
            execution_thread: None,
        },
        &["f32[4]"],
        "((f32[4]), f32[4], s32[])",
        "((f32[4]), f32[4], s32[])",
    );
    t.ok(
        Op::AsyncUpdate,
        &["((f32[4]), f32[4], s32[])"],
        "((f32[4]), f32[4], s32[])",
        "((f32[4]), f32[4], s32[])",
    );
    t.ok(
        Op::AsyncDone,
        &["((f32[4]), f32[4], s32[])"],
        "f32[4]",
        "f32[4]",
    );
    t.ok(
        Op::CopyStart {
            cross_program_prefetch_index: None,
        },
        &["f32[4]"],
        "(f32[4], f32[4], u32[])",
        "(f32[4], f32[4], u32[])",
    );
    t.ok(
        Op::CopyDone,
        &["(f32[4], f32[4], u32[])"],
        "f32[4]",
        "f32[4]",
    );

    let missing: Vec<&str> = Opcode::ALL
        .iter()
        .filter(|o| !t.covered.contains(o))
        .map(|o| o.name())
        .collect();
    assert!(
        missing.is_empty(),
        "opcodes without a valid case: {missing:?}"
    );
}

#[test]
fn element_type_rules() {
    let t = Cases::new();
    t.bad(
        Op::Unary(UnaryOp::Exp),
        &["s32[2]"],
        "s32[2]",
        &["exponential", "floating point or complex", "s32[2]"],
    );
    t.bad(
        Op::Unary(UnaryOp::Floor),
        &["c64[2]"],
        "c64[2]",
        &["floor", "floating point"],
    );
    t.bad(
        Op::Unary(UnaryOp::Negate),
        &["pred[2]"],
        "pred[2]",
        &["negate", "pred[2]"],
    );
    t.bad(
        Op::Unary(UnaryOp::Clz),
        &["f32[2]"],
        "f32[2]",
        &["count-leading-zeros", "integer"],
    );
    t.bad(
        Op::Unary(UnaryOp::Abs),
        &["u32[2]"],
        "u32[2]",
        &["abs", "u32[2]"],
    );
    t.bad(
        Op::Binary(BinaryOp::Subtract),
        &["pred[2]", "pred[2]"],
        "pred[2]",
        &["subtract", "not pred"],
    );
    t.bad(
        Op::Binary(BinaryOp::ShiftLeft),
        &["f32[2]", "f32[2]"],
        "f32[2]",
        &["shift-left", "integers"],
    );
    t.bad(
        Op::Binary(BinaryOp::Complex),
        &["f16[2]", "f16[2]"],
        "c64[2]",
        &["complex", "f32 or f64"],
    );
    t.bad(
        Op::Binary(BinaryOp::Add),
        &["f32[2]", "bf16[2]"],
        "f32[2]",
        &["add", "f32[2]", "bf16[2]"],
    );
    t.bad(
        Op::Compare {
            direction: ComparisonDirection::Lt,
            compare_type: Some(ComparisonType::Signed),
        },
        &["u32[2]", "u32[2]"],
        "pred[2]",
        &["compare", "SIGNED", "u32"],
    );
    t.bad(
        Op::Select,
        &["s32[4]", "f32[4]", "f32[4]"],
        "f32[4]",
        &["select", "pred", "s32[4]"],
    );
    t.bad(
        Op::Select,
        &["pred[3]", "f32[4]", "f32[4]"],
        "f32[4]",
        &["select", "pred[3]", "f32[4]"],
    );
    t.bad(
        Op::Clamp,
        &["f32[2]", "f32[5]", "f32[]"],
        "f32[5]",
        &["clamp", "min", "f32[2]", "f32[5]"],
    );
    t.bad(
        Op::BitcastConvert,
        &["c64[2]"],
        "f64[2]",
        &["bitcast-convert", "complex"],
    );
    t.bad(
        Op::BitcastConvert,
        &["u8[3]"],
        "s32[]",
        &["bitcast-convert", "u8[3]", "size 4"],
    );
    t.bad(
        Op::StochasticConvert,
        &["f32[4]", "u16[4]"],
        "bf16[4]",
        &["stochastic-convert", "u16[4]", "f32[4]"],
    );
    t.bad(
        Op::ReducePrecision {
            exponent_bits: 0,
            mantissa_bits: 3,
        },
        &["f32[2]"],
        "f32[2]",
        &["reduce-precision", "exponent_bits"],
    );
    t.bad(Op::Iota { dimension: 0 }, &[], "pred[4]", &["iota", "pred"]);
    t.bad(
        Op::Iota { dimension: 0 },
        &[],
        "s32[]",
        &["iota", "rank at least 1"],
    );
    // Integer dots may not narrow their result.
    let dot = Op::Dot {
        dnums: DotDimensionNumbers {
            lhs_contracting_dims: vec![1],
            rhs_contracting_dims: vec![0],
            ..Default::default()
        },
        precision: vec![],
        algorithm: None,
    };
    t.bad(
        dot.clone(),
        &["s32[4,8]", "s32[8,2]"],
        "s8[4,2]",
        &["dot", "s8", "narrower", "s32"],
    );
    t.bad(
        dot,
        &["s32[4,8]", "f32[8,2]"],
        "f32[4,2]",
        &["dot", "s32[4,8]", "f32[8,2]"],
    );
}

#[test]
fn dimension_rules() {
    let t = Cases::new();
    t.bad(
        Op::Broadcast {
            dimensions: vec![0],
        },
        &["f32[3]"],
        "f32[2,3]",
        &["broadcast", "f32[3]", "size 3", "size 2"],
    );
    t.bad(
        Op::Broadcast { dimensions: vec![] },
        &["f32[3]"],
        "f32[2,3]",
        &["broadcast", "one result dimension per operand dimension"],
    );
    t.bad(
        Op::Reshape,
        &["f32[2,3]"],
        "f32[7]",
        &["reshape", "f32[2,3] (6 elements)", "f32[7] (7 elements)"],
    );
    t.bad(
        Op::Transpose {
            dimensions: vec![0, 2],
        },
        &["f32[2,3]"],
        "f32[2,3]",
        &["transpose", "{0,2}", "rank 2"],
    );
    let slice = |start, limit, stride| SliceDim {
        start,
        limit,
        stride,
    };
    t.bad(
        Op::Slice {
            slice: vec![slice(2, 1, 1)],
        },
        &["f32[4]"],
        "f32[0]",
        &["slice", "[2:1:1]"],
    );
    t.bad(
        Op::Slice {
            slice: vec![slice(0, 2, 0)],
        },
        &["f32[4]"],
        "f32[0]",
        &["slice", "stride"],
    );
    t.bad(
        Op::Slice { slice: vec![] },
        &["f32[4]"],
        "f32[4]",
        &["slice", "0 slice ranges", "rank 1"],
    );
    t.bad(
        Op::DynamicSlice { sizes: vec![9] },
        &["f32[8]", "s32[]"],
        "f32[9]",
        &["dynamic-slice", "slice size 9", "f32[8]"],
    );
    t.bad(
        Op::DynamicSlice { sizes: vec![2, 2] },
        &["f32[8,8]", "s32[]"],
        "f32[2,2]",
        &["dynamic-slice", "1 start indices", "rank 2"],
    );
    t.bad(
        Op::DynamicSlice { sizes: vec![2] },
        &["f32[8]", "f32[]"],
        "f32[2]",
        &["dynamic-slice", "integer scalar", "f32[]"],
    );
    t.bad(
        Op::DynamicUpdateSlice,
        &["f32[4]", "f32[5]", "s32[]"],
        "f32[4]",
        &["dynamic-update-slice", "f32[5]", "larger", "f32[4]"],
    );
    t.bad(
        Op::Concatenate { dimension: 0 },
        &["f32[2,3]", "f32[2,4]"],
        "f32[4,3]",
        &["concatenate", "f32[2,3]", "f32[2,4]"],
    );
    t.bad(
        Op::Pad {
            config: vec![PadDim {
                low: -4,
                high: -3,
                interior: 0,
            }],
        },
        &["f32[5]", "f32[]"],
        "f32[0]",
        &["pad", "-4_-3_0", "f32[5]", "size -2"],
    );
    t.bad(
        Op::Pad {
            config: vec![PadDim::default()],
        },
        &["f32[5]", "s32[]"],
        "f32[5]",
        &["pad", "padding value", "s32[]"],
    );
    t.bad(
        Op::Reverse {
            dimensions: vec![1],
        },
        &["f32[5]"],
        "f32[5]",
        &["reverse", "{1}", "rank 1"],
    );
    t.bad(
        Op::GetDimensionSize { dimension: 2 },
        &["f32[5]"],
        "s32[]",
        &["get-dimension-size", "dimension 2", "f32[5]"],
    );
    t.bad(
        Op::Bitcast,
        &["f32[2]"],
        "f32[3]",
        &["bitcast", "8 bytes", "12 bytes"],
    );
    t.bad(
        Op::GetTupleElement { index: 2 },
        &["(f32[], s32[])"],
        "f32[]",
        &["get-tuple-element", "index 2", "2-element"],
    );
    t.bad(
        Op::GetTupleElement { index: 0 },
        &["f32[2]"],
        "f32[]",
        &["get-tuple-element", "must be a tuple", "f32[2]"],
    );
}

#[test]
fn gather_and_scatter_rules() {
    let t = Cases::new();
    let gather = |collapsed: Vec<usize>, offset: Vec<usize>, sizes: Vec<usize>| Op::Gather {
        dnums: GatherDimensionNumbers {
            offset_dims: offset,
            collapsed_slice_dims: collapsed,
            start_index_map: vec![0],
            index_vector_dim: 1,
            ..Default::default()
        },
        slice_sizes: sizes,
        indices_are_sorted: false,
    };
    t.bad(
        gather(vec![0], vec![1], vec![2, 8]),
        &["f32[50,8]", "s32[5,1]"],
        "f32[5,8]",
        &["gather", "collapsed", "at most 1", "2"],
    );
    t.bad(
        gather(vec![0], vec![1], vec![1, 9]),
        &["f32[50,8]", "s32[5,1]"],
        "f32[5,9]",
        &["gather", "slice size 9", "f32[50,8]"],
    );
    t.bad(
        gather(vec![], vec![1], vec![1, 8]),
        &["f32[50,8]", "s32[5,1]"],
        "f32[5,8]",
        &["gather", "account for the 2 dimensions"],
    );
    t.bad(
        gather(vec![0], vec![1], vec![1, 8]),
        &["f32[50,8]", "f32[5,1]"],
        "f32[5,8]",
        &["gather", "integers", "f32[5,1]"],
    );
    t.bad(
        gather(vec![0], vec![1], vec![1, 8]),
        &["f32[50,8]", "s32[5,2]"],
        "f32[5,8]",
        &["gather", "start_index_map {0}", "size 2"],
    );
    let scatter = |window: Vec<usize>| Op::Scatter {
        dnums: ScatterDimensionNumbers {
            update_window_dims: window,
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: 1,
            ..Default::default()
        },
        indices_are_sorted: false,
        unique_indices: false,
        to_apply: c(0),
    };
    t.bad(
        scatter(vec![1]),
        &["f32[10,4]", "s32[2,1]", "f32[2,5]"],
        "f32[10,4]",
        &["scatter", "window dimension 1", "f32[2,5]", "f32[10,4]"],
    );
    t.bad(
        scatter(vec![1]),
        &["f32[10,4]", "s32[2,1]", "f32[3,4]"],
        "f32[10,4]",
        &["scatter", "scatter dimension 0", "f32[3,4]", "s32[2,1]"],
    );
    t.bad(
        scatter(vec![1]),
        &["f32[10,4]", "s32[2,1]"],
        "f32[10,4]",
        &["scatter", "odd number"],
    );
    t.bad(
        scatter(vec![1]),
        &["s32[10,4]", "s32[2,1]", "s32[2,4]"],
        "s32[10,4]",
        &[
            "scatter",
            "(f32[], f32[]) -> f32[]",
            "expected (s32[], s32[]) -> s32[]",
        ],
    );
}

#[test]
fn linear_algebra_rules() {
    let t = Cases::new();
    let dot = |lb: Vec<usize>, rb: Vec<usize>| Op::Dot {
        dnums: DotDimensionNumbers {
            lhs_batch_dims: lb,
            rhs_batch_dims: rb,
            lhs_contracting_dims: vec![2],
            rhs_contracting_dims: vec![1],
        },
        precision: vec![],
        algorithm: None,
    };
    t.bad(
        dot(vec![0], vec![0]),
        &["f32[2,3,4]", "f32[3,4,5]"],
        "f32[2,3,5]",
        &["dot", "batch dimension 0", "size 2", "size 3"],
    );
    t.bad(
        dot(vec![0], vec![]),
        &["f32[2,3,4]", "f32[2,4,5]"],
        "f32[2,3,5]",
        &["dot", "lhs_batch_dims {0}", "rhs_batch_dims {}"],
    );
    t.bad(
        dot(vec![2], vec![0]),
        &["f32[2,3,4]", "f32[2,4,5]"],
        "f32[2,3,5]",
        &["dot", "twice"],
    );
    let w3 = window(&[(3, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]);
    t.bad(
        conv(w3.clone(), 2, 2),
        &["f32[4,5,5,2]", "f32[3,3,1,4]"],
        "f32[2,3,3,4]",
        &["convolution", "cannot both exceed 1"],
    );
    t.bad(
        conv(w3.clone(), 1, 3),
        &["f32[4,5,5,2]", "f32[3,3,2,6]"],
        "f32[1,3,3,6]",
        &["convolution", "batch_group_count (3)", "f32[4,5,5,2]"],
    );
    t.bad(
        conv(w3.clone(), 4, 1),
        &["f32[1,5,5,8]", "f32[3,3,2,6]"],
        "f32[1,3,3,6]",
        &["convolution", "multiple of feature_group_count (4)"],
    );
    t.bad(
        conv(window(&[(2, 1, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]), 1, 1),
        &["f32[1,5,5,2]", "f32[3,3,2,4]"],
        "f32[1,3,3,4]",
        &[
            "convolution",
            "spatial dimension 0",
            "size 2",
            "kernel's is 3",
        ],
    );
    t.bad(
        conv(window(&[(3, 1, 0, 0, 1, 1)]), 1, 1),
        &["f32[1,5,5,2]", "f32[3,3,2,4]"],
        "f32[1,3,3,4]",
        &["convolution", "1 dimensions", "2 spatial"],
    );
    t.bad(
        conv(window(&[(3, 0, 0, 0, 1, 1), (3, 1, 0, 0, 1, 1)]), 1, 1),
        &["f32[1,5,5,2]", "f32[3,3,2,4]"],
        "f32[1,3,3,4]",
        &["convolution", "positive size, stride"],
    );
    t.bad(
        conv(w3, 1, 1),
        &["f32[1,5,2]", "f32[3,3,2,4]"],
        "f32[1,3,3,4]",
        &["convolution", "rank 4", "f32[1,5,2]"],
    );
    t.bad(
        Op::Fft {
            fft_type: FftType::Fft,
            fft_length: vec![16],
        },
        &["f32[16]"],
        "c64[16]",
        &["fft", "complex", "f32[16]"],
    );
    t.bad(
        Op::Fft {
            fft_type: FftType::Rfft,
            fft_length: vec![8],
        },
        &["f32[16]"],
        "c64[5]",
        &["fft", "RFFT", "f32[16]", "{8}"],
    );
    t.bad(
        Op::Fft {
            fft_type: FftType::Irfft,
            fft_length: vec![16],
        },
        &["c64[3,8]"],
        "f32[3,16]",
        &["fft", "IRFFT", "c64[3,8]", "9"],
    );
    t.bad(
        Op::Fft {
            fft_type: FftType::Fft,
            fft_length: vec![2, 2, 2, 2],
        },
        &["c64[2,2,2,2]"],
        "c64[2,2,2,2]",
        &["fft", "1 to 3"],
    );
    t.bad(
        Op::Cholesky { lower: true },
        &["f32[3,4]"],
        "f32[3,4]",
        &["cholesky", "square", "f32[3,4]"],
    );
    let ts = Op::TriangularSolve {
        options: TriangularSolveOptions {
            left_side: true,
            lower: true,
            unit_diagonal: false,
            transpose_a: TriangularTranspose::NoTranspose,
        },
    };
    t.bad(
        ts,
        &["f32[3,3]", "f32[4,5]"],
        "f32[4,5]",
        &[
            "triangular-solve",
            "shared dimension",
            "f32[3,3]",
            "f32[4,5]",
        ],
    );
    t.bad(
        Op::BatchNormTraining {
            epsilon: 1e-3,
            feature_index: 1,
        },
        &["f32[2,4,5]", "f32[5]", "f32[4]"],
        "(f32[2,4,5], f32[4], f32[4])",
        &["batch-norm-training", "scale", "f32[4]", "f32[5]"],
    );
}

#[test]
fn called_computation_rules() {
    let t = Cases::new();
    t.bad(
        Op::Reduce {
            dimensions: vec![0],
            to_apply: c(1),
        },
        &["f32[4]", "f32[]"],
        "f32[]",
        &["reduce", "computation #1", "-> pred[]"],
    );
    t.bad(
        Op::Reduce {
            dimensions: vec![0],
            to_apply: c(0),
        },
        &["f32[4]", "f32[2]"],
        "f32[]",
        &["reduce", "initial value 0 must be a scalar", "f32[2]"],
    );
    t.bad(
        Op::Reduce {
            dimensions: vec![0],
            to_apply: c(0),
        },
        &["f32[4]"],
        "f32[]",
        &["reduce", "even number"],
    );
    t.bad(
        Op::Reduce {
            dimensions: vec![0, 0],
            to_apply: c(0),
        },
        &["f32[4]", "f32[]"],
        "f32[]",
        &["reduce", "twice"],
    );
    t.bad(
        Op::Reduce {
            dimensions: vec![0],
            to_apply: c(99),
        },
        &["f32[4]", "f32[]"],
        "f32[]",
        &["reduce", "no such computation"],
    );
    t.bad(
        Op::Reduce {
            dimensions: vec![0],
            to_apply: c(6),
        },
        &["f32[4]", "s32[5]", "f32[]", "s32[]"],
        "(f32[], s32[])",
        &["reduce", "same dimensions", "f32[4]", "s32[5]"],
    );
    t.bad(
        Op::ReduceWindow {
            window: window(&[(2, 2, 0, 0, 1, 1)]),
            to_apply: c(0),
        },
        &["f32[4,6]", "f32[]"],
        "f32[2,3]",
        &["reduce-window", "1 dimensions", "{4,6}"],
    );
    t.bad(
        Op::SelectAndScatter {
            window: window(&[(2, 2, 0, 0, 1, 1)]),
            select: c(0),
            scatter: c(0),
        },
        &["f32[4]", "f32[2]", "f32[]"],
        "f32[4]",
        &["select-and-scatter", "select computation", "pred[]"],
    );
    t.bad(
        Op::SelectAndScatter {
            window: window(&[(2, 2, 0, 0, 1, 1)]),
            select: c(1),
            scatter: c(0),
        },
        &["f32[4]", "f32[3]", "f32[]"],
        "f32[4]",
        &["select-and-scatter", "source f32[3]", "f32[2]"],
    );
    t.bad(
        Op::Scan {
            dimension: 0,
            num_carries: 1,
            is_reverse: false,
            is_associative: None,
            to_apply: c(9),
        },
        &["f32[3,5]", "f32[]"],
        "(f32[3,5], f32[])",
        &["scan", "f32[3]", "f32[5]"],
    );
    t.bad(
        Op::Sort {
            dimension: 1,
            is_stable: false,
            comparator: c(1),
        },
        &["f32[7]"],
        "f32[7]",
        &["sort", "dimension 1", "f32[7]"],
    );
    t.bad(
        Op::Sort {
            dimension: 0,
            is_stable: false,
            comparator: c(5),
        },
        &["f32[7]", "s32[6]"],
        "(f32[7], s32[6])",
        &["sort", "f32[7]", "s32[6]"],
    );
    t.bad(
        Op::TopK {
            k: 7,
            largest: true,
        },
        &["f32[4,6]"],
        "(f32[4,7], s32[4,7])",
        &["topk", "k=7", "f32[4,6]"],
    );
    t.bad(
        Op::Map {
            dimensions: vec![0],
            to_apply: c(0),
        },
        &["f32[3]"],
        "f32[3]",
        &["map", "(f32[], f32[]) -> f32[]", "expected (f32[])"],
    );
    t.bad(
        Op::While {
            condition: c(2),
            body: c(4),
        },
        &["(s32[], f32[4])"],
        "(s32[], f32[4])",
        &[
            "while",
            "body computation #4",
            "(f32[3]) -> f32[3]",
            "given ((s32[], f32[4]))",
        ],
    );
    t.bad(
        Op::While {
            condition: c(3),
            body: c(3),
        },
        &["(s32[], f32[4])"],
        "(s32[], f32[4])",
        &["while", "condition computation #3 must return pred[]"],
    );
    t.bad(
        Op::Conditional {
            branches: vec![c(4)],
        },
        &["pred[]", "f32[3]"],
        "f32[3]",
        &["conditional", "pred selector needs exactly 2 branches"],
    );
    t.bad(
        Op::Conditional {
            branches: vec![c(4), c(7)],
        },
        &["s32[]", "f32[3]", "f32[4]"],
        "f32[3]",
        &[
            "conditional",
            "branch 0 returns f32[3]",
            "branch 1",
            "f32[4]",
        ],
    );
    t.bad(
        Op::Call {
            to_apply: c(0),
            is_composite: false,
        },
        &["f32[]"],
        "f32[]",
        &["call", "(f32[], f32[]) -> f32[]", "given (f32[])"],
    );
    t.bad(
        Op::Fusion {
            kind: FusionKind::Loop,
            calls: c(4),
        },
        &["f32[3]", "f32[3]"],
        "f32[3]",
        &["fusion", "given (f32[3], f32[3])"],
    );
    t.bad(
        Op::AllReduce {
            attrs: groups(&[&[0, 1], &[1, 2]]),
            to_apply: c(0),
        },
        &["f32[8]"],
        "f32[8]",
        &["all-reduce", "replica 1 twice"],
    );
    t.bad(
        Op::AllGather {
            attrs: groups(&[&[0, 1], &[2]]),
            dimension: 0,
        },
        &["f32[8]"],
        "f32[16]",
        &["all-gather", "same size"],
    );
    t.bad(
        Op::ReduceScatter {
            attrs: groups(&[&[0, 1, 2]]),
            dimension: 0,
            to_apply: c(0),
        },
        &["f32[8]"],
        "f32[2]",
        &["reduce-scatter", "not divisible among 3"],
    );
    t.bad(
        Op::AsyncStart {
            calls: c(7),
            execution_thread: None,
        },
        &["f32[5]"],
        "((f32[5]), f32[4])",
        &["async-start", "(f32[4]) -> f32[4]", "given (f32[5])"],
    );
    let custom = CustomCallAttrs {
        target: "t".into(),
        api_version: CustomCallApiVersion::Original,
        called_computations: vec![],
        has_side_effect: false,
        operand_layout_constraints: Some(vec![s("f32[5]{0}")]),
        output_to_operand_aliasing: vec![],
        schedule: None,
    };
    t.bad(
        Op::CustomCall(Box::new(custom)),
        &["f32[4]"],
        "f32[4]",
        &["custom-call", "operand 0", "f32[4]", "f32[5]"],
    );
}

#[test]
fn huge_dimensions_give_errors_not_overflow() {
    let t = Cases::new();
    let big = HUGE.to_string();
    t.bad(
        Op::Reshape,
        &[big.as_str()],
        "f32[8]",
        &["reshape", "too many elements"],
    );
    t.bad(
        Op::Bitcast,
        &[big.as_str()],
        "f32[8]",
        &["bitcast", "too many"],
    );
    let p = Op::Pad {
        config: vec![
            PadDim {
                low: i64::MAX,
                high: i64::MAX,
                interior: usize::MAX,
            },
            PadDim::default(),
        ],
    };
    t.bad(p, &[big.as_str(), "f32[]"], "f32[1,4]", &["pad"]);
    let w = window(&[
        (1, 1, i64::MAX, i64::MAX, usize::MAX, 1),
        (1, 1, 0, 0, 1, 1),
    ]);
    let result = t.infer(
        &Op::ReduceWindow {
            window: w,
            to_apply: c(0),
        },
        &[big.as_str(), "f32[]"],
        "f32[1,4]",
    );
    // Either a size that fits or an error, but no panic.
    if let Ok(shape) = result {
        assert_eq!(shape.rank(), 2);
    }
}
