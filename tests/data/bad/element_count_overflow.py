# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4611686018427387904, 4]"):
        # 2^62 x 4 elements wrap to 0 in 64 bits: the view below was once typed f32[0].
        view: "f32[0]" = torch.ops.aten.view.default(x, [-1]);  x = None
        return (view,)
