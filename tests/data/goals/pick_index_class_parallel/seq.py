# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 16]", t: "i64[4]"):
        a: "i64[4]" = torch.ops.aten.arange.start(0, 4)
        y: "f32[4]" = torch.ops.aten.index.Tensor(x, [a, t])
        return (y,)
