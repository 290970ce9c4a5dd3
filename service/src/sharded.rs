//! Running a partitioned program on global arrays, as JAX does.
//!
//! XLA partitions a sharded `jax.jit` into one per-device program: its entry
//! parameters are per-device shards, each annotated with the sharding that
//! says which part of the global array a device holds (`sharding={devices=
//! [4,1]<=[4]}`), and its results are per-device shards too. A user has global
//! arrays. This module is the bridge: [`ShardedProgram::split`] cuts each
//! global argument into its per-device parts by its parameter's sharding, the
//! client runs every device (replicas x partitions, a thread each), and
//! [`ShardedProgram::assemble`] puts each result leaf back together by its
//! result sharding into the global array JAX would return.
//!
//! # Devices
//! In an SPMD program the device ids in a sharding are partition ids; every
//! replica holds the whole set of partitions, so each replica gets the same
//! split and returns its own global result.
//!
//! # Result shardings
//! XLA's printed program keeps the parameters' shardings but not always the
//! result's (JAX 0.10's compiled text has none on the ROOT). In order, a
//! result leaf's sharding is: the one the caller gives (`--out-sharding`, or
//! what JAX's compiled executable reports, which `hlo.jit` and the test cases
//! pass); the ROOT instruction's `sharding=`; else replicated — and then every
//! partition must have returned the same bits, or the run is an error that
//! asks for the sharding, rather than a silently wrong global array.

use crate::client::{ExecuteOptions, LoadedExecutable, LocalClient};
use platform_api::hlo::sharding::{self, HloSharding};
use platform_api::hlo::HloModule;
use platform_api::{Error, Literal, Result};

/// How one program's arguments and results map to devices.
#[derive(Clone, Debug)]
pub struct ShardedProgram {
    pub replica_count: usize,
    pub partition_count: usize,
    /// One per entry parameter.
    pub parameters: Vec<HloSharding>,
    /// One per result leaf; `None` where the program does not say.
    pub results: Vec<Option<HloSharding>>,
}

impl ShardedProgram {
    /// The shardings `module` declares, for a launch of `replica_count` x
    /// `partition_count` devices; `results` overrides the result leaves'
    /// shardings (all of them, or none when empty).
    pub fn new(
        module: &HloModule,
        replica_count: usize,
        partition_count: usize,
        results: &[HloSharding],
    ) -> Result<Self> {
        let entry = module.entry();
        let parameters = entry
            .parameters()
            .into_iter()
            .map(|id| {
                let instr = entry.instr(id);
                let s = match &instr.sharding {
                    Some(text) => HloSharding::parse(text)
                        .map_err(|e| e.context(format!("parameter %{}", instr.name)))?,
                    None => HloSharding::Replicated,
                };
                if instr.shape.is_tuple() && s != HloSharding::Replicated {
                    return Err(Error::unimplemented(format!(
                        "parameter %{}: sharded tuple parameters ({s})",
                        instr.name
                    )));
                }
                Ok(s)
            })
            .collect::<Result<Vec<_>>>()?;
        let root = entry.root_instr();
        let leaves = root.shape.leaves().len();
        let results = if !results.is_empty() {
            if results.len() != leaves {
                return Err(Error::invalid_argument(format!(
                    "{} result sharding(s) given for {leaves} result(s)",
                    results.len()
                )));
            }
            results.iter().cloned().map(Some).collect()
        } else {
            match root_sharding(module)? {
                Some(s) => {
                    let parts: Vec<HloSharding> = s.leaves().into_iter().cloned().collect();
                    if parts.len() == leaves {
                        parts.into_iter().map(Some).collect()
                    } else if parts.len() == 1 {
                        vec![Some(parts[0].clone()); leaves]
                    } else {
                        return Err(Error::invalid_argument(format!(
                            "the ROOT's sharding {s} has {} part(s) for {leaves} result(s)",
                            parts.len()
                        )));
                    }
                }
                None => vec![None; leaves],
            }
        };
        Ok(ShardedProgram {
            replica_count: replica_count.max(1),
            partition_count: partition_count.max(1),
            parameters,
            results,
        })
    }

    /// The devices of the launch.
    pub fn devices(&self) -> usize {
        self.replica_count * self.partition_count
    }

    /// Every device's arguments (`[replica * partitions + partition]`) from the
    /// global arguments.
    pub fn split(&self, globals: &[Literal]) -> Result<Vec<Vec<Literal>>> {
        if globals.len() != self.parameters.len() {
            return Err(Error::invalid_argument(format!(
                "the program takes {} argument(s), {} were given",
                self.parameters.len(),
                globals.len()
            )));
        }
        let mut per_device = vec![Vec::with_capacity(globals.len()); self.partition_count];
        for (i, (global, s)) in globals.iter().zip(&self.parameters).enumerate() {
            let parts = if global.is_tuple() {
                vec![global.clone(); self.partition_count]
            } else {
                sharding::split(global, s, self.partition_count)
                    .map_err(|e| e.context(format!("argument {i}")))?
            };
            for (device, part) in per_device.iter_mut().zip(parts) {
                device.push(part);
            }
        }
        Ok((0..self.replica_count)
            .flat_map(|_| per_device.iter().cloned())
            .collect())
    }

    /// Each replica's global result from every device's result, as a tuple
    /// when the program returns one.
    pub fn assemble(&self, results: Vec<Literal>) -> Result<Vec<Literal>> {
        if results.len() != self.devices() {
            return Err(Error::internal(format!(
                "{} device results for {} devices",
                results.len(),
                self.devices()
            )));
        }
        let tuple = results.first().is_some_and(Literal::is_tuple);
        let mut per_device: Vec<Vec<Literal>> =
            results.into_iter().map(Literal::flatten_leaves).collect();
        let mut out = Vec::with_capacity(self.replica_count);
        for replica in 0..self.replica_count {
            let mine: Vec<Vec<Literal>> =
                per_device.drain(..self.partition_count).collect::<Vec<_>>();
            let mut leaves = Vec::with_capacity(self.results.len());
            for (k, s) in self.results.iter().enumerate() {
                let parts: Vec<Literal> = mine
                    .iter()
                    .map(|d| {
                        d.get(k).cloned().ok_or_else(|| {
                            Error::internal(format!("a device returned no result {k}"))
                        })
                    })
                    .collect::<Result<_>>()?;
                let leaf = match s {
                    Some(s) => sharding::assemble(&parts, s, None),
                    None => unanimous(&parts, k),
                }
                .map_err(|e| e.context(format!("replica {replica}, result {k}")))?;
                leaves.push(leaf);
            }
            out.push(if tuple {
                Literal::tuple(leaves)
            } else {
                leaves
                    .pop()
                    .ok_or_else(|| Error::internal("a program without results"))?
            });
        }
        Ok(out)
    }
}

/// The entry ROOT's `sharding=`, parsed, if it has one.
fn root_sharding(module: &HloModule) -> Result<Option<HloSharding>> {
    let root = module.entry().root_instr();
    root.sharding
        .as_deref()
        .map(|t| HloSharding::parse(t).map_err(|e| e.context(format!("ROOT %{}", root.name))))
        .transpose()
}

/// The result every partition returned, when they agree bit for bit.
fn unanimous(parts: &[Literal], k: usize) -> Result<Literal> {
    let first = parts
        .first()
        .ok_or_else(|| Error::internal("no partitions"))?;
    if let Some(p) = parts.iter().position(|x| x != first) {
        return Err(Error::invalid_argument(format!(
            "result {k} differs between partition 0 and partition {p}, and the program does not \
             say how it is sharded (no sharding on its ROOT): give the result shardings (hlorun \
             run --out-sharding, one per result, e.g. '{{devices=[4,1]<=[4]}}'), or take \
             per-device results (--per-device)"
        )));
    }
    Ok(first.clone())
}

/// Whether a module is partitioned (runs as several SPMD partitions).
pub fn is_partitioned(module: &HloModule) -> bool {
    module.config.num_partitions.unwrap_or(1) > 1
}

/// Runs a partitioned `exe` (compiled from `module`) on global arguments:
/// each replica's global results, assembled by `result_shardings` where given
/// (one per result leaf), else as [`ShardedProgram::new`] decides.
pub fn run_global(
    client: &LocalClient,
    module: &HloModule,
    exe: &LoadedExecutable,
    globals: &[Literal],
    result_shardings: &[HloSharding],
    options: &ExecuteOptions,
) -> Result<Vec<Literal>> {
    let compiled = exe.options();
    let plan = ShardedProgram::new(
        module,
        compiled.replica_count,
        compiled.num_partitions,
        result_shardings,
    )?;
    let per_device = plan.split(globals)?;
    let results = client.execute_replicated(exe, &per_device, options)?;
    plan.assemble(results)
}
