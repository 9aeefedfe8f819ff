# Graph[rank=5](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 2]", w: "f32[3, 2]"):
        t: "f32[2, 3]" = torch.ops.aten.t.default(w)
        partial: "f32[4, 3]" = torch.ops.aten.mm.default(x, t)
        all_reduce: "f32[4, 3]" = torch.ops._c10d_functional.all_reduce.default(partial, 'sum', 'tp')
        y: "f32[4, 3]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
        return (y,)
