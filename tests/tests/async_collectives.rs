//! The asynchronous collectives `all-gather-start`/`-done` and
//! `collective-permute-start`/`-done` on the Interpreter and the Host, across
//! replicas and across partitions (with a channel id), every device a thread
//! of one process meeting at the in-process rendezvous.
//!
//! Each program runs the start/done pair and the synchronous form side by
//! side on the same operand: the done must equal the synchronous result and
//! what the test computes by hand from every device's input; the start's
//! element 0 must be its operand and a collective-permute-start's context
//! values zeros (nothing reads them, but they are defined).

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

#[test]
fn collective_permute_start_of_two_operands_is_an_error() {
    // Several operands in one start are not supported; both platforms say
    // so rather than send half of them.
    let text = r#"HloModule m, replica_count=2
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] negate(p)
  s = (f32[2], (f32[2], f32[2]), u32[], u32[]) collective-permute-start(p, q), source_target_pairs={{0,1},{1,0}}
  ROOT d = (f32[2], f32[2]) collective-permute-done(s)
}"#;
    for platform in PLATFORMS {
        let err = run(platform, text, 2, 1, &[2]).expect_err(platform);
        assert!(
            err.contains("only one array is supported"),
            "{platform}: {err}"
        );
    }
}
