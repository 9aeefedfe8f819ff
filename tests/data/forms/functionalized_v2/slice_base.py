# auto_functionalized_v2 writing a slice of its base (_x_slice_dim/_start/_end): opaque.
class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[8, 32]", w: "bf16[32]", buf: "bf16[16, 32]"):
        clone: "bf16[16, 32]" = torch.ops.aten.clone.default(buf);  buf = None
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops._C.rms_norm.default, input = x, weight = w, epsilon = 1e-06, _result_base_index = 0, _result_slice_dim = 0, _result_slice_start = 8, _result_slice_end = 16, _all_bases = [clone]);  clone = x = w = None
        getitem_1: "bf16[16, 32]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None
        return (getitem_1,)
