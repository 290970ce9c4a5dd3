//! platform-host (being written)
