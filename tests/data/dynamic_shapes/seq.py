# Graph[rank=0](fw, gid=0)
# A capture with a dynamic batch (s0): verify proves over it, the numeric commands refuse it.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[s0, 6]", w: "f32[4, 6]"):
        t: "f32[6, 4]" = torch.ops.aten.t.default(w)
        y: "f32[s0, 4]" = torch.ops.aten.mm.default(x, t)
        return (y,)
