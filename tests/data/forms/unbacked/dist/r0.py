# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "i64[2]", y: "f32[4]"):
        # File: /src/model.py:27 in forward, code: u = x.sum().item()
        sum_1: "i64[]" = torch.ops.aten.sum.default(x);  x = None
        item: "Sym(u0)" = torch.ops.aten.item.default(sum_1);  sum_1 = None
        ge_1: "Sym(u0 >= 0)" = item >= 0
        _assert_scalar_default = torch.ops.aten._assert_scalar.default(ge_1, "Runtime assertion failed for expression u0 >= 0 on node 'ge_1'");  ge_1 = _assert_scalar_default = None
        sym_constrain_range_for_size_default = torch.ops.aten.sym_constrain_range_for_size.default(item);  sym_constrain_range_for_size_default = None

        # File: /src/model.py:29 in forward, code: return torch.zeros(u, 4) + 1
        zeros: "f32[u0, 4]" = torch.ops.aten.zeros.default([item, 4], device = device(type='cpu'), pin_memory = False);  item = None
        add: "f32[u0, 4]" = torch.ops.aten.add.Tensor(zeros, y);  zeros = None
        return (add,)
