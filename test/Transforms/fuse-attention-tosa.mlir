// RUN: attn-opt %s --attn-fuse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-fuse --attn-explain --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %exec-check %s
// The internal tosa-to-linalg run never prints errors: a function it cannot
// lower is left unchanged (exit 0, nothing on stderr without --attn-explain).
// RUN: attn-opt %s --attn-fuse --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: error

// TOSA attention: tosa.transpose of K, tosa.matmul, a scale by tosa.mul,
// reduce_max / sub / exp / reduce_sum with the axis kept, reciprocal and mul.
// The function is converted to linalg (the standard lowering) and fused.
// EXEC: ref=tosa amp=2.0
// CHECK-LABEL: func.func @tosa_softmax_reciprocal_f32
// CHECK-NOT: tosa.
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=1, dtype f32 -> f32
func.func @tosa_softmax_reciprocal_f32(%q: tensor<2x33x16xf32>, %k: tensor<2x40x16xf32>, %v: tensor<2x40x8xf32>) -> tensor<2x33x8xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x40x16xf32>) -> tensor<2x16x40xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x33x16xf32>, tensor<2x16x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x33x40xf32>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sc = tosa.mul %s, %c, %shift : (tensor<2x33x40xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x33x40xf32>
  %m = tosa.reduce_max %sc {axis = 2 : i32} : (tensor<2x33x40xf32>) -> tensor<2x33x1xf32>
  %d = tosa.sub %sc, %m : (tensor<2x33x40xf32>, tensor<2x33x1xf32>) -> tensor<2x33x40xf32>
  %e = tosa.exp %d : (tensor<2x33x40xf32>) -> tensor<2x33x40xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x33x40xf32>) -> tensor<2x33x1xf32>
  %r = tosa.reciprocal %sum : (tensor<2x33x1xf32>) -> tensor<2x33x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x33x40xf32>, tensor<2x33x1xf32>, tensor<1xi8>) -> tensor<2x33x40xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x33x40xf32>, tensor<2x40x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x33x8xf32>
  return %o : tensor<2x33x8xf32>
}

// -----

// f16 TOSA with an additive mask [1, M, N] broadcast over the batch.
// EXEC: ref=tosa amp=1.0 arg3=mask
// CHECK-LABEL: func.func @tosa_f16_additive_mask
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.125, mask=additive over (m,n), causal=no, batch dims=1, dtype f16 -> f16
func.func @tosa_f16_additive_mask(%q: tensor<3x17x64xf16>, %k: tensor<3x21x64xf16>, %v: tensor<3x21x32xf16>, %mask: tensor<1x17x21xf16>) -> tensor<3x17x32xf16> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<3x21x64xf16>) -> tensor<3x64x21xf16>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<3x17x64xf16>, tensor<3x64x21xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<3x17x21xf16>
  %c = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1xf16>}> : () -> tensor<1x1x1xf16>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sc = tosa.mul %s, %c, %shift : (tensor<3x17x21xf16>, tensor<1x1x1xf16>, tensor<1xi8>) -> tensor<3x17x21xf16>
  %sm = tosa.add %sc, %mask : (tensor<3x17x21xf16>, tensor<1x17x21xf16>) -> tensor<3x17x21xf16>
  %m = tosa.reduce_max %sm {axis = 2 : i32} : (tensor<3x17x21xf16>) -> tensor<3x17x1xf16>
  %d = tosa.sub %sm, %m : (tensor<3x17x21xf16>, tensor<3x17x1xf16>) -> tensor<3x17x21xf16>
  %e = tosa.exp %d : (tensor<3x17x21xf16>) -> tensor<3x17x21xf16>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<3x17x21xf16>) -> tensor<3x17x1xf16>
  %r = tosa.reciprocal %sum : (tensor<3x17x1xf16>) -> tensor<3x17x1xf16>
  %p = tosa.mul %e, %r, %shift : (tensor<3x17x21xf16>, tensor<3x17x1xf16>, tensor<1xi8>) -> tensor<3x17x21xf16>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<3x17x21xf16>, tensor<3x21x32xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<3x17x32xf16>
  return %o : tensor<3x17x32xf16>
}

// -----

// The normalization sums over the queries (axis 1) while the max is over the
// keys: not a softmax. The function stays TOSA.
// EXEC: ref=tosa nofuse
// CHECK-LABEL: func.func @tosa_sum_over_other_axis_rejected
// CHECK-NOT: attn.attention
// CHECK: tosa.reduce_sum
// EXPLAIN: remark: attention not fused: the softmax takes its max and its sum over different axes
func.func @tosa_sum_over_other_axis_rejected(%q: tensor<2x24x16xf32>, %k: tensor<2x24x16xf32>, %v: tensor<2x24x8xf32>) -> tensor<2x24x8xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x24x16xf32>) -> tensor<2x16x24xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x24x16xf32>, tensor<2x16x24xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x24x24xf32>
  %m = tosa.reduce_max %s {axis = 2 : i32} : (tensor<2x24x24xf32>) -> tensor<2x24x1xf32>
  %d = tosa.sub %s, %m : (tensor<2x24x24xf32>, tensor<2x24x1xf32>) -> tensor<2x24x24xf32>
  %e = tosa.exp %d : (tensor<2x24x24xf32>) -> tensor<2x24x24xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<2x24x24xf32>) -> tensor<2x1x24xf32>
  %r = tosa.reciprocal %sum : (tensor<2x1x24xf32>) -> tensor<2x1x24xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %e, %r, %shift : (tensor<2x24x24xf32>, tensor<2x1x24xf32>, tensor<1xi8>) -> tensor<2x24x24xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x24x24xf32>, tensor<2x24x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x24x8xf32>
  return %o : tensor<2x24x8xf32>
}

// -----

// A TOSA function that calls another one: the clone lowered on its own gets
// declarations of its module's functions, so it still verifies and fuses.
// CHECK-LABEL: func.func @tosa_calls_helper
// CHECK-NOT: tosa.
// CHECK: attn.attention
// CHECK: call @helper
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=1, dtype f32 -> f32
func.func @tosa_calls_helper(%q: tensor<2x33x16xf32>, %k: tensor<2x40x16xf32>, %v: tensor<2x40x8xf32>) -> tensor<2x33x8xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<2x40x16xf32>) -> tensor<2x16x40xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x33x16xf32>, tensor<2x16x40xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x33x40xf32>
  %c = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sc = tosa.mul %s, %c, %shift : (tensor<2x33x40xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<2x33x40xf32>
  %m = tosa.reduce_max %sc {axis = 2 : i32} : (tensor<2x33x40xf32>) -> tensor<2x33x1xf32>
  %d = tosa.sub %sc, %m : (tensor<2x33x40xf32>, tensor<2x33x1xf32>) -> tensor<2x33x40xf32>
  %e = tosa.exp %d : (tensor<2x33x40xf32>) -> tensor<2x33x40xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x33x40xf32>) -> tensor<2x33x1xf32>
  %r = tosa.reciprocal %sum : (tensor<2x33x1xf32>) -> tensor<2x33x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<2x33x40xf32>, tensor<2x33x1xf32>, tensor<1xi8>) -> tensor<2x33x40xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x33x40xf32>, tensor<2x40x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x33x8xf32>
  %o2 = func.call @helper(%o) : (tensor<2x33x8xf32>) -> tensor<2x33x8xf32>
  return %o2 : tensor<2x33x8xf32>
}
func.func @helper(%x: tensor<2x33x8xf32>) -> tensor<2x33x8xf32> {
  return %x : tensor<2x33x8xf32>
}

// -----

// No attention, and TOSA the standard lowering rejects (unranked): left
// unchanged, quietly; --attn-explain says why.
// CHECK-LABEL: func.func @tosa_unranked_no_attention
// CHECK: tosa.exp
// EXPLAIN: remark: attention not fused: this TOSA function does not convert to linalg ('tosa.exp' op failed level check: unranked tensor)
func.func @tosa_unranked_no_attention(%a: tensor<*xf32>) -> tensor<*xf32> {
  %e = tosa.exp %a : (tensor<*xf32>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// tosa.custom: left unchanged, quietly.
// CHECK-LABEL: func.func @tosa_custom_no_attention
// CHECK: tosa.custom
// EXPLAIN: remark: attention not fused: this TOSA function does not convert to linalg
func.func @tosa_custom_no_attention(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tosa.custom %a {domain_name = "x", operator_name = "y", implementation_attrs = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %e : tensor<4xf32>
}
