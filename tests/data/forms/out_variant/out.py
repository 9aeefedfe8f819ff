# out= variants: read as the functional overload; the out tensor's name then means the result.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, 8]"):
        empty: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
        exp: "f32[4, 8]" = torch.ops.aten.exp.out(x, out = empty)
        empty_1: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
        mm: "f32[4, 8]" = torch.ops.aten.mm.out(empty, w, out = empty_1)
        empty_2: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
        add: "f32[4, 8]" = torch.ops.aten.add.out(empty_1, x, alpha = 2, out = empty_2)
        empty_3: "f32[4, 8]" = torch.ops.aten.empty.memory_format([4, 8], dtype = torch.float32, device = device(type='cpu'), pin_memory = False)
        fancy: "f32[4, 8]" = torch.ops.mylib.fancy.out(x, out = empty_3)
        return (exp, mm, add, empty_2, empty_3)
