# Graph[rank=0](fw, gid=0)
# A TorchDynamo graph: placeholder names spell the module path of each parameter.
class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_mlp_modules_fc1_parameters_weight_: "f32[8, 6]", L_self_modules_mlp_modules_fc2_parameters_weight_: "f32[3, 8]", L_x_: "f32[4, 6]"):
        t: "f32[6, 8]" = torch.ops.aten.t.default(L_self_modules_mlp_modules_fc1_parameters_weight_)
        h: "f32[4, 8]" = torch.ops.aten.mm.default(L_x_, t)
        r: "f32[4, 8]" = torch.ops.aten.relu.default(h)
        t_1: "f32[8, 3]" = torch.ops.aten.t.default(L_self_modules_mlp_modules_fc2_parameters_weight_)
        y: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        return (y,)
