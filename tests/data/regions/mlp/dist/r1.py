# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 6]", w1: "f32[4, 6]", w2: "f32[3, 4]"):
        t: "f32[6, 4]" = torch.ops.aten.t.default(w1)
        h_par: "f32[4, 4]" = torch.ops.aten.mm.default(x, t)
        r: "f32[4, 4]" = torch.ops.aten.relu.default(h_par)
        t_1: "f32[4, 3]" = torch.ops.aten.t.default(w2)
        partial: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        all_reduce: "f32[4, 3]" = torch.ops._c10d_functional.all_reduce.default(partial, 'sum', 'tp')
        y: "f32[4, 3]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
        return (y,)
