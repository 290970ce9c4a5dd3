//! [`Executable`]: a compiled program, and what one execution needs and reports.

use crate::device::Stream;
use crate::error::Result;
use crate::hlo::HloModule;
use crate::memory::ShapedBuffer;
use crate::placer::DeviceAssignment;
use crate::profile::ProfileSink;
use crate::progress::Progress;
use crate::shape::Shape;
use std::sync::Arc;

/// What one execution runs with.
#[derive(Clone)]
pub struct RunOptions {
    /// The stream the execution is enqueued on (its executor is the device).
    pub stream: Arc<dyn Stream>,
    /// Placement of replicas and partitions; `None` for a single-device run.
    pub device_assignment: Option<Arc<DeviceAssignment>>,
    /// Which replica and partition this execution is.
    pub replica: usize,
    pub partition: usize,
    /// Identifies one multi-device launch: executions of different replicas with
    /// the same `run_id` meet at collectives.
    pub run_id: u64,
    /// Seed for `rng` instructions.
    pub rng_seed: u64,
    /// Where per-instruction timings go, if wanted.
    pub profile: Option<Arc<ProfileSink>>,
    /// Upper bound on `while` iterations, for catching runaway loops (`None`: no bound).
    pub while_step_limit: Option<u64>,
    /// Where a platform reports progress a watcher can show (loop iterations
    /// done), if anyone watches.
    pub progress: Option<Arc<Progress>>,
}

impl RunOptions {
    /// Options for a plain single-device execution on `stream`.
    pub fn new(stream: Arc<dyn Stream>) -> Self {
        RunOptions {
            stream,
            device_assignment: None,
            replica: 0,
            partition: 0,
            run_id: 0,
            rng_seed: 0,
            profile: None,
            while_step_limit: None,
            progress: None,
        }
    }
}

/// A compiled program for one platform.
///
/// # Arguments and results
/// `arguments[i]` is the `i`-th entry parameter, on the stream's device, in the
/// device shape the platform's transfer manager gives that parameter's shape. The
/// result is a new [`ShapedBuffer`] that may share allocations with the arguments
/// (a program that returns a parameter returns that buffer).
///
/// # Threading
/// Executables are immutable and shared: any number of threads may execute the
/// same one at once, each on its own stream.
pub trait Executable: Send + Sync {
    /// The module as compiled (after the platform's passes).
    fn module(&self) -> &HloModule;

    /// Enqueues one execution on `options.stream` and returns its result buffers.
    /// Their contents are valid once the stream has run everything enqueued; an
    /// error raised while running comes back from the stream's
    /// `block_host_until_done`.
    fn execute_async_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer>;

    /// Runs one execution and waits for it.
    fn execute_on_stream(
        &self,
        options: &RunOptions,
        arguments: &[&ShapedBuffer],
    ) -> Result<ShapedBuffer> {
        let result = self.execute_async_on_stream(options, arguments)?;
        options.stream.block_host_until_done()?;
        Ok(result)
    }

    /// The entry computation's parameter shapes.
    fn parameter_shapes(&self) -> Vec<Shape> {
        self.module().entry_program_shape().parameters
    }

    /// The entry computation's result shape.
    fn result_shape(&self) -> Shape {
        self.module().entry_program_shape().result
    }

    /// Bytes of device memory one execution needs at its peak beyond its
    /// arguments, when the backend knows (buffer assignment); `None` otherwise.
    fn peak_memory_bytes(&self) -> Option<u64> {
        None
    }
}
