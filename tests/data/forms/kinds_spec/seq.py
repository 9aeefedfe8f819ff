class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]"):
        neg: "f32[4, 8]" = torch.ops.aten.neg.default(x);  x = None
        return (neg,)
