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
3. fsdp2.value_graph: torch's fully_shard (per layer and the root, DP 2 on the fake group, one
   rank) traced forward and backward; afterwards no fsdp.* or c10d.* operator and no graph
   constant is left, the parameters are the graph's inputs (one per parameter, its local rows)
   and the collectives are funcol all_gather_into_tensor / reduce_scatter_tensor. A read of a
   flat buffer before the collective that fills it, and an asynchronous in-place collective, are
   refused. (Their values are checked by graphguard check on tests/dp's fully_shard cases: the
   fake group does not communicate.)
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


def fully_shard_graph(joint):
    """(make_fx graph of a two-layer fully_shard model on rank 0 of DP 2, parameter count)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    from gg_capture import fsdp2
    mesh = init_device_mesh("cpu", (2,))
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 5))
    fully_shard(model[0], mesh=mesh)
    fully_shard(model[2], mesh=mesh)
    fully_shard(model, mesh=mesh)
    fsdp2.lazy_init(model)
    params = fsdp2.fsdp_params(model)

    def step(*flat):
        fsdp2.hold(params, flat[:-1])
        loss = model(flat[-1]).square().mean()
        if not joint:
            return (loss,)
        loss.backward()
        return (loss, *[fp.sharded_param.grad.to_local() for fp in params])

    args = [fsdp2.local_shard(fp) for fp in params] + [torch.randn(3, 6)]
    with fsdp2.traceable_unsharded_params():
        gm = make_fx(step)(*args)
    return gm, len(params), fsdp2.divide_factors(model)


def check_fully_shard():
    import torch.distributed as dist

    from gg_capture import fakedist, fsdp2
    count = 0
    for joint in (False, True):
        with fakedist.fake_world(2, 0):
            gm, n_params, factors = fully_shard_graph(joint)
            fsdp2.value_graph(gm, factors)
        namespaces = {getattr(n.target, "namespace", None) for n in gm.graph.nodes
                      if n.op == "call_function"}
        assert not namespaces & {"fsdp", "c10d"}, gm.graph
        assert not [n for n in gm.graph.nodes if n.op == "get_attr"], gm.graph
        assert len([n for n in gm.graph.nodes if n.op == "placeholder"]) == n_params + 1
        targets = {n.target for n in gm.graph.nodes}
        assert torch.ops._c10d_functional.all_gather_into_tensor.default in targets
        assert (torch.ops._c10d_functional.reduce_scatter_tensor.default in targets) == joint
        count += 1
    c10d = torch.ops.c10d
    for tamper, message in (("read_before", "before the collective"),
                            ("async", "asynchronous")):
        with fakedist.fake_world(2, 0):
            gm, _, factors = fully_shard_graph(False)
            gather = next(n for n in gm.graph.nodes if n.target is c10d._allgather_base_.default)
            if tamper == "async":
                gather.args = gather.args[:3] + (True,) + gather.args[4:]
            else:  # the copy-in's flat output buffer read before the all-gather fills it
                buffer = next(n for n in gm.graph.nodes
                              if n.target is torch.ops.fsdp.all_gather_copy_in.default).args[1]
                with gm.graph.inserting_before(gather):
                    gm.graph.call_function(aten.clone.default, (buffer,))
            try:
                fsdp2.value_graph(gm, factors)
            except ValueError as e:
                assert message in str(e), (tamper, e)
            else:
                raise AssertionError(f"fsdp2.value_graph accepted a graph with {tamper}")
        count += 1
    assert not dist.is_initialized()
    return count


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
    n += check_fully_shard()
    print(f"capture_rewrites: {n} cases: plain strided views rewritten exactly (others left), "
          "in-place writes made values (out_of_place or functionalized) exactly, fully_shard's "
          "buffers and in-place collectives made values (bad reads refused)")


if __name__ == "__main__":
    main()
