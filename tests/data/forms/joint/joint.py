# A joint (forward + backward) graph as make_fx/aot_autograd print it: pytree parameters, the
# leaves' types on a line of their own, and the outputs through pytree.tree_unflatten.
class joint(torch.nn.Module):
    def forward(self, primals, tangents):
        primals_1: "f32[2, 3]"; primals_2: "f32[3, 4]"; tangents_1: "f32[2, 4]"; 

        primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # No stacktrace found for following nodes
        mm: "f32[2, 4]" = torch.ops.aten.mm.default(primals_1, primals_2);  primals_1 = primals_2 = None
        exp: "f32[2, 4]" = torch.ops.aten.exp.default(mm)
        mul: "f32[2, 4]" = torch.ops.aten.mul.Tensor(mm, tangents_1);  mm = tangents_1 = None
        return pytree.tree_unflatten([exp, mul, None], self._out_spec)
