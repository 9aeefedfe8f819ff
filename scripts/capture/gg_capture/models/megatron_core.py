"""Real megatron-core (the library, not a reimplementation) in the corpus and the bug benchmark.

The program is the user's factory of examples/megatron_core/gpt.py (megatron-core's GPTModel with
the local layer spec and its vocabulary-parallel cross entropy), captured as `graphguard-capture`
captures it (api.UserProgram; gg_capture applies its megatron shims itself, shims/megatron.py).
A bug case runs the same factory with megatron's own code monkeypatched while its buggy variant is
traced (MegatronCoreBug.patches; make_bugs.py enters them around the traces)."""
import contextlib
import inspect
import os

from .. import api
from ..factory import load_factory

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4,
                       "examples", "megatron_core", "gpt.py")
PLAN = ("megatron-core GPTModel (get_gpt_layer_local_spec) with its own tensor-parallel layers "
        "and vocab-parallel cross entropy, set up by the user factory "
        "examples/megatron_core/gpt.py:build; megatron-core {version}")


def version():
    from importlib.metadata import version as v
    return v("megatron-core")


class MegatronCoreGPT(api.UserProgram):
    """examples/megatron_core/gpt.py:build with config overrides (sp, heads, hidden, ...)."""

    def __init__(self, name, degrees=(2, 4), **config):
        super().__init__(load_factory(os.path.normpath(EXAMPLE) + ":build"), config,
                         mode=None, ref="examples/megatron_core/gpt.py:build")
        self.name, self.degrees = name, tuple(degrees)
        self.plan = PLAN.format(version=version())

    def describe(self):
        """The factory's whole configuration: its defaults with this program's overrides."""
        params = list(inspect.signature(self.factory).parameters.values())[1:]
        config = {p.name: p.default for p in params if p.default is not p.empty}
        return {"model": self.name, "config": {**config, **self.config},
                "parallel_plan": self.plan}


class MegatronCoreBug(MegatronCoreGPT):
    """A bug case: `patch`, a function of (the megatron modules) that returns {(object, attribute):
    replacement}, is applied while the buggy variant is traced (patches())."""

    def __init__(self, name, patch=None, **config):
        super().__init__(name, **config)
        self.patch = patch

    @contextlib.contextmanager
    def patches(self):
        if self.patch is None:
            yield
            return
        replaced = self.patch()
        # a class's own attribute as stored (a staticmethod stays one when put back)
        saved = {(obj, attr): vars(obj)[attr] if isinstance(obj, type) else getattr(obj, attr)
                 for obj, attr in replaced}
        try:
            for (obj, attr), value in replaced.items():
                setattr(obj, attr, value)
            yield
        finally:
            for (obj, attr), value in saved.items():
                setattr(obj, attr, value)


# ---- bug patches: each returns {(object, attribute): replacement} for MegatronCoreBug ------------

def mlp_output_not_reduced():
    """The dense MLP's linear_fc2 (a RowParallelLinear) returns its partial sums unreduced: its
    explicit_expert_comm flag set, megatron's path for MoE experts whose token dispatcher does the
    reduction, on a layer that has none."""
    from megatron.core.transformer import mlp
    init = mlp.MLP.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.linear_fc2.explicit_expert_comm = True

    return {(mlp.MLP, "__init__"): patched}


def sp_norm_weights_unmarked():
    """Megatron-LM #1446's pattern: the transformer layer's LayerNorm weights lose megatron's
    `sequence_parallel` mark, so finalize_model_grads leaves their per-sequence-shard partial
    gradients unreduced."""
    from megatron.core.transformer import transformer_layer
    init = transformer_layer.TransformerLayer.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        for norm in (self.input_layernorm, self.pre_mlp_layernorm):
            for param in norm.parameters():
                param.sequence_parallel = False

    return {(transformer_layer.TransformerLayer, "__init__"): patched}


def cross_entropy_rank0_vocab_range():
    """The vocabulary-parallel cross entropy masks the targets with the first shard's range
    [0, V / TP) on every rank (its vocabulary offset not applied); the embedding, which reads the
    same VocabUtility, keeps the right one."""
    from megatron.core.tensor_parallel import cross_entropy

    class FirstShardRange(cross_entropy.VocabUtility):
        @staticmethod
        def vocab_range_from_per_partition_vocab_size(per_partition_vocab_size, rank,
                                                      world_size):
            return 0, per_partition_vocab_size

    return {(cross_entropy, "VocabUtility"): FirstShardRange}
