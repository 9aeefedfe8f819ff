import torch

# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16]"):
        # File: /src/layers.py:31 in forward, code: x = broadcast(x, src=0)  (each rank names itself)
        broadcast: "f32[8, 16]" = torch.ops._c10d_functional.broadcast.default(x, 0, '0');  x = None
        wait_tensor: "f32[8, 16]" = torch.ops._c10d_functional.wait_tensor.default(broadcast);  broadcast = None
        return (wait_tensor,)
