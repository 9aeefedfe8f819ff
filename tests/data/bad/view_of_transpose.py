import torch

# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[16, 32]"):
        # File: /src/model.py:12 in forward, code: h = x @ w
        mm: "f32[8, 32]" = torch.ops.aten.mm.default(x, w);  x = w = None
        # File: /src/model.py:13 in forward, code: h = h.transpose(0, 1).view(-1)
        transpose: "f32[32, 8]" = torch.ops.aten.transpose.int(mm, 0, 1);  mm = None
        view: "f32[256]" = torch.ops.aten.view.default(transpose, [-1]);  transpose = None
        return (view,)
