"""Run megatron-core's tensor-parallel modules on the CPU over gg_capture's fake process group.

Exploratory (issue 13 item 2): what a GPTModel at TP 2 needs to build and run its forward without
a GPU or a real communicator. Each shim is one documented obstacle; apply() installs them all,
process-wide and idempotently (a capture process only: it replaces torch.cuda.current_device and
torch.distributed's in-place collectives), before megatron's modules are built.
Tested with megatron-core 0.16.1 (the newest release for Python 3.11) and torch 2.13.

Obstacles and what is done about each:
  1. gloo groups: initialize_model_parallel creates gloo process groups next to the default
     backend's; the fake backend's world cannot host ProcessGroupGloo (c10d "Not implemented").
     Pass create_gloo_process_groups=False (initialize_model_parallel() below does).
  2. the CUDA RNG tracker: model_parallel_cuda_manual_seed and every tracker fork (weight init,
     attention dropout) read and set torch.cuda RNG states. CpuRNGStatesTracker keeps the
     tracked streams on the CPU generator instead.
  3. torch.cuda.current_device(): megatron allocates its buffers (all-gather outputs, the global
     memory buffer, attention masks) with device=torch.cuda.current_device(). After apply() it
     answers "cpu".
  4. in-place c10d collectives: megatron's mappings and vocab-parallel cross entropy call
     torch.distributed.all_reduce(t) / all_gather_into_tensor(out, t) / reduce_scatter_tensor(
     out, t), which make_fx records as c10d.allreduce_ & co. (no value semantics, and GraphGuard
     reads _c10d_functional). They are replaced by the functional collectives plus a copy_ into
     the destination (functional_dist.py), which trace.out_of_place turns into a value
     (aten.copy); async_op=True (the backward's overlapped all-reduce / reduce-scatter) gets a
     handle whose wait() is a no-op, the value being in place already.
  5. make_viewless_tensor: `out = torch.empty((1,)); out.data = inp.data` swaps the storage behind
     autograd's and make_fx's back: the graph reads the empty [1] tensor (a shape error in
     verify). A value graph has no views to drop, so the kernel returns its input.
  6. WrappedTorchNorm refuses sequence_parallel (the local layer spec's norm without Apex or
     Transformer Engine): torch's LayerNorm/RMSNorm is per token, so it is right on sequence
     shards, but its weights' gradients are then partial per shard. sp_norm builds the same
     module and marks the weights sequence-parallel (megatron's `sequence_parallel` attribute,
     which finalize_model_grads all-reduces, and gg_capture's, which trace.py's joint capture
     all-reduces the same way).

What works (megatron-core 0.16.1, GPTModel with get_gpt_layer_local_spec, 1 layer, hidden 32,
4 heads, vocabulary 64, sequence 8, TP 2, laptop-mode verify): the forward with megatron's own
vocab-parallel cross entropy REFINES, with and without sequence parallelism; a RowParallelLinear
and VocabParallelEmbedding without their all-reduce is not REFINES (VIOLATION with LibTorch).
The joint forward+backward needs a loss other than megatron's (obstacle 7) and is captured with
gg_capture.vocab_parallel_cross_entropy on GPTModel's vocabulary-sharded logits: `graphguard
check` HOLDS (28 of 28 relations, with and without SP); the symbolic engine stops (UNKNOWN,
iteration limit) at an attention-backward bmm whose operand megatron builds with as_strided.
  7. not shimmed: VocabParallelCrossEntropy's backward writes in place into views of the saved
     softmax (grad_2d[arange, target] -= ..., grad_input.mul_); trace.out_of_place refuses
     writes through views, and torch.func.functionalize refuses megatron's autograd.Functions
     (no setup_context).

A factory (graphguard-capture mgpt:build --tp 2 --mode fwd):

    def build(tp, sp=False):
        if tp.size == 1 and not dist.is_initialized():   # S: megatron needs a world of one rank
            dist.init_process_group("fake", store=fakedist.FakeStore(), rank=0, world_size=1)
        shim.apply()
        parallel_state.destroy_model_parallel()
        shim.initialize_model_parallel(tp.size)
        shim.model_parallel_manual_seed(0)
        cfg = TransformerConfig(num_layers=1, hidden_size=32, num_attention_heads=4,
                                use_cpu_initialization=True, tensor_model_parallel_size=tp.size,
                                sequence_parallel=sp and tp.size > 1)
        model = shim.mark_placements(GPTModel(cfg, get_gpt_layer_local_spec(), vocab_size=64,
                                              max_sequence_length=8))
        model.register_forward_hook(lambda m, a, out: out.float().mean())   # the scalar loss
        return model, {"input_ids": ..., "position_ids": ..., "attention_mask": ..., "labels": ...}
"""
import contextlib

import torch

# shim 4 (also used by shims/torchtitan.py through spmd_types.set_dist)
from .functional_dist import all_gather_into_tensor, all_reduce, reduce_scatter_tensor


class CpuRNGStatesTracker:
    """megatron.core.tensor_parallel.random.CudaRNGStatesTracker's interface on the CPU
    generator: add(name, seed) records a stream; fork(name) runs the block on that stream and
    restores the default one."""

    def __init__(self, *args, **kwargs):
        self.reset()

    def reset(self):
        self.states_, self.seeds_ = {}, set()
        self._is_initialized = False

    def is_initialized(self):
        return self._is_initialized

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self._is_initialized, self.states_ = True, states

    def add(self, name, seed):
        self._is_initialized = True
        if seed in self.seeds_ or name in self.states_:
            raise ValueError(f"rng stream {name} / seed {seed} already added")
        self.seeds_.add(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.states_[name] = torch.get_rng_state()

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        if name not in self.states_:
            raise ValueError(f"rng stream {name} is not added")
        outer = torch.get_rng_state()
        torch.set_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = torch.get_rng_state()
            torch.set_rng_state(outer)


def model_parallel_manual_seed(seed):
    """model_parallel_cuda_manual_seed's streams (the default, tensor-parallel and expert
    offsets, as megatron-core 0.16 derives them) on a CpuRNGStatesTracker."""
    from megatron.core import parallel_state as ps
    from megatron.core.tensor_parallel import random
    tracker = CpuRNGStatesTracker()
    random._CUDA_RNG_STATE_TRACKER = tracker
    random._CUDA_RNG_STATE_TRACKER_INITIALIZED = True
    tp_rank = ps.get_tensor_model_parallel_rank()
    torch.manual_seed(seed)
    tracker.add(random._MODEL_PARALLEL_RNG_TRACKER_NAME, seed + 2718 + tp_rank)
    tracker.add(random.get_expert_parallel_rng_tracker_name(), seed + 2718 + 100 + tp_rank)
    tracker.add(random.get_data_parallel_rng_tracker_name(), seed)
    return tracker


def sp_norm(cls, config, hidden_size, eps=1e-5, **unused):
    """WrappedTorchNorm.__new__ that accepts config.sequence_parallel (shim 6)."""
    if not config.sequence_parallel:
        return _WRAPPED_NEW[0](cls, config, hidden_size, eps, **unused)
    kinds = {"LayerNorm": torch.nn.LayerNorm, "RMSNorm": torch.nn.RMSNorm}
    if config.normalization not in kinds:
        raise ValueError(f"shims.megatron: {config.normalization} under sequence parallelism")
    norm = kinds[config.normalization](normalized_shape=hidden_size, eps=eps)
    for param in norm.parameters():
        param.sequence_parallel = True
        param.gg_sequence_parallel = True
    return norm


_WRAPPED_NEW = []


def apply():
    """Install shims 2-6 (shim 1 is initialize_model_parallel's argument)."""
    import torch.distributed as dist
    from megatron.core.tensor_parallel import layers, mappings
    from megatron.core import utils
    from megatron.core.transformer import torch_norm
    if not _WRAPPED_NEW:
        _WRAPPED_NEW.append(torch_norm.WrappedTorchNorm.__new__)
        torch_norm.WrappedTorchNorm.__new__ = sp_norm
    torch.cuda.current_device = lambda: "cpu"
    utils._kernel_make_viewless_tensor = lambda inp, requires_grad: inp
    dist.all_reduce = all_reduce
    for module in (mappings, layers):  # bound at import time under these names
        module.dist_all_gather_func = all_gather_into_tensor
        module.dist_reduce_scatter_func = reduce_scatter_tensor


def initialize_model_parallel(tp):
    """parallel_state.initialize_model_parallel for a TP-only world over the fake group."""
    from megatron.core import parallel_state as ps
    ps.initialize_model_parallel(tensor_model_parallel_size=tp, create_gloo_process_groups=False)


def mark_placements(model):
    """gg_capture's placements from megatron's own parameter attributes: tensor_model_parallel
    with partition_dim d -> shard(d) (megatron's fused QKV is laid out per head group, so the
    plain shard is right); sequence_parallel (norms, row-parallel biases under SP) -> a gradient
    all-reduced over the TP group, as finalize_model_grads does."""
    from .. import tp as tpmod
    for param in model.parameters():
        if getattr(param, "tensor_model_parallel", False):
            if getattr(param, "partition_stride", 1) != 1:
                raise ValueError("shims.megatron: a strided partition has no shard placement")
            tpmod.place(param, "shard", param.partition_dim)
        if getattr(param, "sequence_parallel", False):
            tpmod.sequence_parallel(param)
    return model
