"""JAX capture: a jitted JAX function as XLA HLO text, sequential and SPMD-partitioned.

  graphguard-capture jax MODULE:FACTORY --mesh AXIS=SIZE [--mesh AXIS=SIZE ...] [--grad]
                         [--set KEY=VALUE ...] -o DIR
  python -m gg_capture.jax_capture ...   (the same arguments)

The factory contract (MODULE a dotted module name or a .py file, as for the torch capture):

    def build(mesh, **config):
        ...
        return fn, args, in_specs, out_specs     # or gg_capture.jax_capture.JaxProgram(...)

  mesh       a jax.sharding.Mesh with the --mesh axes: their sizes for D, every size 1 (one CPU
             device) for S. A shard_map program uses this mesh, so S runs the same code with
             every collective over one device.
  fn         a function of positional arrays returning an array or a tuple of arrays.
  args       example arguments (arrays or jax.ShapeDtypeStruct), their global shapes.
  in_specs   one jax.sharding.PartitionSpec per argument; out_specs: one per output (or one).
  rules      (JaxProgram only, optional) {argument index: relation rule}: written instead of the
             rule the PartitionSpec gives, for an argument S and D read differently (a fused
             weight whose per-rank blocks interleave pieces, docs/relations.md's concat rules).

Writes DIR/seq.hlo (S: jax.jit(fn) on one device, as jax lowers it), DIR/dist.hlo (D: the
module right after XLA's SPMD partitioner, the program of every device; partition id = rank =
the device's place in the mesh) and DIR/spec.rel (the relation spec from the PartitionSpecs: an
argument sharded on dim d is the concat of the ranks' parameters on d, a replicated one equals
each rank's; outputs alike). --grad captures jax.grad of the sum of the first output with
respect to every argument instead (the gradients sharded as their arguments). The HLO keeps
jax's source metadata (file and line per instruction). Devices are XLA's CPU host devices
(XLA_FLAGS=--xla_force_host_platform_device_count=N, set here before jax is imported). With one
mesh axis of size > 1 the spec uses the shard/replicate shorthands over D's ranks; with more, a
`mesh` statement (D's ranks = the mesh's devices, row-major) and one placements(...) rule per
argument and output, one placement per mesh axis. Exit status: 0 written, 2 a problem in the
input (the message says what and what to do).
"""
import argparse
import dataclasses
import glob
import math
import os
import re
import sys
import tempfile
import time
import traceback


@dataclasses.dataclass
class JaxProgram:
    fn: object
    args: tuple
    in_specs: tuple
    out_specs: object
    # argument index -> a relation rule written in spec.rel instead of the one its PartitionSpec
    # gives, for an argument the function reads differently in S and in D (a fused weight
    # whose per-rank block interleaves pieces: transformers-neuronx's QKV). Not used by --grad.
    rules: dict = None


class JaxCaptureError(ValueError):
    """A problem in what the user gave: the message says what and what to do."""


def parse_mesh(items):
    """['tp=2', 'dp=1'] -> [('tp', 2), ('dp', 1)] (mesh axes in order)."""
    axes = []
    for item in items:
        name, sep, size = item.partition("=")
        if not sep or not name.isidentifier() or not size.isdigit() or int(size) < 1:
            raise JaxCaptureError(f"--mesh {item!r}: write AXIS=SIZE, e.g. --mesh tp=2")
        if name in (a for a, _ in axes):
            raise JaxCaptureError(f"--mesh {item!r}: axis {name!r} is given twice")
        axes.append((name, int(size)))
    if not axes:
        raise JaxCaptureError("no mesh: give at least one --mesh AXIS=SIZE, e.g. --mesh tp=2")
    return axes


def _set_host_devices(count):
    """XLA CPU host devices, before jax is imported (XLA reads XLA_FLAGS once)."""
    if "jax" in sys.modules:
        import jax
        if len(jax.devices()) < count:
            raise JaxCaptureError(f"jax was imported before the capture with "
                                  f"{len(jax.devices())} devices; {count} are needed")
        return
    flags = re.sub(r"--xla_force_host_platform_device_count=\S+", "",
                   os.environ.get("XLA_FLAGS", ""))
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={count}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")


def _as_program(value, ref):
    if isinstance(value, JaxProgram):
        return value
    if isinstance(value, tuple) and len(value) == 4:
        return JaxProgram(*value)
    raise JaxCaptureError(f"{ref} returned {type(value).__name__}; return (fn, args, in_specs, "
                          "out_specs) or gg_capture.jax_capture.JaxProgram(...)")


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _with_grad(program):
    """jax.grad of the sum of the first output with respect to every argument."""
    import jax
    import jax.numpy as jnp
    fn, n = program.fn, len(program.args)

    def loss(*args):
        return jnp.sum(_as_tuple(fn(*args))[0])

    if program.rules:
        raise JaxCaptureError("--grad of a program with spec rules of its own (rules=...) is not "
                              "supported: its gradients' relations are not derived")
    return JaxProgram(jax.grad(loss, argnums=tuple(range(n))), program.args,
                      program.in_specs, tuple(program.in_specs))


def _build(factory, ref, mesh, config, grad):
    program = _as_program(factory(mesh, **config), ref)
    program.args = _as_tuple(program.args)
    program.in_specs = _as_tuple(program.in_specs)
    if len(program.in_specs) != len(program.args):
        raise JaxCaptureError(f"{ref}: {len(program.in_specs)} in_specs for "
                              f"{len(program.args)} arguments; give one PartitionSpec each")
    return _with_grad(program) if grad else program


def _jit(program, mesh):
    import jax
    from jax.sharding import NamedSharding
    outs = program.out_specs
    out_shardings = (tuple(NamedSharding(mesh, s) for s in outs) if isinstance(outs, (tuple, list))
                     else NamedSharding(mesh, outs))
    in_shardings = tuple(NamedSharding(mesh, s) for s in program.in_specs)
    # keep_unused: every argument stays a parameter, so S, D and the spec line up
    return jax.jit(program.fn, keep_unused=True, in_shardings=in_shardings,
                   out_shardings=out_shardings)


def _partitioned_text(lowered, dump_dir):
    """The module right after XLA's SPMD partitioner (a dump of the compile)."""
    lowered.compile(compiler_options={"xla_dump_to": dump_dir,
                                      "xla_dump_hlo_pass_re": "spmd-partitioning"})
    files = sorted(glob.glob(os.path.join(dump_dir, "*after_spmd-partitioning*.txt")))
    if not files:
        raise JaxCaptureError("XLA ran no SPMD partitioner (a mesh of one device?); give a "
                              "--mesh axis of size 2 or more")
    with open(files[-1]) as f:
        return f.read()


_PARAM = re.compile(r'^\s*%?([\w.\-]+) = \S+ parameter\((\d+)\)(.*)$')


def entry_parameters(text):
    """[(GraphGuard name, op_name)] of the ENTRY parameters in number order."""
    entry = text[text.index("\nENTRY"):] if "\nENTRY" in text else text
    params = {}
    for line in entry.splitlines()[1:]:
        if line.startswith("}"):
            break
        m = _PARAM.match(line)
        if m:
            op_name = re.search(r'op_name="([^"]*)"', m.group(3))
            # hlo_reader's node name: non-alphanumerics as '_', no leading digit
            name = re.sub(r"[^A-Za-z0-9]", "_", m.group(1))
            if not name or name[0].isdigit():
                name = "_" + name
            params[int(m.group(2))] = (name, op_name.group(1) if op_name else "")
    return [params[k] for k in sorted(params)]


def _rule(spec, shape, axis, size, what):
    """The shorthand for one PartitionSpec over the mesh whose one axis `axis` has `size` > 1."""
    entries = tuple(spec) + (None,) * (len(shape) - len(tuple(spec)))
    dims = [d for d, e in enumerate(entries) if e is not None and axis in _as_tuple(e)]
    if not dims:
        return "replicate"
    if len(dims) > 1:
        raise JaxCaptureError(f"{what}: {spec} shards dims {dims} on axis {axis!r}; one dim only")
    d = dims[0]
    if shape[d] % size:
        raise JaxCaptureError(f"{what}: dim {d} of size {shape[d]} is not a multiple of the "
                              f"{size} devices of axis {axis!r} (XLA would pad the shards)")
    return f"shard({d})"


def _placements(spec, shape, mesh_axes, what):
    """One PartitionSpec as the spec language's placements(...) over the whole mesh: per mesh
    axis, shard(d) where the axis splits dim d, else replicate."""
    entries = tuple(spec) + (None,) * (len(shape) - len(tuple(spec)))
    order = [a for a, _ in mesh_axes]
    sizes = dict(mesh_axes)
    placement = {a: "replicate" for a in order}
    for d, entry in enumerate(entries):
        axes = [a for a in _as_tuple(entry) if a is not None]
        if [a for a in order if a in axes] != axes:
            raise JaxCaptureError(f"{what}: {spec} splits dim {d} over {tuple(axes)}, not in the "
                                  f"mesh's axis order {tuple(order)}; the spec writer (DTensor "
                                  "placements) takes the earlier mesh axis as the major one")
        for a in axes:
            if a not in sizes:
                raise JaxCaptureError(f"{what}: {spec} names axis {a!r}, not a mesh axis")
            placement[a] = f"shard({d})"
        if shape[d] % math.prod(sizes[a] for a in axes):
            raise JaxCaptureError(f"{what}: dim {d} of size {shape[d]} is not a multiple of the "
                                  f"{math.prod(sizes[a] for a in axes)} devices of {tuple(axes)} "
                                  "(XLA would pad the shards)")
    return "placements(" + ", ".join(placement[a] for a in order) + ")"


def _big_axes(mesh_axes):
    """The mesh axes of size > 1; a mesh of one device (no SPMD partitioning) is refused."""
    big = [(a, n) for a, n in mesh_axes if n > 1]
    if not big:
        raise JaxCaptureError(f"mesh {dict(mesh_axes)} has one device; give a --mesh axis of "
                              "size 2 or more")
    return big


def write_spec(program, mesh_axes, s_text, d_text, out_shapes):
    """The relation spec: with one mesh axis of size > 1 in the shard/replicate shorthands, with
    more as a `mesh` statement and placements(...) rules (docs/relations.md)."""
    big = _big_axes(mesh_axes)
    s_params, d_params = entry_parameters(s_text), entry_parameters(d_text)
    n = len(program.args)
    if len(s_params) != n or len(d_params) != n:
        raise JaxCaptureError(f"the modules have {len(s_params)} (S) and {len(d_params)} (D) "
                              f"parameters for {n} arguments (an argument XLA dropped?)")
    fqns = [p[1] for p in s_params]
    by_fqn = (fqns == [p[1] for p in d_params] and all(fqns) and len(set(fqns)) == n
              and all('"' not in f for f in fqns))
    if len(big) == 1:
        axis, size = big[0]
        lines = [f"// graphguard-capture jax: mesh {dict(mesh_axes)}; D ranks = devices along "
                 f"{axis!r}"]

        def rule_of(spec, shape, what):
            return _rule(spec, shape, axis, size, what)
    else:
        lines = [f"// graphguard-capture jax: mesh {dict(mesh_axes)}; D ranks = the devices of "
                 "the mesh, row-major (the last axis varies fastest)",
                 "mesh " + ", ".join(f"{a} = {k}" for a, k in mesh_axes)]

        def rule_of(spec, shape, what):
            return _placements(spec, shape, mesh_axes, what)
    lines.append("// inputs named by jax's argument names (the parameters' FQNs)" if by_fqn
                 else "// inputs by position; D's parameters named as the reader names")
    for k, (arg, spec) in enumerate(zip(program.args, program.in_specs)):
        what = f"argument {k} ({fqns[k] or 'unnamed'})"
        own = (program.rules or {}).get(k)
        rule = own if own else rule_of(spec, tuple(arg.shape), what)
        if own:
            lines.append("// the factory's own rule (its PartitionSpec would say " +
                         rule_of(spec, tuple(arg.shape), what) + ")")
        if own and not by_fqn:
            lines.append(f"input #{k} = {rule}")
            continue
        if by_fqn:
            lines.append(f'input "{fqns[k]}" = {rule}')
        else:
            d_name = d_params[k][0]
            # the rule's D family as its last argument: replicate(D.x), shard(1, D.x), ...
            rule = (rule[:-1] + f", D.{d_name})" if rule.endswith(")")
                    else f"{rule}(D.{d_name})")
            lines.append(f"input #{k} = {rule}")
    outs = program.out_specs
    out_specs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,) * len(out_shapes)
    for k, (shape, spec) in enumerate(zip(out_shapes, out_specs)):
        lines.append(f"output #{k} = {rule_of(spec, shape, f'output {k}')}")
    return "\n".join(lines) + "\n"


def capture(ref, mesh_axes, out_dir, grad=False, **config):
    """Writes out_dir/seq.hlo, dist.hlo and spec.rel; returns their paths."""
    from .factory import CaptureError, load_factory
    _big_axes(mesh_axes)  # refused before any compile
    _set_host_devices(math.prod(n for _, n in mesh_axes))
    try:
        import jax
        import numpy as np
        from jax.sharding import Mesh
    except ImportError as e:
        raise JaxCaptureError(f"jax is not installed ({e}); scripts/setup.sh installs the pinned "
                              "jax and jaxlib into .venv") from None
    try:
        factory = load_factory(ref)
    except CaptureError as e:
        raise JaxCaptureError(str(e)) from None
    names = tuple(a for a, _ in mesh_axes)
    sizes = tuple(n for _, n in mesh_axes)
    devices = jax.devices()
    d_mesh = Mesh(np.array(devices[:math.prod(sizes)]).reshape(sizes), names)
    s_mesh = Mesh(np.array(devices[:1]).reshape((1,) * len(sizes)), names)

    s_prog = _build(factory, ref, s_mesh, config, grad)
    s_lowered = _jit(s_prog, s_mesh).lower(*s_prog.args)
    s_text = s_lowered.as_text(dialect="hlo", debug_info=True)
    out_shapes = [tuple(o.shape) for o in jax.tree_util.tree_leaves(s_lowered.out_info)]

    d_prog = _build(factory, ref, d_mesh, config, grad)
    with tempfile.TemporaryDirectory(prefix="gg_jax_dump_") as dump_dir:
        d_text = _partitioned_text(_jit(d_prog, d_mesh).lower(*d_prog.args), dump_dir)

    spec_text = write_spec(d_prog, mesh_axes, s_text, d_text, out_shapes)
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, text in (("seq.hlo", s_text), ("dist.hlo", d_text), ("spec.rel", spec_text)):
        paths[name] = os.path.join(out_dir, name)
        with open(paths[name], "w") as f:
            f.write(text)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(prog="graphguard-capture jax", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factory", metavar="MODULE:FACTORY")
    ap.add_argument("--mesh", action="append", default=[], metavar="AXIS=SIZE",
                    help="a mesh axis of D, in order (repeat for more axes)")
    ap.add_argument("--grad", action="store_true",
                    help="capture jax.grad of the sum of the first output instead")
    ap.add_argument("--set", dest="sets", nargs="+", action="extend", default=[],
                    metavar="KEY=VALUE", help="factory keyword arguments")
    ap.add_argument("-o", "--out", required=True, metavar="DIR")
    ap.add_argument("--traceback", action="store_true", help="print Python's traceback on errors")
    a = ap.parse_args(argv)
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    start = time.time()
    try:
        from .factory import CaptureError, parse_sets
        axes = parse_mesh(a.mesh)
        try:
            config = parse_sets(a.sets)
        except CaptureError as e:
            raise JaxCaptureError(str(e)) from None
        capture(a.factory, axes, a.out, grad=a.grad, **config)
    except JaxCaptureError as e:
        if a.traceback:
            traceback.print_exc()
        print(f"graphguard-capture jax: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the user's function does something jax or XLA refuses
        if a.traceback:
            traceback.print_exc()
        print(f"graphguard-capture jax: capturing {a.factory} failed: {type(e).__name__}: {e}; "
              "--traceback shows where", file=sys.stderr)
        return 2
    print(f"graphguard-capture jax: {a.factory} mesh {dict(axes)}{' grad' if a.grad else ''} -> "
          f"{a.out} (seq.hlo, dist.hlo, spec.rel; {time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
