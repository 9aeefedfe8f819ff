# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[1, 4, 8, 2]", k: "f32[1, 4, 2, 8]"):
        expand: "f32[1, 4, 8, 2]" = torch.ops.aten.expand.default(q, [1, 4, 8, 2])
        view: "f32[4, 8, 2]" = torch.ops.aten.view.default(expand, [4, 8, 2])
        expand_1: "f32[1, 4, 2, 8]" = torch.ops.aten.expand.default(k, [1, 4, 2, 8])
        view_1: "f32[4, 2, 8]" = torch.ops.aten.view.default(expand_1, [4, 2, 8])
        bmm: "f32[4, 8, 8]" = torch.ops.aten.bmm.default(view, view_1)
        scores: "f32[1, 4, 8, 8]" = torch.ops.aten._unsafe_view.default(bmm, [1, 4, 8, 8])
        return (scores,)
