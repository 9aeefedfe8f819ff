# Graph[rank=0](fw, gid=0)
class GraphModule(torch.nn.Module):
    def forward(self, g: "f32[2, 3, 4]", ids: "i64[2, 3]"):
        lt: "b8[2, 3]" = torch.ops.aten.lt.Scalar(ids, 0)
        ge: "b8[2, 3]" = torch.ops.aten.ge.Scalar(ids, 4)
        m: "b8[2, 3]" = torch.ops.aten.bitwise_or.Tensor(lt, ge)
        s: "i64[2, 3]" = torch.ops.aten.sub.Tensor(ids, 0)
        local: "i64[2, 3]" = torch.ops.aten.masked_fill.Scalar(s, m, 0)
        mu: "b8[2, 3, 1]" = torch.ops.aten.unsqueeze.default(m, -1)
        gm: "f32[2, 3, 4]" = torch.ops.aten.masked_fill.Scalar(g, mu, 0)
        dw: "f32[4, 4]" = torch.ops.aten.embedding_dense_backward.default(g, local, 4, -1, False)
        return (dw,)
