import torch
from torch import device

f32: type


# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[32, 16]", b: "f32[32]"):
        t: "f32[16, 32]" = torch.ops.aten.t.default(w)
        mm: "f32[8, 32]" = torch.ops.aten.mm.default(x, t)
