# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]"):
        z: "f32[4, 6]" = torch.ops.aten.exp.default(x)
        s: "f32[4, 3]" = torch.ops.aten.slice.Tensor(z, 1, 3, 6)
        v: "f32[4, 1, 3]" = torch.ops.aten.view.default(s, [4, 1, 3])
        w: "f32[4, 1, 3]" = torch.ops.aten.neg.default(v)
        return (w,)
