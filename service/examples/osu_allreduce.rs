//! An OSU-style all-reduce latency sweep, run under `mpirun` (feature `mpi`).
//! Rank 0 prints `bytes mean_us` per size, 4 KiB to 64 MiB of f32;
//! `bench/osu_allreduce.sh` runs the modes on 2 and 4 ranks.
//!
//! - `osu_allreduce hlorun`: an all-reduce program through hlorun's MPI
//!   collectives layer on the Host, one device per rank, as an application
//!   that keeps its arrays on the device runs it: the argument is uploaded
//!   once, before timing; each timed call launches the program on it
//!   (`LocalClient::execute_device_buffers`: the launch, the exchange and the
//!   rank-order sum into a result buffer from the device allocator) and
//!   drops the result, with no download.
//! - `osu_allreduce hlorun-literals`: the same program from and to host
//!   literals (`LocalClient::execute_device`), so each call also pays the
//!   argument upload and the result download (a fresh host array each time).
//! - `osu_allreduce direct`: `MPI_Allreduce` (`MPI_SUM`, out of place) on the
//!   same sizes, between two buffers allocated once.

use mpi::collective::SystemOperation;
use mpi::traits::*;
use platform_api::{CompileOptions, HloModule, Literal, PlatformOptions};
use service::mpi::MpiWorld;
use service::{Backend, ExecuteOptions, LocalClient};
use std::sync::Arc;
use std::time::Instant;

const MIN_BYTES: usize = 4 << 10;
const MAX_BYTES: usize = 64 << 20;

/// Timed iterations for a message of `bytes` (fewer for large ones, as OSU does).
fn iterations(bytes: usize) -> usize {
    if bytes <= 64 << 10 {
        std::env::var("OSU_SMALL_ITERATIONS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(200)
    } else if bytes <= 1 << 20 {
        50
    } else {
        10
    }
}

/// 4 KiB, 16 KiB, ... up to 64 MiB, or to the byte count given after the
/// mode (`osu_allreduce hlorun 4096`: only the smallest, for a profile).
fn sizes() -> Vec<usize> {
    let max = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(MAX_BYTES);
    std::iter::successors(Some(MIN_BYTES), |&b| (b < max).then_some(b * 4)).collect()
}

fn all_reduce_module(elements: usize, devices: usize) -> String {
    let ids: Vec<String> = (0..devices).map(|d| d.to_string()).collect();
    format!(
        "HloModule allreduce, num_partitions={devices}\n\nadd {{\n  a = f32[] parameter(0)\n  \
         b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n  p = f32[{elements}] \
         parameter(0)\n  ROOT r = f32[{elements}] all-reduce(p), channel_id=1, \
         replica_groups={{{{{}}}}}, use_global_device_ids=true, to_apply=add\n}}\n",
        ids.join(",")
    )
}

fn through_hlorun(resident: bool) -> Result<(), Box<dyn std::error::Error>> {
    let world = MpiWorld::start()?;
    let (rank, size) = (world.rank(), world.size());
    let transport = world.transport();
    platform_api::evaluator::collectives::set_transport(Some(transport.clone()))?;
    let backend = Backend::with_options(
        Some("host"),
        &PlatformOptions {
            device_count: Some(size),
        },
    )?;
    let client = LocalClient::new(Arc::new(backend));
    let everyone: Vec<usize> = (0..size).collect();
    for bytes in sizes() {
        let n = bytes / 4;
        let module = HloModule::parse(&all_reduce_module(n, size))?;
        let options = CompileOptions {
            num_partitions: size,
            ..CompileOptions::default()
        };
        let exe = client.compile(&module, &options)?.executable;
        let x = Literal::from_slice(&[n], &vec![1.0f32; n])?;
        let on_device = client.to_device_for(&exe, 0, &x, client.device_of(&exe, 0, rank)?)?;
        let run = || -> platform_api::Result<()> {
            let options = ExecuteOptions::default();
            if resident {
                client.execute_device_buffers(&exe, &[&on_device], &options, 0, rank)?;
            } else {
                client.execute_device(&exe, std::slice::from_ref(&x), &options, 0, rank)?;
            }
            Ok(())
        };
        run()?;
        // Every element sums one 1.0 per rank (checked outside the timing).
        let result = if resident {
            let out = client.execute_device_buffers(
                &exe,
                &[&on_device],
                &ExecuteOptions::default(),
                0,
                rank,
            )?;
            client.to_literal(&out.result)?
        } else {
            client.execute_device(
                &exe,
                std::slice::from_ref(&x),
                &ExecuteOptions::default(),
                0,
                rank,
            )?
        };
        if result.data::<f32>()?.iter().any(|&v| v != size as f32) {
            return Err(format!("rank {rank}: a {bytes}-byte all-reduce gave a wrong sum").into());
        }
        let iters = iterations(bytes);
        // Everyone starts timing together, as the direct side's barrier does.
        transport.exchange("barrier", &everyone, rank, Vec::new())?;
        let start = Instant::now();
        for _ in 0..iters {
            run()?;
        }
        let mean = start.elapsed().as_secs_f64() / iters as f64;
        if rank == 0 {
            println!("{bytes} {:.2}", mean * 1e6);
        }
    }
    platform_api::evaluator::collectives::set_transport(None)?;
    Ok(())
}

fn direct() {
    let Some(universe) = mpi::initialize() else {
        eprintln!("MPI could not be initialised");
        std::process::exit(1)
    };
    let world = universe.world();
    for bytes in sizes() {
        let n = bytes / 4;
        let send = vec![1.0f32; n];
        let mut recv = vec![0.0f32; n];
        world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum());
        let iters = iterations(bytes);
        world.barrier();
        let start = Instant::now();
        for _ in 0..iters {
            world.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum());
        }
        let mean = start.elapsed().as_secs_f64() / iters as f64;
        if world.rank() == 0 {
            println!("{bytes} {:.2}", mean * 1e6);
        }
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some(mode @ ("hlorun" | "hlorun-literals")) => {
            if let Err(e) = through_hlorun(mode == "hlorun") {
                eprintln!("osu_allreduce: {e}");
                std::process::exit(1);
            }
        }
        Some("direct") => direct(),
        _ => {
            eprintln!(
                "usage: mpirun -np N osu_allreduce hlorun|hlorun-literals|direct [MAX_BYTES]"
            );
            std::process::exit(2);
        }
    }
}
