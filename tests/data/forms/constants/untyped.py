# A constant the capture left without a value's type, read by an operator.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4]"):
        _tensor_constant0 = self._tensor_constant0
        add: "f32[4]" = torch.ops.aten.add.Tensor(x, _tensor_constant0);  x = _tensor_constant0 = None
        return (add,)
