//! [`AsyncClient`]: the [`LocalClient`] for async code on Tokio.
//!
//! Compiling and executing block the calling thread (they wait for a compiler or
//! a device). An async task must not do that on a runtime worker thread, or every
//! other task on that worker stalls. So each call here hands the blocking work to
//! Tokio's blocking pool (`spawn_blocking`) and awaits it; the worker threads stay
//! free. The wrapped [`LocalClient`] is shared, so its compile cache and stream
//! pools serve sync and async callers alike.

use crate::client::{
    BufferExecution, Compiled, DeviceBuffer, ExecuteOptions, Execution, LoadedExecutable,
    LocalClient,
};
use platform_api::{CompileOptions, Error, HloModule, Literal, Result};
use std::sync::Arc;

/// Async front of a [`LocalClient`]. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AsyncClient {
    local: Arc<LocalClient>,
}

impl AsyncClient {
    pub fn new(local: Arc<LocalClient>) -> AsyncClient {
        AsyncClient { local }
    }

    /// The client doing the work.
    pub fn local(&self) -> &Arc<LocalClient> {
        &self.local
    }

    /// Runs `work` on Tokio's blocking pool and waits for it without blocking the
    /// runtime. Fails (rather than panicking) outside a Tokio runtime.
    async fn offload<T: Send + 'static>(
        &self,
        work: impl FnOnce(&LocalClient) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let handle = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::failed_precondition("AsyncClient must be used inside a Tokio runtime")
        })?;
        let local = self.local.clone();
        handle
            .spawn_blocking(move || work(&local))
            .await
            .map_err(|e| Error::internal(format!("a blocking client task failed: {e}")))?
    }

    /// [`LocalClient::compile`] without blocking the runtime.
    pub async fn compile(&self, module: HloModule, options: CompileOptions) -> Result<Compiled> {
        self.offload(move |c| c.compile(&module, &options)).await
    }

    /// [`LocalClient::execute`] without blocking the runtime.
    pub async fn execute(&self, exe: Arc<LoadedExecutable>, args: Vec<Literal>) -> Result<Literal> {
        self.offload(move |c| c.execute(&exe, &args)).await
    }

    /// [`LocalClient::execute_with`] without blocking the runtime.
    pub async fn execute_with(
        &self,
        exe: Arc<LoadedExecutable>,
        args: Vec<Literal>,
        options: ExecuteOptions,
    ) -> Result<Execution> {
        self.offload(move |c| c.execute_with(&exe, &args, &options))
            .await
    }

    /// [`LocalClient::to_device`] without blocking the runtime.
    pub async fn to_device(&self, literal: Literal, device: usize) -> Result<DeviceBuffer> {
        self.offload(move |c| c.to_device(&literal, device)).await
    }

    /// [`LocalClient::execute_buffers`] without blocking the runtime.
    pub async fn execute_buffers(
        &self,
        exe: Arc<LoadedExecutable>,
        args: Vec<DeviceBuffer>,
        options: ExecuteOptions,
    ) -> Result<BufferExecution> {
        self.offload(move |c| {
            let refs: Vec<&DeviceBuffer> = args.iter().collect();
            c.execute_buffers(&exe, &refs, &options)
        })
        .await
    }

    /// [`LocalClient::to_literal`] without blocking the runtime.
    pub async fn to_literal(&self, buffer: DeviceBuffer) -> Result<Literal> {
        self.offload(move |c| c.into_literal(buffer)).await
    }
}
