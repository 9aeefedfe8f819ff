"""JAX programs for `graphguard-capture jax` (the factory contract: gg_capture/jax_capture.py).

  mlp            x @ w1 + b1, relu (or --set activation=tanh), @ w2 under jax.jit shardings:
                 Megatron-style TP (x replicated, w1 and b1 column-sharded, w2 row-sharded, the
                 output replicated); XLA's SPMD partitioner inserts the all-reduce.
                 --set data=dp with a second mesh axis splits the batch too (TP x DP).
  mlp_sp         the same with sequence parallelism (x's rows and the output's sharded too).
  llama_block    a Llama-style block (RMSNorm, rotary attention with an additive causal mask,
                 SwiGLU), Megatron TP; rotary tables and mask are inputs (--set mask=where
                 builds the mask inside with jnp.tril and jnp.where, --set rope=computed the
                 rotary tables from jnp.arange); --set data=dp as for mlp.
  mlp_dp_grads   the TP MLP's weight gradients per device with shard_map on a TP x DP mesh,
                 all-reduced over dp by an explicit psum (--set grad_axis=tp: the wrong axis).
  neuronx_llama  a Llama decoder written the way transformers-neuronx writes it: shard_map local
                 code, each rank's fused QKV weight block laid out [q_r; k_r; v_r] (so the
                 sequential weight is the ranks' q ranges, then their k ranges, then their v
                 ranges: a spec rule the capture cannot derive from PartitionSpecs, given by the
                 factory), row-parallel attention output and down projection with psum, grouped
                 kv heads, logits of the last token vocabulary-sharded without a gather, each
                 layer's new K and V as outputs; arguments named p0, p1, ... in neuronx's order.
                 --set layers=L and the sizes (hidden, heads, kv_heads, ffn, vocab; default the
                 paper's Llama: 2048, 32, 8, 8192, 128256); --set bug=k_from_q reads K from the
                 rank's Q columns in D (the artifact's tp2_layer1.broken).
  all_to_all     jax.lax.all_to_all in shard_map (Ulysses-style resharding): x [8, 12, 4] split
                 over `concat` on the way in and over `split` on the way out (--set split=S
                 concat=C, any two of 0, 1, 2); XLA writes an all-to-all along `split` and a
                 reshape/transpose/reshape around it. --set bug=roll rolls the received blocks
                 by one member on more than one device (blocks in the wrong member order).
  mlp_shard_map  the same MLP written per device with jax.shard_map and an explicit psum over
                 `psum_axis` (default "tp"). With --mesh dp=1 --mesh tp=2 and --set psum_axis=dp
                 the psum sums over the wrong (size-1) axis: each device returns its partial
                 sum, a bug the checker must not pass.
"""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


_ACTIVATIONS = {"relu": lambda h: jnp.maximum(h, 0.0), "tanh": jnp.tanh}


def _mlp(x, w1, b1, w2, activation="relu"):
    h = _ACTIVATIONS[activation](x @ w1 + b1)
    return h @ w2


def _args(batch, d_in, hidden, d_out):
    f32 = jnp.float32
    return (jax.ShapeDtypeStruct((batch, d_in), f32), jax.ShapeDtypeStruct((d_in, hidden), f32),
            jax.ShapeDtypeStruct((hidden,), f32), jax.ShapeDtypeStruct((hidden, d_out), f32))


def _tp_axis(mesh):
    return "tp" if "tp" in mesh.axis_names else mesh.axis_names[-1]


def _data_axis(mesh, data):
    """The mesh axis the batch is split over ("" for none): data parallelism on a 2-D mesh."""
    if data and data not in mesh.axis_names:
        raise ValueError(f"data {data!r} is not a mesh axis {mesh.axis_names}")
    return data or None


def mlp(mesh, batch=8, d_in=16, hidden=32, d_out=16, activation="relu", data=""):
    """data=AXIS (e.g. --mesh dp=2 --mesh tp=2 --set data=dp): the batch rows of x and of the
    output split over that axis too (TP x DP)."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation {activation!r}: use one of {sorted(_ACTIVATIONS)}")
    tp, dp = _tp_axis(mesh), _data_axis(mesh, data)

    def fn(x, w1, b1, w2):
        return _mlp(x, w1, b1, w2, activation)

    return (fn, _args(batch, d_in, hidden, d_out), (P(dp), P(None, tp), P(tp), P(tp, None)),
            P(dp))


def mlp_sp(mesh, batch=8, d_in=16, hidden=32, d_out=16, activation="relu"):
    """The TP MLP with sequence parallelism: x's rows (the tokens) and the output's sharded on
    the TP axis too; XLA all-gathers x and reduce-scatters the output."""
    fn, args, in_specs, _ = mlp(mesh, batch, d_in, hidden, d_out, activation)
    tp = _tp_axis(mesh)
    return fn, args, (P(tp, None),) + tuple(in_specs[1:]), P(tp, None)


def mlp_shard_map(mesh, batch=8, d_in=16, hidden=32, d_out=16, psum_axis="tp"):
    tp = _tp_axis(mesh)
    if psum_axis not in mesh.axis_names:
        raise ValueError(f"psum_axis {psum_axis!r} is not a mesh axis {mesh.axis_names}")
    in_specs = (P(), P(None, tp), P(tp), P(tp, None))

    def local(x, w1, b1, w2):
        return jax.lax.psum(_mlp(x, w1, b1, w2), psum_axis)

    # check_vma=False: the wrong-axis bug must compile (jax would reject its replication claim)
    fn = jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=P(), check_vma=False)
    return fn, _args(batch, d_in, hidden, d_out), in_specs, P()


def mlp_dp_grads(mesh, batch=8, d_in=16, hidden=32, d_out=16, grad_axis="dp"):
    """A training step's gradients written per device with jax.shard_map, as DDP computes them
    on a TP x DP mesh (--mesh dp=2 --mesh tp=2): each device takes the gradients of its batch
    shard's loss (the sum of its partial output) with respect to its TP shards of w1, b1, w2,
    and all-reduces them over the data-parallel axis with an explicit psum over `grad_axis`.
    The outputs are the full gradients (replicated over dp, TP-sharded). --set grad_axis=tp
    reduces over the tensor-parallel axis instead: the bug of a gradient reduction on the wrong
    mesh axis, which the checker must not pass."""
    tp = _tp_axis(mesh)
    if grad_axis not in mesh.axis_names:
        raise ValueError(f"grad_axis {grad_axis!r} is not a mesh axis {mesh.axis_names}")
    dp = next((a for a in mesh.axis_names if a != tp), None)
    if dp is None:
        raise ValueError("mlp_dp_grads needs a data axis besides tp: --mesh dp=2 --mesh tp=2")
    weights = (P(None, tp), P(tp), P(tp, None))

    def local(x, w1, b1, w2):
        # sum(partial output) summed over tp is the batch shard's loss, so these are the TP
        # shards' gradients of it without a reduction over tp
        grads = jax.grad(lambda *w: jnp.sum(_mlp(x, *w)), argnums=(0, 1, 2))(w1, b1, w2)
        return tuple(jax.lax.psum(g, grad_axis) for g in grads)

    fn = jax.shard_map(local, mesh=mesh, in_specs=(P(dp),) + weights, out_specs=weights,
                       check_vma=False)
    return fn, _args(batch, d_in, hidden, d_out), (P(dp),) + weights, weights


def _rms_norm(x, weight, eps=1e-6):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _rotary(x, cos, sin):
    """Rotates pairs (first half, second half) of the head dim by the angles whose cos and sin
    ([seq, half]) are given."""
    half = x.shape[-1] // 2
    cos, sin = cos[None, :, None, :], sin[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def llama_block(mesh, batch=2, seq=8, dim=32, heads=4, ffn=64, mask="bias", rope="input",
                data="", sp=False):
    """A Llama-style block (RMSNorm, rotary attention, SwiGLU) with Megatron-style TP: wq/wk/wv
    and w_gate/w_up column-sharded (heads and FFN units split), wo and w_down row-sharded, norms
    and x replicated, the output replicated. mask: "bias" (an additive causal mask, an input:
    0 on and below the diagonal, -1e9 above, as Hugging Face models take it), "where" (jnp.tril
    and jnp.where inside the block) or "none". rope: "input" (the rotary tables are inputs, as
    a model's precomputed buffers are) or "computed" (inside the block from jnp.arange; the
    table inputs are then unused). data=AXIS: x's and the output's batch split over that axis
    (TP x DP). sp: x and the output split along the sequence over the tp axis as well (sequence
    parallelism: XLA gathers the sequence before the column-parallel projections and splits it
    after the row-parallel ones)."""
    if mask not in ("bias", "where", "none"):
        raise ValueError(f"mask {mask!r}: use bias, where or none")
    if rope not in ("input", "computed"):
        raise ValueError(f"rope {rope!r}: use input or computed")
    tp, dp = _tp_axis(mesh), _data_axis(mesh, data)
    head_dim = dim // heads

    def block(x, rope_cos, rope_sin, attn_bias, attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up,
              w_down):
        b, s, _ = x.shape
        if rope == "computed":
            inv_freq = 1.0 / (10000.0 ** (jnp.arange(0, head_dim // 2, dtype=jnp.float32)
                                          / (head_dim // 2)))
            freqs = jnp.outer(jnp.arange(s, dtype=jnp.float32), inv_freq)
            rope_cos, rope_sin = jnp.cos(freqs), jnp.sin(freqs)
        h = _rms_norm(x, attn_norm)
        q = _rotary((h @ wq).reshape(b, s, -1, head_dim), rope_cos, rope_sin)
        k = _rotary((h @ wk).reshape(b, s, -1, head_dim), rope_cos, rope_sin)
        v = (h @ wv).reshape(b, s, -1, head_dim)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(float(head_dim))
        if mask == "bias":
            scores = scores + attn_bias[None, None]
        elif mask == "where":
            scores = jnp.where(jnp.tril(jnp.ones((s, s), dtype=bool))[None, None], scores, -1e9)
        attn = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, s, -1)
        x = x + out @ wo
        g = _rms_norm(x, ffn_norm)
        return x + (jax.nn.silu(g @ w_gate) * (g @ w_up)) @ w_down

    f32 = jnp.float32
    half = head_dim // 2
    shapes = [(batch, seq, dim), (seq, half), (seq, half), (seq, seq), (dim,), (dim, dim),
              (dim, dim), (dim, dim), (dim, dim), (dim,), (dim, ffn), (dim, ffn), (ffn, dim)]
    col, row = P(None, tp), P(tp, None)
    act = P(dp, tp) if sp else P(dp)
    in_specs = (act, P(), P(), P(), P(), col, col, col, row, P(), col, col, row)
    return block, tuple(jax.ShapeDtypeStruct(s, f32) for s in shapes), in_specs, act


def _rms_norm_dim(x, weight, eps=1e-5):
    """transformers-neuronx's RMSNorm in f32 (hlo.rms_norm_legacy), over the last dim."""
    xf = x.astype(jnp.float32)
    scaled = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + eps)
    return (scaled * weight.astype(jnp.float32)).astype(x.dtype)


def neuronx_llama(mesh, layers=1, hidden=2048, heads=32, kv_heads=8, ffn=8192, vocab=128256,
                  batch=4, seq=64, rope_base=500000.0, dtype="float32", bug=""):
    """A Llama decoder (context encoding) in transformers-neuronx's style, written per rank with
    jax.shard_map (defaults: the config of the artifact's examples/corpus/aws_llama modules;
    layout [batch, seq, hidden] rather than neuronx's hidden-major one). Arguments, named p<N>
    in neuronx's order: p0 hidden states [batch, seq, hidden] (replicated), p1 cache ids
    s32[seq], p2 start ids s32[batch], p3 the last token's index s32[1], then per layer the
    attention RMSNorm weight, the fused QKV weight [hidden, q + 2 kv] (per rank a column block
    [q_r; k_r; v_r]), the output weight [hidden, q] (row-parallel: split on dim 1, contracted),
    the MLP RMSNorm weight, gate and up [hidden, ffn] (split on dim 1), down [hidden, ffn]
    (row-parallel, split on dim 1), then the final norm weight and lm_head [hidden, vocab]
    (split on dim 1). Outputs: the last token's logits [batch, 1, vocab] (vocabulary-sharded:
    each rank's slice, no gather), then per layer the new K and V [batch, seq, kv_heads,
    head_dim] (split over kv heads). bug=k_from_q: on more than one device each rank takes K
    from the first kv-width of its Q columns."""
    if bug not in ("", "k_from_q"):
        raise ValueError(f"bug {bug!r}: use k_from_q or nothing")
    tp = _tp_axis(mesh)
    n = mesh.shape[tp]
    head_dim = hidden // heads
    q_cols, kv_cols = heads * head_dim, kv_heads * head_dim
    if heads % n or kv_heads % n or ffn % n or vocab % n or heads % kv_heads:
        raise ValueError(f"heads {heads}, kv_heads {kv_heads}, ffn {ffn}, vocab {vocab} must "
                         f"divide by the {n} ranks (and heads by kv_heads)")
    qr, kvr = q_cols // n, kv_cols // n  # this program's per-rank widths
    group = heads // kv_heads
    dt = jnp.dtype(dtype)

    def rope(x, pos):
        """Rotates (first half, second half) of the head dim; angles pos * inv_freq."""
        half = head_dim // 2
        inv_freq = 1.0 / (rope_base ** (jnp.arange(0, half, dtype=jnp.float32) / half))
        ang = pos.astype(jnp.float32)[:, None] * inv_freq[None, :]
        cos = jnp.cos(ang).astype(x.dtype)[None, :, None, :]
        sin = jnp.sin(ang).astype(x.dtype)[None, :, None, :]
        x1, x2 = x[..., :half], x[..., half:]
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)

    def local(x, cache_ids, start_ids, last, *weights):
        b, s, _ = x.shape
        iota = jnp.arange(s, dtype=jnp.int32)
        causal = iota[None, :] <= cache_ids[:, None]                       # [s(q), s(k)]
        started = iota[None, :] >= start_ids[:, None]                      # [b, s(k)]
        mask = causal[None, None] & started[:, None, None, :]              # [b, 1, s, s]
        new_kv = []
        for l in range(layers):
            attn_norm, wqkv, wo, mlp_norm, wgate, wup, wdown = weights[7 * l:7 * l + 7]
            h = _rms_norm_dim(x, attn_norm)
            fused = h @ wqkv                                               # [b, s, qr + 2 kvr]
            k_at = 0 if (bug == "k_from_q" and n > 1) else qr
            q = rope(fused[..., :qr].reshape(b, s, -1, head_dim), cache_ids)
            k = rope(fused[..., k_at:k_at + kvr].reshape(b, s, -1, head_dim), cache_ids)
            v = fused[..., qr + kvr:qr + 2 * kvr].reshape(b, s, -1, head_dim)
            new_kv += [k, v]
            kg, vg = jnp.repeat(k, group, axis=2), jnp.repeat(v, group, axis=2)
            scores = jnp.einsum("bqhd,bkhd->bhqk", q, kg) / jnp.asarray(head_dim ** 0.5, x.dtype)
            scores = jnp.where(mask, scores, jnp.asarray(-30000.0, x.dtype))
            attn = jax.nn.softmax(scores, axis=-1)
            out = jnp.einsum("bhqk,bkhd->bqhd", attn, vg).reshape(b, s, -1)
            x = x + jax.lax.psum(out @ wo.T, tp)                           # row-parallel
            g = _rms_norm_dim(x, mlp_norm)
            mlp = (jax.nn.silu(g @ wgate) * (g @ wup)) @ wdown.T
            x = x + jax.lax.psum(mlp, tp)                                  # row-parallel
        final_norm, lm_head = weights[7 * layers:]
        xn = _rms_norm_dim(x, final_norm)
        token = jnp.take(xn, last, axis=1, mode="clip")                    # [b, 1, hidden]
        return (token @ lm_head,) + tuple(new_kv)                          # vocab-sharded

    i32 = jnp.int32
    args = [((batch, seq, hidden), dt), ((seq,), i32), ((batch,), i32), ((1,), i32)]
    in_specs = [P(), P(), P(), P()]
    col = P(None, tp)
    for _ in range(layers):
        args += [((hidden,), dt), ((hidden, q_cols + 2 * kv_cols), dt), ((hidden, q_cols), dt),
                 ((hidden,), dt), ((hidden, ffn), dt), ((hidden, ffn), dt), ((hidden, ffn), dt)]
        in_specs += [P(), col, col, P(), col, col, col]
    args += [((hidden,), dt), ((hidden, vocab), dt)]
    in_specs += [P(), col]
    out_specs = (P(None, None, tp),) + (P(None, None, tp),) * (2 * layers)
    fn = jax.shard_map(local, mesh=mesh, in_specs=tuple(in_specs), out_specs=out_specs,
                       check_vma=False)
    names = [f"p{k}" for k in range(len(args))]
    # a function whose parameters are named p0, p1, ...: jax's op_name of each argument
    named = eval("lambda " + ", ".join(names) + ": fn(" + ", ".join(names) + ")", {"fn": fn})
    # The fused QKV weights: S's [hidden, q + 2 kv] is the ranks' q ranges, then their k
    # ranges, then their v ranges (each rank's block is [q_r; k_r; v_r]), not shard(1).
    qkv_rule = (f"concat(1, [slice(D@r, 1, 0, {qr}) for r in ranks], "
                f"[slice(D@r, 1, {qr}, {qr + kvr}) for r in ranks], "
                f"[slice(D@r, 1, {qr + kvr}, {qr + 2 * kvr}) for r in ranks])")
    rules = {4 + 7 * l + 1: qkv_rule for l in range(layers)}
    from .jax_capture import JaxProgram
    return JaxProgram(named, tuple(jax.ShapeDtypeStruct(s, t) for s, t in args), tuple(in_specs),
                      out_specs, rules=rules)


def all_to_all(mesh, split=1, concat=0, bug=""):
    """x [8, 12, 4] sharded over tp on dim `concat`, resharded by jax.lax.all_to_all (tiled) to
    dim `split`. bug=roll: on more than one device each rank's result rolled by one member's
    block along `concat` (the members' blocks out of order)."""
    tp = _tp_axis(mesh)
    n = mesh.shape[tp]
    if split == concat or {split, concat} - {0, 1, 2}:
        raise ValueError(f"split {split} and concat {concat}: two different dims of 0, 1, 2")
    if bug not in ("", "roll"):
        raise ValueError(f"bug {bug!r}: use roll or nothing")
    shape = (8, 12, 4)

    def local(x):
        y = jax.lax.all_to_all(x, tp, split, concat, tiled=True)
        if bug == "roll" and n > 1:
            y = jnp.roll(y, shape[concat] // n, axis=concat)
        return y

    spec_in, spec_out = [None] * 3, [None] * 3
    spec_in[concat], spec_out[split] = tp, tp
    fn = jax.shard_map(local, mesh=mesh, in_specs=(P(*spec_in),), out_specs=P(*spec_out),
                       check_vma=False)
    return fn, (jax.ShapeDtypeStruct(shape, jnp.float32),), (P(*spec_in),), P(*spec_out)
