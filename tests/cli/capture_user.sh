#!/usr/bin/env bash
# capture_user: a user's own model, captured with no edit of the project (issue 13 item 1).
# A tiny tensor-parallel MLP (column-parallel then row-parallel linear) written in a temporary
# directory, as a user's file, and a buggy variant that forgets the row-parallel all-reduce:
#   1. `graphguard-capture usermlp:build` (the console script `pip install -e scripts/capture`
#      puts in .venv/bin) at TP 2, fwd and joint, and `python -m gg_capture` with a --set
#      override: graphguard verify REFINES (exit 0);
#   2. the buggy variant, fwd and joint: verify does not say REFINES (exit 1 VIOLATION or
#      3 UNKNOWN; which one is printed);
#   3. the Python API (gg_capture.capture with a callable and config) in one process: REFINES,
#      and CaptureError for a config key the factory does not take;
#   4. each user error gives exit 2, its message and no Python traceback: a module that does
#      not import, a missing factory, a non-callable, a wrong return type, a --set key the
#      factory does not take, a malformed --set, a malformed MODULE:FACTORY.
# Laptop mode (no .venv with torch) skips, and says so.
set -euo pipefail
GG=$1
ROOT=$2
PY=$ROOT/.venv/bin/python
if [[ ! -x $PY ]] || ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "capture_user: SKIP: no .venv with torch (laptop mode)"
  exit 0
fi
CAPTURE=$ROOT/.venv/bin/graphguard-capture
if [[ ! -x $CAPTURE ]]; then
  echo "capture_user: FAIL: $CAPTURE missing: run scripts/setup.sh (pip install -e scripts/capture)" >&2
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
cat >usermlp.py <<'EOF'
"""A user's own 2-layer tensor-parallel MLP: column- then row-parallel linear."""
import torch
import torch.nn.functional as F

import gg_capture


class MLP(torch.nn.Module):
    def __init__(self, tp, hidden, ffn, forget_allreduce):
        super().__init__()
        self.tp, self.forget = tp, forget_allreduce
        self.fc1 = gg_capture.ColumnParallelLinear(torch.randn(ffn, hidden), torch.randn(ffn), tp)
        # row-parallel by hand: W2's input columns sharded, its bias replicated and added once
        self.w2 = gg_capture.place(
            torch.nn.Parameter(gg_capture.shard(torch.randn(hidden, ffn), 1, tp)), "shard", 1)
        self.b2 = torch.nn.Parameter(torch.randn(hidden))

    def forward(self, x, target):
        y = F.linear(F.gelu(self.fc1(x)), self.w2)
        if not self.forget:  # the bug: partial sums left unreduced
            y = gg_capture.reduce_from_tp(y, self.tp)
        y = y + self.b2
        return F.mse_loss(y, target), y


def inputs(batch, hidden):
    return {"x": torch.randn(batch, hidden), "target": torch.randn(batch, hidden)}


def build(tp, hidden=16, ffn=32, batch=4):
    return MLP(tp, hidden, ffn, forget_allreduce=False), inputs(batch, hidden)


def build_buggy(tp, hidden=16, ffn=32, batch=4):
    return MLP(tp, hidden, ffn, forget_allreduce=True), inputs(batch, hidden)


def not_a_pair(tp):
    return MLP(tp, 16, 32, False)


answer = 42
EOF

verify() {  # verify DIR: prints verify's first line, returns its exit status
  set +e
  "$GG" verify --seq "$1/seq.json" --dist "$1/dist.json" --relations "$1/spec.rel" >"$1/verify.txt" 2>&1
  local rc=$?
  set -e
  head -1 "$1/verify.txt"
  return $rc
}

# 1. the correct program: console script (fwd, joint) and python -m with an override
"$CAPTURE" usermlp:build --tp 2 --mode fwd -o fwd
"$CAPTURE" usermlp:build --tp 2 --mode joint -o joint
"$PY" -m gg_capture usermlp:build --tp 2 --mode fwd --set hidden=8 ffn=64 -o fwd_set
grep -q '^// usermlp:build hidden=8 ffn=64:' fwd_set/spec.rel
grep -q '^input fc1_weight = shard(0)$' fwd/spec.rel
grep -q '^input w2 = shard(1)$' fwd/spec.rel
for d in fwd joint fwd_set; do
  verify $d || { echo "capture_user: $d: expected REFINES (exit 0)" >&2; cat $d/verify.txt >&2; exit 1; }
  grep -q REFINES $d/verify.txt
done

# 2. the buggy program: anything but REFINES, and a verdict (not a usage or input error)
for mode in fwd joint; do
  "$CAPTURE" usermlp:build_buggy --tp 2 --mode $mode -o buggy_$mode
  rc=0
  verify buggy_$mode || rc=$?
  case $rc in
    1) echo "capture_user: buggy $mode: VIOLATION (exit 1)" ;;
    3) echo "capture_user: buggy $mode: UNKNOWN (exit 3)" ;;
    *) echo "capture_user: buggy $mode: expected VIOLATION or UNKNOWN, exit $rc" >&2
       cat buggy_$mode/verify.txt >&2; exit 1 ;;
  esac
  ! grep -q REFINES buggy_$mode/verify.txt
done

# 3. the Python API
"$PY" - <<'EOF'
import gg_capture
import usermlp

paths = gg_capture.capture(usermlp.build, tp=2, mode="joint", out_dir="api", hidden=8)
assert sorted(paths) == ["dist", "seq", "spec"], paths
try:
    gg_capture.capture(usermlp.build, tp=2, out_dir="api_bad", layers=2)
    raise SystemExit("capture_user: a config key build does not take was accepted")
except gg_capture.CaptureError as e:
    assert "takes no config key 'layers'" in str(e) and "hidden, ffn, batch" in str(e), e
EOF
verify api || { echo "capture_user: Python API capture: expected REFINES" >&2; exit 1; }

# 4. user errors: exit 2, the message, no traceback
expect_error() {  # expect_error "MESSAGE" ARGS...
  local want=$1 rc=0
  shift
  "$CAPTURE" "$@" -o err >err.txt 2>&1 || rc=$?
  if [[ $rc -ne 2 ]] || ! grep -qF -- "$want" err.txt || grep -q Traceback err.txt; then
    echo "capture_user: graphguard-capture $*: expected exit 2 and '$want', got exit $rc:" >&2
    cat err.txt >&2
    exit 1
  fi
}
expect_error "cannot import module 'nosuchmodule'" nosuchmodule:build
expect_error "module 'usermlp' has no attribute 'nosuch' (its callables: MLP, build, build_buggy" \
  usermlp:nosuch
expect_error "usermlp:answer is not callable (type int)" usermlp:answer
expect_error "usermlp:not_a_pair returned MLP; return (model, inputs)" usermlp:not_a_pair
expect_error "usermlp:build takes no config key 'layers' (it takes: hidden, ffn, batch)" \
  usermlp:build --set layers=2
expect_error "--set 'hidden' is not KEY=VALUE" usermlp:build --set hidden
expect_error "'usermlp' is not MODULE:FACTORY" usermlp
echo "capture_user: correct MLP REFINES (fwd, joint, --set, Python API); buggy not REFINES; user errors exit 2"
