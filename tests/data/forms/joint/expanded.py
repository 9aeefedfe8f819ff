# print_readable(expanded_def=True): one parameter and one leaf type per line, args and kwargs.
class joint(torch.nn.Module):
    def forward(
        self,
        x,
        scale,
    ):
        x_1: "f32[4, 8]"  # PlainAOTInput(idx=0)
        scale_1: "f32[8]"  # ParamAOTInput(target='norm.scale')
        x_1, scale_1, = fx_pytree.tree_flatten_spec(([x], {'scale':scale}), self._in_spec)
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(x_1, scale_1);  x_1 = scale_1 = None
        return pytree.tree_unflatten([
            [mul],  # PlainAOTOutput(idx=0)
        ], self._out_spec)
