//! platform-host (being written)

pub mod vmath;
