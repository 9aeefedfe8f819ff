# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]"):
        z: "f32[4, 6]" = torch.ops.aten.exp.default(x)
        v: "f32[4, 2, 3]" = torch.ops.aten.view.default(z, [4, 2, 3])
        w: "f32[4, 2, 3]" = torch.ops.aten.neg.default(v)
        return (w,)
