// A [batch, heads, seq, head_dim] attention as a frontend writes it:
// softmax(Q K^T / sqrt(64)) V with linalg named ops and linalg.softmax.
//   build/bin/attn-opt examples/attention.mlir --attn-fuse --attn-explain
//   build/bin/attn-opt examples/attention.mlir --attn-fuse --attn-tile
func.func @mha(%q: tensor<16x1000x64xf16>, %k: tensor<16x1000x64xf16>, %v: tensor<16x1000x64xf16>) -> tensor<16x1000x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<16x1000x1000xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<16x1000x1000xf16>) -> tensor<16x1000x1000xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<16x1000x64xf16>, tensor<16x1000x64xf16>)
    outs(%z : tensor<16x1000x1000xf16>) -> tensor<16x1000x1000xf16>
  %c = arith.constant dense<8.0> : tensor<16x1000x1000xf16>
  %e2 = tensor.empty() : tensor<16x1000x1000xf16>
  %sc = linalg.div ins(%s, %c : tensor<16x1000x1000xf16>, tensor<16x1000x1000xf16>)
    outs(%e2 : tensor<16x1000x1000xf16>) -> tensor<16x1000x1000xf16>
  %e3 = tensor.empty() : tensor<16x1000x1000xf16>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<16x1000x1000xf16>)
    outs(%e3 : tensor<16x1000x1000xf16>) -> tensor<16x1000x1000xf16>
  %eo = tensor.empty() : tensor<16x1000x64xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<16x1000x64xf16>) -> tensor<16x1000x64xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<16x1000x1000xf16>, tensor<16x1000x64xf16>)
    outs(%zo : tensor<16x1000x64xf16>) -> tensor<16x1000x64xf16>
  return %o : tensor<16x1000x64xf16>
}
