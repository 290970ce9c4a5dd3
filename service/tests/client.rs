//! The service library against a platform found through the registry: backend
//! resolution, the compile cache, execution on literals and on kept buffers,
//! concurrency, replicas, the async client and profiles.
//!
//! Most tests run on the test platform in `common/` (registered like any
//! backend crate), which lets them observe what a real backend hides (compile
//! counts, run ids, stream creation). The tests of execution paths run on the
//! Interpreter as well, the reference platform every build links.

mod common;

use common::NAME;
use platform_api::{CompileOptions, Literal, PlatformOptions, ProfileSink};
use service::{AsyncClient, Backend, ExecuteOptions, LocalClient};
use std::sync::Arc;

const ADD_MUL: &str = r#"
HloModule add_mul

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  ROOT p = f32[4] multiply(s, y)
}
"#;

/// (x + y) * y, computed here independently of any backend.
fn add_mul_expected(x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(a, b)| (a + b) * b).collect()
}

/// The platforms the execution-path tests run on.
const PLATFORMS: [&str; 2] = [NAME, "Interpreter"];

fn client() -> LocalClient {
    client_on(NAME)
}

fn client_on(platform: &str) -> LocalClient {
    LocalClient::for_platform(Some(platform)).unwrap()
}

#[test]
fn backend_resolves_by_name_or_alias_in_any_case() {
    for name in ["ServiceTestHost", "servicetesthost", "SERVICE-TEST"] {
        let backend = Backend::new(Some(name)).unwrap();
        assert_eq!(backend.platform_name(), NAME);
        assert_eq!(backend.device_count(), 1);
        assert_eq!(backend.compiler().platform_id(), NAME);
        assert_eq!(backend.transfer_manager().platform_id(), NAME);
    }
    let err = Backend::new(Some("tpu")).unwrap_err();
    assert!(err.message().contains("no platform named \"tpu\""), "{err}");
    assert!(
        err.message().contains(NAME),
        "the error should list what is registered: {err}"
    );
}

#[test]
fn executes_on_literals() {
    for platform in PLATFORMS {
        let client = client_on(platform);
        let exe = client
            .compile_text(ADD_MUL, &CompileOptions::default())
            .unwrap()
            .executable;
        assert_eq!(exe.parameters().len(), 2);
        assert_eq!(exe.parameters()[1].name, "y");
        let (x, y) = ([1.0f32, 2.0, 3.0, 4.0], [0.5f32, -1.0, 2.0, 0.0]);
        let out = client
            .execute(&exe, &[Literal::vector(&x), Literal::vector(&y)])
            .unwrap();
        assert_eq!(
            out.data::<f32>().unwrap(),
            add_mul_expected(&x, &y).as_slice()
        );
    }
}

#[test]
fn compile_cache_hits_on_the_same_canonical_text() {
    let client = client();
    // A different module name so other tests' compiles cannot interfere.
    let text = ADD_MUL.replace("add_mul", "cache_test");
    let first = client
        .compile_text(&text, &CompileOptions::default())
        .unwrap();
    assert!(!first.cache_hit);
    // Same program, spelled differently: the canonical text is the same.
    let respelled = text.replace("  s = f32[4] add(x, y)", "  s   =   f32[4]   add(x,   y)");
    assert_ne!(respelled, text);
    let second = client
        .compile_text(&respelled, &CompileOptions::default())
        .unwrap();
    assert!(second.cache_hit);
    assert!(Arc::ptr_eq(&first.executable, &second.executable));
    assert_eq!(
        first.executable.fingerprint(),
        second.executable.fingerprint()
    );
    // Other options make another program.
    let options = CompileOptions {
        debug_options: vec![("some_flag".into(), "1".into())],
        ..CompileOptions::default()
    };
    let third = client.compile_text(&text, &options).unwrap();
    assert!(!third.cache_hit);
    // A changed program misses.
    let changed = text.replace("multiply(s, y)", "add(s, y)");
    assert!(
        !client
            .compile_text(&changed, &CompileOptions::default())
            .unwrap()
            .cache_hit
    );
    assert_eq!(client.cached_programs(), 3);
}

#[test]
fn cache_hit_skips_the_compiler() {
    let client = client();
    let text = ADD_MUL.replace("add_mul", "skip_compiler");
    let a = client
        .compile_text(&text, &CompileOptions::default())
        .unwrap();
    let b = client
        .compile_text(&text, &CompileOptions::default())
        .unwrap();
    assert!(!a.cache_hit && b.cache_hit);
    assert_eq!(common::compiles_of("skip_compiler"), 1);
    assert!(Arc::ptr_eq(&a.executable, &b.executable));
}

#[test]
fn racing_compiles_of_one_program_compile_it_once() {
    let client = client();
    let text = ADD_MUL.replace("add_mul", "racing_compiles");
    let hits: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| {
                    client
                        .compile_text(&text, &CompileOptions::default())
                        .unwrap()
                        .cache_hit
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(hits.iter().filter(|hit| !**hit).count(), 1, "{hits:?}");
    assert_eq!(common::compiles_of("racing_compiles"), 1);
}

#[test]
fn concurrent_executions_match_a_sequential_run() {
    for platform in PLATFORMS {
        let client = Arc::new(client_on(platform));
        let exe = client
            .compile_text(ADD_MUL, &CompileOptions::default())
            .unwrap()
            .executable;
        let inputs: Vec<[Literal; 2]> = (0..8)
            .map(|t| {
                let x: Vec<f32> = (0..4).map(|i| (t * 4 + i) as f32).collect();
                let y: Vec<f32> = (0..4).map(|i| 1.0 + (t + i) as f32 / 8.0).collect();
                [Literal::vector(&x), Literal::vector(&y)]
            })
            .collect();
        let sequential: Vec<Literal> = inputs
            .iter()
            .map(|args| client.execute(&exe, args).unwrap())
            .collect();
        let concurrent: Vec<Vec<Literal>> = std::thread::scope(|scope| {
            let handles: Vec<_> = inputs
                .iter()
                .map(|args| {
                    let (client, exe) = (&client, &exe);
                    scope.spawn(move || {
                        (0..20)
                            .map(|_| client.execute(exe, args).unwrap())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (thread_results, want) in concurrent.iter().zip(&sequential) {
            for got in thread_results {
                assert_eq!(got, want);
            }
        }
        for (args, want) in inputs.iter().zip(&sequential) {
            let expected = add_mul_expected(args[0].data().unwrap(), args[1].data().unwrap());
            assert_eq!(want.data::<f32>().unwrap(), expected.as_slice());
        }
    }
}

#[test]
fn kept_buffers_run_chain_and_release() {
    for platform in PLATFORMS {
        // A private platform instance so no other test's allocations are counted.
        let backend =
            Arc::new(Backend::with_options(Some(platform), &PlatformOptions::default()).unwrap());
        let executor = backend.executor(0).unwrap().clone();
        let client = LocalClient::new(backend);
        let exe = client
            .compile_text(ADD_MUL, &CompileOptions::default())
            .unwrap()
            .executable;
        let baseline = executor.memory_usage().live_allocations;
        {
            let (x, y) = ([1.0f32, 2.0, 3.0, 4.0], [2.0f32, 2.0, 2.0, 2.0]);
            let bx = client.to_device(&Literal::vector(&x), 0).unwrap();
            let by = client
                .to_device_for(&exe, 1, &Literal::vector(&y), 0)
                .unwrap();
            let once = client
                .execute_buffers(&exe, &[&bx, &by], &ExecuteOptions::default())
                .unwrap();
            // Feed the kept result back in without a host round trip.
            let twice = client
                .execute_buffers(&exe, &[&once.result, &by], &ExecuteOptions::default())
                .unwrap();
            let step1 = add_mul_expected(&x, &y);
            let step2 = add_mul_expected(&step1, &y);
            assert_eq!(
                client
                    .to_literal(&once.result)
                    .unwrap()
                    .data::<f32>()
                    .unwrap(),
                step1.as_slice()
            );
            assert_eq!(
                client
                    .to_literal(&twice.result)
                    .unwrap()
                    .data::<f32>()
                    .unwrap(),
                step2.as_slice()
            );
            assert!(executor.memory_usage().live_allocations >= baseline + 4);
            client.release(once.result);
            client.release(twice.result);
        }
        assert_eq!(
            executor.memory_usage().live_allocations,
            baseline,
            "kept buffers leaked"
        );
    }
}

#[test]
fn buffers_of_another_platform_instance_are_rejected() {
    let a = LocalClient::new(Arc::new(
        Backend::with_options(Some(NAME), &PlatformOptions::default()).unwrap(),
    ));
    let b = LocalClient::new(Arc::new(
        Backend::with_options(Some(NAME), &PlatformOptions::default()).unwrap(),
    ));
    let buffer = a.to_device(&Literal::vector(&[1.0f32; 4]), 0).unwrap();
    let err = b.to_literal(&buffer).unwrap_err();
    assert!(err.message().contains("does not belong"), "{err}");
}

#[test]
fn bad_arguments_are_errors_naming_the_parameter() {
    let client = client();
    let exe = client
        .compile_text(ADD_MUL, &CompileOptions::default())
        .unwrap()
        .executable;
    let err = client
        .execute(&exe, &[Literal::vector(&[1.0f32; 4])])
        .unwrap_err();
    assert!(
        err.message()
            .contains("takes 2 argument(s) but 1 were given"),
        "{err}"
    );
    let err = client
        .execute(
            &exe,
            &[Literal::vector(&[1.0f32; 4]), Literal::vector(&[1.0f32; 3])],
        )
        .unwrap_err();
    assert!(err.message().contains("parameter 1 (%y)"), "{err}");
    assert!(
        err.message().contains("f32[3]") && err.message().contains("f32[4]"),
        "{err}"
    );
    let err = client
        .execute(
            &exe,
            &[Literal::vector(&[1i32; 4]), Literal::vector(&[1.0f32; 4])],
        )
        .unwrap_err();
    assert!(err.message().contains("s32[4]"), "{err}");
}

#[test]
fn kept_buffers_of_the_wrong_shape_are_rejected_after_right_ones_ran() {
    // An executable remembers buffers that passed its shape checks; a
    // wrong-shaped buffer must still fail, before, between and after them.
    for platform in PLATFORMS.into_iter().chain(["Host"]) {
        let client = client_on(platform);
        let exe = client
            .compile_text(ADD_MUL, &CompileOptions::default())
            .unwrap()
            .executable;
        let four = client
            .to_device_for(&exe, 0, &Literal::vector(&[1.0f32; 4]), 0)
            .unwrap();
        let three = client.to_device(&Literal::vector(&[1.0f32; 3]), 0).unwrap();
        let ints = client.to_device(&Literal::vector(&[1i32; 4]), 0).unwrap();
        let options = ExecuteOptions::default();
        for _ in 0..2 {
            let ok = client.execute_buffers(&exe, &[&four, &four], &options);
            let out = client.to_literal(&ok.unwrap().result).unwrap();
            assert_eq!(out.data::<f32>().unwrap(), &[2.0f32; 4], "{platform}");
            for (x, y) in [(&four, &three), (&three, &four), (&four, &ints)] {
                let err = client.execute_buffers(&exe, &[x, y], &options).unwrap_err();
                assert!(
                    err.message().contains("expects f32[4]"),
                    "{platform}: {err}"
                );
            }
            let err = client
                .execute_device_buffers(&exe, &[&four, &three], &options, 0, 0)
                .unwrap_err();
            assert!(
                err.message().contains("parameter 1 (%y)"),
                "{platform}: {err}"
            );
            let err = client
                .execute_buffers(&exe, &[&four], &options)
                .unwrap_err();
            assert!(
                err.message().contains("takes 2 argument(s)"),
                "{platform}: {err}"
            );
        }
    }
}

#[test]
fn backend_errors_come_back_with_context() {
    let client = client();
    let text = "HloModule unsupported\n\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT d = f32[4] divide(x, x)\n}\n";
    let exe = client
        .compile_text(text, &CompileOptions::default())
        .unwrap()
        .executable;
    let err = client
        .execute(&exe, &[Literal::vector(&[1.0f32; 4])])
        .unwrap_err();
    assert!(
        err.message().contains("running module unsupported"),
        "{err}"
    );
    assert!(err.message().contains("%d"), "{err}");
    // The stream went back to the pool clean: the next run works.
    let ok = client
        .compile_text(ADD_MUL, &CompileOptions::default())
        .unwrap()
        .executable;
    assert!(client
        .execute(
            &ok,
            &[Literal::vector(&[1.0f32; 4]), Literal::vector(&[1.0f32; 4])]
        )
        .is_ok());
}

#[test]
fn streams_are_reused() {
    let backend = Arc::new(Backend::with_options(Some(NAME), &PlatformOptions::default()).unwrap());
    let client = LocalClient::new(backend);
    let exe = client
        .compile_text(ADD_MUL, &CompileOptions::default())
        .unwrap()
        .executable;
    let args = [Literal::vector(&[1.0f32; 4]), Literal::vector(&[1.0f32; 4])];
    client.execute(&exe, &args).unwrap();
    let device = client.backend().executor(0).unwrap().clone();
    let before = common::streams_created(&device);
    assert!(before >= 1);
    for _ in 0..5 {
        client.execute(&exe, &args).unwrap();
    }
    // Sequential runs on one client borrow the pooled stream.
    let created = common::streams_created(&device) - before;
    assert_eq!(
        created, 0,
        "{created} streams created for 5 sequential runs"
    );
}

#[test]
fn replicated_execution_runs_every_replica_with_one_run_id() {
    const REPLICAS: usize = 4;
    let text = r#"
HloModule replicas_test, replica_count=4

ENTRY main {
  x = f32[2] parameter(0)
  r = u32[] replica-id()
  ROOT t = (f32[2], u32[]) tuple(x, r)
}
"#;
    let backend = Backend::with_options(
        Some(NAME),
        &PlatformOptions {
            device_count: Some(REPLICAS),
        },
    )
    .unwrap();
    let client = LocalClient::new(Arc::new(backend));
    let options = CompileOptions {
        replica_count: REPLICAS,
        ..CompileOptions::default()
    };
    let exe = client.compile_text(text, &options).unwrap().executable;
    let args: Vec<Vec<Literal>> = (0..REPLICAS)
        .map(|r| vec![Literal::vector(&[r as f32, 10.0 * r as f32])])
        .collect();
    let results = client
        .execute_replicated(&exe, &args, &ExecuteOptions::default())
        .unwrap();
    assert_eq!(results.len(), REPLICAS);
    for (r, result) in results.iter().enumerate() {
        let parts = result.tuple_elements();
        assert_eq!(
            parts[0].data::<f32>().unwrap(),
            &[r as f32, 10.0 * r as f32]
        );
        assert_eq!(parts[1].data::<u32>().unwrap(), &[r as u32]);
    }
    let runs: Vec<(usize, u64)> = common::RUNS
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _, _)| m == "replicas_test")
        .map(|(_, r, id)| (*r, *id))
        .collect();
    let mut replicas: Vec<usize> = runs.iter().map(|(r, _)| *r).collect();
    replicas.sort_unstable();
    assert_eq!(replicas, (0..REPLICAS).collect::<Vec<_>>());
    assert!(
        runs.iter().all(|(_, id)| *id == runs[0].1),
        "replicas saw different run ids: {runs:?}"
    );

    // Too few devices, or the wrong number of argument lists, are clear errors.
    let small = client
        .execute_replicated(&exe, &args[..2], &ExecuteOptions::default())
        .unwrap_err();
    assert!(
        small.message().contains("needs 4 argument lists"),
        "{small}"
    );
    let one_device = LocalClient::for_platform(Some(NAME)).unwrap();
    let exe1 = one_device.compile_text(text, &options).unwrap().executable;
    let err = one_device
        .execute_replicated(&exe1, &args, &ExecuteOptions::default())
        .unwrap_err();
    assert!(err.message().contains("needs 4 devices"), "{err}");
}

#[test]
fn profile_records_instructions_and_the_execution_and_writes_a_chrome_trace() {
    for platform in PLATFORMS {
        let client = client_on(platform);
        let exe = client
            .compile_text(ADD_MUL, &CompileOptions::default())
            .unwrap()
            .executable;
        let sink = Arc::new(ProfileSink::new());
        let options = ExecuteOptions {
            profile: Some(sink.clone()),
            ..ExecuteOptions::default()
        };
        let args = [Literal::vector(&[1.0f32; 4]), Literal::vector(&[2.0f32; 4])];
        let run = client.execute_with(&exe, &args, &options).unwrap();
        assert!(run.total_time >= run.execute_time);
        let events = sink.events();
        let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        for want in ["x", "y", "s", "p", "execute add_mul"] {
            assert!(names.contains(&want), "no span {want} in {names:?}");
        }
        assert!(events.iter().any(|e| e.category == "transfer"));

        let path = std::env::temp_dir().join(format!("service-trace-{}.json", std::process::id()));
        service::profile::write_chrome_trace(&path, &sink, platform).unwrap();
        let trace: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        let complete: Vec<&serde_json::Value> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .collect();
        assert_eq!(complete.len(), events.len());
        for e in complete {
            for key in ["name", "cat", "ts", "dur", "pid", "tid"] {
                assert!(!e[key].is_null(), "event without {key}: {e}");
            }
        }
    }
}

#[test]
fn async_client_compiles_and_executes_concurrently() {
    for platform in PLATFORMS {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let client = AsyncClient::new(Arc::new(client_on(platform)));
        runtime.block_on(async {
            let module = platform_api::HloModule::parse(ADD_MUL).unwrap();
            let exe = client
                .compile(module, CompileOptions::default())
                .await
                .unwrap()
                .executable;
            let tasks: Vec<_> = (0..8)
                .map(|t| {
                    let (client, exe) = (client.clone(), exe.clone());
                    tokio::spawn(async move {
                        let x = [t as f32; 4];
                        let y = [1.5f32, 2.0, -1.0, 0.0];
                        let out = client
                            .execute(exe, vec![Literal::vector(&x), Literal::vector(&y)])
                            .await
                            .unwrap();
                        assert_eq!(
                            out.data::<f32>().unwrap(),
                            add_mul_expected(&x, &y).as_slice()
                        );
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            // Errors come back as errors.
            let exe2 = client
                .compile(
                    platform_api::HloModule::parse(ADD_MUL).unwrap(),
                    CompileOptions::default(),
                )
                .await
                .unwrap();
            assert!(exe2.cache_hit);
            assert!(client.execute(exe2.executable, vec![]).await.is_err());
        });
    }
}

#[test]
fn async_client_outside_a_runtime_is_an_error_not_a_panic() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    let client = AsyncClient::new(Arc::new(client()));
    let module = platform_api::HloModule::parse(ADD_MUL).unwrap();
    let future = std::pin::pin!(client.compile(module, CompileOptions::default()));
    let mut cx = Context::from_waker(Waker::noop());
    match future.poll(&mut cx) {
        Poll::Ready(Err(e)) => assert!(e.message().contains("Tokio runtime"), "{e}"),
        other => panic!(
            "expected an error at once, got {:?}",
            other.map(|r| r.map(|c| c.cache_hit))
        ),
    }
}

#[test]
fn async_execution_leaves_the_runtime_thread_free() {
    // One worker thread. If `execute` blocked it while the device waits, the
    // task that opens the gate could never run and the execution would time out.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let client = AsyncClient::new(Arc::new(client()));
    runtime.block_on(async {
        let text = "HloModule gated\n\nENTRY main {\n  ROOT c = f32[] constant(3)\n}\n";
        let module = platform_api::HloModule::parse(text).unwrap();
        let exe = client
            .compile(module, CompileOptions::default())
            .await
            .unwrap()
            .executable;
        let running = tokio::spawn({
            let client = client.clone();
            async move { client.execute(exe, vec![]).await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        common::open_gate();
        let out = running.await.unwrap().unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[3.0]);
    });
}

#[test]
fn modules_are_verified_before_compiling() {
    let client = client();
    let text = ADD_MUL
        .replace("add_mul", "unverifiable")
        .replace("s = f32[4] add", "s = f32[3] add");
    let err = client
        .compile_text(&text, &CompileOptions::default())
        .unwrap_err();
    assert!(err.message().contains("does not verify"), "{err}");
    assert!(err.message().contains("%s"), "{err}");
    assert_eq!(
        common::compiles_of("unverifiable"),
        0,
        "the compiler saw an unverified module"
    );
}

#[test]
fn replicas_meet_at_an_all_reduce_on_the_interpreter() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/all_reduce/module.hlo"
    ))
    .unwrap();
    let backend = Backend::with_options(
        Some("interpreter"),
        &PlatformOptions {
            device_count: Some(2),
        },
    )
    .unwrap();
    let client = LocalClient::new(Arc::new(backend));
    let options = CompileOptions {
        replica_count: 2,
        ..CompileOptions::default()
    };
    let exe = client.compile_text(&text, &options).unwrap().executable;
    let (x0, x1) = ([1.0f32, 2.0, 3.0, 4.0], [-5.0f32, 0.5, 8.0, 0.0]);
    let args = vec![vec![Literal::vector(&x0)], vec![Literal::vector(&x1)]];
    // Each replica adds its id (0 or 1); the all-reduce sums over both.
    let want: Vec<f32> = x0.iter().zip(&x1).map(|(a, b)| a + b + 1.0).collect();
    for _ in 0..3 {
        let results = client
            .execute_replicated(&exe, &args, &ExecuteOptions::default())
            .unwrap();
        for result in &results {
            assert_eq!(result.data::<f32>().unwrap(), want.as_slice());
        }
    }
}

/// A tuple of a large array (adoptable), a small one (copied) and the large
/// one again (its allocation shared, so copied).
const BIG_AND_SMALL: &str = r#"
HloModule big_and_small

ENTRY main {
  x = f32[65536] parameter(0)
  y = f32[4] parameter(1)
  big = f32[65536] negate(x)
  small = f32[4] add(y, y)
  ROOT t = (f32[65536], f32[4]) tuple(big, small)
}
"#;

#[test]
fn host_results_are_handed_over_not_copied() {
    for platform in ["Host", "Interpreter"] {
        let backend =
            Arc::new(Backend::with_options(Some(platform), &PlatformOptions::default()).unwrap());
        let executor = backend.executor(0).unwrap().clone();
        let client = LocalClient::new(backend);
        let exe = client
            .compile_text(BIG_AND_SMALL, &CompileOptions::default())
            .unwrap()
            .executable;
        let x: Vec<f32> = (0..65536).map(|i| i as f32 * 0.5).collect();
        let y = [1.0f32, -2.0, 3.5, 0.25];
        let args = [Literal::vector(&x), Literal::vector(&y)];
        // A first run may leave per-executable state (scratch, constants).
        drop(client.execute(&exe, &args).unwrap());
        let baseline = executor.memory_usage().live_allocations;
        let check = |lit: &Literal| {
            let parts = lit.tuple_elements();
            let neg: Vec<f32> = x.iter().map(|v| -v).collect();
            assert_eq!(parts[0].data::<f32>().unwrap(), neg.as_slice());
            let twice: Vec<f32> = y.iter().map(|v| v + v).collect();
            assert_eq!(parts[1].data::<f32>().unwrap(), twice.as_slice());
            (parts[0].is_adopted(), parts[1].is_adopted())
        };

        // Through `execute`, which gives up the result.
        let lit = client.execute(&exe, &args).unwrap();
        let host = platform == "Host";
        assert_eq!(check(&lit), (host, false), "{platform}");
        if host {
            assert_eq!(
                executor.memory_usage().live_allocations,
                baseline + 1,
                "the adopted array stays allocated while its literal lives"
            );
        }
        // A copy of an adopted literal owns its bytes.
        let copy = lit.clone();
        assert_eq!(check(&copy), (false, false));
        drop(lit);
        assert_eq!(executor.memory_usage().live_allocations, baseline);
        drop(copy);

        // Through kept buffers: a shared allocation is copied, then adopted
        // once it is the last reference.
        let bufs: Vec<_> = args
            .iter()
            .map(|a| client.to_device(a, 0).unwrap())
            .collect();
        let refs: Vec<_> = bufs.iter().collect();
        let out = client
            .execute_buffers(&exe, &refs, &ExecuteOptions::default())
            .unwrap()
            .result;
        let kept = out.decompose_tuple().unwrap();
        let shared = client.into_literal(out).unwrap();
        assert_eq!(check(&shared), (false, false), "{platform}: shared");
        let big = client
            .into_literal(kept.into_iter().next().unwrap())
            .unwrap();
        assert_eq!(big.is_adopted(), host, "{platform}: last reference");
        assert_eq!(big.data::<f32>().unwrap()[3], -1.5);
        drop((big, shared, bufs));
        assert_eq!(executor.memory_usage().live_allocations, baseline);
    }
}
