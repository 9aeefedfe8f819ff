"""megatron-core on the CPU over gg_capture's fake process group, with no edit of megatron and none
in the user's factory.

gg_capture applies this module by itself (shims/__init__.py: when the user's code has imported
megatron.core, before each factory call) and runs every captured rank inside rank(), so a factory
is written as for a real run:

    from megatron.core import parallel_state
    from megatron.core.tensor_parallel import model_parallel_cuda_manual_seed

    def build(tp, sp=False):
        parallel_state.initialize_model_parallel(tensor_model_parallel_size=tp.size)
        model_parallel_cuda_manual_seed(0)
        config = TransformerConfig(num_layers=1, hidden_size=32, num_attention_heads=4,
                                   use_cpu_initialization=True, sequence_parallel=sp,
                                   tensor_model_parallel_size=tp.size)
        gpt = GPTModel(config, get_gpt_layer_local_spec(), vocab_size=64, max_sequence_length=8)
        ...   # a module whose forward returns the loss; see examples/megatron_core/gpt.py

Tested with megatron-core 0.19.2 (scripts/setup.sh pins it) and torch 2.13. Each shim is one
obstacle to running megatron's code on the CPU under make_fx; none changes what megatron computes:

  1. the world: megatron's parallel_state needs torch.distributed initialized, also for the
     sequential program S (TP 1). rank() opens a fake world of one rank for S; at the end of each
     rank it calls parallel_state.destroy_model_parallel(), so the next rank's factory call
     initializes megatron's groups afresh over the next fake world.
  2. gloo groups: initialize_model_parallel creates gloo groups next to the default backend's; the
     fake world cannot host ProcessGroupGloo. torch.distributed.new_group(backend="gloo") makes a
     group of the default (fake) backend instead; megatron uses gloo groups for CPU-side
     checkpoint and optimizer traffic only, never in a forward or backward.
  3. the RNG tracker: model_parallel_cuda_manual_seed's CudaRNGStatesTracker keeps CUDA
     generator states. megatron builds its tracker from the module-level class, which is replaced
     by CpuRNGStatesTracker (the same streams on the CPU generator). Weight values do not matter
     to GraphGuard (parameters are inputs of the graphs), only that S and D run the same code.
  4. CUDA devices: megatron allocates buffers with device=torch.cuda.current_device() or
     device="cuda" (its default causal mask is torch.ones(sq, sq, device="cuda")). After apply(),
     torch.cuda.current_device() answers "cpu"; inside rank() a TorchFunctionMode (CpuDevices)
     turns every other CUDA device argument into the CPU.
  5. in-place collectives: megatron calls torch.distributed.all_reduce(t),
     all_gather_into_tensor(out, t) (bound at import time as dist_all_gather_func),
     reduce_scatter_tensor(out, t) and all_to_all_single(out, t), which make_fx records as
     c10d.allreduce_ & co. (no value semantics; GraphGuard reads _c10d_functional). Each is
     replaced, in torch.distributed and wherever a megatron module bound it, by the functional
     collective plus a copy_ into the destination (shims/functional_dist.py, shared with the
     torchtitan shim; the capture turns copy_ into a value). A
     collective over a group of one rank is the identity there and emits nothing. async_op=True
     gets a handle whose wait() does nothing (the value is in place already).
  6. make_viewless_tensor: `out = torch.empty((1,)); out.data = inp.data` swaps storage behind
     make_fx's back (the graph would read the empty [1] tensor). A value graph has no views to
     drop: the kernel returns its input.
  7. WrappedTorchNorm refuses sequence parallelism (the local spec's norm without Apex or
     Transformer Engine): torch's LayerNorm/RMSNorm is per token, so it is right on sequence
     shards, but its weights' gradients are then partial per shard. The same torch module is
     built with its weights marked sequence_parallel (megatron's attribute, which
     finalize_model_grads all-reduces over the TP group; the joint capture does the same).
  8. jit_fuser: megatron decorates small kernels with torch.compile (megatron.core.jit; e.g. the
     MoE router's _apply_expert_bias, the fused bias-activation functions), which make_fx refuses
     to trace ("FX to symbolically trace a dynamo-optimized function"). Every such function of a
     loaded megatron module or class is replaced by the Python function torch.compile wrapped
     (its _torchdynamo_orig_callable): the same computation, uncompiled.

Not a shim, because it is not megatron's: its vocabulary-parallel cross entropy's hand-written
backward writes in place through views of the saved softmax (`grad_2d[arange, target] -= ...`,
`grad_input.mul_(...)`), and autograd's backward of its in-place attention mask reads the scores
through as_strided. The capture handles both for any program (trace.py: functionalize,
plain_strided_views), so the joint graph holds megatron's own backward.

Placements (mark_placements, called by gg_capture on the module a factory returns): a parameter
with megatron's tensor_model_parallel attribute is shard(partition_dim) (megatron's fused QKV is
laid out per head group, so the plain shard is right); one with sequence_parallel has its
gradient all-reduced over the TP group, as finalize_model_grads does.
"""
import contextlib
import sys

import torch

from . import functional_dist

# torch.distributed's in-place collectives this module replaces (shim 5), by name
_COLLECTIVES = ("all_reduce", "all_gather_into_tensor", "_all_gather_base",
                "reduce_scatter_tensor", "_reduce_scatter_base", "all_to_all_single")
_ORIGINAL = {}  # name -> torch.distributed's function, filled by apply()


MODULE = "megatron.core"  # what loaded() looks for


def loaded():
    """Whether the running program has imported megatron-core (then apply() is needed)."""
    return MODULE in sys.modules


class CpuRNGStatesTracker:
    """megatron.core.tensor_parallel.random.CudaRNGStatesTracker's interface on the CPU
    generator: add(name, seed) records a stream; fork(name) runs the block on that stream and
    restores the default one (shim 3)."""

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
        self._is_initialized, self.states_ = True, dict(states)

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


# ---- shim 5: in-place collectives as functional ones -------------------------------------------

def _rebind_collectives():
    """Shim 5 in torch.distributed and in every loaded megatron module that bound one of its
    collectives under its own name (`dist_all_gather_func = torch.distributed.
    all_gather_into_tensor`)."""
    import torch.distributed as dist
    for name in _COLLECTIVES:
        _ORIGINAL.setdefault(name, getattr(dist, name))
        setattr(dist, name, functional_dist.REPLACEMENTS[name])
    by_original = {id(_ORIGINAL[name]): functional_dist.REPLACEMENTS[name]
                   for name in _COLLECTIVES}
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("megatron."):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) in by_original and callable(value):
                setattr(module, attr, by_original[id(value)])


# ---- shim 8: torch.compile'd functions as their Python originals -------------------------------

def _uncompiled(value):
    """The function torch.compile wrapped, for a compiled function; else None."""
    return getattr(value, "_torchdynamo_orig_callable", None) if callable(value) else None


def _uncompile_megatron():
    """Shim 8 in every loaded megatron module and in the classes it defines."""
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("megatron."):
            continue
        for attr, value in list(vars(module).items()):
            if _uncompiled(value) is not None:
                setattr(module, attr, _uncompiled(value))
            elif isinstance(value, type) and value.__module__ == module_name:
                for name, member in list(vars(value).items()):
                    if _uncompiled(member) is not None:
                        setattr(value, name, _uncompiled(member))


# ---- shim 7: WrappedTorchNorm under sequence parallelism --------------------------------------

_WRAPPED_NEW = []


def sp_norm(cls, config, hidden_size, eps=1e-5, **unused):
    """WrappedTorchNorm.__new__ that accepts config.sequence_parallel."""
    if not config.sequence_parallel:
        return _WRAPPED_NEW[0](cls, config, hidden_size, eps, **unused)
    kinds = {"LayerNorm": torch.nn.LayerNorm, "RMSNorm": torch.nn.RMSNorm}
    if config.normalization not in kinds:
        raise ValueError(f"shims.megatron: {config.normalization} under sequence parallelism")
    norm = kinds[config.normalization](normalized_shape=hidden_size, eps=eps)
    for param in norm.parameters():
        param.sequence_parallel = True
    return norm


# ---- shims 2-8 ---------------------------------------------------------------------------------

def _new_group(*args, **kwargs):
    """torch.distributed.new_group with a gloo backend made the default one (shim 2)."""
    if kwargs.get("backend") == "gloo":
        kwargs["backend"] = None
    elif len(args) > 2 and args[2] == "gloo":
        args = (*args[:2], None, *args[3:])
    return _ORIGINAL["new_group"](*args, **kwargs)


def apply():
    """Install shims 2-8, process-wide and idempotently (a capture process only: it replaces
    torch.cuda.current_device and torch.distributed's in-place collectives)."""
    import torch.distributed as dist
    from megatron.core import utils
    from megatron.core.tensor_parallel import random
    from megatron.core.transformer import torch_norm
    if "new_group" not in _ORIGINAL:
        _ORIGINAL["new_group"] = dist.new_group
        dist.new_group = _new_group
    if random.CudaRNGStatesTracker is not CpuRNGStatesTracker:
        random.CudaRNGStatesTracker = CpuRNGStatesTracker
        if not isinstance(random._CUDA_RNG_STATE_TRACKER, (CpuRNGStatesTracker, type(None))):
            random._CUDA_RNG_STATE_TRACKER_INITIALIZED = False  # built before apply(): rebuild
    torch.cuda.current_device = lambda: "cpu"
    utils._kernel_make_viewless_tensor = lambda inp, requires_grad: inp
    if not _WRAPPED_NEW:
        _WRAPPED_NEW.append(torch_norm.WrappedTorchNorm.__new__)
        torch_norm.WrappedTorchNorm.__new__ = sp_norm
    _rebind_collectives()  # every call: megatron modules imported since the last one
    _uncompile_megatron()


def _is_cuda(device):
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, int) and not isinstance(device, bool)  # a CUDA ordinal


class CpuDevices(torch.overrides.TorchFunctionMode):
    """Shim 4: a CUDA device argument of any torch call (device="cuda", device=0, t.to("cuda"),
    t.cuda()) means the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.cuda:
            return args[0]
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = "cpu"
        if func is torch.Tensor.to and len(args) > 1 and _is_cuda(args[1]):
            args = (args[0], "cpu", *args[2:])
        return func(*args, **kwargs)


@contextlib.contextmanager
def rank(world):
    """Around one captured rank (S at world 1): a fake world of one rank for S where none is
    open (shim 1), CUDA devices mapped to the CPU (shim 4); megatron's parallel state and its
    MoE state are destroyed at the end (the fake world it was built over closes with
    the rank)."""
    import torch.distributed as dist
    from megatron.core import parallel_state
    from .. import fakedist
    opened = world == 1 and not dist.is_initialized()
    if opened:
        dist.init_process_group("fake", store=fakedist.FakeStore(), rank=0, world_size=1)
    try:
        with CpuDevices():
            yield
    finally:
        parallel_state.destroy_model_parallel()
        # megatron's process-wide MoE state, which it writes in place (the metrics tracker's
        # accumulated aux losses, MoEAuxLossAutoScaler's loss scale, set_loss_scale's copy_):
        # made anew per rank, as in a fresh process, so no rank's trace writes into a tensor an
        # earlier trace created
        from megatron.core.transformer.moe import moe_logging, moe_utils
        moe_logging.destroy_moe_metrics_tracker()
        moe_utils.MoEAuxLossAutoScaler.main_loss_backward_scale = None
        if opened and dist.is_initialized():
            dist.destroy_process_group()


def layers(model):
    """What built the model's tensor-parallel layers, when megatron did (some parameter has its
    tensor_model_parallel attribute): "megatron-core VERSION's tensor-parallel layers"; else None."""
    if not any(hasattr(p, "tensor_model_parallel") for p in model.parameters()):
        return None
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"megatron-core {version('megatron-core')}'s tensor-parallel layers"
    except PackageNotFoundError:
        return "megatron-core's tensor-parallel layers"


def mark_placements(model):
    """gg_capture's placements from megatron's own parameter attributes (see the module
    docstring); parameters without them keep what they have (replicated by default)."""
    from .. import tp as tpmod
    for param in model.parameters():
        if getattr(param, "tensor_model_parallel", False) and not hasattr(param, "gg_placement"):
            if getattr(param, "partition_stride", 1) != 1:
                raise ValueError("shims.megatron: a strided partition has no shard placement")
            tpmod.place(param, "shard", param.partition_dim)
        if getattr(param, "sequence_parallel", False):
            tpmod.sequence_parallel(param)
    return model
