//! The Host runtime through its public contracts: registration, memory
//! accounting, stream ordering, events across streams, error handling, and
//! asynchronous enqueueing.

use platform_api::registry;
use platform_api::{Code, EventStatus, Platform, PlatformOptions, Stream, StreamExecutor};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn executor() -> Arc<dyn StreamExecutor> {
    platform_host::runtime::platform::create(&PlatformOptions::default())
        .unwrap()
        .executor(0)
        .unwrap()
}

#[test]
fn registers_as_host_and_cpu_with_its_compiler_and_transfer_manager() {
    let by_alias = registry::find_platform("CPU").unwrap();
    assert_eq!(by_alias.name, "Host");
    assert_eq!(by_alias.priority, 60);
    assert!((by_alias.probe)().is_available());
    assert!(registry::compiler("Host").is_ok());
    assert!(registry::transfer_manager("Host").is_ok());
    let four = registry::create_platform(
        "host",
        &PlatformOptions {
            device_count: Some(4),
        },
    )
    .unwrap();
    assert_eq!(four.device_count(), 4);
    assert_eq!(four.executor(3).unwrap().ordinal(), 3);
    assert_eq!(four.executor(4).err().unwrap().code(), Code::OutOfRange);
    assert!(registry::create_platform(
        "host",
        &PlatformOptions {
            device_count: Some(0)
        }
    )
    .is_err());
    assert_eq!(registry::platform("cpu").unwrap().device_count(), 1);
}

#[test]
fn allocations_are_aligned_zeroed_and_counted() {
    let exec = executor();
    let before = exec.memory_usage();
    let a = exec.allocate(1000).unwrap();
    let b = exec.allocate(24).unwrap();
    assert_eq!(a.opaque as usize % 64, 0);
    assert_eq!(b.opaque as usize % 64, 0);
    // SAFETY: `a` holds 1000 bytes.
    assert!(
        unsafe { std::slice::from_raw_parts(a.opaque.cast::<u8>(), 1000) }
            .iter()
            .all(|&x| x == 0)
    );
    let during = exec.memory_usage();
    assert_eq!(during.bytes_in_use, before.bytes_in_use + 1024);
    assert_eq!(during.live_allocations, before.live_allocations + 2);
    // SAFETY: both came from `allocate` and are freed once.
    unsafe {
        exec.deallocate(a);
        exec.deallocate(b);
    }
    let after = exec.memory_usage();
    assert_eq!(after.bytes_in_use, before.bytes_in_use);
    assert_eq!(after.live_allocations, before.live_allocations);
    assert!(after.peak_bytes_in_use >= before.bytes_in_use + 1024);
}

#[test]
fn work_runs_in_enqueue_order_and_enqueue_returns_first() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (release, gate) = mpsc::channel::<()>();
    // The first item blocks until released: everything after it must wait.
    stream
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            Ok(())
        }))
        .unwrap();
    for i in 0..5 {
        let log = log.clone();
        stream
            .host_callback(Box::new(move || {
                log.lock().unwrap().push(i);
                Ok(())
            }))
            .unwrap();
    }
    // Enqueueing returned while the first item is still blocked.
    assert!(log.lock().unwrap().is_empty());
    release.send(()).unwrap();
    stream.block_host_until_done().unwrap();
    assert_eq!(*log.lock().unwrap(), vec![0, 1, 2, 3, 4]);
}

#[test]
fn copies_are_ordered_with_other_work() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let mem = exec.allocate(8).unwrap();
    stream
        .memcpy_host_to_device(mem, &[1, 2, 3, 4, 5, 6, 7, 8])
        .unwrap();
    let dev = exec.allocate(8).unwrap();
    stream.memcpy_device_to_device(dev, mem, 8).unwrap();
    // Overwrite the source after the device copy was enqueued: the copy must
    // have seen the first contents.
    stream.memcpy_host_to_device(mem, &[0; 8]).unwrap();
    assert_eq!(
        stream.read_to_vec(dev, 8).unwrap(),
        vec![1, 2, 3, 4, 5, 6, 7, 8]
    );
    assert_eq!(stream.read_to_vec(mem, 8).unwrap(), vec![0; 8]);
    assert!(stream.memcpy_host_to_device(mem, &[0; 9]).is_err());
    // SAFETY: allocations from this executor, freed once, no work pending.
    unsafe {
        exec.deallocate(mem);
        exec.deallocate(dev);
    }
}

#[test]
fn first_error_is_returned_once_and_later_work_is_skipped() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    stream
        .host_callback(Box::new(|| {
            Err(platform_api::Error::internal("first failure"))
        }))
        .unwrap();
    stream
        .host_callback(Box::new(|| {
            Err(platform_api::Error::internal("second failure"))
        }))
        .unwrap();
    let r = ran.clone();
    stream
        .host_callback(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
    let err = stream.block_host_until_done().unwrap_err();
    assert!(err.message().contains("first failure"), "{err}");
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "work after an error is skipped"
    );
    // The error is cleared: the stream works again.
    let r = ran.clone();
    stream
        .host_callback(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
    stream.block_host_until_done().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn panicking_work_becomes_an_error() {
    let stream = executor().create_stream().unwrap();
    stream.host_callback(Box::new(|| panic!("boom"))).unwrap();
    let err = stream.block_host_until_done().unwrap_err();
    assert_eq!(err.code(), Code::Internal);
    assert!(err.message().contains("boom"));
}

#[test]
fn events_order_work_across_two_streams() {
    let exec = executor();
    let producer = exec.clone().create_stream().unwrap();
    let consumer = exec.clone().create_stream().unwrap();
    let event = exec.clone().create_event().unwrap();
    assert_eq!(event.status(), EventStatus::Pending);
    event.synchronize().unwrap(); // never recorded: returns at once
    let log = Arc::new(Mutex::new(Vec::new()));
    let (release, gate) = mpsc::channel::<()>();
    let l = log.clone();
    producer
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            l.lock().unwrap().push("produce");
            Ok(())
        }))
        .unwrap();
    producer.record_event(&event).unwrap();
    consumer.wait_for_event(&event).unwrap();
    let l = log.clone();
    consumer
        .host_callback(Box::new(move || {
            l.lock().unwrap().push("consume");
            Ok(())
        }))
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        log.lock().unwrap().is_empty(),
        "the consumer must wait for the event"
    );
    assert_eq!(event.status(), EventStatus::Pending);
    release.send(()).unwrap();
    consumer.block_host_until_done().unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["produce", "consume"]);
    event.synchronize().unwrap();
    assert_eq!(event.status(), EventStatus::Complete);
}

#[test]
fn an_event_behind_a_failure_reports_error() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let event = exec.clone().create_event().unwrap();
    stream
        .host_callback(Box::new(|| Err(platform_api::Error::internal("broken"))))
        .unwrap();
    stream.record_event(&event).unwrap();
    assert!(event.synchronize().is_err());
    assert_eq!(event.status(), EventStatus::Error);
    assert!(stream.block_host_until_done().is_err());
}

#[test]
fn synchronize_all_activity_waits_for_every_stream() {
    let exec = executor();
    let done = Arc::new(AtomicUsize::new(0));
    let streams: Vec<Arc<dyn Stream>> = (0..3)
        .map(|_| exec.clone().create_stream().unwrap())
        .collect();
    for s in &streams {
        let d = done.clone();
        s.host_callback(Box::new(move || {
            std::thread::sleep(Duration::from_millis(20));
            d.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
    }
    exec.synchronize_all_activity().unwrap();
    assert_eq!(done.load(Ordering::SeqCst), 3);
}

#[test]
fn freeing_a_buffer_with_queued_work_waits_for_that_work() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let before = exec.memory_usage();
    let (release, gate) = mpsc::channel::<()>();
    stream
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            Ok(())
        }))
        .unwrap();
    let mem = exec.allocate(1 << 20).unwrap();
    stream
        .memcpy_host_to_device(mem, &vec![7u8; 1 << 20])
        .unwrap();
    // SAFETY: the contract is kept by the executor itself: the queued copy
    // still targets `mem`, so the memory must outlive it.
    unsafe { exec.deallocate(mem) };
    assert_eq!(
        exec.memory_usage().live_allocations,
        before.live_allocations + 1,
        "the free waits for the queued copy"
    );
    release.send(()).unwrap();
    stream.block_host_until_done().unwrap();
    assert_eq!(
        exec.memory_usage().live_allocations,
        before.live_allocations
    );
    assert_eq!(exec.memory_usage().bytes_in_use, before.bytes_in_use);
}

#[test]
fn a_synchronous_callback_runs_on_the_caller_when_idle_and_in_order_when_busy() {
    let exec = executor();
    let stream = exec.clone().create_stream().unwrap();
    let caller = std::thread::current().id();
    // Idle: on the calling thread, its error returned and not kept.
    let ran_on = Arc::new(Mutex::new(None));
    let r = ran_on.clone();
    stream
        .run_host_callback_and_wait(Box::new(move || {
            *r.lock().unwrap() = Some(std::thread::current().id());
            Err(platform_api::Error::internal("first"))
        }))
        .expect_err("the callback's error comes back");
    assert_eq!(*ran_on.lock().unwrap(), Some(caller));
    stream.block_host_until_done().unwrap();
    // Busy: after the work queued before it, on the stream's thread.
    let log = Arc::new(Mutex::new(Vec::new()));
    let (release, gate) = mpsc::channel::<()>();
    let l = log.clone();
    stream
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            l.lock().unwrap().push("queued");
            Ok(())
        }))
        .unwrap();
    let l = log.clone();
    let r = ran_on.clone();
    let waiter = std::thread::spawn({
        let stream = stream.clone();
        move || {
            stream.run_host_callback_and_wait(Box::new(move || {
                *r.lock().unwrap() = Some(std::thread::current().id());
                l.lock().unwrap().push("synchronous");
                Ok(())
            }))
        }
    });
    std::thread::sleep(Duration::from_millis(50));
    assert!(log.lock().unwrap().is_empty());
    release.send(()).unwrap();
    waiter.join().unwrap().unwrap();
    assert_eq!(*log.lock().unwrap(), vec!["queued", "synchronous"]);
    assert_ne!(*ran_on.lock().unwrap(), Some(caller));
}
