# auto_functionalized_v2 writing a view of its base (_x_size/_x_stride/_x_storage_offset): the
# op writes rows 0..7 of the base only, which GraphGuard does not model: an opaque node.
class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[16, 32]", w: "bf16[32]"):
        empty: "bf16[16, 32]" = torch.ops.aten.empty.memory_format([16, 32], dtype = torch.bfloat16, device = device(type='cpu'), pin_memory = False)
        auto_functionalized_v2 = torch.ops.higher_order.auto_functionalized_v2(torch.ops._C.rms_norm.default, input = x, weight = w, epsilon = 1e-06, _result_base_index = 0, _result_size = (8, 32), _result_stride = (32, 1), _result_storage_offset = 0, _all_bases = [empty]);  empty = x = w = None
        getitem_1: "bf16[16, 32]" = auto_functionalized_v2[1];  auto_functionalized_v2 = None
        return (getitem_1,)
