# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 12]", w: "f32[3, 12]"):
        t: "f32[12, 3]" = torch.ops.aten.t.default(w)
        y: "f32[4, 3]" = torch.ops.aten.mm.default(x, t)
        return (y,)
