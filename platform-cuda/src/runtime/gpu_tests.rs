//! Tests that need a GPU. Each skips, printing why, where the probe says
//! CUDA is unavailable (run with `--nocapture` to see the reason).

use super::{create_platform, probe, CudaExecutor, CudaStream, StreamRun};
use crate::run::KernelDevice;
use platform_api::registry::Availability;
use platform_api::{Code, EventStatus, Platform, PlatformOptions, Stream};
use std::sync::Arc;

/// Stores the 32-bit value 42 at its one pointer argument.
const WRITE42_PTX: &str = r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry write42(
    .param .u64 write42_param_0
)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;

    ld.param.u64 %rd1, [write42_param_0];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, 42;
    st.global.u32 [%rd2], %r1;
    ret;
}
"#;

fn platform_or_skip(test: &str) -> Option<Arc<dyn Platform>> {
    match probe() {
        Availability::Available { .. } => {
            Some(create_platform(&PlatformOptions::default()).unwrap())
        }
        Availability::Unavailable(why) => {
            println!("skipping {test}: CUDA unavailable: {why}");
            None
        }
    }
}

#[test]
fn copies_callbacks_and_events_on_a_gpu() {
    let Some(platform) = platform_or_skip("copies_callbacks_and_events_on_a_gpu") else {
        return;
    };
    let exec = platform.executor(0).unwrap();
    let cuda = exec.as_any().downcast_ref::<CudaExecutor>().unwrap();
    println!(
        "{:?} cc {:?}",
        exec.description(),
        cuda.compute_capability()
    );
    let before = exec.memory_usage();
    let mem = exec.allocate(1000).unwrap();
    let empty = exec.allocate(0).unwrap();
    assert_eq!(exec.memory_usage().bytes_in_use, before.bytes_in_use + 1000);
    let stream = exec.clone().create_stream().unwrap();
    let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    stream.memcpy_host_to_device(mem, &data).unwrap();
    assert_eq!(stream.read_to_vec(mem, 1000).unwrap(), data);

    stream
        .host_callback(Box::new(|| Err(platform_api::Error::internal("cb failed"))))
        .unwrap();
    let err = stream.block_host_until_done().unwrap_err();
    assert!(err.message().contains("cb failed"), "{}", err.message());
    stream.block_host_until_done().unwrap();

    let event = exec.clone().create_event().unwrap();
    assert_eq!(event.status(), EventStatus::Pending);
    stream.record_event(&event).unwrap();
    event.synchronize().unwrap();
    assert_eq!(event.status(), EventStatus::Complete);

    unsafe {
        exec.deallocate(mem);
        exec.deallocate(empty);
    }
    assert_eq!(exec.memory_usage().bytes_in_use, before.bytes_in_use);
}

#[test]
fn modules_load_and_kernels_launch_on_a_gpu() {
    let Some(platform) = platform_or_skip("modules_load_and_kernels_launch_on_a_gpu") else {
        return;
    };
    let exec = platform.executor(0).unwrap();
    let cuda = exec.as_any().downcast_ref::<CudaExecutor>().unwrap();
    let bad = cuda.load_module("not ptx", &[]).err().unwrap();
    assert!(
        bad.message().contains("cuModuleLoadDataEx"),
        "{}",
        bad.message()
    );
    let missing = cuda
        .load_module(WRITE42_PTX, &["nope".to_string()])
        .err()
        .unwrap();
    assert!(missing.message().contains("nope"), "{}", missing.message());

    let module = cuda
        .load_module(WRITE42_PTX, &["write42".to_string()])
        .unwrap();
    let stream = exec.clone().create_stream().unwrap();
    let stream = stream.as_any().downcast_ref::<CudaStream>().unwrap();
    let run = StreamRun {
        stream,
        module: &module,
    };
    let p = run.alloc(4).unwrap();
    run.upload(p, &[0; 4]).unwrap();
    run.launch(0, 1, 1, &[p]).unwrap();
    let mut out = [0u8; 4];
    run.download(p, &mut out).unwrap();
    assert_eq!(u32::from_le_bytes(out), 42);
    let q = run.alloc(4).unwrap();
    run.copy(q, p, 4).unwrap();
    run.download(q, &mut out).unwrap();
    assert_eq!(u32::from_le_bytes(out), 42);
    unsafe {
        run.free(p);
        run.free(q);
    }
    let unknown = run
        .custom_call(
            "cudart_gpu_no_such_target",
            platform_api::hlo::CustomCallApiVersion::Original,
            &[],
            b"",
        )
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    stream.block_host_until_done().unwrap();
}
