# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[s0, 6]", w: "f32[2, 6]"):
        t: "f32[6, 2]" = torch.ops.aten.t.default(w)
        y: "f32[s0, 2]" = torch.ops.aten.mm.default(x, t)
        return (y,)
