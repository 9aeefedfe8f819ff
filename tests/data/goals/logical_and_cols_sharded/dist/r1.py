# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, a: "b8[4, 3]", b: "f32[4, 3]"):
        y: "b8[4, 3]" = torch.ops.aten.logical_and.default(a, b)
        return (y,)
