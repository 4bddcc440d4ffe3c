// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-gpu-align-shared | FileCheck %s
// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-gpu-align-shared --convert-gpu-to-nvvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// The op with attn.align becomes the address of a global of that alignment
// (one per module and alignment, shared by its kernels); one without it is
// left to convert-gpu-to-nvvm's 16-byte global.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global internal @__attn_dynamic_shared_1024() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: gpu.func @aligned
// CHECK: %[[A:.+]] = llvm.mlir.addressof @__attn_dynamic_shared_1024 : !llvm.ptr<3>
// CHECK: llvm.insertvalue %[[A]], %{{.+}}[0]
// CHECK: llvm.insertvalue %[[A]], %{{.+}}[1]
// Offset 0, size 0 (the launch's), stride 1.
// CHECK: %[[O:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.insertvalue %[[O]], %{{.+}}[2]
// CHECK: %[[S:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK: llvm.insertvalue %[[S]], %{{.+}}[3, 0]
// CHECK: %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.insertvalue %[[ONE]], %{{.+}}[4, 0]
// CHECK: %[[M:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr<3>, ptr<3>, i64, array<1 x i64>, array<1 x i64>)> to memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[M]]
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK-LABEL: gpu.func @second
// CHECK: llvm.mlir.addressof @__attn_dynamic_shared_1024
// CHECK-LABEL: gpu.func @plain
// CHECK: gpu.dynamic_shared_memory

// After convert-gpu-to-nvvm the views index the aligned global, and the
// untagged op has the usual one.
// LLVM: llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64}
// LLVM: llvm.mlir.global internal @__attn_dynamic_shared_1024() {addr_space = 3 : i32, alignment = 1024 : i64}
// LLVM-LABEL: llvm.func @aligned
// LLVM: llvm.mlir.addressof @__attn_dynamic_shared_1024 : !llvm.ptr<3>
// LLVM: llvm.getelementptr
// LLVM-NOT: unrealized_conversion_cast
// LLVM-LABEL: llvm.func @plain
// LLVM: llvm.mlir.addressof @__dynamic_shmem__0
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @aligned(%out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %s = gpu.dynamic_shared_memory {attn.align = 1024 : i64} : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %s[%c64][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %x = memref.load %v[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @second(%out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %s = gpu.dynamic_shared_memory {attn.align = 1024 : i64} : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %s[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %x = memref.load %v[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<4xf32>
      gpu.return
    }
    gpu.func @plain(%out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %s = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %s[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %x = memref.load %v[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A symbol of the global's name that is not such a global (the program's
// own) gives the global a unique name instead.
// CHECK-LABEL: gpu.module @taken
// CHECK: llvm.mlir.global internal @__attn_dynamic_shared_1024_0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @__attn_dynamic_shared_1024(0 : i32) {addr_space = 0 : i32} : i32
// CHECK: llvm.mlir.addressof @__attn_dynamic_shared_1024_0 : !llvm.ptr<3>
module attributes {gpu.container_module} {
  gpu.module @taken {
    llvm.mlir.global internal @__attn_dynamic_shared_1024(0 : i32) : i32
    gpu.func @aligned(%out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %s = gpu.dynamic_shared_memory {attn.align = 1024 : i64} : memref<?xi8, #gpu.address_space<workgroup>>
      %v = memref.view %s[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
      %x = memref.load %v[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%out: memref<4xf32>) kernel {
      // expected-error @below {{attn.align must be a power of two >= 16}}
      %s = gpu.dynamic_shared_memory {attn.align = 1000 : i64} : memref<?xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
