"""Names of the programs capture.py knows (corpus models and bug-benchmark cases)."""
from .models import megatron_gpt

_PROGRAMS = {
    "megatron_gpt": lambda: megatron_gpt.MegatronGPT(),
    "megatron_gpt_sp": lambda: megatron_gpt.MegatronGPT(sp=True),
}


# The models of tests/corpus (make_corpus.py), in order.
CORPUS = ["megatron_gpt", "megatron_gpt_sp"]


def names():
    return sorted(_PROGRAMS)


def make(name):
    if name not in _PROGRAMS:
        raise SystemExit(f"capture: unknown model {name!r} (known: {', '.join(names())})")
    return _PROGRAMS[name]()
