"""The MODULE:FACTORY reference and --set values of graphguard-capture, for the torch and the JAX
capture alike: no framework is imported here, so `graphguard-capture jax` runs without torch."""
import importlib
import importlib.util
import os
import sys
import traceback


class CaptureError(ValueError):
    """A problem in what the user gave: the message says what and what to do."""


def user_frame(exc):
    """file:line of the innermost frame of the exception outside torch and gg_capture."""
    skip = [os.path.dirname(os.path.abspath(__file__)), "<frozen"]
    for framework in ("torch", "jax", "jaxlib"):  # their internals, where they are loaded
        module = sys.modules.get(framework)
        if getattr(module, "__file__", None):
            skip.append(os.path.dirname(module.__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(tuple(skip))]
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def load_factory(ref):
    """The callable named by 'MODULE:FACTORY' (MODULE a dotted module name or a .py file)."""
    module_name, sep, attr = ref.rpartition(":")
    if not sep or not module_name or not attr:
        raise CaptureError(f"{ref!r} is not MODULE:FACTORY; name the module and the factory "
                           "function, e.g. mypkg.model:build or path/to/model.py:build")
    try:
        if module_name.endswith(".py"):
            if not os.path.isfile(module_name):
                raise CaptureError(f"no such file {module_name!r}; give the path of the .py file "
                                   "that defines the factory")
            name = os.path.splitext(os.path.basename(module_name))[0]
            loader_spec = importlib.util.spec_from_file_location(name, module_name)
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except CaptureError:
        raise
    except ModuleNotFoundError as e:
        missing = e.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            raise CaptureError(
                f"cannot import module {module_name!r}: {e}; run from the directory that holds "
                f"it, add that directory to PYTHONPATH, or pip install your package") from None
        raise CaptureError(f"importing {module_name!r} failed: {e}{user_frame(e)}; install "
                           f"{missing!r} into this Python environment") from None
    except Exception as e:  # the user's module raised while being imported
        raise CaptureError(f"importing {module_name!r} failed: {type(e).__name__}: {e}"
                           f"{user_frame(e)}") from None
    if not hasattr(module, attr):
        callables = sorted(n for n, v in vars(module).items()
                           if callable(v) and not n.startswith("_")
                           and getattr(v, "__module__", None) == module.__name__)
        raise CaptureError(f"module {module_name!r} has no attribute {attr!r} (its callables: "
                           f"{', '.join(callables) or 'none'}); name the factory that builds "
                           "the model")
    factory = getattr(module, attr)
    if not callable(factory):
        raise CaptureError(f"{ref} is not callable (type {type(factory).__name__}); name a "
                           "function build(tp, **config) that returns (model, inputs)")
    return factory


def parse_value(text):
    """A --set value: int, float, bool (true/false), else the string itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_sets(items):
    config = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise CaptureError(f"--set {item!r} is not KEY=VALUE (e.g. --set layers=2 "
                               "hidden=64)")
        config[key] = parse_value(value)
    return config
