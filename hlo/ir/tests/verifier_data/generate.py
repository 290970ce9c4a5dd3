"""Regenerates the XLA-generated HLO the verifier tests read (run from anywhere).

Each program is lowered by JAX (`module.hlo`, before XLA's passes) and compiled by
XLA CPU (`optimized.hlo`). They cover operations the conformance corpus lacks:
grouped and dilated convolutions, weight gradients (batch groups), select-and-scatter,
LAPACK custom calls, batched gather/scatter, 2-D FFTs, collectives on 4 host devices,
variadic reduce-window, rng-bit-generator, bf16/int8 dots with a wider result.
Generated with jax 0.10.2.
"""
import os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
import jax, jax.numpy as jnp, numpy as np
from jax import lax
jax.config.update("jax_enable_x64", True)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_generated")
os.makedirs(out, exist_ok=True)
f32 = jnp.float32
def save(name, f, *args):
    lowered = jax.jit(f).lower(*args)
    open(f"{out}/{name}.module.hlo","w").write(lowered.as_text(dialect="hlo"))
    try:
        open(f"{out}/{name}.optimized.hlo","w").write(lowered.compile().as_text())
    except Exception as e:
        print(name, "compile failed", e)
S = jax.ShapeDtypeStruct
save("conv_groups", lambda x,k: lax.conv_general_dilated(x,k,(1,1),"SAME",feature_group_count=3, dimension_numbers=("NHWC","HWIO","NHWC")), S((2,8,8,6),f32), S((3,3,2,12),f32))
save("conv_dilated", lambda x,k: lax.conv_general_dilated(x,k,(2,1),[(1,2),(0,1)],lhs_dilation=(2,1),rhs_dilation=(1,2), dimension_numbers=("NCHW","OIHW","NCHW")), S((2,3,9,9),f32), S((4,3,3,3),f32))
def conv_grad(x,k):
    return jax.grad(lambda k: lax.conv_general_dilated(x,k,(1,1),"VALID").sum())(k)
save("conv_weight_grad", conv_grad, S((4,3,8,8),f32), S((5,3,3,3),f32))
save("maxpool_grad", jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1,2,2,1),(1,2,2,1),"VALID").sum()), S((2,8,8,3),f32))
save("cholesky_trsm", lambda a,b: jax.scipy.linalg.solve_triangular(jnp.linalg.cholesky(a@a.T+4*jnp.eye(4)), b, lower=True), S((4,4),f32), S((4,3),f32))
save("cumsum_cumprod", lambda x: (jnp.cumsum(x,axis=1), jnp.cumprod(x, axis=0), lax.cummax(x, axis=1)), S((5,7),f32))
save("argmax_var", lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)), S((5,7),f32))
save("scatter_batched", lambda x,i,u: x.at[jnp.arange(3)[:,None], i].add(u), S((3,10),f32), S((3,4),jnp.int32), S((3,4),f32))
save("gather_batched", lambda x,i: jnp.take_along_axis(x, i, axis=1), S((3,10),f32), S((3,4),jnp.int32))
save("fft2", lambda x: (jnp.fft.rfft2(x), jnp.fft.irfft2(jnp.fft.rfft2(x), s=x.shape[-2:]), jnp.fft.fftn(x.astype(jnp.complex64))), S((2,6,8),f32))
save("f64_c128", lambda x: (jnp.abs(x.astype(jnp.complex128)), jnp.angle(x.astype(jnp.complex128)), jnp.real(jnp.exp(1j*x))), S((4,),jnp.float64))
save("bf16_dot", lambda a,b: lax.dot_general(a,b,(((1,),(0,)),((),())), preferred_element_type=f32), S((4,8),jnp.bfloat16), S((8,3),jnp.bfloat16))
save("int8_dot", lambda a,b: lax.dot_general(a,b,(((1,),(0,)),((),())), preferred_element_type=jnp.int32), S((4,8),jnp.int8), S((8,3),jnp.int8))
save("dyn_slices", lambda x,i: (lax.dynamic_slice(x,(i,i),(2,3)), lax.dynamic_update_slice(x, jnp.ones((2,3),f32), (i,jnp.int32(0)))), S((6,7),f32), S((),jnp.int32))
save("while_cond", lambda x,n: lax.fori_loop(0, n, lambda i,c: lax.cond(i%2==0, lambda c: c*2, lambda c: c+1, c), x), S((3,),f32), S((),jnp.int32))
save("switch3", lambda i,x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), S((),jnp.int32), S((4,),f32))
save("sort_multi", lambda x,y: lax.sort((x,y), dimension=0, num_keys=2), S((9,),f32), S((9,),jnp.int32))
save("top_k", lambda x: lax.top_k(x, 4), S((3,10),f32))
save("reduce_precision_clamp", lambda x: (lax.reduce_precision(x, 5, 10), jnp.clip(x, -1, 1), lax.clamp(f32(0), x, f32(1))), S((6,),f32))
save("bitcasts", lambda x: (lax.bitcast_convert_type(x, jnp.uint8), lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(x.astype(jnp.float64), jnp.float32)), S((3,),f32))
save("pad_negative", lambda x: lax.pad(x, f32(0), [(1,-2,1),(-1,2,0)]), S((5,6),f32))
save("shifts_popcnt", lambda x,y: (x<<y, x>>y, lax.shift_right_logical(x,y), lax.population_count(x), lax.clz(x)), S((4,),jnp.int32), S((4,),jnp.int32))
save("expm1_log1p_erf", lambda x: (jnp.expm1(x), jnp.log1p(x), lax.erf(x), lax.erf_inv(x), jnp.cbrt(x), lax.is_finite(x)), S((4,),f32))
save("select_n", lambda p,x,y: (jnp.where(p,x,y), lax.select(p, x, y)), S((4,),jnp.bool_), S((4,),f32), S((4,),f32))
save("map_like", lambda x: jax.vmap(lambda r: jnp.polyval(r, 2.))(x), S((4,3),f32))
save("attention", lambda q,k,v: jax.nn.dot_product_attention(q,k,v), S((2,5,4,8),f32), S((2,5,4,8),f32), S((2,5,4,8),f32))
save("iota_types", lambda: (jnp.arange(5, dtype=jnp.float32), lax.iota(jnp.uint8, 4), lax.broadcasted_iota(jnp.int32,(3,4),1)))
save("eigh_qr", lambda a: (jnp.linalg.qr(a)[0], jnp.linalg.eigh(a+a.T)[0]), S((4,4),f32))
save("svd", lambda a: jnp.linalg.svd(a)[1], S((4,3),f32))
save("lu_solve", lambda a,b: jnp.linalg.solve(a,b), S((4,4),f32), S((4,2),f32))
save("remat_opt_barrier", jax.grad(lambda x: jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x).sum()), S((4,),f32))
save("complex_ops", lambda x: (lax.complex(x, x), jnp.conj(lax.complex(x,x)), jnp.sqrt(lax.complex(x,x))), S((3,),f32))
save("u64_s16", lambda x,y: (x*y, x//y, x%y, (x.astype(jnp.int16)-1)), S((4,),jnp.uint64), S((4,),jnp.uint64))
save("half", lambda x: (jnp.tanh(x.astype(jnp.float16)), jnp.exp(x.astype(jnp.bfloat16))), S((4,),f32))

def save_lowerable(name, f, *args):
    lowered = f.lower(*args)
    open(f"{out}/{name}.module.hlo","w").write(lowered.as_text(dialect="hlo"))
    open(f"{out}/{name}.optimized.hlo","w").write(lowered.compile().as_text())
def coll(x):
    a = lax.psum(x, "i")
    b = lax.all_gather(x, "i")
    c = lax.psum_scatter(jnp.tile(x, 4), "i", tiled=True)
    d = lax.ppermute(x, "i", [(0,1),(1,2),(2,3),(3,0)])
    e = lax.all_to_all(jnp.tile(x,4).reshape(4,-1), "i", 0, 0)
    f = lax.axis_index("i")
    return a, b, c, d, e, f
save_lowerable("collectives_pmap", jax.pmap(coll, axis_name="i"), S((4,8),f32))
save_lowerable("rng_bit_generator", jax.jit(lambda k: lax.rng_bit_generator(k, (3,4), dtype=jnp.uint32)), S((4,),jnp.uint32))
def argmax_pool(x):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, 1)
    def red(a, b):
        (av, ai), (bv, bi) = a, b
        keep = av >= bv
        return (jnp.where(keep, av, bv), jnp.where(keep, ai, bi))
    return lax.reduce_window((x, idx), (f32(-jnp.inf), jnp.int32(0)), red, (1,2), (1,2), "VALID")
save_lowerable("reduce_window_variadic", jax.jit(argmax_pool), S((3,8),f32))
