// Malformed input: a parse error with its location on stderr and exit code 1
// (never an abort or a crash).
// RUN: not attn-opt %s 2>&1 | FileCheck %s
// RUN: attn-opt %s > /dev/null 2>&1; test $? -eq 1
// RUN: not attn-opt %s --attn-cpu-pipeline 2>&1 | FileCheck %s

// CHECK: parse-error.mlir:[[@LINE+3]]:{{[0-9]+}}: error:
func.func @broken(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  %r = attn.attention ins(%q, %q : tensor<4x8xf32>) scale(%s)
  return %r : tensor<4x8xf32>
}
