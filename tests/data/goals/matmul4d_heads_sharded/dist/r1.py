# Graph[rank=1](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[1, 2, 8, 2]", k: "f32[1, 2, 2, 8]"):
        expand: "f32[1, 2, 8, 2]" = torch.ops.aten.expand.default(q, [1, 2, 8, 2])
        view: "f32[2, 8, 2]" = torch.ops.aten.view.default(expand, [2, 8, 2])
        expand_1: "f32[1, 2, 2, 8]" = torch.ops.aten.expand.default(k, [1, 2, 2, 8])
        view_1: "f32[2, 2, 8]" = torch.ops.aten.view.default(expand_1, [2, 2, 8])
        bmm: "f32[2, 8, 8]" = torch.ops.aten.bmm.default(view, view_1)
        scores: "f32[1, 2, 8, 8]" = torch.ops.aten._unsafe_view.default(bmm, [1, 2, 8, 8])
        return (scores,)
