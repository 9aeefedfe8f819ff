# Graph[rank=0](fw, gid=0)
# An AOT (make_fx/aot_autograd) dump printed with expanded_def: each placeholder's line carries
# its descriptor, whose target is the parameter's FQN.
class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[8, 6]",  # ParamAOTInput(target='mlp.fc1.weight')
        primals_2: "f32[3, 8]",  # ParamAOTInput(target='mlp.fc2.weight')
        primals_3: "f32[4, 6]",  # PlainAOTInput(idx=0)
    ):
        t: "f32[6, 8]" = torch.ops.aten.t.default(primals_1)
        h: "f32[4, 8]" = torch.ops.aten.mm.default(primals_3, t)
        r: "f32[4, 8]" = torch.ops.aten.relu.default(h)
        t_1: "f32[8, 3]" = torch.ops.aten.t.default(primals_2)
        y: "f32[4, 3]" = torch.ops.aten.mm.default(r, t_1)
        return (y,)
