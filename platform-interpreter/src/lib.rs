//! platform-interpreter (being written)
