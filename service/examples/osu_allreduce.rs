//! An OSU-style all-reduce latency sweep, run under `mpirun` (feature `mpi`):
//! `osu_allreduce hlorun` times an f32 all-reduce program run through
//! hlorun's MPI collectives layer (one device per rank, the Host platform:
//! upload, the exchange, the reduction, download); `osu_allreduce direct`
//! times `MPI_Allreduce` called directly on the same sizes. Rank 0 prints
//! `bytes mean_us` per size, 4 KiB to 64 MiB. `bench/osu_allreduce.sh` runs
//! both on 2 and 4 ranks.

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
        200
    } else if bytes <= 1 << 20 {
        50
    } else {
        10
    }
}

fn sizes() -> Vec<usize> {
    std::iter::successors(Some(MIN_BYTES), |&b| (b < MAX_BYTES).then_some(b * 4)).collect()
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

fn through_hlorun() -> Result<(), Box<dyn std::error::Error>> {
    let world = MpiWorld::start()?;
    let (rank, size) = (world.rank(), world.size());
    platform_api::evaluator::collectives::set_transport(Some(world.transport()))?;
    let backend = Backend::with_options(
        Some("host"),
        &PlatformOptions {
            device_count: Some(size),
        },
    )?;
    let client = LocalClient::new(Arc::new(backend));
    for bytes in sizes() {
        let n = bytes / 4;
        let module = HloModule::parse(&all_reduce_module(n, size))?;
        let options = CompileOptions {
            num_partitions: size,
            ..CompileOptions::default()
        };
        let exe = client.compile(&module, &options)?.executable;
        let x = Literal::from_slice(&[n], &vec![1.0f32; n])?;
        let run = || {
            client.execute_device(
                &exe,
                std::slice::from_ref(&x),
                &ExecuteOptions::default(),
                0,
                rank,
            )
        };
        run()?;
        let iters = iterations(bytes);
        let start = Instant::now();
        for _ in 0..iters {
            run()?;
        }
        let mean = start.elapsed().as_secs_f64() / iters as f64;
        if rank == 0 {
            println!("{bytes} {:.1}", mean * 1e6);
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
            println!("{bytes} {:.1}", mean * 1e6);
        }
    }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("hlorun") => {
            if let Err(e) = through_hlorun() {
                eprintln!("osu_allreduce: {e}");
                std::process::exit(1);
            }
        }
        Some("direct") => direct(),
        _ => {
            eprintln!("usage: mpirun -np N osu_allreduce hlorun|direct");
            std::process::exit(2);
        }
    }
}
