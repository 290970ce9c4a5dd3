//! Custom-call registry and ABIs (being written).
