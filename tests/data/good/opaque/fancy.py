# A graph calling operators GraphGuard does not know (mylib::fancy_gelu, mylib::split_pair): they
# load as opaque nodes typed from their annotations (docs/graph-format.md).
# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8]"):
        # File: /src/model.py:3 in forward, code: y = mylib.fancy_gelu(x)
        fancy_gelu: "f32[4, 8]" = torch.ops.mylib.fancy_gelu.default(x, approximate = 'tanh');  x = None

        split_pair = torch.ops.mylib.split_pair.default(fancy_gelu, 4);  fancy_gelu = None
        getitem: "f32[4, 4]" = split_pair[0]
        getitem_1: "f32[4, 4]" = split_pair[1];  split_pair = None
        add: "f32[4, 4]" = torch.ops.aten.add.Tensor(getitem, getitem_1);  getitem = getitem_1 = None
        fancy_gelu_1: "f32[4, 4]" = torch.ops.mylib.fancy_gelu.default(add);  add = None
        return (fancy_gelu_1,)
