// Every code of both 8-bit float types through attn-expand-f8 (the CPU
// pipeline's lowering of arith.extf from them), executed, against the
// values the formats define, bit for bit (the f32 bits are printed) (check_f8_decode.py computes them from the
// sign/exponent/mantissa fields): NaN codes, subnormals, E5M2's infinities.
// RUN: attn-opt %s --attn-cpu-pipeline | mlir-runner -e decode_f8E4M3FN -entry-point-result=void -shared-libs=%runner-libs | %python %attn_src_root/test/lib/check_f8_decode.py f8E4M3FN
// RUN: attn-opt %s --attn-cpu-pipeline | mlir-runner -e decode_f8E5M2 -entry-point-result=void -shared-libs=%runner-libs | %python %attn_src_root/test/lib/check_f8_decode.py f8E5M2
// RUN: attn-opt %s --attn-expand-f8 | FileCheck %s

// CHECK-LABEL: func.func @decode_f8E4M3FN
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-LABEL: func.func @decode_f8E5M2
// CHECK-NOT: arith.extf %{{.*}} : f8E5M2
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
module {
  func.func @decode_f8E4M3FN() {
    %codes = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, -128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1]> : tensor<256xi8>
    %e = tensor.empty() : tensor<256xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%codes : tensor<256xi8>) outs(%e : tensor<256xi32>) {
    ^bb0(%c: i8, %o: i32):
      %x = arith.bitcast %c : i8 to f8E4M3FN
      %w = arith.extf %x : f8E4M3FN to f32
      %bits = arith.bitcast %w : f32 to i32
      linalg.yield %bits : i32
    } -> tensor<256xi32>
    %m = bufferization.to_buffer %r : tensor<256xi32> to memref<256xi32>
    %u = memref.cast %m : memref<256xi32> to memref<*xi32>
    func.call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
  func.func @decode_f8E5M2() {
    %codes = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, -128, -127, -126, -125, -124, -123, -122, -121, -120, -119, -118, -117, -116, -115, -114, -113, -112, -111, -110, -109, -108, -107, -106, -105, -104, -103, -102, -101, -100, -99, -98, -97, -96, -95, -94, -93, -92, -91, -90, -89, -88, -87, -86, -85, -84, -83, -82, -81, -80, -79, -78, -77, -76, -75, -74, -73, -72, -71, -70, -69, -68, -67, -66, -65, -64, -63, -62, -61, -60, -59, -58, -57, -56, -55, -54, -53, -52, -51, -50, -49, -48, -47, -46, -45, -44, -43, -42, -41, -40, -39, -38, -37, -36, -35, -34, -33, -32, -31, -30, -29, -28, -27, -26, -25, -24, -23, -22, -21, -20, -19, -18, -17, -16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1]> : tensor<256xi8>
    %e = tensor.empty() : tensor<256xi32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%codes : tensor<256xi8>) outs(%e : tensor<256xi32>) {
    ^bb0(%c: i8, %o: i32):
      %x = arith.bitcast %c : i8 to f8E5M2
      %w = arith.extf %x : f8E5M2 to f32
      %bits = arith.bitcast %w : f32 to i32
      linalg.yield %bits : i32
    } -> tensor<256xi32>
    %m = bufferization.to_buffer %r : tensor<256xi32> to memref<256xi32>
    %u = memref.cast %m : memref<256xi32> to memref<*xi32>
    func.call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>) attributes {llvm.emit_c_interface}
}
