# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4, 6]", w: "f32[6]", b: "f32[6]"):
        native_layer_norm = torch.ops.aten.native_layer_norm.default(x, [6], w, b, 1e-05)
        y: "f32[4, 4, 6]" = native_layer_norm[0]
        return (y,)
