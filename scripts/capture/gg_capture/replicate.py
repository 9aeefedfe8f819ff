"""Deep models captured fast: a few shallow traces, the layer block replicated, checked first.

A program whose depth is a config key (`layers`) is traced at k, k+1 and k+2 layers (k = 2 first;
api.write_deep tries k + 1 up to 4 when the rule below fails). Each output file (seq.json, dist.json, spec.rel) is cut into units (a line, or the
part of a line from one `{"ref"` to the next) and every run of digits in a unit is a number. Two
units are alike when they are equal with every number blanked. The k- and (k+1)-layer texts are
aligned unit by unit (difflib, on the blanked units): the alignment must be made only of equal
runs and insertions (what one more identical layer adds: its parameters, its nodes, its outputs
and spec lines), else the layers are not alike and nothing is replicated.

The rule learned from that pair, model-agnostic (nothing here knows Llama, FX or module names):
  - an aligned unit keeps its text; each of its numbers moves by its step s = (k+1 value) - (k
    value) per added layer (FX's per-operator counters after the new layer, output indices, a
    `layers=` setting in the title; 0 for widths, source lines, ranks);
  - an inserted run I (one layer's worth of units) must be alike to the run N next to it (the
    neighbouring layer). At every further layer I stays where it is, moving like N, and one more
    instance is added on the far side of it, as far from I as I is from N: after j more layers
    the instances are X_m = I + m d + (j - m) s_N (m = 0..j), d = I - N + s_N, X_0 nearest N.
Self-check: the rule learned from (k, k+1) must give the (k+2)-layer texts byte for byte; only
then are the L-layer files written by the rule (j = L - k - 1), otherwise the caller traces all L
layers and says why. The check runs the rule one layer past what it was learned from, so a
program whose layers differ from one another in any way that shows by k+2 layers (a width that
grows with the index, an op every other layer) falls back. What it cannot see is a difference
that only appears deeper (a layer singled out by an absolute index >= k+2): such a program must
be captured without replication (graphguard-capture without --replicate-layers, the default).
"""
import difflib
import re

_UNIT = re.compile(r'(?<=\n)|(?=\{"ref")')
_DIGITS = re.compile(r"(\d+)")


class Mismatch(Exception):
    """The traces are not the same layer block repeated: the reason, for stderr."""


def _units(text):
    return [u for u in _UNIT.split(text) if u]


def _blank(unit):
    return _DIGITS.sub("#", unit)


def _numbers(unit):
    parts = _DIGITS.split(unit)
    return parts[0::2], [int(p) for p in parts[1::2]], parts[1::2]


def _format(parts, values, texts, unit):
    out = [parts[0]]
    for k, v in enumerate(values):
        if v == int(texts[k]):
            out.append(texts[k])  # unchanged: as written (leading zeros of a float's exponent)
        elif v < 0 or (len(texts[k]) > 1 and texts[k][0] == "0"):
            raise Mismatch(f"a number of {unit.strip()[:80]!r} would be {v}")
        else:
            out.append(str(v))
        out.append(parts[k + 1])
    return "".join(out)


def _at(unit, steps, j):
    parts, values, texts = _numbers(unit)
    return _format(parts, [v + j * s for v, s in zip(values, steps)], texts, unit)


def _neighbour(bb, amap, w1, w2):
    """Which side of the inserted window b[w1:w2] has an aligned run alike to it."""
    p = w2 - w1
    if w1 - p >= 0 and bb[w1 - p:w1] == bb[w1:w2] and None not in amap[w1 - p:w1]:
        return "after", range(w1 - p, w1)  # new instances go after I, away from N
    if bb[w2:w2 + p] == bb[w1:w2] and None not in amap[w2:w2 + p]:
        return "before", range(w2, w2 + p)
    return None


def _place(bb, amap, j1, j2):
    """The window of the insertion b[j1:j2] that has an alike neighbour; amap updated.

    In a run of alike layers an insertion may be slid by t units (what is inserted is then
    rotated): the units it uncovers on one side take the alignment of those it covers on the
    other. The alignment difflib picks can put the window across a special layer (the first
    layer of a backward pass names operators without a number); the nearest window that has
    an alike, fully aligned neighbour is taken."""
    p = j2 - j1
    right = 0
    while (j2 + right < len(bb) and right < p and bb[j1 + right] == bb[j2 + right]
           and amap[j2 + right] is not None):
        right += 1
    left = 0
    while (j1 - left - 1 >= 0 and left < p and bb[j1 - left - 1] == bb[j2 - left - 1]
           and amap[j1 - left - 1] is not None):
        left += 1
    for t in sorted(range(-left, right + 1), key=lambda t: (abs(t), t)):
        saved = amap[min(j1, j1 + t):max(j2, j2 + t)]
        if t > 0:
            for i in range(t):
                amap[j1 + i], amap[j2 + i] = amap[j2 + i], None
        elif t < 0:
            for i in range(-t):
                amap[j2 + t + i], amap[j1 + t + i] = amap[j1 + t + i], None
        side = _neighbour(bb, amap, j1 + t, j2 + t)
        if side:
            return j1 + t, j2 + t, side
        amap[min(j1, j1 + t):max(j2, j2 + t)] = saved
    return None


def learn(a, b):
    """The rule that takes the text of n layers (a) to n+1 (b), as a list of segments."""
    ua, ub = _units(a), _units(b)
    ba, bb = [_blank(u) for u in ua], [_blank(u) for u in ub]
    amap = [None] * len(ub)  # the unit of a each unit of b is aligned with
    inserts = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ba, bb, autojunk=False).get_opcodes():
        if tag == "equal":
            amap[j1:j2] = range(i1, i2)
        elif tag == "insert":
            inserts.append((j1, j2))
        else:
            where = ub[j1] if j1 < len(ub) else ua[i1]
            raise Mismatch(f"one more layer {tag}s, not only adds, text near "
                           f"{where.strip()[:80]!r}")
    placed = []
    for j1, j2 in inserts:
        found = _place(bb, amap, j1, j2)
        if found is None:
            raise Mismatch(f"what one more layer adds ({j2 - j1} units from "
                           f"{ub[j1].strip()[:80]!r}) does not repeat a neighbouring layer")
        placed.append(found)
    steps = [None if i is None else
             [y - x for x, y in zip(_numbers(ua[i])[1], _numbers(ub[j])[1])]
             for j, i in enumerate(amap)]
    segments, pos = [], 0
    for j1, j2, (side, n) in placed:
        for j in range(pos, j1):
            segments.append(("unit", ub[j], steps[j]))
        block = []
        for ji, jn in zip(range(j1, j2), n):
            vi, vn = _numbers(ub[ji])[1], _numbers(ub[jn])[1]
            delta = [x - y + s for x, y, s in zip(vi, vn, steps[jn])]
            block.append((ub[ji], steps[jn], delta))
        segments.append(("block", side, block))
        pos = j2
    for j in range(pos, len(ub)):
        segments.append(("unit", ub[j], steps[j]))
    return segments


def render(segments, j):
    """The text j layers past the deeper of the two texts the rule was learned from."""
    out = []
    for seg in segments:
        if seg[0] == "unit":
            out.append(_at(seg[1], seg[2], j))
            continue
        _, side, block = seg
        order = range(j + 1) if side == "after" else range(j, -1, -1)
        for m in order:
            for unit, step_n, delta in block:
                parts, values, texts = _numbers(unit)
                shifted = [v + m * d + (j - m) * s for v, d, s in zip(values, delta, step_n)]
                out.append(_format(parts, shifted, texts, unit))
    return "".join(out)


def first_difference(x, y):
    """'line N: expected ... got ...' for two texts that differ."""
    lx, ly = x.split("\n"), y.split("\n")
    for n, (p, q) in enumerate(zip(lx, ly), 1):
        if p != q:
            return f"line {n}: the trace has {p.strip()[:100]!r}, replication {q.strip()[:100]!r}"
    return f"the trace has {len(lx)} lines, replication {len(ly)}"


def replicate(texts, k, layers):
    """texts: {k: {file: text}, k+1: ..., k+2: ...} from real traces. The files of `layers`
    layers, or Mismatch with the reason when the rule does not reproduce the (k+2)-layer trace."""
    out = {}
    for name in texts[k]:
        rule = learn(texts[k][name], texts[k + 1][name])
        check = render(rule, 1)
        if check != texts[k + 2][name]:
            raise Mismatch(f"{name}: replicating {k} -> {k + 1} layers to {k + 2} differs from "
                           f"the {k + 2}-layer trace at "
                           f"{first_difference(texts[k + 2][name], check)}")
        out[name] = render(rule, layers - k - 1)
    return out
