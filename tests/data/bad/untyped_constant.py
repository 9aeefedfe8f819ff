# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]"):
        # A tensor attribute the capture recorded without a type (or a value), read by an operator.
        _tensor_constant0 = self._tensor_constant0
        add: "f32[4, 4]" = torch.ops.aten.add.Tensor(x, _tensor_constant0);  x = _tensor_constant0 = None
        return (add,)
