# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]"):
        view = torch.ops.aten.view.default(x, [4611686018427387904, 4, -1]);  x = None
        return (view,)
