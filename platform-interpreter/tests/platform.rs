//! The platform path: registry, executors, memory accounting, streams, events,
//! argument checks, layouts of arguments and results, profiling.

mod support;
use platform_api::registry;
use platform_api::{
    Availability, Code, CompileOptions, Compiler, EventStatus, Layout, Literal, ProfileSink,
    RunOptions,
};
use platform_interpreter::InterpreterCompiler;
use std::sync::Arc;
use support::*;

#[test]
fn registered_with_priority_and_device_count() {
    let reg = registry::find_platform("interpreter").unwrap();
    assert_eq!(reg.name, "Interpreter");
    assert_eq!(reg.priority, 40);
    assert!(matches!((reg.probe)(), Availability::Available { .. }));
    assert_eq!(registry::platform("Interpreter").unwrap().device_count(), 1);
    let (platform, _) = executor(3);
    assert_eq!(platform.device_count(), 3);
    assert_eq!(platform.executor(2).unwrap().ordinal(), 2);
    assert_eq!(platform.executor(3).err().unwrap().code(), Code::OutOfRange);
    assert!(Arc::ptr_eq(
        &platform.executor(1).unwrap(),
        &platform.executor(1).unwrap()
    ));
    assert!(registry::compiler("Interpreter").is_ok());
    assert!(registry::transfer_manager("Interpreter").is_ok());
}

#[test]
fn allocations_are_aligned_and_accounted() {
    let (_p, ex) = executor(1);
    let a = ex.allocate(100).unwrap();
    let b = ex.allocate(28).unwrap();
    assert_eq!(a.opaque as usize % 64, 0);
    assert_eq!(b.opaque as usize % 64, 0);
    let usage = ex.memory_usage();
    assert_eq!((usage.bytes_in_use, usage.live_allocations), (128, 2));
    // SAFETY: both came from this executor and are freed once.
    unsafe {
        ex.deallocate(a);
        ex.deallocate(b);
        // A second free of the same pointer is ignored, not a double free.
        ex.deallocate(a);
    }
    let usage = ex.memory_usage();
    assert_eq!(
        (
            usage.bytes_in_use,
            usage.live_allocations,
            usage.peak_bytes_in_use
        ),
        (0, 0, 128)
    );
    // An empty allocation is a non-null address of no bytes, counted until freed.
    let empty = ex.allocate(0).unwrap();
    assert!(!empty.is_null() && empty.size == 0);
    assert_eq!(ex.memory_usage().live_allocations, 1);
    // SAFETY: allocated above, unused.
    unsafe { ex.deallocate(empty) };
    assert_eq!(ex.memory_usage().live_allocations, 0);
}

#[test]
fn executions_leave_no_memory_behind() {
    let (_p, ex) = executor(1);
    let compiler = InterpreterCompiler;
    let text = "HloModule m\nENTRY e { p = f32[2,3] parameter(0)\n r = f32[2,3] reverse(p), dimensions={1}\n t = f32[3,2] transpose(p), dimensions={1,0}\n inner = (f32[3,2], f32[2,3]) tuple(t, p)\n ROOT o = (f32[2,3], (f32[3,2], f32[2,3])) tuple(r, inner) }";
    let exe = compiler
        .compile(parse(text), &ex, &CompileOptions::default())
        .unwrap();
    let stream = ex.clone().create_stream().unwrap();
    let tm = registry::transfer_manager("Interpreter").unwrap();
    for _ in 0..3 {
        let arg = tm.literal_to_device(&stream, &counting(&[2, 3])).unwrap();
        let result = exe
            .execute_on_stream(&RunOptions::new(stream.clone()), &[&arg])
            .unwrap();
        assert!(ex.memory_usage().bytes_in_use > 0);
        let out = tm
            .transfer_literal_from_device(&stream, &result)
            .unwrap()
            .decompose_tuple();
        assert_eq!(f32s(&out[0]), [2., 1., 0., 5., 4., 3.]);
        let inner = out[1].tuple_elements();
        assert_eq!(f32s(&inner[0]), [0., 3., 1., 4., 2., 5.]);
        assert_eq!(f32s(&inner[1]), [0., 1., 2., 3., 4., 5.]);
        // The tuple index table points at the element buffers.
        let table = stream.read_to_vec(result.root_buffer(), 16).unwrap();
        let first = u64::from_le_bytes(table[..8].try_into().unwrap());
        assert_eq!(first, result.buffer(&[0]).unwrap().mem().addr());
        drop(result);
        drop(arg);
        let usage = ex.memory_usage();
        assert_eq!(
            (usage.bytes_in_use, usage.live_allocations),
            (0, 0),
            "memory left after an execution"
        );
    }
}

#[test]
fn argument_mismatches_are_errors_naming_the_parameter() {
    let (_p, ex) = executor(1);
    let text = "HloModule m\nENTRY e { a = f32[2] parameter(0)\n b = s32[3] parameter(1)\n ROOT t = (f32[2], s32[3]) tuple(a, b) }";
    let exe = InterpreterCompiler
        .compile(parse(text), &ex, &CompileOptions::default())
        .unwrap();
    let stream = ex.clone().create_stream().unwrap();
    let tm = registry::transfer_manager("Interpreter").unwrap();
    let a = tm.literal_to_device(&stream, &counting(&[2])).unwrap();
    let wrong = tm
        .literal_to_device(&stream, &Literal::vector(&[1i32, 2]))
        .unwrap();
    let err = exe
        .execute_on_stream(&RunOptions::new(stream.clone()), &[&a])
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("takes 2 arguments"), "{err}");
    let err = exe
        .execute_on_stream(&RunOptions::new(stream.clone()), &[&a, &wrong])
        .unwrap_err();
    assert!(
        err.message().contains("parameter 1")
            && err.message().contains("s32[2]")
            && err.message().contains("s32[3]"),
        "{err}"
    );
}

#[test]
fn layouts_of_arguments_and_results_are_honoured() {
    let (_p, ex) = executor(1);
    // The result is declared column-major; the argument arrives column-major.
    let text = "HloModule m\nENTRY e { p = f32[2,3]{1,0} parameter(0)\n ROOT r = f32[2,3]{0,1} reverse(p), dimensions={0} }";
    let mut arg = counting(&[2, 3]);
    arg.set_layout(Some(Layout {
        minor_to_major: vec![0, 1],
        ..Layout::default()
    }));
    let out = run_on_device(&ex, text, &[arg], |_| {}).unwrap();
    assert_eq!(f32s(&out), [3., 4., 5., 0., 1., 2.]);
}

#[test]
fn runtime_errors_come_back_from_the_stream_which_recovers() {
    let (_p, ex) = executor(1);
    let text = r#"HloModule m
c { cs = pred[] parameter(0)
 ROOT t = pred[] constant(true) }
b { ROOT bs = pred[] parameter(0) }
ENTRY e { x = pred[] constant(true)
 ROOT w = pred[] while(x), condition=c, body=b }"#;
    let err = run_on_device(&ex, text, &[], |o| o.while_step_limit = Some(10)).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert!(err.message().contains("%w"), "{err}");
    // The same executor and a fresh run work afterwards.
    let ok = "HloModule m\nENTRY e { ROOT c = s32[2] constant({4, 5}) }";
    assert_eq!(s32s(&run_on_device(&ex, ok, &[], |_| {}).unwrap()), [4, 5]);
}

#[test]
fn streams_check_copies_and_events_complete() {
    let (_p, ex) = executor(1);
    let stream = ex.clone().create_stream().unwrap();
    let mem = ex.allocate(8).unwrap();
    stream
        .memcpy_host_to_device(mem, &[1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    assert_eq!(
        stream.read_to_vec(mem, 8).unwrap(),
        [1, 2, 3, 4, 5, 6, 7, 8]
    );
    // Too long for the buffer, and memory the executor never allocated.
    assert!(stream.memcpy_host_to_device(mem, &[0; 9]).is_err());
    let mut local = [0u8; 8];
    let foreign = platform_api::DeviceMemoryBase::new(local.as_mut_ptr().cast(), 8);
    assert!(stream.memcpy_host_to_device(foreign, &[0; 8]).is_err());
    let event = ex.clone().create_event().unwrap();
    assert_eq!(event.status(), EventStatus::Pending);
    stream.record_event(&event).unwrap();
    assert_eq!(event.status(), EventStatus::Complete);
    event.synchronize().unwrap();
    // A failing callback poisons later work until the error is collected.
    stream
        .host_callback(Box::new(|| Err(platform_api::Error::internal("boom"))))
        .unwrap();
    stream
        .host_callback(Box::new(|| panic!("work after a failure must be skipped")))
        .unwrap();
    let err = stream.block_host_until_done().unwrap_err();
    assert!(err.message().contains("boom"));
    stream.block_host_until_done().unwrap();
    // SAFETY: allocated above, freed once.
    unsafe { ex.deallocate(mem) };
}

#[test]
fn profile_records_one_span_per_instruction() {
    let (_p, ex) = executor(1);
    let sink = Arc::new(ProfileSink::new());
    let text = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n r = f32[4] reverse(p), dimensions={0}\n ROOT s = f32[2] slice(r), slice={[0:2]} }";
    let s2 = sink.clone();
    let out = run_on_device(&ex, text, &[counting(&[4])], move |o| o.profile = Some(s2)).unwrap();
    assert_eq!(f32s(&out), [3., 2.]);
    let events = sink.events();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["p", "r", "s"]);
    assert_eq!(events[1].category, "reverse");
    assert!(events.iter().all(|e| e.duration_us >= 0.0));
}
