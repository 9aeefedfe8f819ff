#!/usr/bin/env bash
# capture_value_graph: trace.value_graph turns a traced graph into the value graph GraphGuard reads
# (scripts/capture/gg_capture/trace.py), on small make_fx traces:
#   1. an in-place write into a fresh buffer (spmd_types' `out = empty(); all_gather_into_tensor(
#      out, x)`, here copy_) becomes a value, and a view of the buffer taken after the write reads
#      the written value;
#   2. a view taken before the write and read after it would observe the write: refused;
#   2b. a write into a view (its base read after it must see it) is refused by the rewrite and,
#      with the example inputs, functionalized: the value graph computes what the program does;
#   3. a runtime assertion (torch._assert_async, torchtitan's RoPE position check) is dropped with
#      the computation only it reads;
#   4. shims/functional_dist.py's all_reduce writes the functional collective's value in place,
#      and like torch.distributed.all_reduce passes a gradient through unreduced (a joint trace
#      holds the forward's all_reduce only).
# Laptop mode (no .venv with torch) skips, and says so.
set -euo pipefail
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_value_graph: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
PYTHONPATH=$ROOT/scripts/capture "$PY" - <<'PYEOF'
import torch
import torch.distributed as dist
from torch.fx.experimental.proxy_tensor import make_fx

from gg_capture import fakedist, trace
from gg_capture.shims import functional_dist


def ops(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def write_then_view(x):
    out = torch.empty(4)
    out.copy_(x * 2)
    return out.view(2, 2) + 1


gm = make_fx(write_then_view)(torch.randn(4))
trace.value_graph(gm)
assert not any(o.endswith("copy_.default") for o in ops(gm)), ops(gm)
x = torch.randn(4)
assert torch.equal(gm(x), (x * 2).view(2, 2) + 1)


def view_then_write(x):
    out = torch.empty(4)
    v = out.view(2, 2)
    out.copy_(x)
    return v + 1


gm = make_fx(view_then_write)(torch.randn(4))
try:
    trace.value_graph(gm)
    raise AssertionError("a view read after the write was rewritten")
except ValueError as e:
    assert "a view read after the write" in str(e), e


def write_into_view(x):
    y = x * 1.0
    y.view(4).add_(1.0)  # y, read below, must see the write
    return y * 2


x = torch.randn(2, 2)
gm = make_fx(write_into_view)(x)
try:
    trace.value_graph(gm)
    raise AssertionError("a write into a view was rewritten as if its base did not see it")
except ValueError as e:
    assert "a view" in str(e), e
gm = trace.value_graph(make_fx(write_into_view)(x), [x])
assert torch.equal(gm(x), write_into_view(x.clone())), (gm(x), write_into_view(x.clone()))


def asserted(x):
    torch._assert_async(torch.all(x.abs() >= 0), "never fails")
    return x + 1


gm = make_fx(asserted)(torch.randn(3))
trace.value_graph(gm)
assert ops(gm) == ["aten.add.Tensor"], ops(gm)

with fakedist.fake_world(2, 0):
    def reduced(x):
        y = x.clone()
        functional_dist.all_reduce(y, group=dist.group.WORLD)
        return y * 2

    gm = make_fx(reduced)(torch.randn(3))
    trace.value_graph(gm)
    names = ops(gm)
    assert "_c10d_functional.all_reduce.default" in names and not any(
        o.endswith("_") or o.endswith("_.default") for o in names), names

    def reduced_grad(x):
        x = x.detach().requires_grad_()
        y = x * 2
        functional_dist.all_reduce(y, group=dist.group.WORLD)
        return torch.autograd.grad((y * 3).sum(), x)

    names = ops(make_fx(reduced_grad)(torch.randn(3)))
    assert names.count("_c10d_functional.all_reduce.default") == 1, names
print("capture_value_graph: in-place writes as values, early views and writes into views refused "
      "(functionalized with example inputs), assertions dropped, all_reduce's gradient unreduced")
PYEOF
