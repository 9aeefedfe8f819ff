class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]", w: "f32[8, 8]"):
        # File: /home/me/model.py:40 in forward, code: h = self.proj(x)
        # File: /usr/lib/python3.11/site-packages/torch/nn/modules/linear.py:125 in forward, code: return F.linear(input, self.weight, self.bias)
        mm: "f32[4, 8]" = torch.ops.aten.mm.default(x, w);  x = w = None

        # File: /usr/lib/python3.11/site-packages/torch/nn/modules/activation.py:101 in forward, code: return F.relu(input)
        relu: "f32[4, 8]" = torch.ops.aten.relu.default(mm);  mm = None

        # File: /home/me/model.py:41 in forward, code: h = outer(h)
        # File: /home/me/layers.py:7 in outer, code: return h.neg()
        neg: "f32[4, 8]" = torch.ops.aten.neg.default(relu);  relu = None
        return (neg,)
