//! service (being written)
