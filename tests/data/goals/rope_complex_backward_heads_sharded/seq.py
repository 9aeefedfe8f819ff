# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[1, 4, 4, 4]", freqs: "c64[8, 2]"):
        v: "f32[1, 4, 4, 2, 2]" = torch.ops.aten.view.default(x, [1, 4, 4, 2, 2])
        xc: "c64[1, 4, 4, 2]" = torch.ops.aten.view_as_complex.default(v)
        sl: "c64[4, 2]" = torch.ops.aten.slice.Tensor(freqs, 0, 0, 4)
        f: "c64[1, 4, 1, 2]" = torch.ops.aten.view.default(sl, [1, 4, 1, 2])
        fc: "c64[1, 4, 1, 2]" = torch.ops.aten._conj.default(f)
        m: "c64[1, 4, 4, 2]" = torch.ops.aten.mul.Tensor(xc, fc)
        r: "f32[1, 4, 4, 2, 2]" = torch.ops.aten.view_as_real.default(m)
        y: "f32[1, 4, 4, 4]" = torch.ops.aten.view.default(r, [1, 4, 4, 4])
        return (y,)
