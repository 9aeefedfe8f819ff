"""ATen-level torch.fx graphs -> GraphGuard JSON v1 (docs/graph-format.md).

The output is deterministic: names come from the FX graph (inputs renamed to the program's
parameter FQNs and data names), source files are written relative to the repository or to
site-packages, and the layout is the one `graphguard import` writes (one node per line).
"""
import json
import math
import operator
import os
import re

import torch
import torch.fx

_DTYPES = {
    torch.bool: "b8", torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16",
    torch.int32: "i32", torch.int64: "i64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float32: "f32", torch.float64: "f64", torch.complex64: "c64", torch.complex128: "c128",
}
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n(?:\s+(.*))?')


class CaptureError(Exception):
    pass


def type_string(value):
    """GraphGuard tensor type text ("f32[4, 8]") of a traced value, None if not a tensor."""
    if not isinstance(value, torch.Tensor):
        return None
    if value.dtype not in _DTYPES:
        raise CaptureError(f"dtype {value.dtype} has no GraphGuard name")
    return f"{_DTYPES[value.dtype]}[{', '.join(str(int(d)) for d in value.shape)}]"


def portable_path(path):
    """A source path that is the same on every machine: relative to site-packages or the repo."""
    path = os.path.normpath(path)
    marker = os.sep + "site-packages" + os.sep
    if marker in path:
        return path.split(marker, 1)[1]
    if path.startswith(_REPO_ROOT + os.sep):
        return os.path.relpath(path, _REPO_ROOT)
    return os.path.basename(path)


def source_of(node):
    """The innermost frame of the node's stack trace outside torch itself (the model's code)."""
    frames = _FRAME.findall(node.meta.get("stack_trace") or "")
    if not frames:
        return None
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    chosen = None
    for file, line, function, code in frames:
        if not os.path.normpath(file).startswith(torch_dir):
            chosen = (file, line, function, code)
    if chosen is None:
        chosen = frames[-1]
    file, line, function, code = chosen
    return {"file": portable_path(file), "line": int(line), "function": function,
            "code": (code or "").strip()}


def _value(arg, refs):
    if isinstance(arg, torch.fx.Node):
        if arg not in refs:
            raise CaptureError(f"argument {arg.name} has no value (unsupported node kind)")
        return {"ref": refs[arg]}
    if arg is None or isinstance(arg, (bool, str)):
        return arg
    if isinstance(arg, int):
        return int(arg)
    if isinstance(arg, float):
        if math.isnan(arg):
            return {"float": "nan"}
        if math.isinf(arg):
            return {"float": "inf" if arg > 0 else "-inf"}
        return arg
    if isinstance(arg, (list, tuple)):
        return [_value(a, refs) for a in arg]
    if isinstance(arg, torch.dtype):
        return {"dtype": _DTYPES[arg]}
    if isinstance(arg, torch.device):
        d = {"device": arg.type}
        if arg.index is not None:
            d["index"] = arg.index
        return d
    if isinstance(arg, (torch.memory_format, torch.layout)):
        return {"enum": str(arg)}
    if isinstance(arg, torch._ops.OpOverload):
        return {"op": _op_name(arg)}
    raise CaptureError(f"argument {arg!r} of type {type(arg).__name__} has no JSON form")


def _op_name(target):
    namespace, rest = target.name().split("::", 1)
    return f"{namespace}::{rest}.{target._overloadname}" if "." not in rest else target.name()


def graph_to_json(gm, rank, input_names, group_names=None, input_fqns=None):
    """One GraphGuard graph object for an FX GraphModule traced by make_fx.

    input_names: names for the placeholders in order. group_names: map from the captured process
    group names to the names written (identity when None). input_fqns: the module FQN of each
    placeholder that is a parameter or buffer (None for the others), written as "fqn" so that
    specs can name inputs by it."""
    group_names = group_names or {}
    refs, nodes, outputs = {}, [], []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(input_names):
        raise CaptureError(f"{len(placeholders)} placeholders but {len(input_names)} input names")
    taken = set(input_names)
    renamed = dict(zip(placeholders, input_names))
    fqns = dict(zip(placeholders, input_fqns or []))

    def fresh(name):
        base, k = name, 1
        while name in taken:
            name, k = f"{base}_c{k}", k + 1
        taken.add(name)
        return name

    getitems = {}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is operator.getitem:
            getitems.setdefault(node.args[0], {})[node.args[1]] = node
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            refs[node] = renamed[node]
            entry = {"name": renamed[node], "kind": "input",
                     "outputs": [{"name": renamed[node],
                                  "type": type_string(node.meta.get("val"))}]}
            if fqns.get(node):
                entry["fqn"] = fqns[node]
            nodes.append(entry)
        elif node.op == "get_attr":
            name = fresh(node.name)
            refs[node] = name
            nodes.append({"name": name, "kind": "constant",
                          "outputs": [{"name": name, "type": None}]})
        elif node.op == "call_function" and node.target is operator.getitem:
            continue  # folded into its producer's outputs
        elif node.op == "call_function":
            if not isinstance(node.target, torch._ops.OpOverload):
                raise CaptureError(f"node {node.name}: {node.target} is not an ATen-level operator")
            name = fresh(node.name)
            val = node.meta.get("val")
            if isinstance(val, (list, tuple)):
                outs = []
                for i, v in enumerate(val):
                    item = getitems.get(node, {}).get(i)
                    out_name = fresh(item.name) if item is not None else ""
                    if item is not None:
                        refs[item] = out_name
                    outs.append({"name": out_name, "type": type_string(v)})
            else:
                refs[node] = name
                outs = [{"name": name, "type": type_string(val)}]
            args = list(node.args)
            if node.target.namespace == "_c10d_functional":
                args = [group_names.get(a, a) if isinstance(a, str) and i == len(args) - 1 else a
                        for i, a in enumerate(args)]
            entry = {"name": name, "kind": "call", "op": _op_name(node.target)}
            if node.meta.get("gg_functionalized"):  # outputs: op's, then the written tensors
                entry["functionalized"] = True
            entry.update({"args": [_value(a, refs) for a in args],
                          "kwargs": [{"name": k, "value": _value(v, refs)}
                                     for k, v in node.kwargs.items()],
                          "outputs": outs})
            src = source_of(node)
            if src:
                entry["source"] = src
            nodes.append(entry)
        elif node.op == "output":
            result = node.args[0]
            for item in (result if isinstance(result, (list, tuple)) else [result]):
                if not isinstance(item, torch.fx.Node):
                    raise CaptureError(f"graph output {item!r} is not a tensor")
                outputs.append({"ref": refs[item]})
        else:
            raise CaptureError(f"node {node.name}: unsupported FX op {node.op}")
    return {"name": "GraphModule", "rank": rank, "nodes": nodes, "outputs": outputs}


def _dump(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _graph_text(graph, indent):
    in2 = indent + "  "
    text = "{\n"
    text += f'{in2}"name": {_dump(graph["name"])},\n'
    text += f'{in2}"rank": {graph["rank"]},\n'
    text += f'{in2}"nodes": ['
    text += ",".join(f"\n{in2}  {_dump(n)}" for n in graph["nodes"])
    text += f"\n{in2}],\n" if graph["nodes"] else "],\n"
    text += f'{in2}"outputs": {_dump(graph["outputs"])}\n{indent}}}'
    return text


def program_text(graphs, process_groups=None, traced_values=None):
    """The JSON text of one graph (single-graph form) or of a program (ranks + groups).

    traced_values (a dict: "file", the values file, and "why"): the graphs replay only on the
    values they were traced with (shapes that follow from values: expert parallelism's split
    sizes), which `file` holds for S's inputs (values_text); graphguard's numeric runs then use
    those values instead of random ones."""
    head = '{\n  "format": "graphguard-graph",\n  "version": 1,\n'
    if traced_values is not None:
        head += f'  "traced_values": {_dump(traced_values)},\n'
    if process_groups is None:
        assert len(graphs) == 1
        return head + '  "graph": ' + _graph_text(graphs[0], "  ") + "\n}\n"
    groups = {k: process_groups[k] for k in sorted(process_groups)}
    text = head + f'  "process_groups": {_dump(groups)},\n  "graphs": ['
    text += ",".join("\n    " + _graph_text(g, "    ") for g in graphs)
    return text + "\n  ]\n}\n"


def values_text(values):
    """The JSON text of a values file: each named input's dtype, shape and elements (row-major;
    floats as Python writes them, which read back to the same float32 or float64)."""
    entries = []
    for name, t in values.items():
        flat = t.detach().reshape(-1)
        data = flat.tolist() if t.dtype != torch.bool else [int(v) for v in flat.tolist()]
        entries.append(f'    {_dump(name)}: {{"type": {_dump(type_string(t))}, '
                       f'"data": {_dump(data)}}}')
    return ('{\n  "format": "graphguard-values",\n  "version": 1,\n  "inputs": {\n'
            + ",\n".join(entries) + "\n  }\n}\n")
