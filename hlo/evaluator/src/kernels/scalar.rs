//! A fast, exact evaluator for the tiny scalar computations kernels call per
//! element: reducers, sort comparators, scatter combiners, select functions.
//!
//! Calling [`CallComputation::call`] for every element builds literals for each
//! argument and result, which is far too slow for a 16M-element reduction or a
//! 1M-element sort. Nearly every such computation is a handful of scalar
//! parameters, constants and elementwise ops, so [`ScalarProgram`] compiles it
//! once into a straight-line list of steps over registers of [`Scalar`]s (the
//! shared front end, `hlo_ir::analysis::scalar_program`, which the Host's
//! scalar programs use too) and evaluates each step with the shared semantics
//! functions (`hlo_semantics`), the same ones the interpreter's elementwise ops
//! use — so a compiled computation computes bit for bit what calling it would.
//!
//! What compiles: `parameter`, `constant`, every unary and binary elementwise op,
//! `compare`, `select`, `clamp`, `convert`, `bitcast-convert`,
//! `reduce-precision`, the identities on scalars (`copy`, `reshape`, `bitcast`,
//! `broadcast`), `tuple` / `get-tuple-element`, and `call` (inlined), all on
//! one-element values; the front end's error names whatever else stops it. Then [`ScalarProgram::compile`] returns
//! `None`, and kernels fall back to [`CallComputation::call`] through
//! [`Subcomputation`].
//!
//! [`Subcomputation`] also recognises the most common reducers — the root is a
//! binary op of the two parameters, e.g. `add(p0, p1)` — so kernels can run them
//! as typed loops ([`typed_binary`]) with no per-element dispatch at all.

use super::util::Element;
use super::CallComputation;
use hlo_ir::analysis;
use hlo_ir::analysis::scalar_program::{self as front, ComputationSource, ScalarOp};
use hlo_ir::{BinaryOp, CompId, HloComputation, InstrId};
use hlo_ir::{ElementType, Error, Literal, Result, Scalar, Shape};
use hlo_semantics as semantics;
use std::cell::RefCell;

/// The kernels' computations, as the shared front end looks them up.
struct Source<'a>(&'a dyn CallComputation);

impl ComputationSource for Source<'_> {
    fn computation(&self, id: CompId) -> Option<&HloComputation> {
        Some(self.0.computation(id))
    }
}

/// A scalar computation compiled to straight-line steps (the shared front
/// end's [`front::ScalarProgram`]), run on registers of [`Scalar`]s.
#[derive(Clone, Debug)]
pub struct ScalarProgram {
    program: front::ScalarProgram,
    param_types: Vec<ElementType>,
    output_types: Vec<ElementType>,
}

/// Working registers for running a [`ScalarProgram`] many times without
/// allocating.
#[derive(Clone, Debug)]
pub struct Frame {
    regs: Vec<Scalar>,
}

fn scalar_type(shape: &Shape) -> Option<ElementType> {
    match shape {
        Shape::Array(a) if a.dims.is_empty() => Some(a.element_type),
        _ => None,
    }
}

impl ScalarProgram {
    fn new(program: front::ScalarProgram) -> ScalarProgram {
        ScalarProgram {
            param_types: program.param_types(),
            output_types: program.output_types(),
            program,
        }
    }

    /// Compiles computation `id`, whose parameters and result must all be
    /// scalars or tuples of scalars. `None` if it uses anything the program
    /// cannot express (the kernel then calls the computation instead).
    pub fn compile(calls: &dyn CallComputation, id: CompId) -> Option<ScalarProgram> {
        front::ScalarProgram::compile(&Source(calls), id, &())
            .ok()
            .map(Self::new)
    }

    /// Compiles the expression rooted at `root` of computation `id` as a program
    /// of one parameter bound to the computation's parameter `param`; every other
    /// parameter must be unused. Used to pull a sort key out of a comparator.
    pub fn compile_expression(
        calls: &dyn CallComputation,
        id: CompId,
        root: InstrId,
        param: usize,
    ) -> Option<ScalarProgram> {
        front::ScalarProgram::compile_expression(&Source(calls), id, root, param, &())
            .ok()
            .map(Self::new)
    }

    /// Element types of the parameter leaves, in parameter order.
    pub fn param_types(&self) -> &[ElementType] {
        &self.param_types
    }

    /// Element types of the results (one for a scalar root, one per tuple element).
    pub fn output_types(&self) -> &[ElementType] {
        &self.output_types
    }

    /// Registers ready for [`run`](Self::run), with the constants loaded.
    pub fn frame(&self) -> Frame {
        let mut regs = vec![Scalar::Pred(false); self.program.num_regs()];
        for &(r, v) in &self.program.constants {
            regs[r as usize] = v;
        }
        Frame { regs }
    }

    /// Runs the program on `args` (one per parameter leaf, of the leaf's type),
    /// writing the results into `out` (one per output).
    pub fn run(&self, frame: &mut Frame, args: &[Scalar], out: &mut [Scalar]) -> Result<()> {
        self.execute(frame, args)?;
        for (o, leaf) in out.iter_mut().zip(&self.program.outputs) {
            *o = frame.regs[leaf.reg as usize];
        }
        Ok(())
    }

    /// Runs a program with exactly one output and returns it.
    pub fn run1(&self, frame: &mut Frame, args: &[Scalar]) -> Result<Scalar> {
        self.execute(frame, args)?;
        let leaf = self
            .program
            .outputs
            .first()
            .ok_or_else(|| Error::internal(format!("%{} has no result", self.program.name)))?;
        Ok(frame.regs[leaf.reg as usize])
    }

    fn execute(&self, frame: &mut Frame, args: &[Scalar]) -> Result<()> {
        let program = &self.program;
        if args.len() != program.params.len() || frame.regs.len() != program.num_regs() {
            return Err(Error::internal(format!(
                "computation %{} takes {} scalar arguments, got {}",
                program.name,
                program.params.len(),
                args.len()
            )));
        }
        let regs = &mut frame.regs;
        regs[..args.len()].copy_from_slice(args);
        for step in &program.steps {
            let arg = |k: usize| regs[step.args()[k] as usize];
            let to = program.reg_types[step.out as usize];
            let value = match step.op {
                ScalarOp::Unary(op) => semantics::unary_scalar(op, arg(0), to),
                ScalarOp::Binary(op) => semantics::binary_scalar(op, arg(0), arg(1)),
                ScalarOp::Compare {
                    direction,
                    compare_type,
                } => semantics::compare_scalar(direction, compare_type, arg(0), arg(1))
                    .map(Scalar::Pred),
                ScalarOp::Select => match arg(0) {
                    Scalar::Pred(true) => Ok(arg(1)),
                    Scalar::Pred(false) => Ok(arg(2)),
                    other => Err(Error::invalid_argument(format!(
                        "select predicate must be pred, got {}",
                        other.element_type()
                    ))),
                },
                ScalarOp::Clamp => semantics::clamp(
                    &Literal::from_scalar(arg(0)),
                    &Literal::from_scalar(arg(1)),
                    &Literal::from_scalar(arg(2)),
                )
                .and_then(|l| l.get(0)),
                ScalarOp::Convert => Ok(semantics::convert_scalar(arg(0), to)),
                ScalarOp::BitcastConvert => {
                    let v = arg(0);
                    let size = to.byte_size();
                    let mut bytes = [0u8; 16];
                    v.write_bytes(&mut bytes[..size]);
                    Ok(Scalar::from_bytes(to, &bytes[..size]))
                }
                ScalarOp::ReducePrecision {
                    exponent_bits,
                    mantissa_bits,
                } => semantics::reduce_precision(
                    &Literal::from_scalar(arg(0)),
                    exponent_bits,
                    mantissa_bits,
                )
                .and_then(|l| l.get(0)),
                ScalarOp::Extension(never) => match never {},
            };
            regs[step.out as usize] =
                value.map_err(|e| e.context(format!("in computation %{}", program.name)))?;
        }
        Ok(())
    }
}

/// How a kernel evaluates one of its subcomputations per element.
#[derive(Clone, Debug)]
enum Kind {
    /// The root is `op(p0, p1)` (`swapped`: `op(p1, p0)`) of two scalar parameters
    /// of one type: the kernel may run it as a typed loop.
    Binary {
        op: BinaryOp,
        swapped: bool,
        ty: ElementType,
    },
    /// The root is parameter `n` itself (scatter's "replace" combiner).
    Param(usize),
    Program(ScalarProgram),
    /// Not compilable: evaluated through [`CallComputation::call`].
    Call,
}

/// A subcomputation prepared for per-element evaluation: the fastest exact way
/// to run it, and the registers it needs.
#[derive(Clone, Debug)]
pub(crate) struct Subcomputation {
    id: CompId,
    kind: Kind,
    frame: Option<Frame>,
    num_params: usize,
    num_outputs: usize,
    param_types: Vec<Option<ElementType>>,
}

impl Subcomputation {
    pub(crate) fn new(calls: &dyn CallComputation, id: CompId) -> Subcomputation {
        let comp = calls.computation(id);
        let params = comp.parameters();
        let param_types: Vec<Option<ElementType>> = params
            .iter()
            .map(|&p| scalar_type(&comp.instr(p).shape))
            .collect();
        let root = comp.root_instr();
        let num_outputs = match &root.shape {
            Shape::Tuple(t) => t.len(),
            _ => 1,
        };
        let kind = if let Some(b) = analysis::combiner::binary_combiner(comp) {
            Some(Kind::Binary {
                op: b.op,
                swapped: b.swapped,
                ty: b.ty,
            })
        } else {
            analysis::combiner::returned_parameter(comp).map(Kind::Param)
        };
        let kind = kind.unwrap_or_else(|| match ScalarProgram::compile(calls, id) {
            Some(p) => Kind::Program(p),
            None => Kind::Call,
        });
        let frame = match &kind {
            Kind::Program(p) => Some(p.frame()),
            _ => None,
        };
        Subcomputation {
            id,
            kind,
            frame,
            num_params: params.len(),
            num_outputs,
            param_types,
        }
    }

    /// `(op, swapped, type)` when the computation is a plain binary op of its
    /// two parameters.
    pub(crate) fn as_binary(&self) -> Option<(BinaryOp, bool, ElementType)> {
        match self.kind {
            Kind::Binary { op, swapped, ty } => Some((op, swapped, ty)),
            _ => None,
        }
    }

    /// The parameter number when the computation returns one of its parameters.
    pub(crate) fn as_param(&self) -> Option<usize> {
        match self.kind {
            Kind::Param(n) => Some(n),
            _ => None,
        }
    }

    pub(crate) fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Checks that the computation takes `types.len()` scalar parameters of
    /// these types, so per-element evaluation cannot fail on a type mismatch.
    pub(crate) fn check_params(&self, what: &str, types: &[ElementType]) -> Result<()> {
        let ok = self.num_params == types.len()
            && self
                .param_types
                .iter()
                .zip(types)
                .all(|(p, t)| *p == Some(*t));
        if ok {
            Ok(())
        } else {
            let got: Vec<String> = self
                .param_types
                .iter()
                .map(|t| t.map_or("non-scalar".to_string(), |t| t.to_string()))
                .collect();
            let want: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            Err(Error::invalid_argument(format!(
                "{what} must take scalar parameters ({}), but takes ({})",
                want.join(", "),
                got.join(", ")
            )))
        }
    }

    /// Evaluates the computation on scalar `args`, writing its results to `out`.
    pub(crate) fn apply(
        &mut self,
        calls: &mut dyn CallComputation,
        args: &[Scalar],
        out: &mut [Scalar],
    ) -> Result<()> {
        match &self.kind {
            Kind::Binary { op, swapped, .. } => {
                let (a, b) = match args {
                    [a, b] if !*swapped => (*a, *b),
                    [a, b] => (*b, *a),
                    _ => return Err(Error::internal("binary subcomputation needs 2 arguments")),
                };
                out[0] = semantics::binary_scalar(*op, a, b)?;
                Ok(())
            }
            Kind::Param(n) => {
                out[0] = *args
                    .get(*n)
                    .ok_or_else(|| Error::internal("parameter out of range"))?;
                Ok(())
            }
            Kind::Program(p) => {
                let frame = self.frame.get_or_insert_with(|| p.frame());
                p.run(frame, args, out)
            }
            Kind::Call => {
                let literals: Vec<Literal> =
                    args.iter().map(|&a| Literal::from_scalar(a)).collect();
                let result = calls.call(self.id, &literals)?;
                if result.is_tuple() {
                    let elements = result.tuple_elements();
                    if elements.len() != out.len() {
                        return Err(Error::invalid_argument(format!(
                            "subcomputation returned {} values, {} expected",
                            elements.len(),
                            out.len()
                        )));
                    }
                    for (o, e) in out.iter_mut().zip(elements) {
                        *o = e.get(0)?;
                    }
                } else {
                    out[0] = result.get(0)?;
                }
                Ok(())
            }
        }
    }

    /// Evaluates a computation with one scalar result.
    pub(crate) fn apply1(
        &mut self,
        calls: &mut dyn CallComputation,
        args: &[Scalar],
    ) -> Result<Scalar> {
        let mut out = [Scalar::Pred(false)];
        self.apply(calls, args, &mut out)?;
        Ok(out[0])
    }
}

/// Receives a typed combine function from [`typed_binary`].
pub(crate) trait TypedBinary {
    type Output;
    fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, combine: F) -> Self::Output;
}

/// Holds the first error a typed combine hit (only the semantics-backed
/// combines can fail, and only if the semantics reject an op they accepted on
/// the probe — checked after the loop).
#[derive(Default)]
pub(crate) struct CombineError(RefCell<Option<Error>>);

impl CombineError {
    fn record(&self, e: Error) {
        let mut slot = self.0.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }
    /// The first recorded error, if any.
    pub(crate) fn take(&self) -> Result<()> {
        match self.0.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Calls `visitor.run` with a typed function computing `op(a, b)` (or `op(b, a)`
/// when `swapped`) on elements of type `ty`, bit-identical to
/// `semantics::binary_scalar`.
///
/// Integer add/mul (wrapping), and/or/xor and max/min are native Rust ops,
/// which are exactly XLA's; float add/mul/max/min and complex add/mul call the
/// shared semantics' typed functions (`semantics::float::maximum::<f32>`, ...),
/// so they are the same code the elementwise ops run, inlined. Any other op
/// calls `semantics::binary_scalar` per element; a probe call on zeros first
/// makes sure the semantics implement the op for this type, so `None` means
/// "no typed loop, use the generic path" (which reports the error).
pub(crate) fn typed_binary<V: TypedBinary>(
    op: BinaryOp,
    ty: ElementType,
    swapped: bool,
    errors: &CombineError,
    visitor: V,
) -> Option<V::Output> {
    use half::{bf16, f16};
    use hlo_semantics::{complex, float};
    use num_complex::{Complex32, Complex64};
    use BinaryOp as B;
    use ElementType as E;

    macro_rules! go {
        ($t:ty, $f:expr) => {{
            let f = $f;
            if swapped {
                Some(visitor.run::<$t, _>(move |a: $t, b: $t| f(b, a)))
            } else {
                Some(visitor.run::<$t, _>(f))
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            match op {
                B::Add => go!($t, |a: $t, b: $t| a.wrapping_add(b)),
                B::Multiply => go!($t, |a: $t, b: $t| a.wrapping_mul(b)),
                B::Maximum => go!($t, |a: $t, b: $t| a.max(b)),
                B::Minimum => go!($t, |a: $t, b: $t| a.min(b)),
                B::And => go!($t, |a: $t, b: $t| a & b),
                B::Or => go!($t, |a: $t, b: $t| a | b),
                B::Xor => go!($t, |a: $t, b: $t| a ^ b),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    macro_rules! floats {
        ($t:ty) => {
            match op {
                B::Add => go!($t, float::add::<$t>),
                B::Multiply => go!($t, float::multiply::<$t>),
                B::Maximum => go!($t, float::maximum::<$t>),
                B::Minimum => go!($t, float::minimum::<$t>),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    macro_rules! complexes {
        ($t:ty) => {
            match op {
                B::Add => go!($t, complex::add::<$t>),
                B::Multiply => go!($t, complex::multiply::<$t>),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    match ty {
        E::Pred => match op {
            B::And => go!(u8, |a: u8, b: u8| a & b),
            B::Or => go!(u8, |a: u8, b: u8| a | b),
            B::Xor => go!(u8, |a: u8, b: u8| a ^ b),
            _ => semantic::<u8, V>(op, ty, swapped, errors, visitor),
        },
        E::S8 => ints!(i8),
        E::S16 => ints!(i16),
        E::S32 => ints!(i32),
        E::S64 => ints!(i64),
        E::U8 => ints!(u8),
        E::U16 => ints!(u16),
        E::U32 => ints!(u32),
        E::U64 => ints!(u64),
        E::F16 => floats!(f16),
        E::BF16 => floats!(bf16),
        E::F32 => floats!(f32),
        E::F64 => floats!(f64),
        E::C64 => complexes!(Complex32),
        E::C128 => complexes!(Complex64),
        // Narrow types are widened before evaluation (`legalize::narrow`).
        _ => None,
    }
}

/// A typed combine that calls `semantics::binary_scalar` per element.
fn semantic<T: Element, V: TypedBinary>(
    op: BinaryOp,
    ty: ElementType,
    swapped: bool,
    errors: &CombineError,
    visitor: V,
) -> Option<V::Output> {
    let zero = Scalar::zero(ty);
    match semantics::binary_scalar(op, zero, zero) {
        Ok(v) if v.element_type() == ty => {}
        _ => return None,
    }
    let combine = move |a: T, b: T| -> T {
        let (a, b) = if swapped { (b, a) } else { (a, b) };
        let (sa, sb) = (
            super::util::to_scalar_of(a, ty),
            super::util::to_scalar_of(b, ty),
        );
        match semantics::binary_scalar(op, sa, sb) {
            Ok(v) => match T::from_scalar(v) {
                Some(v) => v,
                None => {
                    errors.record(Error::internal(format!(
                        "{op} on {ty} returned a {} value",
                        v.element_type()
                    )));
                    a
                }
            },
            Err(e) => {
                errors.record(e);
                a
            }
        }
    };
    Some(visitor.run::<T, _>(combine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::util::to_scalar_of;
    use half::{bf16, f16};
    use num_complex::{Complex32, Complex64};

    /// Applies the typed combine to every pair.
    struct Pairs<'a>(&'a [(Scalar, Scalar)], ElementType);

    impl TypedBinary for Pairs<'_> {
        type Output = Vec<Scalar>;
        fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, f: F) -> Vec<Scalar> {
            self.0
                .iter()
                .map(|&(a, b)| {
                    let (a, b) = (T::from_scalar(a).unwrap(), T::from_scalar(b).unwrap());
                    to_scalar_of(f(a, b), self.1)
                })
                .collect()
        }
    }

    fn specials(ty: ElementType) -> Vec<Scalar> {
        let floats = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            3.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e30,
            -1e-30,
        ];
        match ty {
            ElementType::Pred => vec![Scalar::Pred(false), Scalar::Pred(true)],
            ElementType::F16 => floats
                .iter()
                .map(|&v| Scalar::F16(f16::from_f64(v)))
                .collect(),
            ElementType::BF16 => floats
                .iter()
                .map(|&v| Scalar::BF16(bf16::from_f64(v)))
                .collect(),
            ElementType::F32 => floats.iter().map(|&v| Scalar::F32(v as f32)).collect(),
            ElementType::F64 => floats.iter().map(|&v| Scalar::F64(v)).collect(),
            ElementType::C64 => floats
                .iter()
                .zip(floats.iter().rev())
                .map(|(&a, &b)| Scalar::C64(Complex32::new(a as f32, b as f32)))
                .collect(),
            ElementType::C128 => floats
                .iter()
                .zip(floats.iter().rev())
                .map(|(&a, &b)| Scalar::C128(Complex64::new(a, b)))
                .collect(),
            _ => [0i64, 1, -1, 7, i64::MIN, i64::MAX, 200, -129]
                .iter()
                .map(|&v| semantics::convert_scalar(Scalar::S64(v), ty))
                .collect(),
        }
    }

    fn same(a: Scalar, b: Scalar) -> bool {
        let mut x = [0u8; 16];
        let mut y = [0u8; 16];
        a.write_bytes(&mut x[..a.element_type().byte_size()]);
        b.write_bytes(&mut y[..b.element_type().byte_size()]);
        a.element_type() == b.element_type() && x == y
    }

    #[test]
    fn typed_combines_are_bit_identical_to_binary_scalar() {
        use BinaryOp as B;
        let ops = [
            B::Add,
            B::Multiply,
            B::Maximum,
            B::Minimum,
            B::And,
            B::Or,
            B::Xor,
            B::Subtract,
            B::Divide,
        ];
        let mut checked = 0;
        for &ty in &ElementType::ALL {
            let values = specials(ty);
            let pairs: Vec<(Scalar, Scalar)> = values
                .iter()
                .flat_map(|&a| values.iter().map(move |&b| (a, b)))
                .collect();
            for &op in &ops {
                for swapped in [false, true] {
                    let errors = CombineError::default();
                    let Some(got) = typed_binary(op, ty, swapped, &errors, Pairs(&pairs, ty))
                    else {
                        // No typed loop means the semantics do not define the op here.
                        assert!(
                            semantics::binary_scalar(op, values[0], values[0]).is_err(),
                            "{op} {ty}"
                        );
                        continue;
                    };
                    errors.take().unwrap();
                    for (&(a, b), g) in pairs.iter().zip(got) {
                        let (x, y) = if swapped { (b, a) } else { (a, b) };
                        let want = semantics::binary_scalar(op, x, y).unwrap();
                        assert!(
                            same(g, want),
                            "{op} {ty} swapped={swapped}: {a} {b}: {g} vs {want}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 5000);
    }
}
