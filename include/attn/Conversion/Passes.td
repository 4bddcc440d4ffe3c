//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn ops to linalg, arith and math on tensors";
  let description = [{
    `attn.online_update` becomes a row max, the exponentials, the rescale by
    `α = exp(m - m')`, a row sum and the P·V contraction as `linalg.generic`
    ops; `attn.finalize` becomes one elementwise division. Any
    `attn.attention` still present is first tiled with the default tile sizes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn the module's attention into a gpu.launch kernel";
  let description = [{
    The module's one `attn.attention` (static shapes, constant scale) becomes
    `func.func @attn_fwd(q, k, v, [mask], [sink], out)` on memrefs launching
    one thread per query row over the online-softmax recurrence (f32 state,
    `α = exp(m - m')` rescales, one divide). Every other function is
    dropped; the module gets an `attn.bundle` attribute (arguments, grid,
    block) that `attn-bundle` turns into the bundle manifest. A SIMT
    baseline: no shared memory or tensor cores yet.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "Threads per block (query rows per block)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
