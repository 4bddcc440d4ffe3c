// RUN: attn-opt %s --attn-gpu-occupancy="min-blocks=3" | FileCheck %s
// RUN: attn-opt %s --attn-gpu-occupancy | FileCheck %s --check-prefix=NONE
// RUN: not attn-opt %s --attn-gpu-occupancy="min-blocks=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// Kernels get nvvm.minctasm (PTX .minnctapersm); device functions do not.
// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: nvvm.minctasm
// NONE-NOT: nvvm.minctasm
// BAD: error: min-blocks must be in [0, 32], got -1
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%x: memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @helper(%x: f32) -> f32 {
      gpu.return %x : f32
    }
  }
}
