# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w1: "f32[8, 8]", w2: "f32[8, 8]"):
        h: "f32[4, 8]" = torch.ops.aten.mm.default(x, w1)
        r: "f32[4, 8]" = torch.ops.aten.relu.default(h)
        y: "f32[4, 8]" = torch.ops.aten.mm.default(r, w2)
        return (y,)
