#!/usr/bin/env python3
"""Checks the hand transcriptions of the transformers-neuronx Llama HLO modules in
examples/corpus/aws_llama (kept out of that folder: every *.py under examples/corpus is read as
an FX graph by the corpus tests).

The originals (nyu-systems/Entangle, examples/data/aws_llama/<cfg>/graph.0.hlo) were read through
a text viewer and written there instruction by instruction with their metadata shortened (see
examples/corpus/NOTICE). A transcription error would be a fabricated graph, so this script checks
what can be checked without the originals at hand:

1. Bytes: the originals' lengths were recorded while reading them (ORIGINAL_CHARS). Every
   instruction's metadata was shortened by a rule that depends only on its stack trace, and the
   TP 2/4/8 modules (and the broken one) have the same stack traces instruction by instruction, so
   original length minus transcribed length must be one constant for all four; the one-token edit
   of the broken module (4 characters shorter than TP 2 in the original) must be 4 characters here
   too. A wrong digit in a shape changes a file's length and breaks the constant.
2. Shapes: every instruction's result shape is recomputed from its operands and attributes (dot
   dimension numbers, slice bounds, broadcast/transpose dimensions, reshape element counts,
   gather slice sizes, ...) and compared with the written one; parameters are compared with the
   ENTRY signature and the module's entry_computation_layout, the ROOT tuple with the result
   types, and every operand must be defined before it is used; instruction ids are the module's
   dense numbering 1..N-1 (the module is named FullyUnrolled.N) but for the one unprinted id
   before each reducer's parameters.
3. Across degrees: TP 2, 4 and 8 must be the same program (same instructions, ids, operands and
   non-shape attributes) whose dimensions differ only where neuronx shards (a per-rank width equal
   to the TP 1 width divided by the degree), and TP 1 must be the same program minus the two
   all-reduces.

Run: python3 scripts/check_aws_llama_transcription.py   (prints what it checked; exit 1
on the first mismatch).
"""
import math
import os
import re
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "corpus", "aws_llama")

# total_chars of each original as reported by the reader, recorded while transcribing.
ORIGINAL_CHARS = {
    "tp1_layer1": 254304,
    "tp2_layer1": 271035,
    "tp2_layer1.broken": 271031,
    "tp4_layer1": 270994,
    "tp8_layer1": 271008,
}
DEGREE = {"tp1_layer1": 1, "tp2_layer1": 2, "tp2_layer1.broken": 2, "tp4_layer1": 4, "tp8_layer1": 8}

SHAPE_RE = re.compile(r"^(pred|s32|f16|f32)\[([0-9,]*)\]")
INSTR_RE = re.compile(
    r"^  (ROOT )?%([A-Za-z0-9_.-]+) = (\([^=]*\)|[a-z0-9]+\[[0-9,]*\](?:\{[0-9,]*\})?) "
    r"([a-z-]+)\((.*?)\)(, .*)?$")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def parse_shape(text):
    m = SHAPE_RE.match(text)
    if not m:
        fail("bad shape " + text)
    dims = [int(d) for d in m.group(2).split(",")] if m.group(2) else []
    return (m.group(1), tuple(dims))


def attr(rest, name):
    m = re.search(r"(?:^|, )" + re.escape(name) + r"=(\{[^}]*\}|\{\{[^}]*\}\}|[^,]+)", rest or "")
    return m.group(1) if m else None


def int_list(text):
    text = text.strip("{}")
    return [int(x) for x in text.split(",")] if text else []


def parse_module(path):
    text = open(path).read()
    lines = text.split("\n")
    header = lines[0]
    comps = {}
    cur = None
    entry = None
    for line in lines[1:]:
        if not line.strip():
            continue
        if line.startswith("%") or line.startswith("ENTRY"):
            name = re.match(r"^(?:ENTRY )?%([^ ]+) ", line).group(1)
            cur = comps.setdefault(name, {"sig": line, "instrs": []})
            if line.startswith("ENTRY"):
                entry = name
            continue
        if line == "}":
            cur = None
            continue
        m = INSTR_RE.match(line)
        if not m or cur is None:
            fail(f"{path}: unparsed line: {line[:120]}")
        root, name, shape, op, operands, rest = m.groups()
        # strip the shortened metadata (and backend_config) from the attribute text
        rest = rest or ""
        meta = re.search(r', metadata=\{op_type="<module>" source_file="transformers_neuronx/[a-z_/]+\.py" '
                         r'source_line=[0-9]+\}(, backend_config="[0-9]+")?$', rest)
        if not meta:
            fail(f"{path}: {name}: metadata not in the shortened form")
        attrs = rest[: meta.start()]
        backend = meta.group(1)
        cur["instrs"].append({
            "root": bool(root), "name": name, "shape": shape, "op": op,
            "operands": [o.strip().lstrip("%") for o in operands.split(",")] if op not in ("parameter", "constant", "iota") and operands else [],
            "literal": operands if op in ("parameter", "constant") else None,
            "attrs": attrs, "backend": backend,
        })
    return text, header, comps, entry


def infer(ins, env):
    """Recomputes the result shape of an instruction (dtype, dims) from its operands."""
    op, a = ins["op"], ins["attrs"]
    ops = [env[o] for o in ins["operands"]]
    own = parse_shape(ins["shape"]) if not ins["shape"].startswith("(") else None
    if op in ("parameter", "constant", "iota"):
        return own  # checked against the signature / literal elsewhere
    if op in ("add", "subtract", "multiply", "divide", "maximum", "and", "exponential", "cosine", "sine",
              "logistic"):
        for o in ops[1:]:
            if o != ops[0]:
                fail(f"{ins['name']}: elementwise operands differ {ops}")
        return ops[0]
    if op == "compare":
        if ops[0] != ops[1]:
            fail(f"{ins['name']}: compare operands differ")
        return ("pred", ops[0][1])
    if op == "select":
        if ops[0][1] != ops[1][1] or ops[1] != ops[2] or ops[0][0] != "pred":
            fail(f"{ins['name']}: select operands {ops}")
        return ops[1]
    if op == "convert":
        return (own[0], ops[0][1])
    if op == "reshape":
        if math.prod(own[1]) != math.prod(ops[0][1]) or own[0] != ops[0][0]:
            fail(f"{ins['name']}: reshape {ops[0]} -> {own}")
        return own
    if op == "broadcast":
        dims = int_list(attr(a, "dimensions"))
        if len(dims) != len(ops[0][1]):
            fail(f"{ins['name']}: broadcast dims")
        for i, d in enumerate(dims):
            if own[1][d] != ops[0][1][i]:
                fail(f"{ins['name']}: broadcast maps operand dim {i} to {d}")
        return (ops[0][0], own[1])
    if op == "transpose":
        perm = int_list(attr(a, "dimensions"))
        return (ops[0][0], tuple(ops[0][1][p] for p in perm))
    if op == "slice":
        bounds = re.findall(r"\[(\d+):(\d+)\]", attr(a, "slice") or "")
        if len(bounds) != len(ops[0][1]):
            fail(f"{ins['name']}: slice rank")
        out = []
        for (lo, hi), n in zip(bounds, ops[0][1]):
            lo, hi = int(lo), int(hi)
            if not (0 <= lo <= hi <= n):
                fail(f"{ins['name']}: slice [{lo}:{hi}] out of {n}")
            out.append(hi - lo)
        return (ops[0][0], tuple(out))
    if op == "concatenate":
        d = int_list(attr(a, "dimensions"))[0]
        out = list(ops[0][1])
        out[d] = sum(o[1][d] for o in ops)
        return (ops[0][0], tuple(out))
    if op == "dot":
        lb = int_list(attr(a, "lhs_batch_dims") or "{}")
        rb = int_list(attr(a, "rhs_batch_dims") or "{}")
        lc = int_list(attr(a, "lhs_contracting_dims"))
        rc = int_list(attr(a, "rhs_contracting_dims"))
        l, r = ops[0][1], ops[1][1]
        for x, y in zip(lb + lc, rb + rc):
            if l[x] != r[y]:
                fail(f"{ins['name']}: dot dims {l} {r}")
        out = [l[i] for i in lb] + [l[i] for i in range(len(l)) if i not in lb + lc] + \
              [r[i] for i in range(len(r)) if i not in rb + rc]
        return (ops[0][0], tuple(out))
    if op == "reduce":
        dims = int_list(attr(a, "dimensions"))
        return (ops[0][0], tuple(n for i, n in enumerate(ops[0][1]) if i not in dims))
    if op == "all-reduce":
        return ops[0]
    if op == "gather":
        sizes = int_list(attr(a, "slice_sizes"))
        collapsed = int_list(attr(a, "collapsed_slice_dims"))
        offset = int_list(attr(a, "offset_dims"))
        batch = [n for n in ops[1][1]]  # index_vector_dim = rank of indices: one index per row
        if attr(a, "index_vector_dim") != str(len(ops[1][1])):
            fail(f"{ins['name']}: gather index_vector_dim")
        kept = [s for i, s in enumerate(sizes) if i not in collapsed]
        rank = len(batch) + len(kept)
        out, bi, ki = [], 0, 0
        for i in range(rank):
            if i in offset:
                out.append(kept[ki]); ki += 1
            else:
                out.append(batch[bi]); bi += 1
        return (ops[0][0], tuple(out))
    if op == "custom-call":
        target = attr(a, "custom_call_target").strip('"')
        if target == "AwsNeuronTransferWithStaticRing":
            return ops[0]
        if target == "AwsNeuronRmsNorm":
            d = int(ins["backend"].split('"')[1])
            if ops[1][1] != (ops[0][1][d],) or ops[2][1] != ():
                fail(f"{ins['name']}: rmsnorm weight/eps shapes")
            return (own[0], ops[0][1])
        fail("unknown custom call " + target)
    if op == "tuple":
        return None
    fail("no shape rule for " + op)


def check_module(cfg):
    path = os.path.join(HERE, cfg, "graph.0.hlo")
    text, header, comps, entry = parse_module(path)
    n = int(re.match(r"HloModule FullyUnrolled\.(\d+),", header).group(1))
    if entry != f"FullyUnrolled.{n}":
        fail(f"{cfg}: entry name")
    layout = re.search(r"entry_computation_layout=\{\((.*)\)->\((.*)\)\}$", header)
    params = [parse_shape(s) for s in re.sub(r"/\*index=\d+\*/", "", layout.group(1)).split(", ")]
    results = [parse_shape(s) for s in layout.group(2).split(", ")]
    sig = re.match(r"^ENTRY %\S+ \((.*)\) -> \((.*)\) \{$", comps[entry]["sig"])
    sig_params = [parse_shape(p.split(": ")[1]) for p in sig.group(1).split(", ")]
    sig_results = [parse_shape(r) for r in sig.group(2).split(", ")]
    if sig_params != params or sig_results != results:
        fail(f"{cfg}: ENTRY signature differs from entry_computation_layout")
    ids = []
    for cname, comp in comps.items():
        env = {}
        for ins in comp["instrs"]:
            for o in ins["operands"]:
                if o not in env:
                    fail(f"{cfg}: {ins['name']} uses {o} before it is defined")
            ids.append(int(ins["name"].rsplit(".", 1)[1]))
            got = infer(ins, env)
            if ins["op"] == "parameter" and cname == entry:
                k = int(ins["literal"])
                if parse_shape(ins["shape"]) != params[k] or not ins["name"].startswith(f"p{k}."):
                    fail(f"{cfg}: parameter {k} shape/name")
            if ins["op"] == "tuple":
                if not ins["root"] or cname != entry:
                    fail(f"{cfg}: tuple outside ENTRY root")
                types = [parse_shape(t) for t in ins["shape"].strip("()").split(", ")]
                if types != results or [env[o] for o in ins["operands"]] != results:
                    fail(f"{cfg}: ROOT tuple types")
                continue
            if got != parse_shape(ins["shape"]):
                fail(f"{cfg}: {ins['name']}: written {ins['shape']}, operands give {got}")
            env[ins["name"]] = got
    # reducer computation names carry one more id each (the computation itself)
    for cname in comps:
        if cname != entry:
            ids.append(int(cname.rsplit(".", 1)[1]))
    # the id just before each reducer's first parameter is allocated by the emitter but printed
    # nowhere (the originals skip it too: reduce.98's reducer has p0.100, p1.101, maximum.102 and
    # is itself 103; 99 appears nowhere)
    for cname, comp in comps.items():
        if cname != entry:
            ids.append(int(comp["instrs"][0]["name"].rsplit(".", 1)[1]) - 1)
    if sorted(ids) != list(range(1, n)):
        missing = sorted(set(range(1, n)) - set(ids))
        fail(f"{cfg}: ids not dense 1..{n - 1}: missing {missing[:10]}, count {len(ids)}")
    count = sum(len(c["instrs"]) for c in comps.values())
    print(f"{cfg}: {count} instructions in {len(comps)} computations, ids 1..{n - 1} dense (but one unprinted id per reducer), "
          f"every shape recomputed from operands and attributes, signature = layout = parameters, "
          f"ROOT = result types")
    return text, comps, entry


def program(comps, entry):
    """The ENTRY program with every number inside a shape or a slice bound replaced by a mark."""
    out = []
    for ins in comps[entry]["instrs"]:
        attrs = re.sub(r"\[\d+:\d+\]", "[:]", ins["attrs"])
        attrs = re.sub(r"replica_groups=\{\{[0-9,]*\}\}", "replica_groups={{...}}", attrs)
        attrs = re.sub(r"slice_sizes=\{[0-9,]*\}", "slice_sizes={...}", attrs)
        out.append((ins["name"], ins["op"], tuple(ins["operands"]), attrs, ins["backend"]))
    return out


def main():
    mods = {cfg: check_module(cfg) for cfg in ORIGINAL_CHARS}
    # 1. bytes
    diffs = {cfg: ORIGINAL_CHARS[cfg] - len(mods[cfg][0]) for cfg in ORIGINAL_CHARS}
    tp_diffs = {diffs[c] for c in ("tp2_layer1", "tp2_layer1.broken", "tp4_layer1", "tp8_layer1")}
    if len(tp_diffs) != 1:
        fail(f"original minus transcribed length differs across TP 2/4/8/broken: {diffs}")
    print(f"bytes: original - transcribed = {tp_diffs.pop()} for TP 2, 4, 8 and the broken TP 2 "
          f"(tp1: {diffs['tp1_layer1']}, a different trace set)")
    # 2. broken = tp2 with one slice bound moved
    a = mods["tp2_layer1"][0].split("\n")
    b = mods["tp2_layer1.broken"][0].split("\n")
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if len(a) != len(b) or len(changed) != 1 or "%slice.54 =" not in changed[0][0]:
        fail("the broken module must differ from TP 2 in the %slice.54 line only")
    print("broken: differs from tp2_layer1 only in", changed[0][1].split(", metadata")[0].strip())
    # 3. same program across degrees
    progs = {cfg: program(mods[cfg][1], mods[cfg][2]) for cfg in ORIGINAL_CHARS}
    for cfg in ("tp4_layer1", "tp8_layer1", "tp2_layer1.broken"):
        if progs[cfg] != progs["tp2_layer1"]:
            fail(f"{cfg}: not the same program as tp2_layer1 (up to dimensions)")
    base = [p for p in progs["tp2_layer1"] if p[1] != "all-reduce"]
    # TP 1 numbers its instructions without the two all-reduces and their reducers: compare the
    # operator/attribute sequence, not the ids.
    strip = lambda prog: [(op, attrs, be) for (_, op, _, attrs, be) in prog]
    if strip(progs["tp1_layer1"]) != strip(base):
        fail("tp1_layer1: not the TP 2 program without its all-reduces")
    print("programs: TP 2, 4, 8 (and broken) identical up to dimensions; TP 1 = the same minus "
          "the two all-reduces")
    # per-rank widths: each dimension either equals TP 1's or is TP 1's divided by the degree
    tp1_shapes = [parse_shape(i["shape"]) for i in mods["tp1_layer1"][1][mods["tp1_layer1"][2]]["instrs"]
                  if i["op"] not in ("tuple",)]
    for cfg in ("tp2_layer1", "tp4_layer1", "tp8_layer1"):
        d = DEGREE[cfg]
        shapes = [parse_shape(i["shape"]) for i in mods[cfg][1][mods[cfg][2]]["instrs"]
                  if i["op"] not in ("tuple", "all-reduce")]
        for s1, sn in zip(tp1_shapes, shapes):
            for x, y in zip(s1[1], sn[1]):
                if y != x and y * d != x:
                    fail(f"{cfg}: dimension {y} is neither {x} nor {x}/{d}")
        groups = re.findall(r"replica_groups=\{\{([0-9,]*)\}\}", mods[cfg][0])
        if groups != [",".join(map(str, range(d)))] * 2:
            fail(f"{cfg}: replica groups {groups}")
    print("widths: every TP dimension equals TP 1's or TP 1's divided by the degree; both "
          "all-reduces span all ranks")
    print("OK")


if __name__ == "__main__":
    main()
