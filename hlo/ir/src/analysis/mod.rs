//! Questions every backend asks of a program, answered once.
//!
//! A backend lowers the same HLO patterns to its fastest code: a reducer that is
//! just `add(p0, p1)` runs as a typed loop, a sort comparator that compares one
//! key per element sorts by keys, a convolution in any dimension order is
//! brought to one canonical order. Recognising those patterns is a question
//! about the program, not about a device, so the answers live here and the
//! reference evaluator and every backend share them: two backends cannot
//! disagree on which comparators are key comparisons, and a fix to a rule
//! reaches all of them.
//!
//! * [`collective_groups`] — which devices take part in a collective, by XLA's group modes.
//! * [`combiner`] — scalar computations that are one binary op of their two
//!   parameters, or that return a parameter (reducers, scatter combiners).
//! * [`scalar_program`] — small scalar computations (reducers, comparators,
//!   combiners) as straight-line register programs; backends only execute the steps.
//! * [`sort_comparator`] — comparators of the form `compare(f(lhs), f(rhs))`.
//! * [`convolution`] — a convolution's sizes in canonical order, checked.
//! * [`window`] — the output size of a sliding window.
//!
//! Every analysis is total: malformed input gives `None` or an error, never a
//! panic, and analyses that walk expression DAGs bound their work.

pub mod collective_groups;
pub mod combiner;
pub mod convolution;
pub mod scalar_program;
pub mod sort_comparator;
pub mod window;
