//! A new backend plugs in without touching any other crate.
//!
//! `backend` is platform "Example" (the `example-backend` crate in
//! `examples/backend`), written only against `platform_api`'s public contracts
//! and registered with `inventory::submit!`; linking it here registers it.
//! These tests find it the way users do — through the registry and the
//! service — and check that it compiles, caches, runs and fails as the
//! contracts say.

use example_backend as backend;

use platform_api::hlo::builder::HloBuilder;
use platform_api::{
    registry, Code, CompileOptions, ElementType, Event, EventStatus, HloModule, Literal,
    PlatformOptions, Shape,
};
use service::{Backend, LocalClient};
use std::sync::Arc;

// The reference, to compare results with (the service links the others).
use platform_interpreter as _;

/// `tanh(x · w + b)` with `x: f32[2,3]`, `w: f32[3,4]`, `b: f32[4]`, returned
/// with `x > 0` as a tuple: dot, broadcast, elementwise, compare, tuple.
fn dense_layer() -> HloModule {
    let mut b = HloBuilder::new("dense");
    let x = b
        .parameter(0, Shape::array(ElementType::F32, [2, 3]), "x")
        .unwrap();
    let w = b
        .parameter(1, Shape::array(ElementType::F32, [3, 4]), "w")
        .unwrap();
    let bias = b
        .parameter(2, Shape::array(ElementType::F32, [4]), "b")
        .unwrap();
    let xw = b.dot(x, w).unwrap();
    let bb = b.broadcast_in_dim(bias, &[2, 4], &[1]).unwrap();
    let sum = b.add(xw, bb).unwrap();
    let y = b.tanh(sum).unwrap();
    let zero = b.constant(Literal::scalar(0f32)).unwrap();
    let zeros = b.broadcast(zero, &[2, 3]).unwrap();
    let positive = b.gt(x, zeros).unwrap();
    let root = b.tuple(&[y, positive]).unwrap();
    b.build(root).unwrap()
}

fn dense_args() -> Vec<Literal> {
    vec![
        Literal::from_slice(&[2, 3], &[0.5f32, -1.0, 2.0, 0.0, 1.5, -0.25]).unwrap(),
        Literal::from_slice(
            &[3, 4],
            &[
                0.1f32, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, -0.9, 1.0, 1.1, -1.2,
            ],
        )
        .unwrap(),
        Literal::vector(&[0.01f32, -0.02, 0.03, -0.04]),
    ]
}

#[test]
fn the_registry_lists_example_with_its_priority_and_aliases() {
    let listing = registry::list_platforms().unwrap();
    let example = listing
        .iter()
        .find(|p| p.name == "Example")
        .expect("Example is registered");
    assert_eq!(example.priority, backend::PRIORITY);
    assert_eq!(example.aliases, backend::ALIASES);
    assert!(example.availability.is_available());
    // Lowest priority: linking a template never changes anyone's default.
    assert_ne!(registry::default_platform_name().unwrap(), "Example");
    for name in ["example", "EXAMPLE", "ex", "Skeleton"] {
        assert_eq!(
            registry::find_platform(name).unwrap().name,
            "Example",
            "{name}"
        );
    }
}

#[test]
fn the_service_finds_it_by_name_with_all_its_pieces() {
    let backend = Backend::new(Some("example")).unwrap();
    assert_eq!(backend.platform_name(), "Example");
    assert_eq!(backend.device_count(), 1);
    assert_eq!(backend.compiler().platform_id(), "Example");
    assert_eq!(backend.transfer_manager().platform_id(), "Example");
    let err = backend
        .platform()
        .executor(1)
        .err()
        .expect("one device only");
    assert_eq!(err.code(), Code::OutOfRange, "{err}");
}

#[test]
fn local_client_compiles_once_and_matches_the_interpreter() {
    // A platform instance of its own, so the memory check below sees only
    // this test's allocations.
    let backend = Backend::with_options(Some("example"), &PlatformOptions::default()).unwrap();
    let client = LocalClient::new(Arc::new(backend));
    let module = dense_layer();
    let options = CompileOptions::default();
    let first = client.compile(&module, &options).unwrap();
    assert!(!first.cache_hit);
    let second = client.compile(&module, &options).unwrap();
    assert!(second.cache_hit, "the same module compiles once");
    assert_eq!(client.cached_programs(), 1);

    let got = client
        .execute(&second.executable, &dense_args())
        .unwrap()
        .flatten_leaves();
    let reference = LocalClient::for_platform(Some("interpreter")).unwrap();
    let compiled = reference.compile(&module, &options).unwrap();
    let want = reference
        .execute(&compiled.executable, &dense_args())
        .unwrap()
        .flatten_leaves();
    assert_eq!(got.len(), 2);
    // The dot may sum in another order: a few ULP; the predicate exactly.
    tests::compare(&got[0], &want[0], 1e-6, 1e-6).unwrap();
    tests::compare(&got[1], &want[1], 0.0, 0.0).unwrap();
    // And the numbers are right, not merely equal: tanh(x·w + b) at [0][0].
    let (x_row0, w_col0) = ([0.5f32, -1.0, 2.0], [0.1f32, 0.5, -0.9]);
    let dot: f32 = x_row0.iter().zip(w_col0).map(|(x, w)| x * w).sum();
    let expected = (dot + 0.01).tanh();
    assert!((got[0].data::<f32>().unwrap()[0] - expected).abs() < 1e-6);

    // Device memory is given back once buffers are dropped.
    let executor = client.backend().executor(0).unwrap();
    assert_eq!(executor.memory_usage().live_allocations, 0);
}

#[test]
fn empty_arrays_and_scalars_round_trip() {
    // A size-0 array is a null allocation: nothing may be copied from or to it.
    let mut b = HloBuilder::new("empty");
    let x = b
        .parameter(0, Shape::array(ElementType::S32, [0, 3]), "x")
        .unwrap();
    let s = b
        .parameter(1, Shape::scalar(ElementType::F64), "s")
        .unwrap();
    let n = b.neg(x).unwrap();
    let e = b.exp(s).unwrap();
    let root = b.tuple(&[n, e]).unwrap();
    let module = b.build(root).unwrap();
    let client = LocalClient::for_platform(Some("example")).unwrap();
    let exe = client.compile(&module, &CompileOptions::default()).unwrap();
    let args = [
        Literal::from_slice::<i32>(&[0, 3], &[]).unwrap(),
        Literal::scalar(1.5f64),
    ];
    let out = client
        .execute(&exe.executable, &args)
        .unwrap()
        .flatten_leaves();
    assert_eq!(out[0].dims(), &[0, 3]);
    assert_eq!(out[1].data::<f64>().unwrap(), &[1.5f64.exp()]);
}

#[test]
fn ops_outside_the_core_set_are_legalized_or_all_named_at_compile_time() {
    let client = LocalClient::for_platform(Some("example")).unwrap();
    // `transpose` is in the core set; `subtract`, `maximum` and `clamp` are not,
    // and legalization rewrites them into ops that are.
    let text = "HloModule legal
ENTRY e {
  x = f32[2,3] parameter(0)
  t = f32[3,2] transpose(x), dimensions={1,0}
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  c = f32[3,2] clamp(lo, t, hi)
  m = f32[3,2] maximum(c, t)
  ROOT s = f32[3,2] subtract(m, t)
}";
    let compiled = client
        .compile_text(text, &CompileOptions::default())
        .unwrap();
    let x = Literal::from_slice(&[2, 3], &[-2f32, -0.5, 0.0, 0.5, 2.0, f32::NAN]).unwrap();
    let got = client
        .execute(&compiled.executable, std::slice::from_ref(&x))
        .unwrap();
    let reference = LocalClient::for_platform(Some("interpreter")).unwrap();
    let exe = reference
        .compile_text(text, &CompileOptions::default())
        .unwrap();
    let want = reference.execute(&exe.executable, &[x]).unwrap();
    assert_eq!(got.to_string(), want.to_string());

    // No expander handles `fft`, and a custom call is opaque: one error names
    // both, at compile time.
    let text = "HloModule gaps
ENTRY e {
  x = c64[4] parameter(0)
  f = c64[4] fft(x), fft_type=FFT, fft_length={4}
  ROOT k = c64[4] custom-call(f), custom_call_target=\"my_kernel\"
}";
    let err = client
        .compile_text(text, &CompileOptions::default())
        .unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    assert!(
        err.message().contains("fft") && err.message().contains("custom-call"),
        "{err}"
    );
}

#[test]
fn a_misspelled_name_lists_example_among_the_registered() {
    let err = registry::find_platform("exampel")
        .err()
        .expect("no such platform");
    assert_eq!(err.code(), Code::NotFound);
    assert!(
        err.message().contains("exampel") && err.message().contains("Example"),
        "{err}"
    );
    let err = Backend::new(Some("exampel")).unwrap_err();
    assert!(err.message().contains("Example"), "{err}");
}

#[test]
fn streams_keep_errors_until_asked_and_events_complete() {
    let platform = registry::create_platform("example", &PlatformOptions::default()).unwrap();
    let executor = platform.executor(0).unwrap();
    let stream = executor.clone().create_stream().unwrap();
    let event: Arc<dyn Event> = executor.clone().create_event().unwrap();
    assert_eq!(event.status(), EventStatus::Pending);
    stream.record_event(&event).unwrap();
    assert_eq!(event.status(), EventStatus::Complete);

    // A failing callback: enqueueing succeeds, later work is skipped, the
    // error comes back once, and the stream is usable again afterwards.
    stream
        .host_callback(Box::new(|| Err(platform_api::Error::internal("boom"))))
        .unwrap();
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = ran.clone();
    stream
        .host_callback(Box::new(move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        }))
        .unwrap();
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    assert!(stream
        .block_host_until_done()
        .unwrap_err()
        .message()
        .contains("boom"));
    stream.block_host_until_done().unwrap();

    // Copies round-trip through device memory.
    let mem = executor.allocate(4).unwrap();
    stream.memcpy_host_to_device(mem, &[1, 2, 3, 4]).unwrap();
    assert_eq!(stream.read_to_vec(mem, 4).unwrap(), [1, 2, 3, 4]);
    assert!(
        stream.memcpy_host_to_device(mem, &[0; 8]).is_err(),
        "overflowing copy"
    );
    // SAFETY: `mem` came from this executor and no work uses it any more.
    unsafe { executor.deallocate(mem) };
    assert_eq!(executor.memory_usage().live_allocations, 0);
}

/// Random programs of every op family, on the Example (through legalization)
/// against the Interpreter: each either matches, or fails to compile with
/// legalization's `Unimplemented` naming the ops it lacks. A mismatch or any
/// other error is a bug in an expander (or in the Example). `EXAMPLE_SEEDS`
/// runs more.
#[test]
fn legalized_random_programs_match_the_interpreter() {
    use std::time::Duration;
    use tests::differential::{differ, Failure};
    let seeds: u64 = std::env::var("EXAMPLE_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let (mut matched, mut unsupported) = (0, 0);
    let mut problems = Vec::new();
    for seed in 0..seeds {
        let program = tests::random_program::generate(seed).expect("the generator works");
        let outcome = differ(
            "Example",
            &program.module,
            &program.args,
            &program.outputs,
            Duration::from_secs(60),
        );
        match outcome {
            // The reference itself rejected the program: nothing to compare.
            Err(_) => {}
            Ok(Ok(())) => matched += 1,
            Ok(Err(Failure::Error(e))) if e.contains("no expander can rewrite") => unsupported += 1,
            Ok(Err(failure)) => problems.push(format!("seed {seed}: {failure}")),
        }
    }
    println!("Example on {seeds} random programs: {matched} match, {unsupported} not legalizable");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        matched >= seeds as usize / 2,
        "only {matched} of {seeds} random programs legalized and ran"
    );
}

/// The kit's op-by-op walk contracts a single-use multiply into its add as XLA
/// CPU does (one rounding), unless `fp_contract=off`: `(1 + 2^-12)^2 - (1 +
/// 2^-11)` is `2^-24` fused and `0` rounded twice.
#[test]
fn multiply_adds_contract_as_in_xla_cpu_unless_fp_contract_is_off() {
    let text = "HloModule fma
ENTRY e {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  m = f32[] multiply(a, a)
  ROOT s = f32[] add(m, c)
}";
    let a = 1.0f32 + 2f32.powi(-12);
    let args = [
        Literal::scalar(a),
        Literal::scalar(-(1.0f32 + 2f32.powi(-11))),
    ];
    let run = |platform: &str, contract: &str| {
        let client = LocalClient::for_platform(Some(platform)).unwrap();
        let options = CompileOptions {
            debug_options: vec![("fp_contract".into(), contract.into())],
            ..CompileOptions::default()
        };
        let exe = client.compile_text(text, &options).unwrap();
        client
            .execute(&exe.executable, &args)
            .unwrap()
            .data::<f32>()
            .unwrap()[0]
    };
    assert_eq!(run("example", "on"), 2f32.powi(-24));
    assert_eq!(run("example", "on"), run("interpreter", "on"));
    assert_eq!(run("example", "off"), 0.0);
}
