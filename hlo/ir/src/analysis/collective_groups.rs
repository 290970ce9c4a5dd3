//! Who takes part in a collective: XLA's group modes, answered once for the
//! reference evaluator and every backend.
//!
//! A device of a launch is a (replica, partition) pair, and its global id is
//! `replica * partition_count + partition` (XLA's flattened id). What the ids in
//! `replica_groups` (or `source_target_pairs`) mean depends on the op, as XLA's
//! `GetCollectiveOpGroupMode` decides it from two things: whether the op has a
//! `channel_id`, and whether it has a `use_global_device_ids` attribute at all
//! (all-reduce, all-gather and reduce-scatter do; all-to-all,
//! collective-permute and collective-broadcast do not):
//!
//! | channel_id | use_global_device_ids | mode | ids name |
//! | --- | --- | --- | --- |
//! | no | absent or false | cross-replica | replicas, in this device's partition |
//! | yes | absent (all-to-all, permute, broadcast) | cross-partition | partitions, in this device's replica |
//! | yes | false | cross-replica-and-partition | replicas; every partition of each takes part |
//! | yes | true | flattened ids | global device ids |
//!
//! An empty group list is one group of every id the mode ranges over. A
//! device's rank in its group (which block of an all-gather it supplies, which
//! block of a reduce-scatter it keeps) is its position in the participant list
//! below; for cross-replica-and-partition the list is, as XLA builds it, each
//! replica of the group in turn with all its partitions.

use crate::{CollectiveAttrs, Error, Op, Result};

/// XLA's `CollectiveOpGroupMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    CrossReplica,
    CrossPartition,
    CrossReplicaAndPartition,
    FlattenedId,
}

/// The devices of one launch and which of them this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Devices {
    pub replica: usize,
    pub partition: usize,
    pub replica_count: usize,
    pub partition_count: usize,
}

impl Devices {
    /// This device's global id.
    pub fn id(&self) -> usize {
        self.replica * self.partition_count + self.partition
    }

    fn global(&self, replica: usize, partition: usize) -> usize {
        replica * self.partition_count + partition
    }
}

/// The collective attributes of `op` and whether the op kind carries
/// `use_global_device_ids`; `None` for an op that is not a collective.
fn attrs_of(op: &Op) -> Option<(&CollectiveAttrs, bool)> {
    match op {
        Op::AllReduce { attrs, .. }
        | Op::AllReduceStart { attrs, .. }
        | Op::AllGather { attrs, .. }
        | Op::AllGatherStart { attrs, .. }
        | Op::ReduceScatter { attrs, .. } => Some((attrs, true)),
        Op::AllToAll { attrs, .. }
        | Op::CollectivePermute { attrs, .. }
        | Op::CollectivePermuteStart { attrs, .. }
        | Op::CollectiveBroadcast { attrs } => Some((attrs, false)),
        _ => None,
    }
}

/// The group mode of a collective op, as XLA's `GetCollectiveOpGroupMode`.
pub fn group_mode(op: &Op) -> Result<GroupMode> {
    let (attrs, has_global_flag) = attrs_of(op)
        .ok_or_else(|| Error::internal(format!("{} is not a collective", op.opcode())))?;
    Ok(match (attrs.channel_id.is_some(), has_global_flag) {
        (false, _) if attrs.use_global_device_ids => {
            return Err(Error::invalid_argument(format!(
                "{}: use_global_device_ids=true needs a channel_id",
                op.opcode()
            )))
        }
        (false, _) => GroupMode::CrossReplica,
        (true, false) => GroupMode::CrossPartition,
        (true, true) if attrs.use_global_device_ids => GroupMode::FlattenedId,
        (true, true) => GroupMode::CrossReplicaAndPartition,
    })
}

/// The participants (global ids, in rank order) of the group of `op` that
/// `me` is in, and `me`'s rank among them. A collective-permute's group is
/// every id its mode ranges over (its pairs name ranks in that list).
pub fn participants(op: &Op, me: Devices) -> Result<(Vec<usize>, usize)> {
    let mode = group_mode(op)?;
    let (attrs, _) = attrs_of(op)
        .ok_or_else(|| Error::internal(format!("{} is not a collective", op.opcode())))?;
    let permute = matches!(
        op,
        Op::CollectivePermute { .. } | Op::CollectivePermuteStart { .. }
    );
    let groups: &[Vec<usize>] = if permute {
        &[]
    } else {
        &attrs.replica_groups.groups
    };
    let (space, mine) = match mode {
        GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => {
            (me.replica_count, me.replica)
        }
        GroupMode::CrossPartition => (me.partition_count, me.partition),
        GroupMode::FlattenedId => (me.replica_count * me.partition_count, me.id()),
    };
    let group: Vec<usize> = if groups.is_empty() {
        (0..space).collect()
    } else {
        groups
            .iter()
            .find(|g| g.contains(&mine))
            .cloned()
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{}: {mode:?} id {mine} is in none of the replica groups {}",
                    op.opcode(),
                    attrs.replica_groups
                ))
            })?
    };
    if let Some(bad) = group.iter().find(|&&g| g >= space) {
        return Err(Error::invalid_argument(format!(
            "{}: replica group {group:?} names id {bad}, but {mode:?} ids run to {space} \
             ({} replica(s) x {} partition(s))",
            op.opcode(),
            me.replica_count,
            me.partition_count
        )));
    }
    let ids: Vec<usize> = match mode {
        GroupMode::CrossReplica => group.iter().map(|&r| me.global(r, me.partition)).collect(),
        GroupMode::CrossPartition => group.iter().map(|&p| me.global(me.replica, p)).collect(),
        GroupMode::CrossReplicaAndPartition => group
            .iter()
            .flat_map(|&r| (0..me.partition_count).map(move |p| me.global(r, p)))
            .collect(),
        GroupMode::FlattenedId => group,
    };
    let rank = ids
        .iter()
        .position(|&g| g == me.id())
        .ok_or_else(|| Error::internal("a device is missing from its own group"))?;
    Ok((ids, rank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReplicaGroups;

    fn attrs(groups: Vec<Vec<usize>>, channel: bool, global: bool) -> CollectiveAttrs {
        CollectiveAttrs {
            replica_groups: ReplicaGroups { groups },
            channel_id: channel.then_some(1),
            use_global_device_ids: global,
            constrain_layout: false,
        }
    }

    fn dev(replica: usize, partition: usize) -> Devices {
        Devices {
            replica,
            partition,
            replica_count: 2,
            partition_count: 2,
        }
    }

    #[test]
    fn modes_follow_xla() {
        let ar = |c, g| Op::AllReduce {
            attrs: attrs(vec![], c, g),
            to_apply: crate::CompId(0),
        };
        assert_eq!(
            group_mode(&ar(false, false)).unwrap(),
            GroupMode::CrossReplica
        );
        assert_eq!(
            group_mode(&ar(true, false)).unwrap(),
            GroupMode::CrossReplicaAndPartition
        );
        assert_eq!(group_mode(&ar(true, true)).unwrap(), GroupMode::FlattenedId);
        assert!(group_mode(&ar(false, true)).is_err());
        let a2a = Op::AllToAll {
            attrs: attrs(vec![], true, false),
            split_dimension: None,
        };
        assert_eq!(group_mode(&a2a).unwrap(), GroupMode::CrossPartition);
        let bcast = Op::CollectiveBroadcast {
            attrs: attrs(vec![], true, false),
        };
        assert_eq!(group_mode(&bcast).unwrap(), GroupMode::CrossPartition);
    }

    #[test]
    fn participants_per_mode() {
        // 2 replicas x 2 partitions: global ids r*2+p.
        let ag = |groups, c, g| Op::AllGather {
            attrs: attrs(groups, c, g),
            dimension: 0,
        };
        // Cross-replica: replicas of my partition.
        assert_eq!(
            participants(&ag(vec![], false, false), dev(1, 1)).unwrap(),
            (vec![1, 3], 1)
        );
        // Cross-replica-and-partition: each replica with all its partitions.
        assert_eq!(
            participants(&ag(vec![vec![1, 0]], true, false), dev(0, 1)).unwrap(),
            (vec![2, 3, 0, 1], 3)
        );
        // Flattened ids.
        assert_eq!(
            participants(&ag(vec![vec![3, 0], vec![1, 2]], true, true), dev(0, 0)).unwrap(),
            (vec![3, 0], 1)
        );
        // Cross-partition (all-to-all with a channel): partitions of my replica.
        let a2a = Op::AllToAll {
            attrs: attrs(vec![vec![0, 1]], true, false),
            split_dimension: Some(0),
        };
        assert_eq!(participants(&a2a, dev(1, 0)).unwrap(), (vec![2, 3], 0));
        // A group naming a partition that does not exist is an error.
        let bad = Op::AllToAll {
            attrs: attrs(vec![vec![0, 1, 2]], true, false),
            split_dimension: Some(0),
        };
        assert!(participants(&bad, dev(0, 0)).is_err());
    }
}
