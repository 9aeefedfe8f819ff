import torch

# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]", w: "f32[16, 8]"):
        # File: /src/layers.py:20 in forward, code: y = x @ w  (row-parallel)
        mm: "f32[8, 8]" = torch.ops.aten.mm.default(x, w);  x = w = None
        all_reduce: "f32[8, 8]" = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0');  mm = None
        wait_tensor: "f32[8, 8]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        relu: "f32[8, 8]" = torch.ops.aten.relu.default(wait_tensor);  wait_tensor = None
        return (relu,)
