"""Names of the programs capture.py knows (corpus models and bug-benchmark cases)."""
from .models import (dp_attention, dtensor_llama, ep_moe, hf, megatron_core, megatron_cp,
                     megatron_gpt, ring_cp, torchtitan_llama, torchtitan_moe, ulysses)

_PROGRAMS = {
    "megatron_gpt": lambda: megatron_gpt.MegatronGPT(),
    "megatron_gpt_sp": lambda: megatron_gpt.MegatronGPT(sp=True),
    "hf_llama": lambda: hf.HFCausalLM("hf_llama"),
    "hf_qwen2": lambda: hf.HFCausalLM("hf_qwen2"),
    "hf_gpt2": lambda: hf.HFCausalLM("hf_gpt2"),
    "hf_mixtral": lambda: hf.HFCausalLM("hf_mixtral"),
    # transformers' own tensor-parallel plan (tp_plan), applied by transformers (models/hf.py)
    "hf_llama_tp_plan": lambda: hf.HFTpPlan("hf_llama_tp_plan", "hf_llama"),
    "hf_qwen2_tp_plan": lambda: hf.HFTpPlan("hf_qwen2_tp_plan", "hf_qwen2"),
    "dtensor_llama": lambda: dtensor_llama.DTensorLlama(),
    "dtensor_llama_sp": lambda: dtensor_llama.DTensorLlama(sp=True),
    # expert parallelism with data-dependent all-to-all splits (models/ep_moe.py)
    "ep_moe": lambda: ep_moe.EPMoEProgram(),
}

# ---- torchtitan (PyPI torchtitan, its own model code and parallelization) ----------------------
# torchtitan_llama: the spmd_types backend (torchtitan's default) with complex RoPE, without and
# with sequence parallelism; _dtensor: the partial_dtensor backend with cos/sin RoPE and sequence
# parallelism; _tp8: 8 heads at TP 8; _gqa: 8 query heads in 2 KV groups (fused QKV per group)
# at TP 2 (torchtitan needs n_kv_heads divisible by TP: its fused QKV cannot split a group).
TORCHTITAN = {
    "torchtitan_llama": dict(),
    "torchtitan_llama_sp": dict(sp=True),
    "torchtitan_llama_dtensor_sp": dict(sp=True, backend="partial_dtensor", rope="cos_sin"),
    "torchtitan_llama_tp8": dict(degrees=(8,), heads=8, dim=64),
    "torchtitan_llama_gqa": dict(degrees=(2,), heads=8, kv_heads=2),
}
_PROGRAMS.update({name: (lambda n=name, o=opts: torchtitan_llama.TorchtitanLlama(n, **o))
                  for name, opts in TORCHTITAN.items()})
# torchtitan's own Qwen3 MoE (models/torchtitan_moe.py): GroupedExperts' bf16 grouped mms split
# over TP (no expert parallelism), related up to rounding (src/symbolic/lemmas/rounding.rules);
# _sp: with sequence parallelism.
TORCHTITAN_MOE = {"torchtitan_qwen3_moe": dict(), "torchtitan_qwen3_moe_sp": dict(sp=True)}
_PROGRAMS.update({name: (lambda n=name, o=opts: torchtitan_moe.TorchtitanMoe(n, **o))
                  for name, opts in TORCHTITAN_MOE.items()})


# The models of tests/corpus (make_corpus.py), in order.
CORPUS = ["megatron_gpt", "megatron_gpt_sp", "hf_llama", "hf_qwen2", "hf_gpt2", "hf_mixtral",
          "hf_llama_tp_plan", "hf_qwen2_tp_plan",
          "dtensor_llama", "dtensor_llama_sp", *TORCHTITAN, *TORCHTITAN_MOE]


# The bug benchmark (tests/bugs): case -> (public report, pattern, mode, degree, program options).
# Every case is captured twice, correct (bug=None) and buggy.
BUGS = {
    "missing_rowparallel_allreduce": (
        "Megatron-LM RowParallelLinear contract (input_is_parallel: partial sums must be all-reduced)",
        "the all-reduce after the row-parallel MLP output layer is missing", "fwd", 2,
        {"bug": "no_row_allreduce"}),
    "vllm_49122_double_allreduce": (
        "vLLM issue #49122 (shared-expert output all-reduced twice)",
        "the row-parallel output is all-reduced a second time", "fwd", 2,
        {"bug": "double_allreduce"}),
    "vllm_3775_qk_norm_sharded": (
        "vLLM issue #3775 (QK-norm over a tensor-parallel-sharded hidden dimension)",
        "LayerNorm of the queries over the local heads' slice instead of the full width", "fwd", 2,
        {"bug": "qk_norm_local", "qk_norm": True}),
    "megatron_737_label_smoothing_vocab": (
        "Megatron-LM issue #737 (vocab-parallel cross entropy label smoothing)",
        "label smoothing divides by the local vocabulary size", "fwd", 2,
        {"bug": "label_smoothing_local_vocab", "label_smoothing": 0.1}),
    "grad_accum_double_scaling": (
        "DeepSpeed issue #8152, torchtitan issue #1733 (gradient-accumulation loss scaling)",
        "each micro-batch loss is divided by the number of micro-batches twice", "fwd", 2,
        {"bug": "grad_accum_double_scale", "micro_batches": 2}),
    "softmax_sharded_dim": (
        "Megatron-LM vocab-parallel cross entropy (max and sum-of-exp all-reduces)",
        "softmax over the vocabulary-sharded dimension without the max/sum all-reduces", "fwd", 2,
        {"bug": "local_softmax"}),
    "wrong_process_group": (
        "TP x DP process groups (Megatron-LM parallel_state): a reduction on the wrong group",
        "tensor-parallel reductions issued on the whole TP x DP world", "fwd", 4,
        {"bug": "wrong_group", "tp_size": 2}),
    "megatron_1446_sp_norm_grad": (
        "Megatron-LM issue #1446 (LayerNorm weight gradients under sequence parallelism)",
        "gradients of sequence-parallel LayerNorm weights are not all-reduced", "joint", 2,
        {"bug": "sp_grads_not_reduced", "sp": True}),
    "megatron_599_moe_router_sync": (
        "Megatron-LM issue #599 and PR #619 (SwitchMLP router weights not synchronized in the TP "
        "group under sequence parallelism)",
        "the router's weight gradients are partial per sequence shard and not all-reduced",
        "joint", 2, {"bug": "moe_router_not_synced", "sp": True, "moe": 2}),
    "rope_cp_position_offset": (
        "Megatron-LM issue #560 and PR #5243 (RoPE positions under context parallelism)",
        "each context-parallel rank takes the rotary table's first chunk: positions not offset "
        "per sequence shard", "fwd", 2, {"bug": "rope_no_cp_offset", "program": "megatron_cp"}),
    "ring_merge_no_rescale": (
        "ring attention's online-softmax merge (torch _SDPAMerger; ring-flash-attention PR #34)",
        "ring attention: each key block's output added with its share of the new log-sum-exp, "
        "the accumulated output not rescaled by exp(lse_old - lse_new)", "fwd", 2,
        {"bug": "merge_no_rescale", "program": "ring_cp", "seq": 8}),
    "cp_zigzag_wrong_chunk": (
        "zig-zag load balancing of context parallelism (torch _HeadTailLoadBalancer, "
        "Megatron-LM get_batch_on_this_cp_rank)",
        "a context-parallel rank takes its second chunk as W + r (round-robin) for its positions "
        "while the data is split zig-zag (chunks r and 2W-1-r)", "fwd", 2,
        {"bug": "zigzag_wrong_chunk", "program": "megatron_cp", "zigzag": True, "seq": 8}),
    "cp_kv_grad_not_reduce_scattered": (
        "the backward of an all-gather taken as this rank's slice of its own gathered gradient, "
        "without the sum over the ranks (lightly PR #1531's GatherLayer, PyTorch issue #120386), "
        "in all-gather-KV context parallelism (issue 18's bug list)",
        "the all-gather of keys and values along the sequence back-propagates each rank's own "
        "part of its gathered gradient instead of reduce-scattering the ranks' gradients: the "
        "other ranks' queries' contributions to its keys' and values' gradients are lost",
        "joint", 2, {"bug": "kv_grad_split", "program": "megatron_cp", "seq": 8, "loss": True}),
    "cp_weight_grads_not_reduced": (
        "a plausible variant (issue 18's CP backward: Megatron-LM's gradient all-reduce over the "
        "data-parallel group *with* context parallelism, `get_data_parallel_group("
        "with_context_parallel=True)`, taken without it)",
        "context parallelism's replicated weights keep each rank's partial gradient (its own "
        "tokens'): no all-reduce over the context-parallel ranks", "joint", 2,
        {"bug": "cp_grads_not_reduced", "program": "megatron_cp", "seq": 8, "loss": True}),
    "tied_embedding_grad_sync": (
        "Megatron-LM issues #299 and #844 (tied input/output embedding gradients must be "
        "all-reduced between the copies)",
        "the output layer's gradient of the shared embedding table (its vocabulary shard only) "
        "is not all-reduced over TP", "joint", 2,
        {"bug": "tied_embedding_grad_not_synced", "tie_embeddings": True}),
    # ---- on real torchtitan (models/torchtitan_llama.py: its config or module instances
    # changed; the spmd_types backend, whose activations are plain local tensors) ----
    "torchtitan_1373_grad_not_reduced": (
        "torchtitan PR #1373 (DeepSeek-V3 with TP: the MLA k_pe gradient not reduced across TP; "
        "the same pattern as Megatron-LM #1699 / TransformerEngine #1975)",
        "the attention block takes its replicated input as it comes instead of converting it "
        "(Invariant -> Replicate), so the backward never all-reduces the partial input gradient "
        "of the column-parallel q/k/v projections (the forward is unchanged)", "joint", 2,
        {"program": "torchtitan", "bug": "attention_input_grad_not_reduced"}),
    "torchtitan_rowwise_output_partial": (
        "a wrong placement in torchtitan's sharding config (RowwiseParallel's output declared "
        "Partial -> Invariant; here left Partial)",
        "feed_forward.w2's output keeps its Partial placement (out_dst_shardings dropped): the "
        "residual adds each rank's partial sums, no all-reduce", "fwd", 2,
        {"program": "torchtitan", "bug": "rowwise_output_partial"}),
    "pytorch_163193_partial_plus_scalar": (
        "PyTorch issue #163193 (a Partial DTensor plus a scalar added the scalar on every rank)",
        "a scalar bias added to the row-parallel attention output on each rank's partial sums "
        "before the all-reduce: TP times the bias", "fwd", 2,
        {"program": "torchtitan", "patch": "scalar_bias", "bug": "before_reduction"}),
    "pytorch_165962_max_before_reduction": (
        "PyTorch PR #165962 (max/min of a Partial DTensor taken before the Partial reduction)",
        "the attention output shifted by its row max taken on each rank's partial sums before "
        "the all-reduce", "fwd", 2,
        {"program": "torchtitan", "patch": "max_shift", "bug": "before_reduction"}),
    "torchtitan_2416_router_grad_replicate": (
        "torchtitan PR #2416 / issue #2387 (MoE router gate gradient: Partial treated as "
        "Replicate, so it is not reduced across TP)",
        "torchtitan's own Qwen3 MoE (models/torchtitan_moe.py, experts split over TP, "
        "partial_dtensor backend): the routed experts' local_map declares the gradient of the "
        "top-k scores Replicate instead of Partial, so each rank's partial gradient reaches the "
        "router gate's weight (and the block's input) without the all-reduce (forward unchanged)",
        "joint", 2,
        {"program": "torchtitan_moe", "backend": "partial_dtensor",
         "bug": "router_grad_replicate"}),
    # ---- DeepSpeed-Ulysses sequence parallelism (models/ulysses.py: the project's own layer;
    # DeepSpeed is not installed and neither real library has Ulysses attention on the CPU) ----
    "deepspeed_5664_a2a_reshape": (
        "DeepSpeed PR #5664 (the reshape after the sequence-parallel all-to-all corrupted Q, K "
        "and V)",
        "the all-to-all that scatters the sequence back puts its rank axis before the batch, so "
        "with a batch of 2 the reshape into heads interleaves batch rows and head groups",
        "fwd", 2, {"program": "ulysses", "bug": "a2a_heads_batch_mixed"}),
    "deepspeed_5248_sp_grad_scale": (
        "DeepSpeed issue #5248 (Ulysses sequence-parallel gradients scaled by the SP size)",
        "each rank back-propagates the mean loss of its sequence chunk, not its share of the "
        "sequence's mean (divided by the SP size), and the gradients are summed over the "
        "sequence ranks: SP times the gradient", "joint", 2,
        {"program": "ulysses", "bug": "chunk_mean_loss"}),
    # ---- SGLang's data-parallel attention with an expert-parallel MoE (models/dp_attention.py:
    # the project's own layer; SGLang is not installed, neither real library has DP attention),
    # 4 ranks: 2 DP groups x attention TP 2 ----
    "sglang_31699_dp_gather_partial": (
        "SGLang issue #31699 (DeepSeek-V4 DP attention: dp_gather_partial used where the data is "
        "already replicated)",
        "the attention output, all-reduced over the attention-TP group, is gathered for the MoE "
        "with dp_gather_partial, whose reduce-scatter over the attention-TP group sums the "
        "replicas: attn_tp times the hidden states", "fwd", 4,
        {"program": "dp_attention", "bug": "dp_gather_partial"}),
    "sglang_31475_shared_expert_ep": (
        "SGLang issue #31475 (SGLANG_SHARED_EXPERT_TP1 with EP and DP attention: the shared "
        "expert amplified by ep_size)",
        "the replicated shared expert's output is added to every rank's routed partial sum "
        "before the reduce-scatter that replaces the MoE all-reduce: R + ep_size * S", "fwd", 4,
        {"program": "dp_attention", "bug": "shared_before_reduce"}),
    "sglang_20492_gather_tp_group": (
        "SGLang PR #20492 (DeepSeek EAGLE3 under DP attention: all-gather on the TP group "
        "instead of the attention-TP group)",
        "the vocabulary-parallel LM head's logits all-gathered over the whole TP group instead "
        "of the attention-TP group, then cut to the vocabulary size: every DP group gets the "
        "first group's logits", "fwd", 4,
        {"program": "dp_attention", "bug": "lm_head_tp_gather"}),
    # ---- expert parallelism with data-dependent all-to-all splits (models/ep_moe.py: the
    # project's own layer after torchtitan's ExpertParallel dispatch; captured with live gloo
    # collectives, the graphs replay on their traced values, values.json) ----
    "ep_wrong_expert_rank": (
        "a plausible variant of expert-parallel dispatch bugs (tokens dispatched to the wrong "
        "expert rank; issue 18's bug list)",
        "tokens routed as if expert e lived on rank e % EP (round-robin) while the expert weights "
        "are sharded in contiguous blocks: the all-to-all split sizes are consistent, the tokens "
        "reach another rank's expert", "fwd", 2,
        {"program": "ep_moe", "bug": "interleaved_placement"}),
    "ep_a2a_splits_transposed": (
        "a plausible variant of expert-parallel dispatch bugs (all-to-all splits transposed; "
        "issue 18's bug list; the [rank, expert] / [expert, rank] order of Megatron's alltoall "
        "dispatcher's sort_chunks_by_idxs)",
        "after the dispatch all-to-all the received rows' chunk sizes (source rank x local "
        "expert) read transposed, as if the rows arrived expert-major: the sizes add up, the rows "
        "are cut at the wrong boundaries and reach the wrong local expert", "fwd", 2,
        {"program": "ep_moe", "bug": "transposed_splits"}),
}


# ---- real megatron-core (models/megatron_core.py: examples/megatron_core/gpt.py's factory) -----
# Corpus cases: the factory's tiny GPT (1 layer, hidden 32, 4 heads, vocabulary 64, sequence 8,
# batch 1) at TP 1/2/4; with sequence parallelism and a batch of 2 (8 heads, hidden 64: two heads
# per rank at TP 4, the attention's batch-merged heads interleaved) at TP 1/2/4; and with 8 heads
# (hidden 64) at TP 8 too.
_PROGRAMS.update({
    "mcore_gpt": lambda: megatron_core.MegatronCoreGPT("mcore_gpt"),
    "mcore_gpt_sp": lambda: megatron_core.MegatronCoreGPT(
        "mcore_gpt_sp", sp=True, batch=2, heads=8, hidden=64),
    "mcore_gpt_h8": lambda: megatron_core.MegatronCoreGPT(
        "mcore_gpt_h8", degrees=(2, 4, 8), heads=8, hidden=64),
})
CORPUS += ["mcore_gpt", "mcore_gpt_sp", "mcore_gpt_h8"]

# ---- context parallelism (models/megatron_cp.py): all-gather-KV CP over a zig-zag split --------
# One attention layer with RoPE (hidden 32, 4 heads, sequence 16, batch 1) at CP 1/2/4: rank r
# holds chunks r and 2W-1-r; keys and values all-gathered and put back in sequence order.
# TP x CP (sequence 8, TP 2): at 2 ranks TP 2 alone, at 4 a cp 2 x tp 2 mesh; contiguous and
# zig-zag sequence splits.
_PROGRAMS["megatron_cp_zigzag"] = lambda: megatron_cp.MegatronCP(zigzag=True)
# contiguous chunks (rank r: tokens [r s / W, (r + 1) s / W), RoPE's table offset per rank)
_PROGRAMS["megatron_cp"] = lambda: megatron_cp.MegatronCP(name="megatron_cp")
_PROGRAMS["megatron_tp2_cp"] = lambda: megatron_cp.MegatronTPCP()
_PROGRAMS["megatron_tp2_cp_zigzag"] = lambda: megatron_cp.MegatronTPCP(zigzag=True)
# Ring attention (models/ring_cp.py): the same layer shape (sequence 16, batch 2) with the CPU
# flash kernel per key block merged by torch's _SDPAMerger lines, zig-zag split, CP 1/2/4.
_PROGRAMS["ring_cp_zigzag"] = lambda: ring_cp.RingCP()
# and inside a tensor-parallel attention layer (heads over TP, the ring over CP; a cp x tp mesh)
_PROGRAMS["ring_tp2_cp_zigzag"] = lambda: ring_cp.RingTPCP()
CORPUS += ["megatron_cp", "megatron_cp_zigzag", "megatron_tp2_cp", "megatron_tp2_cp_zigzag", "ring_cp_zigzag",
           "ring_tp2_cp_zigzag"]
# corpus models with fewer modes than make_corpus.py's fwd and joint (a layer without a loss)
CORPUS_MODES = {m: ("fwd",) for m in ("ring_cp_zigzag", "ring_tp2_cp_zigzag")}
# corpus models whose joint case is another program than their forward one (make(name, mode)):
# the all-gather-KV CP layer's forward cases relate its output; the joint ones add an output
# head and the cross entropy over the layer's output (partial over CP), the backward with the
# reduce-scatter of the keys' and values' gradients, the weights' gradients all-reduced over CP
_JOINT = {
    "megatron_cp": lambda: megatron_cp.MegatronCP(name="megatron_cp", loss=True),
    "megatron_cp_zigzag": lambda: megatron_cp.MegatronCP(zigzag=True, loss=True),
    "megatron_tp2_cp": lambda: megatron_cp.MegatronTPCP(loss=True),
    "megatron_tp2_cp_zigzag": lambda: megatron_cp.MegatronTPCP(zigzag=True, loss=True),
}

# Bug cases on real megatron-core: the example's factory, the buggy variant with a config
# (buggy_config: megatron-core's own behaviour, unpatched) or with megatron's code monkeypatched
# while it is traced (patch: a function of models/megatron_core.py); or megatron-core as
# released is the buggy variant and the correct one has the fix monkeypatched (fix).
MCORE_BUGS = {
    "mcore_7452_gathered_logits_loss": (
        "Megatron-LM issue #7452 finding 2 (GPTModel's labels path with gathered logits: loss = "
        "correct + log(TP)), in megatron-core 0.19.2 as released",
        "GPTModel(parallel_output=False) gathers the logits over TP and its loss still calls "
        "vocab_parallel_cross_entropy, which takes the full vocabulary for every rank's shard",
        "fwd", 2, {"buggy_config": {"parallel_output": False}}),
    "mcore_row_parallel_no_allreduce": (
        "Megatron-LM RowParallelLinear contract (input_is_parallel: partial sums must be "
        "all-reduced), on megatron-core's own MLP",
        "the MLP's linear_fc2 skips its all-reduce (megatron's explicit_expert_comm path on a "
        "dense MLP)", "fwd", 2, {"patch": megatron_core.mlp_output_not_reduced}),
    "mcore_1446_sp_norm_grad": (
        "Megatron-LM issue #1446 (LayerNorm weight gradients under sequence parallelism), on "
        "megatron-core's own TransformerLayer",
        "the layer's LayerNorm weights lose the sequence_parallel mark: their partial gradients "
        "are not all-reduced", "joint", 2,
        {"config": {"sp": True}, "patch": megatron_core.sp_norm_weights_unmarked}),
    "mcore_ce_vocab_offset": (
        "Megatron-LM vocab-parallel cross entropy (each rank masks the targets outside its own "
        "vocabulary range), on megatron-core's own cross entropy",
        "every rank masks the targets with the first shard's range [0, V/TP)", "fwd", 2,
        {"patch": megatron_core.cross_entropy_rank0_vocab_range}),
    # factory: a factory of models/megatron_core.py around the example's (build_policy: the
    # GPTModel's logits under a GRPO policy loss)
    "swift_9947_logps_no_autograd": (
        "ms-swift PR #9947 (Megatron GRPO: vocabulary-parallel log-probabilities summed with a "
        "torch.distributed.all_reduce, which has no autograd formula)",
        "the labels' log-probabilities over the sharded vocabulary reduced with "
        "torch.distributed.all_reduce: right values, but a shard that does not own a token's "
        "label gets no gradient from it (the correct version: megatron's "
        "vocab_parallel_cross_entropy, as ms-swift since the fix)", "joint", 2,
        {"factory": megatron_core.build_policy,
         "patch": megatron_core.logps_all_reduce_without_autograd}),
    # program: megatron-core's CrossAttention alone, with a ProcessGroupCollection of its own
    # (models/megatron_core.py's build_cross_attention), 4 ranks
    "mcore_7452_cross_attention_tp_group": (
        "Megatron-LM issue #7452 (finding: CrossAttention builds linear_q and linear_kv without "
        "its pg_collection's tensor-parallel group), in megatron-core 0.19.2 as released",
        "a CrossAttention given its own tensor-parallel group ([0, 2], [1, 3]) gathers its "
        "sequence-parallel queries' and keys' inputs over megatron's global one ([0, 1], "
        "[2, 3]), mixing replicas, and shards their weights by it (the correct version passes "
        "the group, as the fix does)", "fwd", 4,
        {"program": megatron_core.MegatronCoreCrossAttention,
         "fix": megatron_core.cross_attention_tp_group}),
    # program: megatron-core's GPTModel with its MoELayer (models/megatron_core.py's build_moe),
    # traced with live collectives (the dispatcher's shapes follow the routing)
    "mcore_3768_moe_aux_loss_scale": (
        "Megatron-LM PR #3768 (MoE router loss scale changes with TP/CP under "
        "--calculate-per-token-loss; its TP/CP part merged as PR #5047, in megatron-core 0.19.2)",
        "with per-token loss the router attaches the load-balancing loss scaled by its local "
        "(sequence-parallel) token count only, not times the TP x CP size: the router weight's "
        "load-balancing gradient, summed over TP, is 1/TP of S's (the correct version: 0.19.2 "
        "as released)", "joint", 2,
        {"program": megatron_core.MegatronCoreMoE,
         "patch": megatron_core.aux_loss_scale_before_5047}),
}
BUGS.update(MCORE_BUGS)


def mcore_bug_program(case, buggy):
    opts = MCORE_BUGS[case][4]
    config = dict(opts.get("config", {}))
    if buggy:
        config.update(opts.get("buggy_config", {}))
    name = f"{case}_{'buggy' if buggy else 'correct'}"
    patch = opts.get("patch") if buggy else opts.get("fix")
    if "program" in opts:  # a program class of models/megatron_core.py with its own factory
        return opts["program"](name, patch=patch, **config)
    return megatron_core.MegatronCoreBug(name, patch=patch, factory=opts.get("factory"), **config)


def bug_program(case, buggy):
    if case in MCORE_BUGS:
        return mcore_bug_program(case, buggy)
    opts = dict(BUGS[case][4])
    bug = opts.pop("bug")
    name = f"{case}_{'buggy' if buggy else 'correct'}"
    program = opts.pop("program", None)
    if program == "megatron_cp":
        return megatron_cp.MegatronCP(bug=bug if buggy else None, name=name, **opts)
    if program == "ring_cp":
        return ring_cp.RingCP(bug=bug if buggy else None, name=name, **opts)
    if program == "ulysses":
        return ulysses.Ulysses(bug=bug if buggy else None, name=name, **opts)
    if program == "dp_attention":
        return dp_attention.DPAttention(bug=bug if buggy else None, name=name, **opts)
    if program == "torchtitan":
        return torchtitan_llama.TorchtitanLlama(name, bug=bug if buggy else None, **opts)
    if program == "torchtitan_moe":
        return torchtitan_moe.TorchtitanMoe(name, degrees=(2,), bug=bug if buggy else None, **opts)
    if program == "ep_moe":
        return ep_moe.EPMoEProgram(bug=bug if buggy else None, name=name, **opts)
    sp = opts.pop("sp", False)
    return megatron_gpt.MegatronGPT(sp=sp, bug=bug if buggy else None, name=name, **opts)


for _case in BUGS:
    _PROGRAMS[f"bug.{_case}.correct"] = (lambda c=_case: bug_program(c, False))
    _PROGRAMS[f"bug.{_case}.buggy"] = (lambda c=_case: bug_program(c, True))


# ---- pipeline parallelism: torch.distributed.pipelining's schedules (gg_capture/pipeline.py) ----
# tests/pipeline (make_pipeline.py): case -> PipelineProgram options; each case fwd and joint,
# the ranks a pp x tp mesh.
PIPELINE = {
    "pp2_gpipe": {"pp": 2, "schedule": "gpipe", "m": 2},
    "pp2_1f1b": {"pp": 2, "schedule": "1f1b", "m": 2},
    "pp4_gpipe": {"pp": 4, "schedule": "gpipe", "m": 4, "layers": 4},
    "pp4_1f1b": {"pp": 4, "schedule": "1f1b", "m": 4, "layers": 4},
    "pp2_tp2_gpipe": {"pp": 2, "tp": 2, "schedule": "gpipe", "m": 2},
    "pp2_tp2_1f1b": {"pp": 2, "tp": 2, "schedule": "1f1b", "m": 2},
    # with data parallelism: dp replicas of the pipeline (a dp x pp (x tp) mesh), gradients
    # all-reduced over DP and divided by DP after the schedule
    "pp2_dp2_gpipe": {"pp": 2, "dp": 2, "schedule": "gpipe", "m": 2},
    "pp2_tp2_dp2_1f1b": {"pp": 2, "tp": 2, "dp": 2, "schedule": "1f1b", "m": 2},
}

# Pipeline bugs of the bug benchmark (tests/bugs, make_bugs.py), as BUGS: case -> (public
# report, pattern, mode, ranks, PipelineProgram options with the bug).
PIPELINE_BUGS = {
    "pp_loss_scaled_twice": (
        "AReaL PR #1273 (Megatron's pipeline schedule divides each micro-batch loss by the number "
        "of micro-batches on top of the caller's normalization); torchtitan issue #1733 / PR #1732 "
        "(PP gradients rescaled by scale_grads)",
        "the loss function divides each micro-batch loss by m (Megatron's convention) and the "
        "schedule divides the gradients by m again (torch's scale_grads)", "joint", 2,
        {"pp": 2, "schedule": "1f1b", "m": 2, "bug": "loss_scaled_twice"}),
    "pp_loss_not_scaled": (
        "torchtitan issue #2972 (PP backwards the unnormalized loss; non-PP the normalized one); "
        "pytorch PR #144352 (PP gradients were not divided by the number of micro-batches)",
        "a mean loss per micro-batch with scale_grads=False: gradients m times too large",
        "joint", 2, {"pp": 2, "schedule": "gpipe", "m": 2, "bug": "loss_not_scaled"}),
    "pp_grad_not_accumulated": (
        "NVIDIA-NeMo/Automodel PR #3530 (stage re-initialization cleared the gradients between "
        "micro-batches: only the last one trained); torchtitan PR #3575 (zero_grad per "
        "micro-batch)",
        "every parameter's .grad cleared before each micro-batch's backward: the last "
        "micro-batch's gradient only", "joint", 2,
        {"pp": 2, "schedule": "1f1b", "m": 2, "bug": "grad_not_accumulated"}),
    "pp_stash_wrong_micro_batch": (
        "a variant of pytorch issue #139404 / PR #140981 (a stage kept its most recent backward "
        "result, not one per micro-batch, so reordered backwards could send another "
        "micro-batch's gradients)",
        "the first stage pops its activation stash last-in first-out: each backward meets another "
        "micro-batch's activations", "joint", 2,
        {"pp": 2, "schedule": "gpipe", "m": 2, "bug": "stash_lifo"}),
    "pp_tp_loss_scaled_twice": (
        "AReaL PR #1273 (as pp_loss_scaled_twice), with tensor parallelism inside the stages",
        "PP 2 x TP 2: each micro-batch loss divided by m in the loss function and the gradients "
        "divided by m again by the schedule", "joint", 4,
        {"pp": 2, "tp": 2, "schedule": "gpipe", "m": 2, "bug": "loss_scaled_twice"}),
}


def _pipeline_program(options, name):
    from . import pipeline
    return pipeline.PipelineProgram(name=name, **options)


for _case, _options in PIPELINE.items():
    _PROGRAMS[f"pipeline.{_case}"] = (lambda o=_options, c=_case: _pipeline_program(o, c))
for _case, _entry in PIPELINE_BUGS.items():
    _correct = {k: v for k, v in _entry[4].items() if k != "bug"}
    _PROGRAMS[f"bug.{_case}.correct"] = (
        lambda o=_correct, c=_case: _pipeline_program(o, f"{c}_correct"))
    _PROGRAMS[f"bug.{_case}.buggy"] = (
        lambda o=_entry[4], c=_case: _pipeline_program(o, f"{c}_buggy"))
BUGS.update(PIPELINE_BUGS)


# ---- data parallelism, FSDP and TP x DP meshes (gg_capture/dp.py) -------------------------------
# tests/dp (make_dp.py): case -> DataParallelProgram options; each case fwd and joint, the ranks
# a dp x tp mesh. ddp: gradients all-reduced over DP, the loss divided by the global token count
# (m micro-batches accumulated); fsdp: Shard(0) parameters all-gathered, gradients
# reduce-scattered and divided by DP.
DP = {
    "ddp2_accum": {"dp": 2, "m": 2},
    "ddp4": {"dp": 4},
    "fsdp2": {"dp": 2, "style": "fsdp"},
    "fsdp4": {"dp": 4, "style": "fsdp"},
    "ddp2_tp2": {"dp": 2, "tp": 2},
    "ddp2_tp2_accum": {"dp": 2, "tp": 2, "m": 2},
    # torchtitan's own SimpleFSDP data_parallel (mode replicate / fully_shard) on mesh["dp"],
    # PyTorch's parallelize_module on mesh["tp"] (the TP linears without biases, as torchtitan's
    # models; *_bias: with them, DTensor turning the row-parallel Replicate bias into a Partial
    # one, b / tp on every rank before the all-reduce)
    "sfsdp_ddp2": {"dp": 2, "impl": "simple_fsdp"},
    "sfsdp_fsdp2": {"dp": 2, "style": "fsdp", "impl": "simple_fsdp"},
    "sfsdp_ddp2_tp2": {"dp": 2, "tp": 2, "impl": "simple_fsdp", "bias": False},
    "sfsdp_fsdp2_tp2": {"dp": 2, "tp": 2, "style": "fsdp", "impl": "simple_fsdp", "bias": False},
    "sfsdp_ddp2_tp2_bias": {"dp": 2, "tp": 2, "impl": "simple_fsdp"},
    "sfsdp_fsdp2_tp2_bias": {"dp": 2, "tp": 2, "style": "fsdp", "impl": "simple_fsdp"},
    # torch's own FSDP2 fully_shard (per block, then the root) on mesh["dp"]; with TP the blocks
    # parallelize_module'd on mesh["tp"] first (gg_capture/fsdp2.py: how it is captured)
    "fully_shard2": {"dp": 2, "style": "fsdp", "impl": "fsdp2"},
    "fully_shard4": {"dp": 4, "style": "fsdp", "impl": "fsdp2"},
    "fully_shard2_tp2": {"dp": 2, "tp": 2, "style": "fsdp", "impl": "fsdp2"},
    # 5 output features: the head's dim 0 does not divide by DP 2 (rows 3 | 2), FSDP2 pads the
    # second shard with a zero row for its collectives
    "fully_shard2_uneven": {"dp": 2, "style": "fsdp", "impl": "fsdp2", "out": 5},
    # FSDP2's default use: each rank's own token mean, its gradients averaged by the
    # reduce-scatter (ReduceOp.AVG)
    "fully_shard2_avg": {"dp": 2, "style": "fsdp", "impl": "fsdp2", "average": True},
}

# Data-parallel bugs of the bug benchmark (tests/bugs, make_bugs.py), as BUGS: case -> (public
# report, pattern, mode, ranks, DataParallelProgram options with the bug).
DP_BUGS = {
    "dp_grad_reduce_tp_axis": (
        "a mesh-axis mix-up in a TP x DP program (the gradient all-reduce / reduce-scatter on the "
        "TP sub-group instead of the DP one; the pattern of Megatron-LM's parallel_state group "
        "confusions)",
        "TP 2 x DP 2: the accumulated gradients all-reduced over the TP group instead of the DP "
        "group: TP-sharded gradients summed across different shards, the replicas never reduced",
        "joint", 4, {"dp": 2, "tp": 2, "bug": "grad_reduce_tp_axis"}),
    "dp_loss_local_token_mean": (
        "huggingface/transformers PR #34191 (gradient accumulation: each micro-batch's loss a "
        "mean over its own tokens, then averaged; fixed by normalizing by the number of items in "
        "the whole batch)",
        "DP 2, 2 micro-batches, masked tokens: each rank and micro-batch divides its loss by its "
        "own token count and the gradients are averaged over DP and micro-batches (a mean of "
        "means), not divided by the global token count", "joint", 2,
        {"dp": 2, "m": 2, "bug": "local_token_mean"}),
    "fsdp_grad_divided_twice": (
        "a plausible variant of the loss-scaling bugs (torchtitan issue #1733): a training loop "
        "dividing the loss by the world size under FSDP, whose reduce-scatter already averages",
        "FSDP 2: the loss divided by the DP size before the backward and the reduce-scattered "
        "gradients divided by the DP size again (FSDP2's gradient divide factor)", "joint", 2,
        {"dp": 2, "style": "fsdp", "bug": "grad_divided_twice"}),
    "fsdp2_division_left_on": (
        "torchtitan PR #2323 (after the loss moved to the global token count, FSDP's gradient "
        "averaging was disabled, set_gradient_divide_factor(1.0), which torchtitan's "
        "disable_fsdp_gradient_division does; a data-parallel wrapper left averaging divides "
        "the gradients by the DP size twice)",
        "torch's own FSDP2 fully_shard, DP 2: the loss divided by the global token count, "
        "FSDP2's default gradient division (ReduceOp.AVG over DP) left on: every gradient 1/DP "
        "of the global mean's", "joint", 2,
        {"dp": 2, "style": "fsdp", "impl": "fsdp2", "bug": "fsdp2_division_left_on"}),
}


def _dp_program(options, name):
    from . import dp
    return dp.DataParallelProgram(name=name, **options)


for _case, _options in DP.items():
    _PROGRAMS[f"dp.{_case}"] = (lambda o=_options, c=_case: _dp_program(o, c))
for _case, _entry in DP_BUGS.items():
    _correct = {k: v for k, v in _entry[4].items() if k != "bug"}
    _PROGRAMS[f"bug.{_case}.correct"] = (lambda o=_correct, c=_case: _dp_program(o, f"{c}_correct"))
    _PROGRAMS[f"bug.{_case}.buggy"] = (lambda o=_entry[4], c=_case: _dp_program(o, f"{c}_buggy"))
BUGS.update(DP_BUGS)


def names():
    return sorted(_PROGRAMS)


def make(name, mode=None):
    """The program `name`; for mode "joint" a model's joint program where it has its own."""
    if name not in _PROGRAMS:
        raise SystemExit(f"capture: unknown model {name!r} (known: {', '.join(names())})")
    return _JOINT.get(name, _PROGRAMS[name])() if mode == "joint" else _PROGRAMS[name]()
