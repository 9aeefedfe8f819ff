# auto_functionalized_v2 (torch >= 2.6) whose mutated arguments are whole bases: read as
# auto_functionalized (v1) of the same operator.
class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[16, 32]", r: "bf16[16, 32]", w: "bf16[32]"):
        clone: "bf16[16, 32]" = torch.ops.aten.clone.default(x);  x = None
        clone_1: "bf16[16, 32]" = torch.ops.aten.clone.default(r);  r = None
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops._C.fused_add_rms_norm.default, weight = w, epsilon = 1e-06, _input_base_index = 0, _residual_base_index = 1, _all_bases = [clone, clone_1]);  clone = clone_1 = w = None
        getitem_1: "bf16[16, 32]" = auto_functionalized_v2[1]
        getitem_2: "bf16[16, 32]" = auto_functionalized_v2[2];  auto_functionalized_v2 = None
        return (getitem_1, getitem_2)
