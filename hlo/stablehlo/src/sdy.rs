//! Shardy's `sdy` dialect as JAX's sharded programs carry it: a module-level
//! `sdy.mesh` naming the device mesh, and `sdy.sharding` on the entry's
//! arguments and results saying how each global array is split over it.
//! This module decodes the dialect's bytecode attributes (Shardy's
//! `bytecode.td` defines them; the codes are facts of the format) and turns
//! a tensor sharding on a mesh into the HLO sharding text XLA would give it,
//! which the reader attaches to parameters and results as `mhlo.sharding`.
//!
//! The translation follows XLA's export of Shardy shardings: the tile
//! counts of each dimension are the products of its mesh axes' sizes; the
//! device order is the mesh's, transposed so that the axes that split
//! dimensions come first (in dimension order, major axis first) and the
//! rest after them, which then replicate (`last_tile_dim_replicate`).
//! Sub-axes (`"x":(1)2`) and unreduced axes have no translation here and
//! are refused by name. A `sdy.manual_computation` (`shard_map`, and
//! `jax.pmap`, which jax 0.10 builds on it) keeps its per-value shardings and
//! manual axes, which [`manual_axes_cover_mesh`] checks.

use std::rc::Rc;

use hlo_ir::{Error, Result};

use crate::bytecode::{BAttr, DialectDecoder, EntryReader};

/// A decoded `sdy` attribute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sdy {
    Mesh {
        axes: Vec<(String, i64)>,
        device_ids: Vec<i64>,
    },
    MeshAxis(String, i64),
    SubAxisInfo,
    AxisRef {
        name: String,
        sub_axis: bool,
    },
    DimSharding(Vec<Rc<BAttr>>),
    TensorSharding {
        mesh: Rc<BAttr>,
        dims: Vec<Rc<BAttr>>,
        unreduced: bool,
    },
    /// The mesh axes a `sdy.manual_computation` is manual over.
    ManualAxes(Vec<String>),
    /// One tensor sharding per value (`in_shardings`, `out_shardings`).
    PerValue(Vec<Rc<BAttr>>),
    /// Any other `sdy` attribute (sharding rules, ...), by what it is.
    Other(&'static str),
}

pub(crate) struct SdyDecoder;

impl DialectDecoder for SdyDecoder {
    fn attribute(&self, r: &mut EntryReader<'_, '_>) -> Result<BAttr> {
        let code = r.varint()?;
        let sdy = match code {
            0 => Sdy::ManualAxes(
                r.attributes()?
                    .iter()
                    .map(|a| match &**a {
                        BAttr::Str(name) => Ok(name.clone()),
                        _ => Err(r.err("a manual axis is not a string")),
                    })
                    .collect::<Result<_>>()?,
            ),
            1 => Sdy::MeshAxis(r.string()?, r.signed_varint()?),
            2 => {
                let axes = r
                    .attributes()?
                    .iter()
                    .map(|a| match &**a {
                        BAttr::Sdy(s) => match &**s {
                            Sdy::MeshAxis(n, k) => Ok((n.clone(), *k)),
                            _ => Err(r.err("a mesh axis is not an axis")),
                        },
                        _ => Err(r.err("a mesh axis is not an sdy attribute")),
                    })
                    .collect::<Result<_>>()?;
                Sdy::Mesh {
                    axes,
                    device_ids: r.signed_varints()?,
                }
            }
            3 => {
                r.signed_varint()?;
                r.signed_varint()?;
                Sdy::SubAxisInfo
            }
            4 => Sdy::AxisRef {
                name: r.string()?,
                sub_axis: r.optional_attribute()?.is_some(),
            },
            5 => {
                let axes = r.attributes()?;
                r.cur.byte()?; // closed
                let v = r.varint()?; // an optional priority: a flag in bit 0
                let _ = v;
                Sdy::DimSharding(axes)
            }
            6 | 15 | 17 => {
                let mesh = r.attribute()?;
                let dims = r.attributes()?;
                r.attributes()?; // replicated axes (implied by the rest)
                let mut unreduced = false;
                if code != 6 {
                    unreduced = !r.attributes()?.is_empty();
                }
                if code == 17 {
                    r.signed_varint()?;
                }
                Sdy::TensorSharding {
                    mesh,
                    dims,
                    unreduced,
                }
            }
            7 | 16 => Sdy::PerValue(r.attributes()?),
            8 => {
                r.signed_varints()?;
                Sdy::Other("a dimension mapping")
            }
            9 | 11 | 12 | 14 => {
                r.attributes()?;
                Sdy::Other("an sdy list attribute")
            }
            10 => {
                r.signed_varints()?;
                r.attributes()?;
                r.attributes()?;
                for _ in 0..4 {
                    r.signed_varints()?;
                }
                r.cur.byte()?;
                Sdy::Other("a sharding rule")
            }
            13 => {
                r.attributes()?;
                r.signed_varint()?;
                r.signed_varint()?;
                Sdy::Other("an all-to-all parameter")
            }
            other => {
                return Err(Error::unimplemented(format!(
                    "MLIR bytecode, byte offset {}: sdy attribute code {other} is not supported (read: 0 to 17)",
                    r.cur.offset()
                )))
            }
        };
        Ok(BAttr::Sdy(Rc::new(sdy)))
    }

    fn ty(&self, r: &mut EntryReader<'_, '_>) -> Result<crate::bytecode::BType> {
        Err(r.err("the sdy dialect has no types"))
    }
}

/// A mesh's axes and device ids; `mesh` is the mesh or its name in `meshes`.
fn mesh_of(mesh: &Rc<BAttr>, meshes: &[(String, Rc<BAttr>)]) -> Result<MeshAxes> {
    let mesh = match &**mesh {
        BAttr::Symbol(name) => meshes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m.clone())
            .ok_or_else(|| Error::invalid_argument(format!("no sdy.mesh @{name}")))?,
        _ => mesh.clone(),
    };
    match &*mesh {
        BAttr::Sdy(s) => match &**s {
            Sdy::Mesh { axes, device_ids } => Ok((axes.clone(), device_ids.clone())),
            other => Err(Error::invalid_argument(format!(
                "a sharding's mesh is {other:?}"
            ))),
        },
        other => Err(Error::invalid_argument(format!(
            "a sharding's mesh is {other:?}"
        ))),
    }
}

type MeshAxes = (Vec<(String, i64)>, Vec<i64>);

/// Checks that a `sdy.manual_computation` is manual over every axis (of size
/// above 1) of the mesh of `sharding`, one of its in or out shardings: the
/// body is then the whole per-device program. A computation manual over
/// some axes only leaves the rest to an SPMD partitioner, which hlorun does
/// not have.
pub(crate) fn manual_axes_cover_mesh(
    manual: &[String],
    sharding: &Sdy,
    meshes: &[(String, Rc<BAttr>)],
) -> Result<()> {
    let Sdy::TensorSharding { mesh, .. } = sharding else {
        return Err(Error::invalid_argument(format!(
            "a sharding of sdy.manual_computation is not a tensor sharding ({sharding:?})"
        )));
    };
    let (axes, _) = mesh_of(mesh, meshes)?;
    let free: Vec<&str> = axes
        .iter()
        .filter(|(name, size)| *size > 1 && !manual.contains(name))
        .map(|(name, _)| name.as_str())
        .collect();
    if free.is_empty() {
        return Ok(());
    }
    Err(Error::unimplemented(format!(
        "sdy.manual_computation manual over {{{}}} leaves mesh axes {{{}}} to the SPMD \
         partitioner, which hlorun does not have (a shard_map must be manual over every \
         mesh axis, as jax.pmap and shard_map over the whole mesh are)",
        manual
            .iter()
            .map(|a| format!("\"{a}\""))
            .collect::<Vec<_>>()
            .join(", "),
        free.iter()
            .map(|a| format!("\"{a}\""))
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// The HLO sharding text of a tensor sharding of rank `rank`, its mesh
/// looked up by name in `meshes` when it is a reference.
pub(crate) fn hlo_sharding(
    sharding: &Sdy,
    rank: usize,
    meshes: &[(String, Rc<BAttr>)],
) -> Result<String> {
    let Sdy::TensorSharding {
        mesh,
        dims,
        unreduced,
    } = sharding
    else {
        return Err(Error::invalid_argument(format!(
            "sdy.sharding is not a tensor sharding ({sharding:?})"
        )));
    };
    if *unreduced {
        return Err(Error::unimplemented(
            "sdy.sharding with unreduced axes is not supported".to_string(),
        ));
    }
    let (axes, device_ids) = mesh_of(mesh, meshes)?;
    if dims.len() != rank {
        return Err(Error::invalid_argument(format!(
            "sdy.sharding names {} dimensions for a rank-{rank} value",
            dims.len()
        )));
    }
    let devices: i64 = axes.iter().map(|(_, s)| *s).product();
    if axes.iter().any(|(_, s)| *s < 1) || devices < 1 {
        return Err(Error::invalid_argument(
            "a mesh axis of size < 1".to_string(),
        ));
    }
    if devices == 1 && device_ids.len() == 1 {
        return Ok(format!("{{maximal device={}}}", device_ids[0]));
    }
    let axis_index = |name: &str| -> Result<usize> {
        axes.iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| Error::invalid_argument(format!("no mesh axis \"{name}\"")))
    };
    let mut used = Vec::new();
    let mut tiles = Vec::with_capacity(rank + 1);
    for d in dims {
        let BAttr::Sdy(s) = &**d else {
            return Err(Error::invalid_argument("a dimension sharding is not sdy's"));
        };
        let Sdy::DimSharding(refs) = &**s else {
            return Err(Error::invalid_argument(format!(
                "a dimension sharding is {s:?}"
            )));
        };
        let mut count = 1i64;
        for a in refs {
            match &**a {
                BAttr::Sdy(x) => match &**x {
                    Sdy::AxisRef {
                        sub_axis: true,
                        name,
                    } => {
                        return Err(Error::unimplemented(format!(
                            "sdy.sharding on a sub-axis of \"{name}\" is not supported"
                        )))
                    }
                    Sdy::AxisRef { name, .. } => {
                        let i = axis_index(name)?;
                        if used.contains(&i) {
                            return Err(Error::invalid_argument(format!(
                                "mesh axis \"{name}\" shards two dimensions"
                            )));
                        }
                        used.push(i);
                        count *= axes[i].1;
                    }
                    other => return Err(Error::invalid_argument(format!("an axis is {other:?}"))),
                },
                other => return Err(Error::invalid_argument(format!("an axis is {other:?}"))),
            }
        }
        tiles.push(count);
    }
    if used.is_empty() {
        return Ok("{replicated}".into());
    }
    let rest: Vec<usize> = (0..axes.len()).filter(|i| !used.contains(i)).collect();
    let replicated: i64 = rest.iter().map(|&i| axes[i].1).product();
    if replicated > 1 {
        tiles.push(replicated);
    }
    let perm: Vec<usize> = used.iter().chain(&rest).copied().collect();
    let tile_text = tiles
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let suffix = if replicated > 1 {
        " last_tile_dim_replicate"
    } else {
        ""
    };
    let sizes: Vec<i64> = axes.iter().map(|(_, s)| *s).collect();
    let is_iota =
        device_ids.is_empty() || device_ids.iter().enumerate().all(|(i, &d)| d == i as i64);
    if is_iota {
        let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
        let reshape = sizes
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let t = if identity {
            String::new()
        } else {
            format!(
                "T({})",
                perm.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        return Ok(format!("{{devices=[{tile_text}]<=[{reshape}]{t}{suffix}}}"));
    }
    // An explicit device order: the mesh's ids, transposed by `perm`.
    if device_ids.len() as i64 != devices {
        return Err(Error::invalid_argument(format!(
            "a mesh of {devices} devices lists {} ids",
            device_ids.len()
        )));
    }
    let dims_u: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    let ids: Vec<usize> = device_ids.iter().map(|&d| d.max(0) as usize).collect();
    let listed = hlo_ir::sharding::transpose_ids(&ids, &dims_u, &perm)?;
    Ok(format!(
        "{{devices=[{tile_text}]{}{suffix}}}",
        listed
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    ))
}
