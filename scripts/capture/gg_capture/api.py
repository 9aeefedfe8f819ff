"""Capture a user's own program, with no edit of this package (`graphguard-capture`, capture()).

The factory contract. A factory is any callable, named on the command line as MODULE:FACTORY:

    def build(tp, **config):
        ...
        return model, inputs                 # or (model, inputs, plan), or gg_capture.Model(...)

  tp       gg_capture.TP of the rank being captured: tp.size (the TP degree; 1 for the
           sequential program S), tp.rank, tp.group (the fake process group to pass to
           torch.distributed._functional_collectives). Every rank's model must be cut from the same
           full weights: torch is seeded (manual_seed(0)) before each call, so draw them with
           torch.randn & co. in the same order on every rank (the tp.py layers take the full
           weight and keep this rank's shard).
  config   keyword arguments with defaults; `--set k=v` (or capture(..., k=v)) overrides them.
  model    a torch.nn.Module. Its forward(**inputs) returns a tensor or a tuple of tensors; with
           mode "joint" the first is the loss (a scalar), differentiated with respect to every
           parameter. Either written with gg_capture's tensor-parallel layers
           (ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding, ...; parameters
           placed by hand with gg_capture.place) or a plain module plus a plan.
  inputs   dict name -> tensor: the example inputs, the same on every rank (replicated unless
           Model.input_placements says otherwise).
  plan     a torch.distributed.tensor.parallel plan (module FQN -> ColwiseParallel(), ...) that
           capture applies with parallelize_module on a 1-D mesh over the fake group when
           tp.size > 1; placements are then read from the DTensors.
  A model the factory parallelized itself needs no plan: DTensor parameters and buffers are
  read as above, and local shards typed by spmd_types (V + PartitionSpec, R, I, P) get their
  type's placement. torchtitan's own Module.parallelize does either (its partial_dtensor and
  spmd_types backends); gg_capture.shims.torchtitan runs it on the CPU (examples/torchtitan).

gg_capture.Model(module, inputs, plan=None, input_placements=None, output_placements=None,
loss_parallel=False) says more: placements are "replicate", "partial" or "shard(d)";
output_placements (forward outputs, mode "fwd" of a tp.py program; default: every output
replicated); loss_parallel: run forward and backward inside DTensor's loss_parallel().

Errors in what the user gave (a module that does not import, a missing or non-callable factory,
a wrong return value, a `--set` key the factory does not take) raise CaptureError, whose message
names the problem and what to do; the command line prints it and exits 2.
"""
import contextlib
import dataclasses
import inspect
import os
import sys

import torch

from . import fxjson, shims, spec, trace
from . import replicate as replicate_mod
from . import tp as tpmod
from .factory import CaptureError, load_factory, parse_sets, parse_value, user_frame  # noqa: F401
from .models.base import Program


@dataclasses.dataclass
class Model:
    module: torch.nn.Module
    inputs: dict
    plan: dict = None
    input_placements: dict = None
    output_placements: list = None
    loss_parallel: bool = False


def texts(program, world, mode):
    """Trace S and every rank of D: {"seq.json": ..., "dist.json": ..., "spec.rel": ...}, the
    texts write() puts in its directory."""
    seq = trace.trace_rank(program, 1, 0, mode)
    ranks = trace.trace_ranks(program, world, mode)
    groups = {}
    for r in ranks:
        groups.update(r.groups)
    if world > 1 and not groups:
        groups = {"0": list(range(world))}
    title = f"{program.name}: {program.plan}"
    traced = None
    if hasattr(seq, "values"):
        # shapes that follow from values (expert parallelism's split sizes): the graphs replay
        # only on S's traced inputs (and D's, derived from them through the spec), kept here
        traced = trace.traced_values_note(program)
    files = {"seq.json": fxjson.program_text([seq.graph], traced_values=traced),
             "dist.json": fxjson.program_text([r.graph for r in ranks], groups, traced),
             "spec.rel": spec.spec_text(title, ranks[0])}
    if traced:
        files["values.json"] = fxjson.values_text(seq.values)
    return files


def _write_texts(files, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)


def write(program, world, mode, out_dir):
    """Trace S and every rank of D; write seq.json, dist.json and spec.rel into out_dir."""
    _write_texts(texts(program, world, mode), out_dir)


def write_deep(at_depth, layers, world, mode, out_dir, replicate=True, k=2, k_max=4,
               log=None):
    """write() for a program of `layers` layers, at_depth(n) being the program at n layers.

    With replicate, the program is traced at k, k+1 and k+2 layers and the `layers`-deep files
    are built by replicate.py's checked rule (see its docstring). When the rule does not
    reproduce the (k+2)-layer trace, k grows by one (one more trace: the first and last layers
    of a joint trace are special, FX names an operator's first use without a number) up to
    k_max; then all `layers` layers are traced and `log` says why. Returns "replicated" or
    "traced"."""
    log = sys.stderr if log is None else log
    shallow, reasons = {}, []
    while replicate and layers > k + 2 and k <= k_max:
        for n in (k, k + 1, k + 2):
            if n not in shallow:
                shallow[n] = texts(at_depth(n), world, mode)
        try:
            files = replicate_mod.replicate(shallow, k, layers)
        except replicate_mod.Mismatch as e:
            reasons.append(f"from {k} and {k + 1} layers: {e}")
            k += 1
            continue
        _write_texts(files, out_dir)
        # The check sees layers up to k+2 only: say what the files assume.
        print(f"capture: layers {k + 3}..{layers} replicated from traces at {k}, {k + 1} and "
              f"{k + 2} layers (checked byte for byte against the {k + 2}-layer trace); a layer "
              f"deeper than {k + 2} that runs other code (e.g. `if i == 57:`) is not seen: "
              "capture without replication to trace every layer", file=log)
        return "replicated"
    for reason in reasons:
        print(f"capture: not replicated {reason}", file=log)
    if reasons:
        print(f"capture: tracing all {layers} layers", file=log)
    _write_texts(shallow.get(layers) or texts(at_depth(layers), world, mode), out_dir)
    return "traced"


# ---- MODULE:FACTORY -------------------------------------------------------------------------

def _check_config(factory, ref, config):
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin or C callable: let the call say
    params = list(sig.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                  inspect.Parameter.VAR_POSITIONAL)
    if not params or params[0].kind not in positional:
        raise CaptureError(f"{ref} must take the rank's TP group as its first positional "
                           "argument: def build(tp, **config)")
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    takes = [p.name for p in params[1:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = [k for k in config if k not in takes]
    if unknown:
        raise CaptureError(f"{ref} takes no config key {', '.join(map(repr, unknown))} (it "
                           f"takes: {', '.join(takes) or 'none'}); fix the --set key or add a "
                           "keyword argument to the factory")


_PLACEMENT_HELP = 'a placement is "replicate", "partial" or "shard(d)"'


def parse_placement(text, what):
    t = str(text).replace(" ", "")
    if t in ("replicate", "partial"):
        return (t,)
    if t.startswith("shard(") and t.endswith(")"):
        try:
            return ("shard", int(t[6:-1]))
        except ValueError:
            pass
    raise CaptureError(f"{what}: {text!r} is not a placement; {_PLACEMENT_HELP}")


def _as_model(result, ref):
    if isinstance(result, Model):
        m = result
    elif isinstance(result, tuple) and len(result) in (2, 3):
        m = Model(*result)
    else:
        raise CaptureError(f"{ref} returned {type(result).__name__}; return (model, inputs), "
                           "(model, inputs, plan) or gg_capture.Model(...)")
    if not isinstance(m.module, torch.nn.Module):
        raise CaptureError(f"{ref}: the model is a {type(m.module).__name__}, not a "
                           "torch.nn.Module")
    if (not isinstance(m.inputs, dict)
            or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                       for k, v in m.inputs.items())):
        raise CaptureError(f"{ref}: inputs must be a dict of name -> torch.Tensor (the "
                           "keyword arguments of forward)")
    if m.plan is not None and not isinstance(m.plan, dict):
        raise CaptureError(f"{ref}: the plan is a {type(m.plan).__name__}; give a dict of module "
                           "FQN -> ParallelStyle (ColwiseParallel(), RowwiseParallel(), ...)")
    for k in m.input_placements or {}:
        if k not in m.inputs:
            raise CaptureError(f"{ref}: input_placements names {k!r}, which is not an input "
                               f"(inputs: {', '.join(m.inputs)})")
    return m


class UserProgram(Program):
    """A Program (models/base.py) made by a user's factory; see the module docstring."""

    def __init__(self, factory, config=None, mode="fwd", ref=None):
        config = dict(config or {})
        self.ref = ref or (f"{getattr(factory, '__module__', '?')}:"
                           f"{getattr(factory, '__qualname__', '?')}")
        _check_config(factory, self.ref, config)
        self.factory, self.config, self.mode = factory, config, mode
        settings = "".join(f" {k}={v}" for k, v in config.items())
        self.name = f"{self.ref}{settings}"
        # Probe: the sequential model, so a wrong return value is reported before any tracing,
        # and the kind (tp.py layers or a DTensor plan) is known before trace_rank picks a tracer.
        probe = self._probe()
        self.dtensor = probe.plan is not None
        layers = shims.layers(probe.module) or ("gg_capture tensor-parallel layers, or a model the "
                                                "factory parallelized (DTensor or spmd_types "
                                                "placements)")
        self.plan = ("a DTensor plan applied with parallelize_module" if self.dtensor else
                     layers) + " (a user factory)"
        self._model = None

    def _probe(self):
        """The factory's S, built inside the shims of the libraries it uses (shims/); a factory
        that imports one itself (not at module level) is called again once its shims apply."""
        before = shims.loaded()
        try:
            with shims.rank(1):
                return self._call(tpmod.TP())
        except CaptureError:
            if shims.loaded() == before:
                raise
        with shims.rank(1):
            return self._call(tpmod.TP())

    def _call(self, tp):
        torch.manual_seed(0)
        try:
            result = self.factory(tp, **self.config)
        except CaptureError:
            raise
        except Exception as e:
            raise CaptureError(f"{self.ref}(tp.size={tp.size}, tp.rank={tp.rank}) raised "
                               f"{type(e).__name__}: {e}{user_frame(e)}") from e
        return _as_model(result, self.ref)

    def build(self, tp):
        m = self._model = self._call(tp)
        module = m.module
        if m.plan is not None and tp.size > 1:
            from torch.distributed.tensor.parallel import parallelize_module
            module = parallelize_module(module, tp.mesh, m.plan)
        module.register_forward_hook(self._outputs_hook)
        return module

    def _outputs_hook(self, module, args, out):
        """forward's result as the tuple trace.py expects; in joint mode the loss comes first."""
        outs = (out,) if isinstance(out, torch.Tensor) else out
        if not isinstance(outs, (tuple, list)) or not outs:
            raise CaptureError(f"{self.ref}: forward returned {type(out).__name__}; return a "
                               "tensor or a tuple of tensors")
        if self.mode == "joint" and outs[0].dim() != 0:
            raise CaptureError(f"{self.ref}: mode joint differentiates forward's first output, "
                               f"which has shape {tuple(outs[0].shape)}; return the loss (a "
                               "scalar) first")
        self._n_outputs = len(outs)
        return tuple(outs)

    def __getstate__(self):
        """The program as sent to a rank's process (trace.trace_ranks with live_collectives):
        without the model built last, which holds process groups; build() makes each anew."""
        return {**self.__dict__, "_model": None}

    def data(self, tp):
        return dict(self._model.inputs)

    def data_placement(self, name):
        given = (self._model.input_placements or {}).get(name)
        return ("replicate",) if given is None else parse_placement(given, f"input {name}")

    def output_placements(self):
        given = self._model.output_placements
        if given is None:
            return [("replicate",)] * self._n_outputs
        if len(given) != self._n_outputs:
            raise CaptureError(f"{self.ref}: output_placements has {len(given)} entries, forward "
                               f"returns {self._n_outputs} outputs")
        return [parse_placement(p, f"output #{k}") for k, p in enumerate(given)]

    def loss_context(self, tp):
        if tp.size == 1 or not self._model.loss_parallel:
            return contextlib.nullcontext()
        from torch.distributed.tensor.parallel import loss_parallel
        return loss_parallel()


def _depth(factory, config, key):
    """The layer count the capture asks for: config[key], else the factory's default for key;
    None when there is none (or it is not an int)."""
    if key in config:
        value = config[key]
    else:
        try:
            param = inspect.signature(factory).parameters.get(key)
        except (TypeError, ValueError):
            param = None
        value = None if param is None else param.default
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def capture(factory, tp=2, mode="fwd", out_dir=None, replicate=False, layers_key="layers",
            log=None, **config):
    """Capture a user's program: seq.json, dist.json and spec.rel into out_dir.

    factory: a callable (see the module docstring) or its 'MODULE:FACTORY' name; tp: the TP
    degree of D; mode: "fwd" or "joint"; config: keyword arguments for the factory. Returns the
    paths written, {"seq": ..., "dist": ..., "spec": ...}. Raises CaptureError on bad input.
    With replicate (off by default: it assumes that layers deeper than the traced ones run the
    same code) and a factory taking the config key layers_key (the layer count; default
    "layers"), a deep program is traced at a few depths and its layers replicated (write_deep,
    replicate.py), byte-identical to a full trace at the deepest traced depth or not used;
    `log` says which and what it assumes."""
    if mode not in ("fwd", "joint"):
        raise CaptureError(f"mode {mode!r}: use 'fwd' (forward) or 'joint' (forward+backward)")
    if not isinstance(tp, int) or tp < 1:
        raise CaptureError(f"tp {tp!r}: the TP degree is a positive integer")
    if out_dir is None:
        raise CaptureError("out_dir is required: the directory for seq.json, dist.json, spec.rel")
    ref = None
    if isinstance(factory, str):
        ref, factory = factory, load_factory(factory)
    elif not callable(factory):
        raise CaptureError(f"factory is a {type(factory).__name__}: give a callable or "
                           "'MODULE:FACTORY'")
    program = UserProgram(factory, config, mode, ref)
    depth = _depth(factory, config, layers_key) if replicate and layers_key else None
    if depth is None:
        write(program, tp, mode, out_dir)
    else:
        def at_depth(n):
            if n == depth:
                return program
            shallow = UserProgram(factory, {**config, layers_key: n}, mode, ref)
            shallow.name = program.name  # the title a full trace writes
            return shallow
        write_deep(at_depth, depth, tp, mode, out_dir, log=log)
    return {k: os.path.join(out_dir, f) for k, f in
            (("seq", "seq.json"), ("dist", "dist.json"), ("spec", "spec.rel"))}
