# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, l_self_modules_mlp_modules_fc2_parameters_weight_: "f32[3, 4]", l_self_modules_mlp_modules_fc1_parameters_weight_: "f32[4, 6]", L_x_: "f32[4, 6]"):
        t: "f32[6, 4]" = torch.ops.aten.t.default(l_self_modules_mlp_modules_fc1_parameters_weight_)
        h_par: "f32[4, 4]" = torch.ops.aten.mm.default(L_x_, t)
        r: "f32[4, 4]" = torch.ops.aten.relu.default(h_par)
        t_1: "f32[4, 3]" = torch.ops.aten.t.default(l_self_modules_mlp_modules_fc2_parameters_weight_)
        partial: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        all_reduce: "f32[4, 3]" = torch.ops._c10d_functional.all_reduce.default(partial, 'sum', 'tp')
        y: "f32[4, 3]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
        return (y,)
