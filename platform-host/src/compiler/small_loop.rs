//! Compiles a `while` loop on small values into a [`SmallLoop`] (see
//! `thunk::small_loop` for why and how it runs).
//!
//! The condition and the body are walked as HLO, calls and fusions inlined,
//! in instruction order into steps over the loop state, an arena and
//! constants. A value is an
//! array at a location, or a *splat*: one element standing for every
//! position (a broadcast scalar, which costs nothing until something needs
//! the elements). Reshapes, bitcasts, copies and identity broadcasts are the
//! same location under another shape. Elementwise ops take their kernels
//! from the op table through the block programs' own choice
//! ([`crate::fusion::program::kernel_for`]), a reduction to one element the
//! row fold a fused reduction uses, so values have the bits the other paths
//! give.
//!
//! A loop qualifies when every instruction it runs is one of those, every
//! value has at most [`MAX_ELEMENTS`] elements in row-major order, and its
//! intermediates fit [`MAX_ARENA_BYTES`]; anything else (a `dot`, a slice, a
//! nested loop) leaves it to the nested sequences, with the reason logged at
//! debug level. Larger values are left out on purpose: there the fused,
//! parallel paths win, and the per-op overhead this removes is noise.
//!
//! The body's results go straight into the state leaves where that is safe:
//! the step computing leaf `k` writes it in place when no later step reads
//! the old leaf `k`. Any other result is copied at the end, after the old
//! state leaves it reads have been set aside, so a body that permutes its
//! state (`(a, b) -> (b, a)`) is right.

use crate::elementwise_ops as ops;
use crate::fma;
use crate::fusion::program::{kernel_for, ElemOp};
use crate::kernels::scalar_program::binary_reducer;
use crate::kernels::simd::has_avx2_fma;
use crate::thunk::small_loop::{
    scalar_fn, vector_fn, Loc, Operand, ScalarOp, ScalarType, SmallLoop, Step, VectorOp,
};
use crate::thunk::ConstantBytes;
use platform_api::hlo::{BinaryOp, CompId, ComparisonType, HloInstruction, Op};
use platform_api::{CompileOptions, ElementType, Error, HloModule, Result, Shape};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::Arc;

/// The debug option that turns small loops on (the default) or off.
pub const OPTION: &str = "host_small_loops";

/// Most elements of any value a small loop computes.
pub const MAX_ELEMENTS: usize = 1024;
/// Most bytes of intermediates.
pub const MAX_ARENA_BYTES: usize = 64 << 10;
/// Most steps of a condition and body together.
const MAX_STEPS: usize = 4096;
/// Deepest nesting of inlined calls and fusions.
const MAX_INLINE_DEPTH: usize = 32;

/// Whether `options` let loops run as small loops.
pub fn enabled(options: &CompileOptions) -> Result<bool> {
    match options.debug_option(OPTION) {
        None | Some("on") | Some("true") => Ok(true),
        Some("off") | Some("false") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "{OPTION} must be on (the default) or off, not \"{other}\""
        ))),
    }
}

/// A value as the walk sees it.
#[derive(Clone, Copy, Debug)]
struct Val {
    loc: Loc,
    ty: ElementType,
    count: usize,
    /// `loc` holds one element that stands for all `count`.
    splat: bool,
}

impl Val {
    /// Whether one element at `loc` is the whole value.
    fn single(&self) -> bool {
        self.splat || self.count == 1
    }
}

#[derive(Clone, Debug)]
enum Value {
    Array(Val),
    Tuple(Vec<Value>),
}

/// Why a loop does not qualify (logged, not an error).
type Why = String;

struct Builder<'m> {
    module: &'m HloModule,
    steps: Vec<Step>,
    constants: Vec<Arc<ConstantBytes>>,
    arena: usize,
    /// Every arena value's offset and bytes, as [`Builder::alloc`] placed
    /// them.
    slots: Vec<(u32, usize)>,
    depth: usize,
    /// Constants broadcast into arrays: (constant, count) -> the array.
    expanded: HashMap<(u32, usize), Loc>,
}

/// Compiles `instr` (a `while`) into a small loop, or says why it does not
/// qualify.
pub fn compile(module: &HloModule, instr: &HloInstruction) -> std::result::Result<SmallLoop, Why> {
    let Op::While { condition, body } = &instr.op else {
        return Err("not a while loop".into());
    };
    if contains_token(&instr.shape) {
        return Err("the loop state holds a token".into());
    }
    let mut b = Builder {
        module,
        steps: Vec::new(),
        constants: Vec::new(),
        arena: 0,
        slots: Vec::new(),
        depth: 0,
        expanded: HashMap::new(),
    };
    let mut leaves = 0u32;
    let state = b.state_value(&instr.shape, &mut leaves)?;

    let mut pred = match b.computation(*condition, std::slice::from_ref(&state))? {
        Value::Array(v) if v.ty == ElementType::Pred && v.count == 1 => v.loc,
        _ => return Err("the condition's result is not a pred scalar".into()),
    };
    let mut condition_steps = std::mem::take(&mut b.steps);

    let result = b.computation(*body, std::slice::from_ref(&state))?;
    let mut results = Vec::new();
    flatten(&result, &mut results);
    let mut want = Vec::new();
    flatten(&state, &mut want);
    if results.len() != want.len()
        || results
            .iter()
            .zip(&want)
            .any(|(r, w)| r.ty != w.ty || r.count != w.count)
    {
        return Err("the body's result does not match the state".into());
    }
    b.finish_body(&mut results)?;
    let state_bytes = want.iter().map(|v| v.ty.byte_size() * v.count).collect();
    if condition_steps.len() + b.steps.len() > MAX_STEPS {
        return Err(format!("more than {MAX_STEPS} steps"));
    }
    let arena_bytes =
        pack_arena(&mut condition_steps, &mut pred, &mut b.steps, &b.slots).unwrap_or(b.arena);
    Ok(SmallLoop {
        condition: condition_steps,
        pred,
        body: b.steps,
        constants: b.constants,
        arena_bytes,
        state_bytes,
    })
}

/// Places the arena's values again by when they are live in an iteration
/// (the condition's steps, the test of its `pred`, the body's steps), each
/// at the lowest 16-byte-aligned offset no value live at the same time
/// occupies, and returns the arena's new size. The walk gives every
/// intermediate bytes of its own and keeps them even when the body's result
/// then goes into the state in place; a tiny body's arena was mostly such
/// values. `None` (the layout kept) where a step names an offset that is not
/// the start of a value, or a value is empty.
fn pack_arena(
    condition: &mut [Step],
    pred: &mut Loc,
    body: &mut [Step],
    slots: &[(u32, usize)],
) -> Option<usize> {
    // An empty value shares its offset with the next one: keep the layout.
    if slots.iter().any(|s| s.1 == 0) {
        return None;
    }
    // Per slot: first write, first read, last use, as positions in the
    // iteration.
    let mut seen: Vec<Option<(usize, usize, usize)>> = vec![None; slots.len()];
    let mut unknown = false;
    let mut note = |loc: Loc, at: usize, write: bool| {
        let Loc::Arena(off) = loc else { return };
        let Some(k) = slots.iter().position(|s| s.0 == off) else {
            unknown = true;
            return;
        };
        let e = seen[k].get_or_insert((usize::MAX, usize::MAX, at));
        if write {
            e.0 = e.0.min(at);
        } else {
            e.1 = e.1.min(at);
        }
        e.2 = e.2.max(at);
    };
    let pred_at = condition.len();
    let steps = condition
        .iter()
        .enumerate()
        .chain(body.iter().enumerate().map(|(i, s)| (pred_at + 1 + i, s)));
    for (at, s) in steps {
        for r in s.reads() {
            note(r, at, false);
        }
        note(s.dst(), at, true);
    }
    note(*pred, pred_at, false);
    if unknown {
        return None;
    }
    let last = pred_at + body.len();
    // A value read before this iteration writes it (none is, as the walk
    // makes them) would carry over from the last one: live throughout.
    let live: Vec<Option<(usize, usize)>> = seen
        .iter()
        .map(|e| e.map(|(w, r, u)| if r <= w { (0, last) } else { (w, u) }))
        .collect();
    let mut order: Vec<usize> = (0..slots.len()).filter(|&k| live[k].is_some()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(slots[k].1), slots[k].0));
    // (live from, live to, offset, bytes) of each value placed so far.
    let mut placed: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut new_at: HashMap<u32, u32> = HashMap::new();
    let mut bytes = 0;
    for k in order {
        let ((start, end), size) = (live[k]?, slots[k].1);
        let mut busy: Vec<(usize, usize)> = placed
            .iter()
            .filter(|p| p.0 <= end && start <= p.1)
            .map(|p| (p.2, p.2 + p.3))
            .collect();
        busy.sort_unstable();
        let mut at = 0;
        for (lo, hi) in busy {
            if at + size <= lo {
                break;
            }
            at = at.max(hi.next_multiple_of(16));
        }
        bytes = usize::max(bytes, at + size);
        new_at.insert(slots[k].0, u32::try_from(at).ok()?);
        placed.push((start, end, at, size));
    }
    let map = |l: Loc| match l {
        Loc::Arena(off) => Loc::Arena(new_at.get(&off).copied().unwrap_or(off)),
        other => other,
    };
    for s in condition.iter_mut().chain(body.iter_mut()) {
        s.map_locs(&map);
    }
    *pred = map(*pred);
    Some(bytes)
}

fn contains_token(shape: &Shape) -> bool {
    match shape {
        Shape::Token => true,
        Shape::Array(_) => false,
        Shape::Tuple(t) => t.iter().any(contains_token),
    }
}

fn flatten(v: &Value, out: &mut Vec<Val>) {
    match v {
        Value::Array(a) => out.push(*a),
        Value::Tuple(t) => t.iter().for_each(|e| flatten(e, out)),
    }
}

/// The element type and count of an array shape the loop can hold.
fn small_array(shape: &Shape, what: &str) -> std::result::Result<(ElementType, usize), Why> {
    let Shape::Array(a) = shape else {
        return Err(format!("{what} is not an array"));
    };
    if !a.layout_or_default().is_row_major() {
        return Err(format!("{what} is not row-major"));
    }
    if a.dynamic.iter().any(|&d| d) {
        return Err(format!("{what} has a dynamic dimension"));
    }
    let count = a.element_count();
    if count > MAX_ELEMENTS {
        return Err(format!(
            "{what} has {count} elements (more than {MAX_ELEMENTS})"
        ));
    }
    Ok((a.element_type, count))
}

impl Builder<'_> {
    fn state_value(&mut self, shape: &Shape, next: &mut u32) -> std::result::Result<Value, Why> {
        Ok(match shape {
            Shape::Tuple(t) => Value::Tuple(
                t.iter()
                    .map(|s| self.state_value(s, next))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            _ => {
                let (ty, count) = small_array(shape, "a state leaf")?;
                let v = Val {
                    loc: Loc::State(*next),
                    ty,
                    count,
                    splat: false,
                };
                *next += 1;
                Value::Array(v)
            }
        })
    }

    /// Room in the arena for `n` elements of `ty`.
    fn alloc(&mut self, ty: ElementType, n: usize) -> std::result::Result<Loc, Why> {
        let at = self.arena.next_multiple_of(16);
        let end = at + ty.byte_size() * n;
        if end > MAX_ARENA_BYTES {
            return Err(format!(
                "its intermediates need more than {MAX_ARENA_BYTES} bytes"
            ));
        }
        self.arena = end;
        self.slots.push((at as u32, end - at));
        Ok(Loc::Arena(at as u32))
    }

    fn constant(&mut self, bytes: &[u8]) -> Loc {
        self.constants.push(Arc::new(ConstantBytes::new(bytes)));
        Loc::Const(self.constants.len() as u32 - 1)
    }

    /// The value's elements at a location of their own (a splat expanded).
    fn materialize(&mut self, v: Val) -> std::result::Result<Loc, Why> {
        if !v.splat || v.count == 1 {
            return Ok(v.loc);
        }
        let dst = self.alloc(v.ty, v.count)?;
        self.steps.push(Step::Fill {
            src: v.loc,
            dst,
            n: v.count,
            width: v.ty.byte_size(),
        });
        Ok(dst)
    }

    /// The value's elements at a location of their own, a constant's
    /// broadcast as a constant array (once per constant and count).
    fn expand(&mut self, v: Val) -> std::result::Result<Loc, Why> {
        match v.loc {
            Loc::Const(k) if v.splat => {
                if let Some(&loc) = self.expanded.get(&(k, v.count)) {
                    return Ok(loc);
                }
                let one = self.constants[k as usize].as_bytes().to_vec();
                let loc = self.constant(&one.repeat(v.count));
                self.expanded.insert((k, v.count), loc);
                Ok(loc)
            }
            _ => self.materialize(v),
        }
    }

    /// Inlines computation `comp` applied to `args`.
    fn computation(&mut self, comp: CompId, args: &[Value]) -> std::result::Result<Value, Why> {
        if self.depth >= MAX_INLINE_DEPTH {
            return Err("calls nested too deeply".into());
        }
        let comp = self
            .module
            .computations
            .get(comp.index())
            .ok_or("a computation that does not exist")?;
        self.depth += 1;
        // Operands come before their users (the verifier's rule, which
        // lowering relies on as well).
        let mut values: Vec<Option<Value>> = vec![None; comp.instructions.len()];
        for (i, instr) in comp.instructions.iter().enumerate() {
            let operands = instr
                .operands
                .iter()
                .map(|o| values[..i].get(o.index()).cloned().flatten())
                .collect::<Option<Vec<Value>>>()
                .ok_or("an operand used before it is defined")?;
            let v = self
                .instruction(instr, &operands, args)
                .map_err(|why| format!("%{}: {why}", instr.name))?;
            values[i] = Some(v);
        }
        self.depth -= 1;
        values
            .get_mut(comp.root.index())
            .and_then(Option::take)
            .ok_or_else(|| "a computation without a root".into())
    }

    fn instruction(
        &mut self,
        instr: &HloInstruction,
        operands: &[Value],
        args: &[Value],
    ) -> std::result::Result<Value, Why> {
        let array = |k: usize| -> std::result::Result<Val, Why> {
            match operands.get(k) {
                Some(Value::Array(v)) => Ok(*v),
                _ => Err(format!("operand {k} is not an array")),
            }
        };
        let elem = match &instr.op {
            Op::Parameter { number } => {
                return args
                    .get(*number)
                    .cloned()
                    .ok_or_else(|| format!("parameter {number} has no argument"))
            }
            Op::Tuple => return Ok(Value::Tuple(operands.to_vec())),
            Op::GetTupleElement { index } => {
                return match operands.first() {
                    Some(Value::Tuple(t)) => t
                        .get(*index)
                        .cloned()
                        .ok_or_else(|| "tuple index out of range".into()),
                    _ => Err("get-tuple-element of an array".into()),
                }
            }
            Op::Call { to_apply, .. } => return self.computation(*to_apply, operands),
            Op::Fusion { calls, .. } => return self.computation(*calls, operands),
            Op::Constant { literal } => {
                let (ty, count) = small_array(&instr.shape, "a constant")?;
                let bytes = literal.bytes().map_err(|e| e.to_string())?;
                if bytes.len() != ty.byte_size() * count {
                    return Err("a constant whose bytes do not match its shape".into());
                }
                let loc = self.constant(bytes);
                return Ok(Value::Array(Val {
                    loc,
                    ty,
                    count,
                    splat: false,
                }));
            }
            Op::Reshape | Op::Bitcast | Op::Copy => {
                let (ty, count) = small_array(&instr.shape, "the result")?;
                let x = array(0)?;
                if x.ty != ty || x.count != count {
                    return Err("a reshape that changes the element type or count".into());
                }
                return Ok(Value::Array(Val { count, ..x }));
            }
            Op::Broadcast { dimensions } => {
                let (ty, count) = small_array(&instr.shape, "the result")?;
                let x = array(0)?;
                let in_order = dimensions.windows(2).all(|w| w[0] < w[1]);
                if x.ty != ty {
                    return Err("a broadcast that changes the element type".into());
                }
                return if x.single() {
                    Ok(Value::Array(Val {
                        count,
                        splat: count != 1,
                        ..x
                    }))
                } else if x.count == count && in_order {
                    // Only size-1 dimensions are added: the same elements.
                    Ok(Value::Array(Val { count, ..x }))
                } else {
                    Err("a broadcast that repeats elements".into())
                };
            }
            Op::Reduce {
                dimensions: _,
                to_apply,
            } => return self.reduce(instr, operands, *to_apply),
            Op::Unary(u) => ElemOp::Unary(*u),
            Op::Binary(b) => ElemOp::Binary(*b),
            Op::Compare {
                direction,
                compare_type,
            } => ElemOp::Compare(*direction, *compare_type),
            Op::Select => ElemOp::Select,
            Op::Clamp => ElemOp::Clamp,
            Op::Convert => ElemOp::Convert,
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            } => ElemOp::ReducePrecision(*exponent_bits, *mantissa_bits),
            Op::BitcastConvert => {
                let (ty, _) = small_array(&instr.shape, "the result")?;
                if array(0)?.ty.byte_size() != ty.byte_size() {
                    return Err("a bitcast-convert between widths".into());
                }
                ElemOp::Reinterpret
            }
            Op::CustomCall(_) if fma::is_fused_multiply_add(instr) => {
                let how = fma::fused_multiply_add(instr)
                    .map_err(|e| e.to_string())?
                    .ok_or("a multiply-add without its contraction")?;
                ElemOp::FusedMultiplyAdd(how)
            }
            other => return Err(format!("{} is not supported", other.opcode())),
        };
        let vals = (0..operands.len())
            .map(array)
            .collect::<std::result::Result<Vec<Val>, Why>>()?;
        self.elementwise(instr, elem, &vals)
    }

    fn elementwise(
        &mut self,
        instr: &HloInstruction,
        op: ElemOp,
        operands: &[Val],
    ) -> std::result::Result<Value, Why> {
        let (ty, count) = small_array(&instr.shape, "the result")?;
        if operands.is_empty() || operands.len() > 3 {
            return Err(format!("{} operands", operands.len()));
        }
        if let Some(bad) = operands.iter().find(|v| v.count != count && v.count != 1) {
            return Err(format!(
                "an operand of {} elements for a result of {count}",
                bad.count
            ));
        }
        let types: SmallVec<[ElementType; 3]> = operands.iter().map(|v| v.ty).collect();
        // All operands one element: so is the result.
        let n = if operands.iter().all(Val::single) {
            1
        } else {
            count
        };
        let scalar = scalar_op(&op, &types, ty)
            .filter(|_| n == 1)
            .and_then(|(op, sty)| Some((op, scalar_fn(op, sty)?)));
        let vector = vector_op(&op, &types, ty).filter(|_| n > 1);
        let mut locs = [Loc::Arena(0); 3];
        for (l, v) in locs.iter_mut().zip(operands) {
            *l = if vector.is_some() {
                // A one-element operand of a larger result stands for
                // every position, as a splat does.
                let whole = if v.count == n {
                    *v
                } else {
                    Val {
                        count: n,
                        splat: true,
                        ..*v
                    }
                };
                self.expand(whole)?
            } else {
                v.loc
            };
        }
        // A binary op's third operand is not used: any array of `n`
        // elements of the type will do for the loops that read it anyway.
        if operands.len() == 2 {
            locs[2] = locs[0];
        }
        let dst = self.alloc(ty, n)?;
        let step = if let Some((op, code)) = scalar {
            Step::Scalar {
                op,
                code,
                args: locs,
                dst,
            }
        } else if let Some(op) = vector {
            Step::Vector {
                op,
                code: vector_fn(op, ty == ElementType::F64),
                args: locs,
                dst,
                n,
            }
        } else {
            let args = operands
                .iter()
                .map(|v| {
                    if v.single() && n != 1 {
                        Operand::Scalar(v.loc)
                    } else {
                        Operand::Array(v.loc)
                    }
                })
                .collect();
            Step::Kernel {
                kernel: kernel_for(&op, &types, ty).map_err(|e| e.to_string())?,
                args,
                dst,
                n,
            }
        };
        self.steps.push(step);
        Ok(Value::Array(Val {
            loc: dst,
            ty,
            count,
            splat: n == 1 && count != 1,
        }))
    }

    /// A reduction of one array to one element with a single-op reducer.
    fn reduce(
        &mut self,
        instr: &HloInstruction,
        operands: &[Value],
        to_apply: CompId,
    ) -> std::result::Result<Value, Why> {
        let (ty, count) = small_array(&instr.shape, "the result")?;
        let (Some(Value::Array(x)), Some(Value::Array(init)), 2) =
            (operands.first(), operands.get(1), operands.len())
        else {
            return Err("a variadic reduce".into());
        };
        if count != 1 || init.count != 1 || x.ty != ty || init.ty != ty {
            return Err("a reduce to more than one element".into());
        }
        let Some((op, reducer_ty)) = binary_reducer(self.module, to_apply) else {
            return Err("a reducer that is not one binary op".into());
        };
        if reducer_ty != ty {
            return Err("a reducer of another type".into());
        }
        let fold = ops::fold(op, ty).map_err(|e| e.to_string())?;
        let src = self.materialize(*x)?;
        let dst = self.alloc(ty, 1)?;
        self.steps.push(Step::Fold {
            fold,
            src,
            n: x.count,
            init: init.loc,
            dst,
        });
        Ok(Value::Array(Val {
            loc: dst,
            ty,
            count: 1,
            splat: false,
        }))
    }

    /// Makes the body leave its results in the state leaves (see the module
    /// doc).
    fn finish_body(&mut self, results: &mut [Val]) -> std::result::Result<(), Why> {
        let reads_after = |steps: &[Step], from: usize, loc: Loc| {
            steps[from..].iter().any(|s| s.reads().contains(&loc))
        };
        // Results computed into the arena by one step, written in place.
        for k in 0..results.len() {
            let v = results[k];
            let state = Loc::State(k as u32);
            if v.splat || !matches!(v.loc, Loc::Arena(_)) {
                continue;
            }
            if results.iter().filter(|r| r.loc == v.loc).count() != 1
                || results.iter().any(|r| r.loc == state)
            {
                continue;
            }
            let Some(i) = self.steps.iter().rposition(|s| s.dst() == v.loc) else {
                continue;
            };
            if reads_after(&self.steps, i + 1, state) {
                continue;
            }
            self.steps[i].set_dst(state);
            for s in &mut self.steps[i + 1..] {
                s.rename_reads(v.loc, state);
            }
            for r in results.iter_mut() {
                if r.loc == v.loc {
                    r.loc = state;
                }
            }
        }
        // The rest are copied: first every old state leaf they read is set
        // aside, then each goes to its leaf.
        let mut moves: Vec<(usize, Val)> = Vec::new();
        for (k, v) in results.iter().enumerate() {
            if v.loc != Loc::State(k as u32) || v.splat {
                moves.push((k, *v));
            }
        }
        for (_, v) in moves.iter_mut() {
            if let Loc::State(_) = v.loc {
                let n = if v.splat { 1 } else { v.count };
                let tmp = self.alloc(v.ty, n)?;
                self.steps.push(Step::Copy {
                    src: v.loc,
                    dst: tmp,
                    bytes: v.ty.byte_size() * n,
                });
                v.loc = tmp;
            }
        }
        for (k, v) in moves {
            let dst = Loc::State(k as u32);
            self.steps.push(if v.splat {
                Step::Fill {
                    src: v.loc,
                    dst,
                    n: v.count,
                    width: v.ty.byte_size(),
                }
            } else {
                Step::Copy {
                    src: v.loc,
                    dst,
                    bytes: v.ty.byte_size() * v.count,
                }
            });
        }
        Ok(())
    }
}

/// The interpreter's own form of an op on one element, where it has one
/// (see [`ScalarOp`]).
fn scalar_op(
    op: &ElemOp,
    types: &[ElementType],
    result: ElementType,
) -> Option<(ScalarOp, ScalarType)> {
    use ElementType as E;
    let of = |t: ElementType| match t {
        E::Pred => Some(ScalarType::Pred),
        E::S32 => Some(ScalarType::S32),
        E::S64 => Some(ScalarType::S64),
        E::U32 => Some(ScalarType::U32),
        E::U64 => Some(ScalarType::U64),
        E::F32 => Some(ScalarType::F32),
        E::F64 => Some(ScalarType::F64),
        _ => None,
    };
    let same = |t: ElementType| types.iter().all(|&u| u == t);
    match op {
        ElemOp::Binary(b) if same(result) => {
            let ty = of(result)?;
            let float = result.is_float();
            let int = result.is_integer();
            let op = match b {
                BinaryOp::Add if float || int => ScalarOp::Add,
                BinaryOp::Subtract if float || int => ScalarOp::Sub,
                BinaryOp::Multiply if float || int => ScalarOp::Mul,
                BinaryOp::Divide if float => ScalarOp::Div,
                BinaryOp::And if !float => ScalarOp::And,
                BinaryOp::Or if !float => ScalarOp::Or,
                BinaryOp::Xor if !float => ScalarOp::Xor,
                _ => return None,
            };
            Some((op, ty))
        }
        ElemOp::Compare(d, how) if types.len() == 2 && same(types[0]) => {
            let t = types[0];
            let default = if t.is_float() {
                ComparisonType::Float
            } else if t.is_signed_int() {
                ComparisonType::Signed
            } else {
                ComparisonType::Unsigned
            };
            if t == E::Pred || how.is_some_and(|h| h != default) {
                return None;
            }
            Some((ScalarOp::Compare(*d), of(t)?))
        }
        ElemOp::Select
            if types.len() == 3
                && types[0] == E::Pred
                && types[1] == result
                && types[2] == result =>
        {
            Some((ScalarOp::Select, of(result)?))
        }
        _ => None,
    }
}

/// The interpreter's own loop for an `f32`/`f64` op, where it has one (see
/// [`VectorOp`]).
fn vector_op(op: &ElemOp, types: &[ElementType], result: ElementType) -> Option<VectorOp> {
    if !matches!(result, ElementType::F32 | ElementType::F64) || types.iter().any(|&t| t != result)
    {
        return None;
    }
    Some(match op {
        ElemOp::Binary(BinaryOp::Add) => VectorOp::Add,
        ElemOp::Binary(BinaryOp::Subtract) => VectorOp::Sub,
        ElemOp::Binary(BinaryOp::Multiply) => VectorOp::Mul,
        ElemOp::Binary(BinaryOp::Divide) => VectorOp::Div,
        ElemOp::FusedMultiplyAdd(how) if has_avx2_fma() => VectorOp::Fma(*how),
        _ => return None,
    })
}
