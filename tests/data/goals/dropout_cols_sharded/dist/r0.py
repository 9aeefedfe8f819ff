# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 3]"):
        native_dropout = torch.ops.aten.native_dropout.default(x, 0.1, True)
        y: "f32[4, 3]" = native_dropout[0]
        mask: "b8[4, 3]" = native_dropout[1];  native_dropout = None
        return (y, mask)
