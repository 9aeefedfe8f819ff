# Graph[rank=3](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[2, 2, 5, 8]", k: "f32[2, 1, 5, 8]", v: "f32[2, 1, 5, 4]"):
        y: "f32[2, 2, 5, 4]" = torch.ops.aten.scaled_dot_product_attention.default(q, k, v, is_causal = True, enable_gqa = True)
        return (y,)
