# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, g: "f32[1, 2, 8, 8]"):
        g1: "f32[1, 2, 8, 4]" = torch.ops.aten.slice.Tensor(g, 3, 0, 4)
        g2: "f32[1, 2, 8, 4]" = torch.ops.aten.slice.Tensor(g, 3, 4, 8)
        n1: "f32[1, 2, 8, 4]" = torch.ops.aten.neg.default(g1)
        z1: "f32[1, 2, 8, 8]" = torch.ops.aten.new_zeros.default(n1, [1, 2, 8, 8], pin_memory = False)
        d2: "f32[1, 2, 8, 8]" = torch.ops.aten.slice_scatter.default(z1, n1, 3, 4, 9223372036854775807)
        z2: "f32[1, 2, 8, 8]" = torch.ops.aten.new_zeros.default(g2, [1, 2, 8, 8], pin_memory = False)
        d1: "f32[1, 2, 8, 8]" = torch.ops.aten.slice_scatter.default(z2, g2, 3, 4, 8)
        dx: "f32[1, 2, 8, 8]" = torch.ops.aten.add.Tensor(d2, d1)
        return (dx,)
