# The leaves carry no types (the graph's placeholders had no meta['val']).
class joint(torch.nn.Module):
    def forward(self, primals, tangents):
        primals_1, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        mul = torch.ops.aten.mul.Tensor(primals_1, tangents_1);  primals_1 = tangents_1 = None
        return pytree.tree_unflatten([mul], self._out_spec)
