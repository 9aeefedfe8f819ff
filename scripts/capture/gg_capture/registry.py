"""Names of the programs capture.py knows (corpus models and bug-benchmark cases)."""
from .models import dtensor_llama, hf, megatron_cp, megatron_gpt

_PROGRAMS = {
    "megatron_gpt": lambda: megatron_gpt.MegatronGPT(),
    "megatron_gpt_sp": lambda: megatron_gpt.MegatronGPT(sp=True),
    "hf_llama": lambda: hf.HFCausalLM("hf_llama"),
    "hf_qwen2": lambda: hf.HFCausalLM("hf_qwen2"),
    "hf_gpt2": lambda: hf.HFCausalLM("hf_gpt2"),
    "hf_mixtral": lambda: hf.HFCausalLM("hf_mixtral"),
    "dtensor_llama": lambda: dtensor_llama.DTensorLlama(),
    "dtensor_llama_sp": lambda: dtensor_llama.DTensorLlama(sp=True),
}


# The models of tests/corpus (make_corpus.py), in order.
CORPUS = ["megatron_gpt", "megatron_gpt_sp", "hf_llama", "hf_qwen2", "hf_gpt2", "hf_mixtral",
          "dtensor_llama", "dtensor_llama_sp"]


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
    "tied_embedding_grad_sync": (
        "Megatron-LM issues #299 and #844 (tied input/output embedding gradients must be "
        "all-reduced between the copies)",
        "the output layer's gradient of the shared embedding table (its vocabulary shard only) "
        "is not all-reduced over TP", "joint", 2,
        {"bug": "tied_embedding_grad_not_synced", "tie_embeddings": True}),
}


def bug_program(case, buggy):
    opts = dict(BUGS[case][4])
    bug = opts.pop("bug")
    name = f"{case}_{'buggy' if buggy else 'correct'}"
    if opts.pop("program", None) == "megatron_cp":
        return megatron_cp.MegatronCP(bug=bug if buggy else None, name=name)
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


def names():
    return sorted(_PROGRAMS)


def make(name):
    if name not in _PROGRAMS:
        raise SystemExit(f"capture: unknown model {name!r} (known: {', '.join(names())})")
    return _PROGRAMS[name]()
