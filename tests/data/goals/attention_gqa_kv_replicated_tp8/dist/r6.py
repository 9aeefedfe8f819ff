# Graph[rank=6](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, q: "f32[4, 1, 8]", k: "f32[4, 1, 8]", v: "f32[4, 1, 8]"):
        empty_like: "f32[4, 1, 8]" = torch.ops.aten.empty_like.default(q, pin_memory = False)
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops.vllm.unified_attention_with_output.default, query = q, key = k, value = v, output = empty_like, layer_name = 'model.layers.0.self_attn.attn');  q = k = v = empty_like = None
        y: "f32[4, 1, 8]" = auto_functionalized[1];  auto_functionalized = None
        return (y,)
