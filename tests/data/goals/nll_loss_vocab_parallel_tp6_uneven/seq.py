# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 15]", t: "i64[4]"):
        nll_loss_forward = torch.ops.aten.nll_loss_forward.default(x, t, None, 1, -100)
        nll: "f32[]" = nll_loss_forward[0]
        total_weight: "f32[]" = nll_loss_forward[1]
        return (nll, total_weight)
