//! Deep recursion without stack overflow.
//!
//! Programs nest computations (calls, fusions, loop bodies, branches) as deep
//! as their author likes, and the compilers and evaluators in this workspace
//! follow that nesting recursively. A thread's stack is a few megabytes, so a
//! few thousand levels would abort the process. Every recursive step over
//! *program structure* goes through [`deep`], which moves onto a fresh heap
//! segment when the current stack runs low: the depth is then bounded by
//! memory, like the program itself.

/// Below this much remaining stack, [`deep`] switches to a new segment.
const RED_ZONE: usize = 1 << 20;
/// The size of each new segment.
const SEGMENT: usize = 16 << 20;

/// Runs `f`, first moving to a new stack segment if this one is nearly full.
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
