// RUN: attn-opt %s --split-input-file --attn-gpu-occupancy="min-blocks=3" | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-gpu-occupancy | FileCheck %s --check-prefix=AUTO
// RUN: attn-opt %s --split-input-file --attn-gpu-occupancy="min-blocks=0" | FileCheck %s --check-prefix=NONE
// RUN: not attn-opt %s --split-input-file --attn-gpu-occupancy="min-blocks=-2" 2>&1 | FileCheck %s --check-prefix=BAD

// Kernels get nvvm.minctasm (PTX .minnctapersm); device functions do not.
// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: nvvm.minctasm = 3 : i32
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: nvvm.minctasm
// NONE-NOT: nvvm.minctasm
// BAD: error: min-blocks must be in [-1, 32], got -2
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

// -----

// By default (-1) the request the kernel builder recorded in attn.bundle:
// none above, 2 here; an explicit min-blocks overrides it.
// AUTO-LABEL: gpu.func @kernel
// AUTO-NOT: nvvm.minctasm
// AUTO-LABEL: gpu.func @recorded
// AUTO-SAME: nvvm.minctasm = 2 : i32
// CHECK-LABEL: gpu.func @recorded
// CHECK-SAME: nvvm.minctasm = 3 : i32
module attributes {gpu.container_module, attn.bundle = {min_blocks = 2 : i64}} {
  gpu.module @kernels {
    gpu.func @recorded(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
