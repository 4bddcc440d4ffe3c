// attn-fold-length-mask: a mask n < lengths[b] computed by the program
// (the key index as linalg.index or an iota constant, against an i32
// length per sequence) becomes attn.length_mask; other masks stay (with
// --attn-explain a remark says why).
// RUN: attn-opt %s --split-input-file --attn-fold-length-mask --attn-explain --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @index_form
// CHECK: %[[M:.*]] = attn.length_mask %{{.*}} : tensor<4xi32> -> tensor<4x300xi1>
// CHECK: mask(%[[M]] :
func.func @index_form(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %nn = arith.index_cast %n : index to i32
    %keep = arith.cmpi slt, %nn, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask n < lengths[b]: attn.length_mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}

// -----

// len > n is the same comparison.
// CHECK-LABEL: func.func @swapped
// CHECK: attn.length_mask
func.func @swapped(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %nn = arith.index_cast %n : index to i32
    %keep = arith.cmpi sgt, %len, %nn : i32
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask n < lengths[b]: attn.length_mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}

// -----

// torch-mlir's form: arange(N) as a constant, compared per element.
// CHECK-LABEL: func.func @iota_form
// CHECK: attn.length_mask
func.func @iota_form(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %iota = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275, 276, 277, 278, 279, 280, 281, 282, 283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299]> : tensor<300xi32>
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (n)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens, %iota : tensor<4xi32>, tensor<300xi32>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i32, %pos: i32, %out: i1):
    %keep = arith.cmpi slt, %pos, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask n < lengths[b]: attn.length_mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}

// -----

// Unsigned: a negative length would keep every key, not none.
// CHECK-LABEL: func.func @unsigned
// CHECK-NOT: attn.length_mask
func.func @unsigned(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %nn = arith.index_cast %n : index to i32
    %keep = arith.cmpi ult, %nn, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask left as a tensor (not per-sequence key counts: the comparison is not n < length (signed))}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}

// -----

// n <= len keeps one key more.
// CHECK-LABEL: func.func @inclusive
// CHECK-NOT: attn.length_mask
func.func @inclusive(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %nn = arith.index_cast %n : index to i32
    %keep = arith.cmpi sle, %nn, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask left as a tensor (not per-sequence key counts: the comparison is not n < length (signed))}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}

// -----

// i64 lengths: attn.length_mask takes i32.
// CHECK-LABEL: func.func @i64_lengths
// CHECK-NOT: attn.length_mask
func.func @i64_lengths(%q: tensor<4x2x1x64xf16>, %k: tensor<4x2x300x64xf16>, %v: tensor<4x2x300x64xf16>, %lens: tensor<4xi64>, %o: tensor<4x2x1x64xf16>) -> tensor<4x2x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %me = tensor.empty() : tensor<4x300xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi64>) outs(%me : tensor<4x300xi1>) {
  ^bb0(%len: i64, %out: i1):
    %n = linalg.index 1 : index
    %nn = arith.index_cast %n : index to i64
    %keep = arith.cmpi slt, %nn, %len : i64
    linalg.yield %keep : i1
  } -> tensor<4x300xi1>
  // expected-remark @below {{mask left as a tensor (not per-sequence key counts: not the key index against an i32 length)}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x64xf16>, tensor<4x2x300x64xf16>, tensor<4x2x300x64xf16>) scale(%s)
      mask(%m : tensor<4x300xi1>) outs(%o : tensor<4x2x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x64xf16>
  return %r : tensor<4x2x1x64xf16>
}
