# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]", r: "f32[2, 8, 2]"):
        t: "f32[4, 4]" = torch.ops.aten.tril.default(x)
        u: "f32[4, 4]" = torch.ops.aten.triu.default(t, 1)
        c: "c64[2, 8]" = torch.ops.aten.view_as_complex.default(r)
        w: "f32[2, 8, 2]" = torch.ops.aten.view_as_real.default(c)
        m: "b8[4]" = torch.ops.aten.any.dim(u, 1)
        y: "f32[2, 8]" = torch.ops.aten.select.int(w, 2, 0)
        return (m, y)
