# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[2, 6]"):
        y: "f32[2, 6]" = torch.ops.mylib.fancy_gelu.default(x)
        return (y,)
