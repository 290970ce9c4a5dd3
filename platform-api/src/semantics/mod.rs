//! Scalar and elementwise semantics shared by every backend (being written).
