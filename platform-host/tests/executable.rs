//! Compiled programs on the Host: argument checks, asynchronous execution,
//! control-flow limits, profiles, buffer reuse and aliasing, and replicated
//! programs whose collectives meet across devices.

use platform_api::{
    Code, CompileOptions, Compiler, DeviceAssignment, Executable, HloModule, Literal, Platform,
    PlatformOptions, ProfileSink, RunOptions, ShapedBuffer, Stream, TransferManager,
};
use platform_host::runner::{run_hlo, HostRunner};
use platform_host::{HostCompiler, HostTransferManager};
use std::sync::{mpsc, Arc};
use std::time::Duration;

fn f32s(dims: &[usize], v: &[f32]) -> Literal {
    Literal::from_slice(dims, v).unwrap()
}

#[test]
fn argument_errors_name_the_parameter_and_both_shapes() {
    let runner = HostRunner::compile(
        "HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT n = f32[2,3] negate(x)\n}\n",
    )
    .unwrap();
    let err = runner.run(&[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("takes 1 argument"), "{err}");
    let err = runner.run(&[f32s(&[3, 2], &[0.0; 6])]).unwrap_err();
    assert!(err.message().contains("%x"), "{err}");
    assert!(
        err.message().contains("f32[3,2]") && err.message().contains("f32[2,3]"),
        "{err}"
    );
    let err = runner
        .run(&[Literal::from_slice(&[2, 3], &[0i32; 6]).unwrap()])
        .unwrap_err();
    assert!(err.message().contains("s32[2,3]"), "{err}");
}

#[test]
fn execution_is_enqueued_and_returns_before_it_runs() {
    let runner = HostRunner::compile(
        "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] add(x, x)\n}\n",
    )
    .unwrap();
    let args = runner
        .to_device(&[f32s(&[4], &[1.25, 2.25, 3.25, 4.25])])
        .unwrap();
    let (release, gate) = mpsc::channel::<()>();
    runner
        .stream
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            Ok(())
        }))
        .unwrap();
    let refs: Vec<&ShapedBuffer> = args.iter().collect();
    let options = RunOptions::new(runner.stream.clone());
    let result = runner
        .executable
        .execute_async_on_stream(&options, &refs)
        .unwrap();
    // The stream is still blocked, so the program cannot have run: its result
    // buffer (fresh zeros, or a reused block's old bytes) lacks the result.
    // SAFETY: a live 16-byte result buffer that nothing writes until released.
    let before =
        unsafe { std::slice::from_raw_parts(result.root_buffer().opaque.cast::<f32>(), 4) }
            .to_vec();
    assert_ne!(before, vec![2.5, 4.5, 6.5, 8.5]);
    release.send(()).unwrap();
    runner.stream.block_host_until_done().unwrap();
    let out = HostTransferManager::new()
        .transfer_literal_from_device(&runner.stream, &result)
        .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[2.5, 4.5, 6.5, 8.5]);
}

#[test]
fn a_synchronous_execution_on_a_busy_stream_runs_after_the_queued_work() {
    // Idle, the program runs on the caller's thread, borrowing its buffers;
    // busy, it must wait behind the queued work and keep its buffers alive.
    let runner = HostRunner::compile(
        "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  y = f32[4] multiply(x, x)\n  ROOT t = (f32[4], f32[4], f32[4]) tuple(y, x, y)\n}\n",
    )
    .unwrap();
    let args = runner.to_device(&[f32s(&[4], &[1., 2., 3., 4.])]).unwrap();
    let read = |result: &ShapedBuffer| {
        HostTransferManager::new()
            .transfer_literal_from_device(&runner.stream, result)
            .unwrap()
            .decompose_tuple()
            .iter()
            .map(|l| l.data::<f32>().unwrap().to_vec())
            .collect::<Vec<_>>()
    };
    let want = vec![
        vec![1., 4., 9., 16.],
        vec![1., 2., 3., 4.],
        vec![1., 4., 9., 16.],
    ];
    let idle = runner.run_buffers(&args).unwrap();
    assert_eq!(read(&idle), want);
    let (release, gate) = mpsc::channel::<()>();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let queued = log.clone();
    runner
        .stream
        .host_callback(Box::new(move || {
            gate.recv_timeout(Duration::from_secs(10)).ok();
            queued.lock().unwrap().push("queued");
            Ok(())
        }))
        .unwrap();
    let busy = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let refs: Vec<&ShapedBuffer> = args.iter().collect();
            let options = RunOptions::new(runner.stream.clone());
            let out = runner.executable.execute_on_stream(&options, &refs);
            log.lock().unwrap().push("execution");
            out
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            log.lock().unwrap().is_empty(),
            "the execution waits its turn"
        );
        release.send(()).unwrap();
        waiter.join().unwrap().unwrap()
    });
    assert_eq!(*log.lock().unwrap(), vec!["queued", "execution"]);
    assert_eq!(read(&busy), want);
    let leaves = busy.leaves();
    assert!(Arc::ptr_eq(leaves[1].2, args[0].nodes().first().unwrap()));
    assert!(Arc::ptr_eq(leaves[0].2, leaves[2].2));
}

#[test]
fn while_step_limit_error_and_conditional_index_range() {
    let looping = r#"
HloModule m
cond {
  cp = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT n = s32[] add(p, one)
}
ENTRY e {
  z = s32[] parameter(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"#;
    let runner = HostRunner::compile(looping).unwrap();
    let args = runner.to_device(&[Literal::scalar(0i32)]).unwrap();
    let refs: Vec<&ShapedBuffer> = args.iter().collect();
    let mut options = RunOptions::new(runner.stream.clone());
    options.while_step_limit = Some(100);
    let err = runner
        .executable
        .execute_on_stream(&options, &refs)
        .unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert!(
        err.message().contains("%w") && err.message().contains("100"),
        "{err}"
    );

    let branches = r#"
HloModule m
b0 {
  p0 = f32[] parameter(0)
  ROOT n = f32[] negate(p0)
}
b1 {
  p1 = f32[] parameter(0)
  ROOT ex = f32[] exponential(p1)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x), branch_computations={b0, b1}
}
"#;
    let runner = HostRunner::compile(branches).unwrap();
    let out = runner
        .run(&[Literal::scalar(1i32), Literal::scalar(0.0f32)])
        .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[1.0]);
    let out = runner
        .run(&[Literal::scalar(0i32), Literal::scalar(2.0f32)])
        .unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[-2.0]);
    // Out of range, negative included, runs the last branch (XLA's rule).
    for out_of_range in [2, -1, i32::MIN] {
        let out = runner
            .run(&[Literal::scalar(out_of_range), Literal::scalar(0.0f32)])
            .unwrap();
        assert_eq!(out.data::<f32>().unwrap(), &[1.0], "index {out_of_range}");
    }
}

#[test]
fn profile_has_a_span_per_thunk() {
    // Unfused, so that each instruction is a thunk of its own.
    let runner = HostRunner::compile_with(
        "HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  a = f32[8] exponential(x)\n  ROOT b = f32[8] add(a, x)\n}\n",
        &platform_host::fusion::Strategy::Unfused.options(),
    )
    .unwrap();
    let args = runner.to_device(&[f32s(&[8], &[0.5; 8])]).unwrap();
    let sink = Arc::new(ProfileSink::new());
    runner.run_buffers_with(&args, Some(sink.clone())).unwrap();
    let names: Vec<String> = sink.events().iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(sink.events()[0].category, "exponential");
}

#[test]
fn dead_buffers_are_reused_and_elementwise_chains_run_in_place() {
    // Five 4 MB temporaries in a chain: with in-place reuse they share one
    // buffer (and the last writes the output directly).
    let runner = HostRunner::compile(
        r#"
HloModule m
ENTRY e {
  x = f32[1048576] parameter(0)
  a = f32[1048576] exponential(x)
  b = f32[1048576] negate(a)
  c = f32[1048576] add(b, x)
  d = f32[1048576] multiply(c, c)
  ROOT f = f32[1048576] sqrt(d)
}
"#,
    )
    .unwrap();
    assert_eq!(
        runner.executable.temp_bytes(),
        0,
        "the whole chain runs in the output buffer"
    );
    assert_eq!(runner.executable.peak_memory_bytes(), Some(4 << 20));
    let x: Vec<f32> = (0..1048576).map(|i| (i % 100) as f32 / 100.0).collect();
    let out = runner.run(&[f32s(&[1048576], &x)]).unwrap();
    let got = out.data::<f32>().unwrap();
    for i in [0usize, 17, 99, 1048575] {
        let want = (-(x[i].exp()) + x[i]).powi(2).sqrt();
        assert!(
            (got[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{i}: {} vs {want}",
            got[i]
        );
    }
    // Two values alive at once need two buffers, which the packer places apart;
    // a third that starts after one dies reuses its space.
    let runner = HostRunner::compile(
        r#"
HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] exponential(x)
  b = f32[1024] negate(x)
  s = f32[1024] add(a, b)
  t = f32[1024] negate(x)
  u = f32[1024] add(s, t)
  ROOT r = (f32[1024], f32[1024]) tuple(u, a)
}
"#,
    )
    .unwrap();
    assert!(
        runner.executable.temp_bytes() <= 2 * 4096,
        "{}",
        runner.executable.temp_bytes()
    );
    let x: Vec<f32> = (0..1024).map(|i| i as f32 / 1024.0).collect();
    let out = runner.run(&[f32s(&[1024], &x)]).unwrap().decompose_tuple();
    let (u, a) = (out[0].data::<f32>().unwrap(), out[1].data::<f32>().unwrap());
    for i in [0usize, 500, 1023] {
        assert!((a[i] - x[i].exp()).abs() < 1e-6);
        assert!((u[i] - (x[i].exp() - 2.0 * x[i])).abs() < 1e-5);
    }
}

#[test]
fn temporaries_lodge_in_the_result_rather_than_the_product() {
    // `g` (256 KiB) dies at the bag sums `s` (8 KiB), which die at the
    // product `d`, which `maximum` could overwrite in the result buffer. With
    // `d` in the result, `s` would need room in the arena beside `g`; with
    // `d` in `g`'s dead space and `s` lodged in the result until `maximum`
    // writes it, the arena is `g` alone.
    let runner = HostRunner::compile(
        r#"
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,128] parameter(0)
  y = f32[128,1024] parameter(1)
  w = f32[32,256] parameter(2)
  g = f32[64,1024] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[64,32,32] reshape(g)
  z = f32[] constant(0)
  s = f32[64,32] reduce(r, z), dimensions={2}, to_apply=add
  d = f32[64,256] dot(s, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[64,256] broadcast(z), dimensions={}
  ROOT m = f32[64,256] maximum(d, b)
}
"#,
    )
    .unwrap();
    assert_eq!(runner.executable.temp_bytes(), 64 * 1024 * 4);
    // Exact values: g = 64 everywhere, s = 2048, d = +-65536 by column.
    let w: Vec<f32> = (0..32 * 256)
        .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let out = runner
        .run(&[
            f32s(&[64, 128], &[0.5; 64 * 128]),
            f32s(&[128, 1024], &[1.0; 128 * 1024]),
            f32s(&[32, 256], &w),
        ])
        .unwrap();
    let got = out.data::<f32>().unwrap();
    for (k, &v) in got.iter().enumerate() {
        let want = if k % 2 == 0 { 65536.0 } else { 0.0 };
        assert_eq!(v, want, "element {k}");
    }
}

#[test]
fn sort_overwrites_operands_that_die_at_it() {
    // Both operands are temporaries that die at the sort, so the sort writes
    // its results over them: no temp arena at all (each value lives in its
    // output buffer). Sorting along dimension 0 of [300, 3] permutes lines
    // whose elements are 3 apart, staged before they are written back.
    let runner = HostRunner::compile(
        r#"
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[300,3] parameter(0)
  i = s32[300,3] parameter(1)
  n = f32[300,3] negate(x)
  m = s32[300,3] multiply(i, i)
  ROOT s = (f32[300,3], s32[300,3]) sort(n, m), dimensions={0}, is_stable=true, to_apply=cmp
}
"#,
    )
    .unwrap();
    assert_eq!(runner.executable.temp_bytes(), 0);
    let x: Vec<f32> = (0..900).map(|k| ((k * 7) % 50) as f32).collect();
    let i: Vec<i32> = (0..900).collect();
    let out = runner
        .run(&[
            f32s(&[300, 3], &x),
            Literal::from_slice(&[300, 3], &i).unwrap(),
        ])
        .unwrap()
        .decompose_tuple();
    let (keys, vals) = (out[0].data::<f32>().unwrap(), out[1].data::<i32>().unwrap());
    for c in 0..3 {
        let mut want: Vec<(f32, i32)> = (0..300)
            .map(|r| (-x[r * 3 + c], i[r * 3 + c] * i[r * 3 + c]))
            .collect();
        want.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        for (r, &(k, v)) in want.iter().enumerate() {
            assert_eq!(
                (keys[r * 3 + c], vals[r * 3 + c]),
                (k, v),
                "line {c}, position {r}"
            );
        }
    }
}

#[test]
fn results_can_be_arguments_or_repeat_each_other() {
    let runner = HostRunner::compile(
        "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] negate(x)\n  ROOT t = (f32[3], f32[3], f32[3]) tuple(x, y, y)\n}\n",
    )
    .unwrap();
    let args = runner.to_device(&[f32s(&[3], &[1., 2., 3.])]).unwrap();
    let result = runner.run_buffers(&args).unwrap();
    let leaves = result.leaves();
    assert!(
        Arc::ptr_eq(leaves[0].2, args[0].nodes().first().unwrap()),
        "returns the argument"
    );
    assert!(
        Arc::ptr_eq(leaves[1].2, leaves[2].2),
        "a repeated value is one buffer"
    );
    let lit = HostTransferManager::new()
        .transfer_literal_from_device(&runner.stream, &result)
        .unwrap()
        .decompose_tuple();
    assert_eq!(lit[0].data::<f32>().unwrap(), &[1., 2., 3.]);
    assert_eq!(lit[2].data::<f32>().unwrap(), &[-1., -2., -3.]);
    // The result table points at the leaves.
    let table = runner.stream.read_to_vec(result.root_buffer(), 24).unwrap();
    let first = u64::from_le_bytes(table[..8].try_into().unwrap());
    assert_eq!(first, args[0].root_buffer().addr());
}

#[test]
fn while_loop_updates_its_state_in_place() {
    // A scan: the stacked output is updated in place every iteration.
    let text = r#"
HloModule m
cond {
  cp = (s32[], f32[64,16]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] constant(64)
  ROOT lt = pred[] compare(ci, cn), direction=LT
}
body {
  p = (s32[], f32[64,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[64,16] get-tuple-element(p), index=1
  f = f32[] convert(i)
  row = f32[1,16] broadcast(f), dimensions={}
  z = s32[] constant(0)
  upd = f32[64,16] dynamic-update-slice(acc, row, i, z)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[64,16]) tuple(next, upd)
}
ENTRY e {
  zero = s32[] constant(0)
  init = f32[64,16] parameter(0)
  start = (s32[], f32[64,16]) tuple(zero, init)
  w = (s32[], f32[64,16]) while(start), condition=cond, body=body
  ROOT out = f32[64,16] get-tuple-element(w), index=1
}
"#;
    let out = run_hlo(text, &[f32s(&[64, 16], &[0.0; 1024])]).unwrap();
    let v = out.data::<f32>().unwrap();
    for r in 0..64 {
        assert!(v[r * 16..r * 16 + 16].iter().all(|&x| x == r as f32));
    }
}

#[test]
fn while_body_returning_one_value_in_two_state_slots_updates_both() {
    // `i1` goes to slots 0 and 1; the copy into slot 0 once read a buffer that
    // slot 1's move had emptied, so `i` never advanced and the loop never ended.
    let text = r#"
HloModule m
body {
  p = (s32[], s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i)
  x1 = f32[] add(x, fi)
  ROOT t = (s32[], s32[], f32[]) tuple(i1, i1, x1)
}
cond {
  cp = (s32[], s32[], f32[]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  ten = s32[] constant(10)
  ROOT lt = pred[] compare(ci, ten), direction=LT
}
ENTRY e {
  x0 = f32[] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], s32[], f32[]) tuple(z, z, x0)
  ROOT w = (s32[], s32[], f32[]) while(t0), condition=cond, body=body
}
"#;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run_hlo(text, &[Literal::scalar(0.5f32)]));
    });
    let out = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the loop ends after 10 iterations")
        .unwrap();
    let leaves = out.flatten_leaves();
    assert_eq!(leaves[0].data::<i32>().unwrap(), &[10]);
    assert_eq!(leaves[1].data::<i32>().unwrap(), &[10]);
    assert_eq!(leaves[2].data::<f32>().unwrap(), &[45.5]);
}

/// Compiles `text` for `replicas` devices and runs every replica on its own
/// stream and thread with the same run id; returns each replica's result.
fn run_replicated(
    text: &str,
    replicas: usize,
    args: impl Fn(usize) -> Vec<Literal>,
) -> Vec<Literal> {
    let platform = platform_host::runtime::platform::create(&PlatformOptions {
        device_count: Some(replicas),
    })
    .unwrap();
    let options = CompileOptions {
        replica_count: replicas,
        ..CompileOptions::default()
    };
    let exec0 = platform.executor(0).unwrap();
    let compiler = HostCompiler;
    let exe: Arc<dyn Executable> = compiler
        .compile(HloModule::parse(text).unwrap(), &exec0, &options)
        .unwrap();
    let assignment =
        Arc::new(DeviceAssignment::new((0..replicas).map(|r| vec![r]).collect()).unwrap());
    let handles: Vec<_> = (0..replicas)
        .map(|r| {
            let exec = platform.executor(r).unwrap();
            let exe = exe.clone();
            let assignment = assignment.clone();
            let inputs = args(r);
            std::thread::spawn(move || {
                let stream: Arc<dyn Stream> = exec.create_stream().unwrap();
                let tm = HostTransferManager::new();
                let bufs: Vec<ShapedBuffer> = inputs
                    .iter()
                    .map(|l| tm.literal_to_device(&stream, l).unwrap())
                    .collect();
                let refs: Vec<&ShapedBuffer> = bufs.iter().collect();
                let mut opts = RunOptions::new(stream.clone());
                opts.replica = r;
                opts.run_id = 4242;
                opts.device_assignment = Some(assignment);
                let out = exe.execute_on_stream(&opts, &refs).unwrap();
                tm.transfer_literal_from_device(&stream, &out).unwrap()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn replicated_collectives_meet_across_devices() {
    let text = r#"
HloModule m, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  sum = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  pairs = f32[2] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add
  gathered = f32[8] all-gather(x), replica_groups={}, dimensions={0}
  shifted = f32[2] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  id = u32[] replica-id()
  ROOT t = (f32[2], f32[2], f32[8], f32[2], u32[]) tuple(sum, pairs, gathered, shifted, id)
}
"#;
    let results = run_replicated(text, 4, |r| vec![f32s(&[2], &[r as f32, 10.0 * r as f32])]);
    for (r, out) in results.into_iter().enumerate() {
        let parts = out.decompose_tuple();
        assert_eq!(parts[0].data::<f32>().unwrap(), &[6.0, 60.0]);
        let base = if r < 2 { 0.0 } else { 2.0 };
        assert_eq!(
            parts[1].data::<f32>().unwrap(),
            &[2.0 * base + 1.0, 10.0 * (2.0 * base + 1.0)]
        );
        assert_eq!(
            parts[2].data::<f32>().unwrap(),
            &[0., 0., 1., 10., 2., 20., 3., 30.]
        );
        let src = (r + 3) % 4;
        assert_eq!(
            parts[3].data::<f32>().unwrap(),
            &[src as f32, 10.0 * src as f32]
        );
        assert_eq!(parts[4].data::<u32>().unwrap(), &[r as u32]);
    }
}

#[test]
fn replicated_reduce_scatter_all_to_all_and_broadcast() {
    let text = r#"
HloModule m, replica_count=2
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}
ENTRY e {
  x = s32[4] parameter(0)
  rs = s32[2] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=mx
  a2a = s32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}
  bc = s32[4] collective-broadcast(x), replica_groups={{0,1}}
  ROOT t = (s32[2], s32[4], s32[4]) tuple(rs, a2a, bc)
}
"#;
    // Replica r holds [10r, 10r+1, 10r+2, 10r+3] (replica 1 reversed).
    let inputs = |r: usize| {
        let v: Vec<i32> = if r == 0 {
            vec![0, 1, 2, 3]
        } else {
            vec![13, 12, 11, 10]
        };
        vec![Literal::from_slice(&[4], &v).unwrap()]
    };
    let results = run_replicated(text, 2, inputs);
    let parts: Vec<Vec<Literal>> = results.into_iter().map(|l| l.decompose_tuple()).collect();
    // max over replicas = [13, 12, 11, 10]; replica r keeps block r.
    assert_eq!(parts[0][0].data::<i32>().unwrap(), &[13, 12]);
    assert_eq!(parts[1][0].data::<i32>().unwrap(), &[11, 10]);
    // all-to-all: block j of replica i goes to replica j, position i.
    assert_eq!(parts[0][1].data::<i32>().unwrap(), &[0, 1, 13, 12]);
    assert_eq!(parts[1][1].data::<i32>().unwrap(), &[2, 3, 11, 10]);
    // broadcast from the group's first member.
    assert_eq!(parts[1][2].data::<i32>().unwrap(), &[0, 1, 2, 3]);
}

#[test]
fn compile_errors_name_the_unsupported_op() {
    let text = "HloModule m\nENTRY e {\n  t = token[] after-all()\n  ROOT i = (f32[2], token[]) infeed(t)\n}\n";
    let err = HostRunner::compile(text).err().unwrap();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(
        err.message().contains("infeed") && err.message().contains("%i"),
        "{err}"
    );
}

/// `out = (in0[i] + sum(tuple in1)[i], in0[i] * 2)` over 4 f32s, with the CPU
/// ABI: `in1` is a table of two pointers, `out` a table of two pointers.
unsafe extern "C" fn tuple_target(out: *mut std::ffi::c_void, ins: *const *const std::ffi::c_void) {
    // SAFETY: the program below calls this with the shapes it documents.
    unsafe {
        let a = *ins as *const f32;
        let table = *ins.add(1) as *const *const f32;
        let (t0, t1) = (*table, *table.add(1));
        let outs = out as *const *mut f32;
        let (o0, o1) = (*outs, *outs.add(1));
        for i in 0..4 {
            *o0.add(i) = *a.add(i) + *t0.add(i) + *t1.add(i);
            *o1.add(i) = *a.add(i) * 2.0;
        }
    }
}

unsafe extern "C" fn failing_target(
    _out: *mut std::ffi::c_void,
    _ins: *const *const std::ffi::c_void,
    status: *mut platform_api::custom_call::XlaCustomCallStatus,
) {
    let msg = b"the target refused";
    // SAFETY: `status` is the runtime's status object.
    unsafe {
        platform_api::custom_call::XlaCustomCallStatusSetFailure(
            status,
            msg.as_ptr().cast(),
            msg.len(),
        )
    };
}

#[test]
fn custom_calls_get_pointer_tables_and_report_failures() {
    use platform_api::custom_call::{register_target, Target};
    register_target(
        "host_test_tuple_target",
        "Host",
        Target::CpuOriginal(tuple_target),
    )
    .unwrap();
    register_target(
        "host_test_failing_target",
        "Host",
        Target::CpuStatusReturning(failing_target),
    )
    .unwrap();
    let text = r#"
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  c = f32[4] negate(b)
  t = (f32[4], f32[4]) tuple(b, c)
  ROOT r = (f32[4], f32[4]) custom-call(a, t), custom_call_target="host_test_tuple_target"
}
"#;
    let out = run_hlo(
        text,
        &[f32s(&[4], &[1., 2., 3., 4.]), f32s(&[4], &[5., 6., 7., 8.])],
    )
    .unwrap()
    .decompose_tuple();
    assert_eq!(out[0].data::<f32>().unwrap(), &[1., 2., 3., 4.]);
    assert_eq!(out[1].data::<f32>().unwrap(), &[2., 4., 6., 8.]);
    let failing = r#"
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(a), custom_call_target="host_test_failing_target", api_version=API_VERSION_STATUS_RETURNING
}
"#;
    let err = run_hlo(failing, &[f32s(&[4], &[0.; 4])]).unwrap_err();
    assert!(
        err.message().contains("the target refused") && err.message().contains("%r"),
        "{err}"
    );
    let missing = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] custom-call(a), custom_call_target=\"no_such_target\"\n}\n";
    let err = HostRunner::compile(missing).err().unwrap();
    assert!(err.message().contains("no_such_target"), "{err}");
}

#[test]
fn loop_invariant_state_is_not_copied() {
    // `w` passes through the loop unchanged: the loop state uses the argument
    // buffer itself, and returning it returns that buffer.
    let text = r#"
HloModule m
lcond {
  cp = (s32[], f32[8]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] constant(3)
  ROOT lt = pred[] compare(ci, cn), direction=LT
}
lbody {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  w = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(j, w)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[8] parameter(0)
  s = (s32[], f32[8]) tuple(z, x)
  l = (s32[], f32[8]) while(s), condition=lcond, body=lbody
  n = s32[] get-tuple-element(l), index=0
  y = f32[8] get-tuple-element(l), index=1
  ROOT r = (s32[], f32[8]) tuple(n, y)
}
"#;
    let runner = HostRunner::compile(text).unwrap();
    let args = runner.to_device(&[f32s(&[8], &[1.5; 8])]).unwrap();
    let result = runner.run_buffers(&args).unwrap();
    assert!(Arc::ptr_eq(result.leaves()[1].2, &args[0].nodes()[0]));
    let out = HostTransferManager::new()
        .transfer_literal_from_device(&runner.stream, &result)
        .unwrap()
        .decompose_tuple();
    assert_eq!(out[0].data::<i32>().unwrap(), &[3]);
    assert_eq!(out[1].data::<f32>().unwrap(), &[1.5; 8]);
}

#[test]
fn runs_through_the_registry_like_any_client() {
    use platform_api::registry;
    let platform = registry::platform("cpu").unwrap();
    let executor = platform.executor(0).unwrap();
    let stream = executor.clone().create_stream().unwrap();
    let compiler = registry::compiler(platform.id()).unwrap();
    let transfer = registry::transfer_manager(platform.id()).unwrap();
    let module = HloModule::parse(
        "HloModule m\nENTRY e {\n  x = f32[2,3]{0,1} parameter(0)\n  ROOT t = f32[3,2]{1,0} transpose(x), dimensions={1,0}\n}\n",
    )
    .unwrap();
    let exe = compiler
        .compile(module, &executor, &CompileOptions::default())
        .unwrap();
    // The argument's layout is column-major on the host: the transfer manager
    // gives the device buffer a row-major shape and permutes the bytes.
    let mut arg = f32s(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
    arg.set_layout(Some(platform_api::Layout {
        minor_to_major: vec![0, 1],
        ..Default::default()
    }));
    let buf = transfer.literal_to_device(&stream, &arg).unwrap();
    let out = exe
        .execute_on_stream(&RunOptions::new(stream.clone()), &[&buf])
        .unwrap();
    let lit = transfer
        .transfer_literal_from_device(&stream, &out)
        .unwrap();
    assert_eq!(lit.data::<f32>().unwrap(), &[1., 4., 2., 5., 3., 6.]);
    assert!(exe.peak_memory_bytes().is_some());
}

#[test]
fn a_long_elementwise_chain_compiles_into_bounded_fusions() {
    // Each add also uses the parameter. Grown without bound, one fusion group
    // recompiled its block program at every addition (quadratic compile time).
    let n = 3000;
    let mut text = String::from(
        "HloModule chain\nENTRY e {\n  p = f32[16] parameter(0)\n  a0 = f32[16] add(p, p)\n",
    );
    for i in 1..n {
        text.push_str(&format!("  a{i} = f32[16] add(a{}, p)\n", i - 1));
    }
    text.push_str(&format!("  ROOT r = f32[16] add(a{}, p)\n}}\n", n - 1));
    let out = run_hlo(&text, &[f32s(&[16], &[1.0; 16])]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[(n + 2) as f32; 16]);
}

#[test]
fn dynamic_sizes_are_tracked_not_dropped() {
    // XLA returns 5 and the first five elements here (the rest unspecified;
    // zero on this platform); copying the bound through gave 8.
    let text = "HloModule dyn\nENTRY e {\n  p = f32[8] parameter(0)\n  n = s32[] constant(5)\n  \
                d = f32[<=8] set-dimension-size(p, n), dimensions={0}\n  \
                g = s32[] get-dimension-size(d), dimensions={0}\n  \
                ROOT t = (f32[<=8], s32[]) tuple(d, g)\n}\n";
    let out = run_hlo(text, &[f32s(&[8], &[1.0; 8])]).unwrap();
    let parts = out.decompose_tuple();
    assert_eq!(
        parts[0].data::<f32>().unwrap(),
        &[1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(parts[1].data::<i32>().unwrap(), &[5]);
}

/// XLA's argmax/argmin of one row: the first extreme index, NaN beating
/// every number (the first NaN wins).
fn arg_extreme(row: &[f32], greater: bool) -> (f32, i32) {
    let mut best = (row[0], 0i32);
    for (j, &v) in row.iter().enumerate().skip(1) {
        let (b, _) = best;
        let better = !b.is_nan() && (v.is_nan() || if greater { v > b } else { v < b });
        if better {
            best = (v, j as i32);
        }
    }
    best
}

/// JAX's argmax (`GT`) or argmin (`LT`) reducer: keep the accumulator when
/// it wins the comparison or is NaN; on a tie keep the lower index.
fn arg_reducer(name: &str, direction: &str) -> String {
    format!(
        "{name} {{
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  wins = pred[] compare(v0, v1), direction={direction}
  nan = pred[] compare(v0, v0), direction=NE
  keep = pred[] or(wins, nan)
  eq = pred[] compare(v0, v1), direction=EQ
  lower = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lower)
  keep_i = pred[] or(keep, tie)
  v = f32[] select(keep, v0, v1)
  i = s32[] select(keep_i, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}}
"
    )
}

/// Checks an argmax (`greater`) or argmin's values and indices, output `o`
/// reducing `lines[o]`.
fn assert_arg_extremes(values: &Literal, indices: &Literal, greater: bool, lines: &[Vec<f32>]) {
    let (values, indices) = (
        values.data::<f32>().unwrap(),
        indices.data::<i32>().unwrap(),
    );
    for (o, line) in lines.iter().enumerate() {
        let (v, i) = arg_extreme(line, greater);
        assert_eq!(indices[o], i, "output {o}, greater={greater}");
        assert!(
            v.to_bits() == values[o].to_bits() || (v.is_nan() && values[o].is_nan()),
            "output {o}: {} vs {v}",
            values[o]
        );
    }
}

/// Compiles `text`, checking that `want` reductions became arg-reduces
/// over positions (no index array).
fn compile_reading_positions(text: &str, want: usize) -> HostRunner {
    let runner = HostRunner::compile(text).unwrap();
    let module = runner.executable.module();
    let calls = module
        .computation(module.entry)
        .instructions
        .iter()
        .filter(|i| {
            matches!(&i.op, platform_api::hlo::Op::CustomCall(a)
                if a.target == platform_host::arg_reduce::ARG_REDUCE_TARGET)
        })
        .count();
    assert_eq!(calls, want, "reductions reading positions:\n{module}");
    runner
}

#[test]
fn argmax_over_an_iota_reads_positions_not_an_index_array() {
    // Rows with ties, NaN, infinities and signed zeros; the index operand is
    // a broadcast 1-D iota (argmax) or an iota along the row (argmin), the
    // forms JAX emits, which the Host runs without materialising.
    let entry = "ENTRY main {
  x = f32[4,6] parameter(0)
  ninf = f32[] constant(-inf)
  inf = f32[] constant(inf)
  zero = s32[] constant(0)
  row = s32[6] iota(), iota_dimension=0
  positions = s32[4,6] broadcast(row), dimensions={1}
  mx = (f32[4], s32[4]) reduce(x, positions, ninf, zero), dimensions={1}, to_apply=argmax
  along = s32[4,6] iota(), iota_dimension=1
  mn = (f32[4], s32[4]) reduce(x, along, inf, zero), dimensions={1}, to_apply=argmin
  ROOT t = ((f32[4], s32[4]), (f32[4], s32[4])) tuple(mx, mn)
}
";
    let text = [
        "HloModule m\n",
        &arg_reducer("argmax", "GT"),
        &arg_reducer("argmin", "LT"),
        entry,
    ]
    .concat();
    let nan = f32::NAN;
    let rows: [[f32; 6]; 4] = [
        [1.0, 3.0, 3.0, -2.0, 0.5, 3.0],
        [-0.0, 0.0, nan, 7.0, nan, -7.0],
        [
            f32::NEG_INFINITY,
            -1.0,
            -1.0,
            f32::INFINITY,
            2.0,
            f32::INFINITY,
        ],
        [5.0, 5.0, 5.0, 5.0, 5.0, 5.0],
    ];
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let runner = compile_reading_positions(&text, 2);
    let got = runner
        .run(&[f32s(&[4, 6], &flat)])
        .unwrap()
        .flatten_leaves();
    assert_eq!(got.len(), 4);
    let lines: Vec<Vec<f32>> = rows.iter().map(|r| r.to_vec()).collect();
    for (k, greater) in [(0usize, true), (2, false)] {
        assert_arg_extremes(&got[k], &got[k + 1], greater, &lines);
    }
}

#[test]
fn argmax_over_a_major_or_middle_dimension_reads_positions_column_by_column() {
    // The positions are an iota along the reduced dimension, which is not
    // the innermost: the kernel walks input rows into a row of accumulators
    // (300 columns: more than one run of them). Values repeat with ties,
    // NaN and signed zeros so every comparison rule shows.
    let entry = "ENTRY main {
  x = f32[7,300] parameter(0)
  y = f32[2,7,3] parameter(1)
  ninf = f32[] constant(-inf)
  inf = f32[] constant(inf)
  zero = s32[] constant(0)
  col = s32[7] iota(), iota_dimension=0
  positions = s32[7,300] broadcast(col), dimensions={0}
  mx = (f32[300], s32[300]) reduce(x, positions, ninf, zero), dimensions={0}, to_apply=argmax
  along = s32[2,7,3] iota(), iota_dimension=1
  mn = (f32[2,3], s32[2,3]) reduce(y, along, inf, zero), dimensions={1}, to_apply=argmin
  ROOT t = ((f32[300], s32[300]), (f32[2,3], s32[2,3])) tuple(mx, mn)
}
";
    let text = [
        "HloModule m\n",
        &arg_reducer("argmax", "GT"),
        &arg_reducer("argmin", "LT"),
        entry,
    ]
    .concat();
    let pool = [
        1.0f32,
        3.0,
        -0.0,
        0.0,
        f32::NAN,
        -7.0,
        f32::INFINITY,
        3.0,
        f32::NEG_INFINITY,
    ];
    let x: Vec<f32> = (0..7 * 300)
        .map(|k| pool[(k * 7 + k / 300 * 5) % pool.len()])
        .collect();
    let y: Vec<f32> = (0..42).map(|k| pool[(k * 5 + 1) % pool.len()]).collect();
    let runner = compile_reading_positions(&text, 2);
    let got = runner
        .run(&[f32s(&[7, 300], &x), f32s(&[2, 7, 3], &y)])
        .unwrap()
        .flatten_leaves();
    let check = |k: usize, greater: bool, lines: Vec<Vec<f32>>| {
        assert_arg_extremes(&got[k], &got[k + 1], greater, &lines)
    };
    check(
        0,
        true,
        (0..300)
            .map(|c| (0..7).map(|r| x[r * 300 + c]).collect())
            .collect(),
    );
    let lines = (0..2)
        .flat_map(|a| (0..3).map(move |c| (a, c)))
        .map(|(a, c)| (0..7).map(|r| y[a * 21 + r * 3 + c]).collect())
        .collect();
    check(2, false, lines);
}

#[test]
fn element_gathers_with_batching_dimensions_clamp_each_index() {
    // `take_along_axis` (one index per point, a batching dimension) with
    // s32 indices out of range both ways, and a two-component index vector
    // over a batched operand (s64 indices, f64 elements): every point's
    // element at its clamped start.
    let text = "HloModule m
ENTRY e {
  x = f32[5,7] parameter(0)
  i = s32[5,3,1] parameter(1)
  y = f64[3,4,6] parameter(2)
  j = s64[3,2,2] parameter(3)
  a = f32[5,3] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
  b = f64[3,2] gather(y, j), offset_dims={}, collapsed_slice_dims={1,2}, start_index_map={2,1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,1}
  ROOT t = (f32[5,3], f64[3,2]) tuple(a, b)
}
";
    let x: Vec<f32> = (0..35).map(|v| v as f32).collect();
    let i: Vec<i32> = vec![0, 6, 7, -1, 3, 100, 2, -50, 5, 1, 1, 1, 6, 0, 9];
    let y: Vec<f64> = (0..72).map(|v| v as f64 * 0.5).collect();
    let j: Vec<i64> = vec![0, 0, 5, 3, -2, 9, 7, 1, 2, 2, i64::MIN, i64::MAX];
    let got = HostRunner::compile(text)
        .unwrap()
        .run(&[
            f32s(&[5, 7], &x),
            Literal::from_slice(&[5, 3, 1], &i).unwrap(),
            Literal::from_slice(&[3, 4, 6], &y).unwrap(),
            Literal::from_slice(&[3, 2, 2], &j).unwrap(),
        ])
        .unwrap()
        .flatten_leaves();
    let want_a: Vec<f32> = (0..15)
        .map(|p| x[(p / 3) * 7 + i[p].clamp(0, 6) as usize])
        .collect();
    assert_eq!(got[0].data::<f32>().unwrap(), &want_a[..]);
    let want_b: Vec<f64> = (0..6)
        .map(|p| {
            // Component 0 names dimension 2, component 1 dimension 1.
            let (c2, c1) = (
                j[2 * p].clamp(0, 5) as usize,
                j[2 * p + 1].clamp(0, 3) as usize,
            );
            y[(p / 2) * 24 + c1 * 6 + c2]
        })
        .collect();
    assert_eq!(got[1].data::<f64>().unwrap(), &want_b[..]);
}

#[test]
fn a_loop_updating_two_arrays_writes_both_over_their_old_values() {
    // A threefry-like round: `y0` consumes `a` before the instruction order
    // reaches the other half, so the fusion pass must merge it into the
    // group computing `a`, and both outputs of that one fusion must be
    // written over the loop state they replace (no arena, no copies back).
    const N: usize = 65536;
    let text = r#"
HloModule m
cond {
  cp = (s32[], u32[65536], u32[65536], u32[]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] constant(5)
  ROOT lt = pred[] compare(ci, cn), direction=LT
}
body {
  p = (s32[], u32[65536], u32[65536], u32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x0 = u32[65536] get-tuple-element(p), index=1
  x1 = u32[65536] get-tuple-element(p), index=2
  k = u32[] get-tuple-element(p), index=3
  a = u32[65536] add(x0, x1)
  kb = u32[65536] broadcast(k), dimensions={}
  y0 = u32[65536] add(a, kb)
  c13 = u32[] constant(13)
  b13 = u32[65536] broadcast(c13), dimensions={}
  c19 = u32[] constant(19)
  b19 = u32[65536] broadcast(c19), dimensions={}
  l = u32[65536] shift-left(x1, b13)
  r = u32[65536] shift-right-logical(x1, b19)
  rot = u32[65536] or(l, r)
  s = u32[65536] xor(rot, a)
  y1 = u32[65536] add(s, kb)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT t = (s32[], u32[65536], u32[65536], u32[]) tuple(ni, y0, y1, k)
}
ENTRY e {
  zero = s32[] constant(0)
  p0 = u32[65536] parameter(0)
  p1 = u32[65536] parameter(1)
  key = u32[] parameter(2)
  start = (s32[], u32[65536], u32[65536], u32[]) tuple(zero, p0, p1, key)
  w = (s32[], u32[65536], u32[65536], u32[]) while(start), condition=cond, body=body
  o0 = u32[65536] get-tuple-element(w), index=1
  o1 = u32[65536] get-tuple-element(w), index=2
  ROOT out = (u32[65536], u32[65536]) tuple(o0, o1)
}
"#;
    let runner = HostRunner::compile(text).unwrap();
    // The loop's state is the only place its arrays live: the entry copies
    // the two arguments in, and the body needs no arena of its own.
    let peak = runner.executable.peak_memory_bytes().unwrap();
    assert!(peak <= (2 * N * 4 + 4096) as u64, "peak {peak} bytes");
    let p0: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let p1: Vec<u32> = (0..N as u32).map(|i| i ^ 0x9e37_79b9).collect();
    let key = 0x1bd1_1bdau32;
    let args = [
        Literal::from_slice(&[N], &p0).unwrap(),
        Literal::from_slice(&[N], &p1).unwrap(),
        Literal::scalar(key),
    ];
    let out = runner.run(&args).unwrap().decompose_tuple();
    let (got0, got1) = (out[0].data::<u32>().unwrap(), out[1].data::<u32>().unwrap());
    for e in 0..N {
        let (mut x0, mut x1) = (p0[e], p1[e]);
        for _ in 0..5 {
            let a = x0.wrapping_add(x1);
            let y1 = (x1.rotate_left(13) ^ a).wrapping_add(key);
            x0 = a.wrapping_add(key);
            x1 = y1;
        }
        assert_eq!((got0[e], got1[e]), (x0, x1), "element {e}");
    }
}
