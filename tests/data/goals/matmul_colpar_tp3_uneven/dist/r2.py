# Graph[rank=2](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", w: "f32[2, 6]"):
        t: "f32[6, 2]" = torch.ops.aten.t.default(w)
        y: "f32[4, 2]" = torch.ops.aten.mm.default(x, t)
        return (y,)
