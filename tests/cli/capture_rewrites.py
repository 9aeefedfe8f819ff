"""Numeric self-tests of gg_capture's graph rewrites (trace.py), run by capture_rewrites.sh.

1. plain_strided_views: as_strided / as_strided_scatter of contiguous tensors with geometries that
   are plain views (row-major, a dim order permuted, a sub-range at an offset, size-1 dims with any
   stride) are rewritten without as_strided, and the rewritten graph computes what the original
   does on random inputs; geometries that are not plain views (overlapping, gapped) and inputs that
   are not contiguous are left as they are.
2. _value_graph: graphs with in-place writes. Writes into graph-internal tensors no view observes
   take out_of_place's path; writes through a view (`x.view(-1, n)[rows, cols] -= u`, then a
   `mul_` of the base: megatron-core's cross-entropy backward) are functionalized. Either way no
   write is left and the values are those of eager PyTorch.
"""
import itertools

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from gg_capture import trace

aten = torch.ops.aten
WRITES = ("_", "out")


def has_strided(gm):
    return any(n.target in (aten.as_strided.default, aten.as_strided_scatter.default)
               for n in gm.graph.nodes)


def check_strided(fn, inputs, expect_rewrite):
    gm = make_fx(fn)(*inputs)
    assert has_strided(gm), "the test graph should hold as_strided"
    want = gm(*inputs)
    trace.plain_strided_views(gm)
    got = gm(*inputs)
    assert has_strided(gm) != expect_rewrite, (fn.__name__, gm.graph)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        assert torch.equal(w, g), (fn.__name__, w, g)
    return gm


def strided_cases():
    x = torch.randn(4, 6, 5)
    flat = torch.randn(130)
    src = torch.randn(5, 4, 6)
    # (name, function, inputs, rewritten)
    yield "row-major", lambda t: aten.as_strided(t, [6, 20], [20, 1], 0), [x], True
    yield "permuted", lambda t: aten.as_strided(t, [5, 4, 6], [1, 30, 5], 0), [x], True
    yield "offset range", lambda t: aten.as_strided(t, [3, 7], [7, 1], 9), [flat], True
    yield "size-1 dims", lambda t: aten.as_strided(t, [1, 4, 1, 30], [999, 30, 7, 1], 0), [x], True
    yield "overlapping", lambda t: aten.as_strided(t, [4, 6], [1, 1], 0), [flat], False
    yield "gapped", lambda t: aten.as_strided(t, [4, 6], [12, 2], 0), [flat], False
    yield ("not contiguous", lambda t: aten.as_strided(t.transpose(0, 1), [120], [1], 0), [x],
           False)
    yield ("scatter whole", lambda b, s: aten.as_strided_scatter(b, s, [5, 4, 6], [1, 30, 5], 0),
           [x, src], True)
    yield ("scatter range", lambda b, s: aten.as_strided_scatter(b, s, [2, 6], [6, 1], 17),
           [flat, torch.randn(2, 6)], True)
    yield ("scatter size-1", lambda b, s: aten.as_strided_scatter(b, s, [1, 4, 30], [7, 30, 1], 0),
           [x, torch.randn(1, 4, 30)], True)
    yield ("scatter overlapping", lambda b, s: aten.as_strided_scatter(b, s, [3, 4], [1, 1], 0),
           [flat, torch.randn(3, 4)], False)


def megatron_like_backward(logits, target, grad):
    """A vocab-parallel cross-entropy backward as megatron-core writes it: in-place writes into a
    view of the softmax, then into the softmax itself."""
    softmax = torch.softmax(logits, -1)
    grad_2d = softmax.view(-1, softmax.shape[-1])
    rows = torch.arange(grad_2d.shape[0])
    grad_2d[rows, target.view(-1)] -= 1.0 - (target.view(-1) < 0).float()
    softmax.mul_(grad.unsqueeze(-1))
    return (softmax,)


def internal_write(x):
    """A write into a graph-internal tensor that no view observes: out_of_place's case."""
    y = x * 2
    y.div_(3)
    return (y + 1,)


def check_value_graph(fn, inputs, functionalized):
    gm = make_fx(fn)(*inputs)
    assert any(trace._writes(n) for n in gm.graph.nodes), "the test graph should write in place"
    out = trace.value_graph(gm, inputs)
    assert not any(trace._writes(n) for n in out.graph.nodes), out.graph
    assert (out is not gm) == functionalized, (fn.__name__, "functionalized" if out is not gm
                                               else "rewritten by out_of_place")
    for w, g in zip(fn(*[i.clone() for i in inputs]), out(*inputs)):
        assert torch.allclose(w, g), (fn.__name__, w, g)


def main():
    torch.manual_seed(0)
    n = 0
    for name, fn, inputs, rewritten in strided_cases():
        fn.__name__ = name
        check_strided(fn, inputs, rewritten)
        n += 1
    for s, v in itertools.product((3, 4), (5, 7)):
        check_value_graph(megatron_like_backward, [torch.randn(s, 1, v),
                                                   torch.randint(0, v, (s, 1)),
                                                   torch.randn(s, 1)], functionalized=True)
        n += 1
    check_value_graph(internal_write, [torch.randn(3, 4)], functionalized=False)
    n += 1
    print(f"capture_rewrites: {n} cases: plain strided views rewritten exactly (others left), "
          "in-place writes made values (out_of_place or functionalized) exactly")


if __name__ == "__main__":
    main()
