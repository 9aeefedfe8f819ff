# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", w1: "f32[8, 6]", w2: "f32[3, 8]"):
        t: "f32[6, 8]" = torch.ops.aten.t.default(w1)
        h: "f32[4, 8]" = torch.ops.aten.mm.default(x, t)
        r: "f32[4, 8]" = torch.ops.aten.relu.default(h)
        t_1: "f32[8, 3]" = torch.ops.aten.t.default(w2)
        y: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        return (y,)
