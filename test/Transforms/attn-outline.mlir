// attn-outline moves each attention of a function with at least min-count
// (default 2) of them into a private function of its own: values made from
// nothing that it reads are cloned in (the scale stays a constant, the init
// an empty tensor), other values become arguments, and a call takes the
// op's place.
// RUN: attn-opt %s --split-input-file --attn-outline | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-outline="min-count=1" | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s --split-input-file --attn-outline="min-count=3" | FileCheck %s --check-prefix=THREE

// Two chained attentions: two callees, in order, before the caller.
// CHECK-LABEL: func.func private @two_attn0(%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<6x8xf32>, %{{.*}}: tensor<6x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: %[[S:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: attn.attention {{.*}} scale(%[[S]]) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: return
// CHECK-LABEL: func.func private @two_attn1(
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: attn.attention {{.*}} causal
// CHECK-LABEL: func.func @two(
// CHECK-NOT: attn.attention
// CHECK: %[[O0:.*]] = call @two_attn0(%arg0, %arg1, %arg2)
// CHECK: %[[O1:.*]] = call @two_attn1(%[[O0]], %arg1, %arg2)
// CHECK: return %[[O1]]
// THREE-LABEL: func.func @two(
// THREE-NOT: call
// THREE-COUNT-2: attn.attention
func.func @two(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.125 : f32
  %s2 = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %o0 = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%e : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  %o1 = attn.attention ins(%o0, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s2)
      outs(%e : tensor<4x8xf32>) causal indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %o1 : tensor<4x8xf32>
}

// -----

// One attention: left in place by default, outlined with min-count=1; its
// score_mod region (with a constant of its own) moves with it.
// CHECK-LABEL: func.func @one(
// CHECK-NOT: call
// CHECK: attn.attention
// ONE-LABEL: func.func private @one_attn0(
// ONE: attn.attention
// ONE: math.tanh
// ONE-LABEL: func.func @one(
// ONE: call @one_attn0(
func.func @one(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%e : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] score_mod {
      ^bb0(%x: f32, %m: index, %n: index):
        %cap = arith.constant 5.0 : f32
        %y = arith.divf %x, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Attentions inside a loop: the loop's values become arguments.
// CHECK-LABEL: func.func private @loop_attn0(
// CHECK-LABEL: func.func private @loop_attn1(
// CHECK-LABEL: func.func @loop(
// CHECK: scf.for
// CHECK: call @loop_attn0(
// CHECK: call @loop_attn1(
func.func @loop(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %n: index) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %q) -> tensor<4x8xf32> {
    %a = attn.attention ins(%x, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
        outs(%e : tensor<4x8xf32>) indexing_maps = [
          affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
          affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
    %b = attn.attention ins(%a, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
        outs(%e : tensor<4x8xf32>) indexing_maps = [
          affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
          affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
    scf.yield %b : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// A name already taken: the callee gets a fresh one.
// CHECK-LABEL: func.func @clash_attn0()
// CHECK-LABEL: func.func private @clash_attn0_0(
// CHECK-LABEL: func.func private @clash_attn1(
// CHECK-LABEL: func.func @clash(
// CHECK: call @clash_attn0_0(
// CHECK: call @clash_attn1(
func.func @clash_attn0() {
  return
}
func.func @clash(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %o0 = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%e : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  %o1 = attn.attention ins(%o0, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%e : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %o1 : tensor<4x8xf32>
}
