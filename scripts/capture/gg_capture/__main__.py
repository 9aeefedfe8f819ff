"""graphguard-capture / python -m gg_capture: capture a user's own program, no project edit.

  graphguard-capture MODULE:FACTORY [--tp N] [--mode fwd|joint] [--set KEY=VALUE ...]
                     [--replicate-layers [--layers-key KEY]] -o DIR
  graphguard-capture jax MODULE:FACTORY --mesh AXIS=SIZE ... -o DIR   (a JAX program as HLO:
                     gg_capture/jax_capture.py)

MODULE is a dotted module name importable from the current directory (or PYTHONPATH, or an
installed package) or a path to a .py file; FACTORY builds the model of one rank: the contract is
in gg_capture/api.py's docstring (def build(tp, **config) -> (model, inputs[, plan])). Writes
DIR/seq.json (S), DIR/dist.json (every rank of D) and DIR/spec.rel (the relation spec), the inputs
of `graphguard verify --seq DIR/seq.json --dist DIR/dist.json --relations DIR/spec.rel`.
--set values are parsed as int, float, bool (true/false) or string. Every layer is traced unless
--replicate-layers: then a deep program (the factory's `layers`, or --layers-key, over 4) is
traced at a few depths and its layer block replicated, only where that reproduces a real trace
one layer deeper byte for byte (gg_capture/replicate.py; else every layer is traced and stderr
says why). Replication assumes the deeper layers run the same code as the traced ones (a layer
that differs only deep in the stack is not seen); stderr says so when it is used.
Exit status: 0 written, 2 a problem in the input (the message says what and what to do;
--traceback shows Python's).
"""
import argparse
import os
import sys
import time
import traceback


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["jax"]:  # graphguard-capture jax ...: a JAX program (gg_capture/jax_capture.py)
        from . import jax_capture
        return jax_capture.main(args[1:])
    ap = argparse.ArgumentParser(prog="graphguard-capture", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factory", metavar="MODULE:FACTORY")
    ap.add_argument("--tp", type=int, default=2, help="TP degree of D (default 2)")
    ap.add_argument("--mode", choices=["fwd", "joint"], default="fwd",
                    help="forward, or joint forward+backward (default fwd)")
    ap.add_argument("--set", dest="sets", nargs="+", action="extend", default=[],
                    metavar="KEY=VALUE", help="factory keyword arguments (config overrides)")
    ap.add_argument("--replicate-layers", action="store_true",
                    help="fast capture of a deep program: trace it at 2-6 layers and replicate "
                    "its layer block, checked byte for byte against a trace one layer deeper "
                    "(else all are traced); assumes deeper layers run the same code")
    ap.add_argument("--layers-key", default="layers", metavar="KEY",
                    help="the factory's layer-count keyword for --replicate-layers (default "
                    "layers)")
    ap.add_argument("-o", "--out", required=True, metavar="DIR")
    ap.add_argument("--traceback", action="store_true",
                    help="print Python's traceback on an error")
    a = ap.parse_args(argv)  # argparse: usage errors exit 2
    if a.tp < 1:
        ap.error(f"--tp {a.tp}: the TP degree is a positive integer")
    # python -m puts the current directory on sys.path; the console script does not
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        from . import api
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        print("graphguard-capture: the PyTorch capture needs torch, which this Python cannot "
              "import; pip install 'graphguard-capture[torch]' (or torch), or run "
              "scripts/setup.sh; `graphguard-capture jax ...` needs only jax", file=sys.stderr)
        return 2
    start = time.time()
    try:
        api.capture(a.factory, tp=a.tp, mode=a.mode, out_dir=a.out,
                    replicate=a.replicate_layers, layers_key=a.layers_key,
                    **api.parse_sets(a.sets))
    except api.CaptureError as e:
        if a.traceback:
            traceback.print_exc()
        print(f"graphguard-capture: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # the model does something the tracer cannot capture
        if a.traceback:
            traceback.print_exc()
        print(f"graphguard-capture: tracing {a.factory} (--tp {a.tp} --mode {a.mode}) failed: "
              f"{type(e).__name__}: {e}{api.user_frame(e)}; --traceback shows where",
              file=sys.stderr)
        return 2
    print(f"graphguard-capture: {a.factory} tp={a.tp} {a.mode} -> {a.out} "
          f"(seq.json, dist.json, spec.rel; {time.time() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
