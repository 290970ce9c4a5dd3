//! Collectives across four replicas, each on its own thread, device, executor
//! and stream, meeting by run id. Expected values are written out by hand.

mod support;
use platform_api::registry;
use platform_api::{
    CompileOptions, Compiler, ComputationPlacer, DefaultComputationPlacer, Executable, Literal,
    PlatformOptions, RunOptions,
};
use platform_interpreter::InterpreterCompiler;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use support::*;

const REPLICAS: usize = 4;

/// Runs `text` as REPLICAS replicas in parallel; replica r gets `arg(r)`.
fn run_replicated(text: &str, arg: impl Fn(usize) -> Literal + Sync) -> Vec<Literal> {
    static RUN_ID: AtomicU64 = AtomicU64::new(1000);
    let run_id = RUN_ID.fetch_add(1, Ordering::Relaxed);
    let platform = registry::create_platform(
        "Interpreter",
        &PlatformOptions {
            device_count: Some(REPLICAS),
        },
    )
    .unwrap();
    let options = CompileOptions {
        replica_count: REPLICAS,
        ..CompileOptions::default()
    };
    let exe: Arc<dyn Executable> = InterpreterCompiler
        .compile(parse(text), &platform.executor(0).unwrap(), &options)
        .unwrap();
    let assignment = Arc::new(
        DefaultComputationPlacer
            .assign_devices(REPLICAS, 1)
            .unwrap(),
    );
    let tm = registry::transfer_manager("Interpreter").unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..REPLICAS)
            .map(|r| {
                let (exe, platform, assignment, tm, arg) = (
                    exe.clone(),
                    platform.clone(),
                    assignment.clone(),
                    tm.clone(),
                    &arg,
                );
                scope.spawn(move || {
                    let ex = platform.executor(assignment.device(r, 0).unwrap()).unwrap();
                    let stream = ex.clone().create_stream().unwrap();
                    let buffer = tm.literal_to_device(&stream, &arg(r)).unwrap();
                    let mut o = RunOptions::new(stream.clone());
                    o.replica = r;
                    o.run_id = run_id;
                    o.device_assignment = Some(assignment);
                    let result = exe
                        .execute_on_stream(&o, &[&buffer])
                        .unwrap_or_else(|e| panic!("replica {r}: {e}"));
                    tm.transfer_literal_from_device(&stream, &result).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Replica r contributes [10r, 10r+1, 10r+2, 10r+3].
fn tens(r: usize) -> Literal {
    Literal::vector(&(0..4).map(|i| (10 * r + i) as f32).collect::<Vec<_>>())
}

/// A reducer that keeps its second argument: the fold's result is the last
/// member's contribution, which shows the group order.
const LAST_WINS: &str = "last { x0 = f32[] parameter(0)\n ROOT x1 = f32[] parameter(1) }\n";

#[test]
fn all_gather_concatenates_in_replica_order() {
    let m = "HloModule m\nENTRY e { p = f32[2] parameter(0)\n ROOT g = f32[8] all-gather(p), dimensions={0}, replica_groups={} }";
    let out = run_replicated(m, |r| {
        Literal::vector(&[(10 * r) as f32, (10 * r + 1) as f32])
    });
    for o in out {
        assert_eq!(f32s(&o), [0., 1., 10., 11., 20., 21., 30., 31.]);
    }
}

#[test]
fn all_reduce_respects_replica_groups() {
    let m = format!("HloModule m\n{LAST_WINS}ENTRY e {{ p = f32[4] parameter(0)\n ROOT a = f32[4] all-reduce(p), replica_groups={{{{0,1}},{{3,2}}}}, to_apply=last }}");
    let out = run_replicated(&m, tens);
    // Group {0,1} folds to replica 1's value; group {3,2} to replica 2's (its last member).
    assert_eq!(f32s(&out[0]), f32s(&tens(1)));
    assert_eq!(f32s(&out[1]), f32s(&tens(1)));
    assert_eq!(f32s(&out[2]), f32s(&tens(2)));
    assert_eq!(f32s(&out[3]), f32s(&tens(2)));
}

#[test]
fn reduce_scatter_gives_each_replica_its_block() {
    let m = format!("HloModule m\n{LAST_WINS}ENTRY e {{ p = f32[4] parameter(0)\n ROOT a = f32[1] reduce-scatter(p), replica_groups={{}}, dimensions={{0}}, to_apply=last }}");
    let out = run_replicated(&m, tens);
    for (r, o) in out.iter().enumerate() {
        assert_eq!(f32s(o), [(30 + r) as f32]);
    }
}

#[test]
fn all_to_all_exchanges_blocks() {
    let m = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n ROOT a = f32[4] all-to-all(p), replica_groups={}, dimensions={0} }";
    let out = run_replicated(m, tens);
    for (r, o) in out.iter().enumerate() {
        // Replica r receives block r of every source j, in source order.
        assert_eq!(
            f32s(o),
            (0..4).map(|j| (10 * j + r) as f32).collect::<Vec<_>>()
        );
    }
}

#[test]
fn collective_permute_sends_along_pairs_and_zeros_the_rest() {
    let m = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n ROOT c = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3}} }";
    let out = run_replicated(m, tens);
    assert_eq!(f32s(&out[0]), [0.; 4]);
    for (r, o) in out.iter().enumerate().skip(1) {
        assert_eq!(f32s(o), f32s(&tens(r - 1)));
    }
}

#[test]
fn collective_broadcast_sends_the_first_members_value() {
    let m = "HloModule m\nENTRY e { p = f32[4] parameter(0)\n ROOT c = f32[4] collective-broadcast(p), replica_groups={{2,0,1,3}} }";
    let out = run_replicated(m, tens);
    for o in out {
        assert_eq!(f32s(&o), f32s(&tens(2)));
    }
}

#[test]
fn collectives_inside_a_loop_meet_once_per_iteration() {
    // Each iteration gathers the replicas' counters; the loop runs twice
    // (flags), and the state keeps the last gather.
    let m = r#"HloModule m
cond { cs = (s32[], f32[4]) parameter(0)
 ci = s32[] get-tuple-element(cs), index=0
 flags = pred[3] constant({true, true, false})
 f = pred[1] dynamic-slice(flags, ci), dynamic_slice_sizes={1}
 ROOT r = pred[] reshape(f) }
body { s = (s32[], f32[4]) parameter(0)
 i = s32[] get-tuple-element(s), index=0
 v = f32[4] get-tuple-element(s), index=1
 mine = f32[1] slice(v), slice={[1:2]}
 g = f32[4] all-gather(mine), dimensions={0}, replica_groups={}
 next = s32[3] constant({1, 2, 0})
 n = s32[1] dynamic-slice(next, i), dynamic_slice_sizes={1}
 i2 = s32[] reshape(n)
 ROOT t = (s32[], f32[4]) tuple(i2, g) }
ENTRY e { p = f32[4] parameter(0)
 z = s32[] constant(0)
 init = (s32[], f32[4]) tuple(z, p)
 w = (s32[], f32[4]) while(init), condition=cond, body=body
 ROOT out = f32[4] get-tuple-element(w), index=1 }"#;
    let out = run_replicated(m, tens);
    // Iteration 1 gathers element 1 of each replica: [1, 11, 21, 31];
    // iteration 2 gathers element 1 of that: 11 everywhere.
    for o in out {
        assert_eq!(f32s(&o), [11.; 4]);
    }
}

#[test]
fn all_reduce_sums_in_group_order() {
    let m = "HloModule m\nsum { sa = f32[] parameter(0)\n sb = f32[] parameter(1)\n ROOT ss = f32[] add(sa, sb) }\nENTRY e { p = f32[4] parameter(0)\n ROOT a = f32[4] all-reduce(p), replica_groups={}, to_apply=sum }";
    let out = run_replicated(m, tens);
    for o in out {
        // Σ_r (10r + i) = 60 + 4i
        assert_eq!(f32s(&o), [60., 64., 68., 72.]);
    }
}
