//! XLA's partitioned programs, as JAX writes them for several devices
//! (tests/sharded, made by its gen_sharded_cases.py): every module parses,
//! print → parse → print is a fixed point, every sharding in them parses and
//! prints as written, and mesh and iota replica groups expand to XLA's groups.

use hlo_ir::sharding::HloSharding;
use hlo_ir::{HloModule, Op};
use std::path::PathBuf;

fn case_dirs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/sharded");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/sharded exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 6, "tests/sharded incomplete: {dirs:?}");
    dirs
}

fn parse(text: &str) -> HloModule {
    HloModule::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn partitioned_programs_round_trip() {
    for dir in case_dirs() {
        for name in ["module.hlo", "optimized.hlo"] {
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            let module =
                HloModule::parse(&text).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()));
            let printed = module.to_text();
            let again = parse(&printed);
            assert_eq!(again, module, "{}/{name}: reparse differs", dir.display());
            assert_eq!(again.to_text(), printed, "{}/{name}", dir.display());
            if name == "optimized.hlo" {
                assert!(
                    module.config.num_partitions.unwrap_or(1) > 1,
                    "{}",
                    dir.display()
                );
            }
            for comp in &module.computations {
                for instr in &comp.instructions {
                    if let Some(s) = &instr.sharding {
                        let parsed = HloSharding::parse(s)
                            .unwrap_or_else(|e| panic!("{}: %{}: {e}", dir.display(), instr.name));
                        assert_eq!(&parsed.to_string(), s, "{}", dir.display());
                    }
                }
            }
        }
    }
}

fn groups_of(text: &str) -> Vec<Vec<usize>> {
    let module = parse(text);
    let comp = module.entry();
    for instr in &comp.instructions {
        if let Op::AllReduce { attrs, .. } = &instr.op {
            return attrs.replica_groups.groups.clone();
        }
    }
    panic!("no all-reduce in {text}");
}

fn all_reduce_with(groups: &str) -> String {
    format!(
        "HloModule m, num_partitions=8\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT s = f32[] add(a, b)\n}}\n\nENTRY e {{\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] \
         all-reduce(p), channel_id=1, replica_groups={groups}, use_global_device_ids=true, to_apply=add\n}}\n"
    )
}

/// The groups XLA's `MeshAxesReplicaGroupList::flattened_replica_groups`
/// gives, worked out by hand from its definition: devices are iota over the
/// mesh, row-major; a group holds the devices that differ only in the listed
/// axes, enumerated in the listed order.
#[test]
fn mesh_replica_groups_expand_as_xla_does() {
    let cases: &[(&str, Vec<Vec<usize>>)] = &[
        ("mesh['a'=4,'b'=1] {'a'}", vec![vec![0, 1, 2, 3]]),
        ("mesh['a'=2,'b'=2] {'a'}", vec![vec![0, 2], vec![1, 3]]),
        ("mesh['a'=2,'b'=2] {'b'}", vec![vec![0, 1], vec![2, 3]]),
        ("mesh['a'=2,'b'=2] {'b','a'}", vec![vec![0, 2, 1, 3]]),
        (
            "mesh['a'=2,'b'=2] {}",
            vec![vec![0], vec![1], vec![2], vec![3]],
        ),
        // Sub-axis: the inner half (pre-size 1, size 2) of an axis of 4.
        (
            "mesh['x'=4,'y'=2] {'x':(1)2}",
            vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]],
        ),
        (
            "mesh['a'=2,'b'=2], device_ids=(3,2,1,0) {'a'}",
            vec![vec![3, 1], vec![2, 0]],
        ),
        ("maximal_mesh[device_id=5] {}", vec![vec![5]]),
    ];
    for (text, want) in cases {
        assert_eq!(&groups_of(&all_reduce_with(text)), want, "{text}");
    }
}

#[test]
fn iota_replica_groups_expand() {
    assert_eq!(
        groups_of(&all_reduce_with("[2,2]<=[4]")),
        vec![vec![0, 1], vec![2, 3]]
    );
    assert_eq!(
        groups_of(&all_reduce_with("[2,2]<=[2,2]T(1,0)")),
        vec![vec![0, 2], vec![1, 3]]
    );
}

#[test]
fn malformed_mesh_groups_are_located_errors() {
    for bad in [
        "mesh['a'=2] {'c'}",
        "mesh['a'=2,'a'=2] {'a'}",
        "mesh['a'=4] {'a':(3)2}",
        "mesh['a'=2,'b'=2], device_ids=(0,1,1,3) {'a'}",
        "mesh['a'=2 {'a'}",
        "mesh['a=2] {'a'}",
    ] {
        let err = HloModule::parse(&all_reduce_with(bad)).expect_err(bad);
        assert!(err.to_string().contains("11:"), "{bad}: {err}");
    }
}
