# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, k: "f32[1, 1, 8, 4]"):
        unsqueeze: "f32[1, 1, 1, 8, 4]" = torch.ops.aten.unsqueeze.default(k, 2)
        expand: "f32[1, 1, 2, 8, 4]" = torch.ops.aten.expand.default(unsqueeze, [1, 1, 2, 8, 4])
        clone: "f32[1, 1, 2, 8, 4]" = torch.ops.aten.clone.default(expand, memory_format = torch.contiguous_format)
        rep: "f32[1, 2, 8, 4]" = torch.ops.aten.view.default(clone, [1, 2, 8, 4])
        return (rep,)
