//! The asynchronous collectives `all-gather-start`/`-done` and
//! `collective-permute-start`/`-done` on the Interpreter and the Host, across
//! replicas and across partitions (with a channel id), every device a thread
//! of one process meeting at the in-process rendezvous.
//!
//! Each program runs the start/done pair and the synchronous form side by
//! side on the same operand: the done must equal the synchronous result and
//! what the test computes by hand from every device's input; the start's
//! element 0 must be its operand and a collective-permute-start's context
//! values zeros (nothing reads them, but they are defined). The combined
//! collective-permute (two operands of different types and shapes) must
//! equal two one-operand permutes and the inputs of the sending device; the
//! in-place form must be refused as unimplemented.

use crate::sharded::compile_on;
use platform_api::{HloModule, Literal};
use service::ExecuteOptions;

const PLATFORMS: [&str; 2] = ["interpreter", "host"];

/// Device `d`'s operand: `100 d + i` at flat index `i`, so every value names
/// the device it came from.
fn input(d: usize, dims: &[usize]) -> Literal {
    let n: usize = dims.iter().product();
    let v: Vec<f32> = (0..n).map(|i| (100 * d + i) as f32).collect();
    Literal::from_slice(dims, &v).unwrap()
}

/// Runs `text` on `platform` as `replicas x partitions` devices (device
/// `d = r * partitions + p` gets `input(d, dims)`); returns each device's
/// result leaves as f32s, in device order.
fn run(
    platform: &str,
    text: &str,
    replicas: usize,
    partitions: usize,
    dims: &[usize],
) -> Result<Vec<Vec<Vec<f32>>>, String> {
    let module = HloModule::parse(text).map_err(|e| e.to_string())?;
    let (client, exe) = compile_on(platform, &module, replicas, partitions)?;
    let devices = replicas * partitions;
    let args: Vec<Vec<Literal>> = (0..devices).map(|d| vec![input(d, dims)]).collect();
    let out = client
        .execute_replicated(&exe, &args, &ExecuteOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(out
        .into_iter()
        .map(|l| {
            l.flatten_leaves()
                .iter()
                .map(|leaf| match leaf.data::<f32>() {
                    Ok(v) => v.to_vec(),
                    // A u32[] context value, read as its number.
                    Err(_) => leaf
                        .data::<u32>()
                        .unwrap()
                        .iter()
                        .map(|&x| x as f32)
                        .collect(),
                })
                .collect()
        })
        .collect())
}

/// The all-gather of the rank-2 operands of `group` (global device ids, in
/// rank order) along `dimension`, from [`input`]'s formula.
fn gathered(group: &[usize], dims: [usize; 2], dimension: usize) -> Vec<f32> {
    let mut out_dims = dims;
    out_dims[dimension] *= group.len();
    let mut out = Vec::new();
    for i in 0..out_dims[0] {
        for j in 0..out_dims[1] {
            let mut at = [i, j];
            let member = group[at[dimension] / dims[dimension]];
            at[dimension] %= dims[dimension];
            out.push((100 * member + at[0] * dims[1] + at[1]) as f32);
        }
    }
    out
}

/// `input(d)` flattened.
fn own(d: usize, n: usize) -> Vec<f32> {
    (0..n).map(|i| (100 * d + i) as f32).collect()
}

/// Checks device `d`'s `[done, synchronous form, start's element 0]`: the
/// done is `want`, the synchronous form on the same operand agrees, and
/// element 0 is the operand.
fn check(platform: &str, d: usize, leaves: &[Vec<f32>], want: &[f32]) {
    assert_eq!(leaves[0], want, "{platform} device {d}: the done");
    assert_eq!(
        leaves[1], leaves[0],
        "{platform} device {d}: the synchronous form"
    );
    assert_eq!(
        leaves[2],
        own(d, leaves[2].len()),
        "{platform} device {d}: element 0"
    );
}

#[test]
fn all_gather_start_across_replicas_matches_all_gather() {
    let text = r#"HloModule m, replica_count=4
ENTRY e {
  p = f32[2,2] parameter(0)
  s = (f32[2,2], f32[2,4]) all-gather-start(p), replica_groups={{0,2},{1,3}}, dimensions={1}
  d = f32[2,4] all-gather-done(s)
  g = f32[2,4] all-gather(p), replica_groups={{0,2},{1,3}}, dimensions={1}
  e0 = f32[2,2] get-tuple-element(s), index=0
  ROOT t = (f32[2,4], f32[2,4], f32[2,2]) tuple(d, g, e0)
}"#;
    for platform in PLATFORMS {
        let out = run(platform, text, 4, 1, &[2, 2]).unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (r, leaves) in out.iter().enumerate() {
            check(
                platform,
                r,
                leaves,
                &gathered(&[r % 2, r % 2 + 2], [2, 2], 1),
            );
        }
    }
}

#[test]
fn all_gather_start_across_partitions_matches_all_gather() {
    // Two replicas of two partitions. Flattened ids {0,1},{2,3}: each
    // replica's partitions; a channel id without global ids and no groups:
    // every device, replica-major.
    let text = r#"HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  p = f32[2,2] parameter(0)
  s1 = (f32[2,2], f32[4,2]) all-gather-start(p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, dimensions={0}
  d1 = f32[4,2] all-gather-done(s1)
  g1 = f32[4,2] all-gather(p), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, dimensions={0}
  s2 = (f32[2,2], f32[2,8]) all-gather-start(p), channel_id=3, replica_groups={}, dimensions={1}
  d2 = f32[2,8] all-gather-done(s2)
  g2 = f32[2,8] all-gather(p), channel_id=4, replica_groups={}, dimensions={1}
  e1 = f32[2,2] get-tuple-element(s1), index=0
  e2 = f32[2,2] get-tuple-element(s2), index=0
  ROOT t = (f32[4,2], f32[4,2], f32[2,2], f32[2,8], f32[2,8], f32[2,2]) tuple(d1, g1, e1, d2, g2, e2)
}"#;
    for platform in PLATFORMS {
        let out = run(platform, text, 2, 2, &[2, 2]).unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (d, leaves) in out.iter().enumerate() {
            let replica = d / 2;
            let mine = gathered(&[2 * replica, 2 * replica + 1], [2, 2], 0);
            check(platform, d, &leaves[..3], &mine);
            check(
                platform,
                d,
                &leaves[3..],
                &gathered(&[0, 1, 2, 3], [2, 2], 1),
            );
        }
    }
}

#[test]
fn collective_permute_start_across_replicas_matches_collective_permute() {
    let text = r#"HloModule m, replica_count=4
ENTRY e {
  p = f32[3] parameter(0)
  s = (f32[3], f32[3], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,2},{2,3}}
  d = f32[3] collective-permute-done(s)
  c = f32[3] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,3}}
  e0 = f32[3] get-tuple-element(s), index=0
  c2 = u32[] get-tuple-element(s), index=2
  c3 = u32[] get-tuple-element(s), index=3
  ROOT t = (f32[3], f32[3], f32[3], u32[], u32[]) tuple(d, c, e0, c2, c3)
}"#;
    for platform in PLATFORMS {
        let out = run(platform, text, 4, 1, &[3]).unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (r, leaves) in out.iter().enumerate() {
            // Replica 0 is nobody's target: zeros.
            let want = if r == 0 { vec![0.0; 3] } else { own(r - 1, 3) };
            check(platform, r, leaves, &want);
            assert_eq!(
                leaves[3..],
                [[0.0], [0.0]],
                "{platform} replica {r}: context"
            );
        }
    }
}

#[test]
fn collective_permute_start_across_partitions_matches_collective_permute() {
    // With a channel id the pairs name partitions of the device's own
    // replica: two replicas of three partitions, 0 -> 1 -> 2 in each.
    let text = r#"HloModule m, replica_count=2, num_partitions=3
ENTRY e {
  p = f32[2,2] parameter(0)
  s = (f32[2,2], f32[2,2], u32[], u32[]) collective-permute-start(p), channel_id=1, source_target_pairs={{0,1},{1,2}}
  d = f32[2,2] collective-permute-done(s)
  c = f32[2,2] collective-permute(p), channel_id=2, source_target_pairs={{0,1},{1,2}}
  e0 = f32[2,2] get-tuple-element(s), index=0
  ROOT t = (f32[2,2], f32[2,2], f32[2,2]) tuple(d, c, e0)
}"#;
    for platform in PLATFORMS {
        let out = run(platform, text, 2, 3, &[2, 2]).unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (d, leaves) in out.iter().enumerate() {
            let want = if d % 3 == 0 {
                vec![0.0; 4]
            } else {
                own(d - 1, 4)
            };
            check(platform, d, leaves, &want);
        }
    }
}

/// Device `d`'s two operands for the combined permutes: an f32[2,3] of
/// `100 d + i` and an s32[4] of `-(1000 d + 7 i)` at flat index `i`.
fn two_operands(d: usize) -> Vec<Literal> {
    let f: Vec<f32> = (0..6).map(|i| (100 * d + i) as f32).collect();
    let s: Vec<i32> = (0..4).map(|i| -((1000 * d + 7 * i) as i32)).collect();
    vec![
        Literal::from_slice(&[2, 3], &f).unwrap(),
        Literal::from_slice(&[4], &s).unwrap(),
    ]
}

/// Runs `text` on `platform` as `replicas x partitions` devices, device `d`
/// taking `args(d)`; returns each device's result leaves.
fn run_leaves(
    platform: &str,
    text: &str,
    replicas: usize,
    partitions: usize,
    args: impl Fn(usize) -> Vec<Literal>,
) -> Result<Vec<Vec<Literal>>, String> {
    let module = HloModule::parse(text).map_err(|e| e.to_string())?;
    let (client, exe) = compile_on(platform, &module, replicas, partitions)?;
    let args: Vec<Vec<Literal>> = (0..replicas * partitions).map(args).collect();
    let out = client
        .execute_replicated(&exe, &args, &ExecuteOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(out.into_iter().map(Literal::flatten_leaves).collect())
}

/// The combined permute's program: `(p, q)` permuted by `pairs` as one
/// collective-permute, as two one-operand ones, and as a start/done pair;
/// `channel` adds channel ids (pairs then name partitions).
fn combined_permute_program(header: &str, pairs: &str, channel: bool) -> String {
    let ch = |id: u32| {
        if channel {
            format!(", channel_id={id}")
        } else {
            String::new()
        }
    };
    let (c1, c2, c3, c4) = (ch(1), ch(2), ch(3), ch(4));
    format!(
        r#"HloModule m, {header}
ENTRY e {{
  p = f32[2,3] parameter(0)
  q = s32[4] parameter(1)
  c = (f32[2,3], s32[4]) collective-permute(p, q){c1}, source_target_pairs={pairs}
  c0 = f32[2,3] collective-permute(p){c2}, source_target_pairs={pairs}
  c1 = s32[4] collective-permute(q){c3}, source_target_pairs={pairs}
  s = ((f32[2,3], s32[4]), (f32[2,3], s32[4]), u32[], u32[]) collective-permute-start(p, q){c4}, source_target_pairs={pairs}
  d = (f32[2,3], s32[4]) collective-permute-done(s)
  e0 = (f32[2,3], s32[4]) get-tuple-element(s), index=0
  x2 = u32[] get-tuple-element(s), index=2
  ROOT t = ((f32[2,3], s32[4]), f32[2,3], s32[4], (f32[2,3], s32[4]), (f32[2,3], s32[4]), u32[]) tuple(c, c0, c1, d, e0, x2)
}}"#
    )
}

/// Checks device `d`'s leaves of [`combined_permute_program`]: the combined
/// permute is what `source` (the device sending to `d`, if any) put in, or
/// zeros of each operand's shape; the one-operand permutes and the done
/// agree with it; the start's element 0 is `d`'s own operands.
fn check_combined(platform: &str, d: usize, source: Option<usize>, leaves: &[Literal]) {
    let mine = two_operands(d);
    let want: Vec<Literal> = match source {
        Some(s) => two_operands(s),
        None => mine
            .iter()
            .map(|l| {
                let a = l.shape().as_array().unwrap();
                platform_api::evaluator::ops::zeros(a.element_type, &a.dims)
            })
            .collect(),
    };
    // Element type, dimensions and bytes (the layouts the platforms attach differ).
    let values = |ls: &[Literal]| -> Vec<(String, Vec<usize>, Vec<u8>)> {
        ls.iter()
            .map(|l| {
                let a = l.shape().as_array().unwrap();
                (
                    format!("{:?}", a.element_type),
                    a.dims.clone(),
                    l.bytes().unwrap().to_vec(),
                )
            })
            .collect()
    };
    let (leaves, mine, want) = (&values(leaves), &values(&mine), &values(&want));
    assert_eq!(leaves.len(), 9, "{platform} device {d}: leaf count");
    assert_eq!(leaves[..2], want[..], "{platform} device {d}: combined");
    assert_eq!(leaves[2..4], want[..], "{platform} device {d}: one by one");
    assert_eq!(leaves[4..6], want[..], "{platform} device {d}: the done");
    assert_eq!(leaves[6..8], mine[..], "{platform} device {d}: element 0");
    assert_eq!(leaves[8].2, [0; 4], "{platform} device {d}: context");
}

#[test]
fn combined_collective_permute_across_replicas_matches_one_operand_permutes() {
    // Replica 0 is nobody's target: zeros of both operands' shapes.
    let pairs = [(0, 2), (2, 1), (1, 3)];
    let text = combined_permute_program("replica_count=4", "{{0,2},{2,1},{1,3}}", false);
    for platform in PLATFORMS {
        let out = run_leaves(platform, &text, 4, 1, two_operands)
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (r, leaves) in out.iter().enumerate() {
            let source = pairs.iter().find(|(_, t)| *t == r).map(|(s, _)| *s);
            check_combined(platform, r, source, leaves);
        }
    }
}

#[test]
fn combined_collective_permute_across_partitions_matches_one_operand_permutes() {
    // With channel ids the pairs name partitions of the device's own
    // replica: two replicas of three partitions, 2 -> 0 -> 1 in each.
    let text = combined_permute_program("replica_count=2, num_partitions=3", "{{2,0},{0,1}}", true);
    for platform in PLATFORMS {
        let out = run_leaves(platform, &text, 2, 3, two_operands)
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        for (d, leaves) in out.iter().enumerate() {
            let (replica, partition) = (d / 3, d % 3);
            let source = match partition {
                0 => Some(2),
                1 => Some(0),
                _ => None,
            };
            check_combined(platform, d, source.map(|p| 3 * replica + p), leaves);
        }
    }
}

#[test]
fn collective_permute_of_mismatched_result_is_an_error() {
    // Two operands cannot give one array: an error on both platforms (the
    // shape check or the platform's own), never a panic or half a result.
    let text = r#"HloModule m, replica_count=2
ENTRY e {
  p = f32[2,3] parameter(0)
  q = s32[4] parameter(1)
  ROOT c = f32[2,3] collective-permute(p, q), source_target_pairs={{0,1},{1,0}}
}"#;
    for platform in PLATFORMS {
        let err = run_leaves(platform, text, 2, 1, two_operands).expect_err(platform);
        assert!(
            err.contains("collective-permute") && err.contains("(f32[2,3], s32[4])"),
            "{platform}: {err}"
        );
    }
}

#[test]
fn in_place_collective_permute_is_unimplemented() {
    // XLA's in-place form (input, output, start indices, slice_sizes) is
    // refused on both platforms, sync and start, rather than run ignoring
    // its offsets.
    let body = |op: &str, shape: &str, done: &str| {
        format!(
            r#"HloModule m, replica_count=2
ENTRY e {{
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  o = f32[6] broadcast(z), dimensions={{}}
  i = s32[] constant(1)
  j = s32[] constant(3)
  it = (s32[]) tuple(i)
  ot = (s32[]) tuple(j)
  c = {shape} {op}(p, o, it, ot), source_target_pairs={{{{0,1}},{{1,0}}}}, slice_sizes={{{{2}},{{2}}}}
  {done}
}}"#
        )
    };
    let sync = body("collective-permute", "f32[6]", "ROOT r = f32[6] copy(c)");
    let start = body(
        "collective-permute-start",
        "(f32[4], f32[6], u32[], u32[])",
        "ROOT r = f32[6] collective-permute-done(c)",
    );
    for (text, opcode) in [
        (sync, "collective-permute "),
        (start, "collective-permute-start "),
    ] {
        // The form survives a print and parse.
        let module = HloModule::parse(&text).unwrap();
        let printed = module.to_string();
        assert!(printed.contains("slice_sizes={{2},{2}}"), "{printed}");
        HloModule::parse(&printed).unwrap();
        for platform in PLATFORMS {
            let err = run(platform, &text, 2, 1, &[4]).expect_err(platform);
            assert!(
                err.contains("UNIMPLEMENTED")
                    && err.contains(opcode)
                    && err.contains("in-place form")
                    && err.contains("not implemented"),
                "{platform}: {err}"
            );
        }
    }
}
