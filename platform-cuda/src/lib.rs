//! platform-cuda (being written)
