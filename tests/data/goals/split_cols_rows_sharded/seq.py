# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]"):
        split = torch.ops.aten.split.Tensor(x, 4, 1)
        a: "f32[4, 4]" = split[0]
        b: "f32[4, 2]" = split[1]
        return (a, b)
