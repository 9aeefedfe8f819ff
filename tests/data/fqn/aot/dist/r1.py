# Graph[rank=1](fw, gid=0)
# D's placeholders come in another order than S's: the FQNs, not the names, pair them.
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[3, 4]",  # ParamAOTInput(target='mlp.fc2.weight')
        primals_2: "f32[4, 6]",  # ParamAOTInput(target='mlp.fc1.weight')
        primals_3: "f32[4, 6]",  # PlainAOTInput(idx=0)
    ):
        t: "f32[6, 4]" = torch.ops.aten.t.default(primals_2)
        h_par: "f32[4, 4]" = torch.ops.aten.mm.default(primals_3, t)
        r: "f32[4, 4]" = torch.ops.aten.relu.default(h_par)
        t_1: "f32[4, 3]" = torch.ops.aten.t.default(primals_1)
        partial: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        all_reduce: "f32[4, 3]" = torch.ops._c10d_functional.all_reduce.default(partial, 'sum', 'tp')
        y: "f32[4, 3]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
        return (y,)
