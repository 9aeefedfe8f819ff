# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]", w: "bf16[4, 4]"):
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(x, w);  x = w = None
        return (mm,)
