# The out tensor was read (viewed) before the write: the view would see the write.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]"):
        empty: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
        view: "f32[32]" = torch.ops.aten.view.default(empty, [32])
        exp: "f32[4, 8]" = torch.ops.aten.exp.out(x, out = empty)
        return (exp, view)
