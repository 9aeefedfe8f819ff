# Graph[rank=3](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[1, 2, 4, 8]", k: "f32[1, 1, 4, 8]", v: "f32[1, 1, 4, 8]"):
        y: "f32[1, 2, 4, 8]" = torch.ops.aten.scaled_dot_product_attention.default(q, k, v, is_causal = True, enable_gqa = True)
        return (y,)
