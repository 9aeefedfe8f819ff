import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[32, 16]", b: "f32[32]"):
        # File: /src/model.py:10 in forward, code: y = x @ w.t() + b
        t: "f32[16, 32]" = torch.ops.aten.t.default(w);  w = None
        mm: "f32[8, 32]" = torch.ops.aten.mm.default(x, t);  x = t = None
        add: "f32[8, 32]" = torch.ops.aten.add.Tensor(mm, b);  mm = b = None

        # File: /src/model.py:11 in forward, code: y = dropout(y)
        native_dropout = torch.ops.aten.native_dropout.default(add, 0.1, True);  add = None
        getitem: "f32[8, 32]" = native_dropout[0];  native_dropout = None
        return (getitem,)
