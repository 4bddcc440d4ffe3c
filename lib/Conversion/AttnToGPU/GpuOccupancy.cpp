//===- GpuOccupancy.cpp - nvvm.minctasm on outlined kernels ---------------===//
//
// Register pressure decides how many blocks of the tensor-core kernel share
// a multiprocessor; this pass lets the pipeline trade registers (ptxas may
// spill) for resident blocks. By default it asks for what the kernel
// builder recorded (`min_blocks` in the module's attn.bundle).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUOCCUPANCY
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnGpuOccupancyPass
    : public attn::impl::AttnGpuOccupancyBase<AttnGpuOccupancyPass> {
  using AttnGpuOccupancyBase::AttnGpuOccupancyBase;
  void runOnOperation() override {
    if (minBlocks < -1 || minBlocks > 32) {
      // At the kernels (they carry the attention's location).
      getOperation().walk([&](gpu::GPUFuncOp func) {
        if (func.isKernel())
          emitError(func.getLoc(), "min-blocks must be in [-1, 32], got ")
              << static_cast<int64_t>(minBlocks);
      });
      return signalPassFailure();
    }
    int64_t blocks = minBlocks;
    if (blocks == -1) {
      blocks = 0;
      if (auto info =
              getOperation()->getAttrOfType<DictionaryAttr>("attn.bundle"))
        if (auto n = info.getAs<IntegerAttr>("min_blocks"))
          blocks = n.getInt();
    }
    if (blocks <= 0)
      return;
    auto attr = IntegerAttr::get(IntegerType::get(&getContext(), 32),
                                 static_cast<int32_t>(blocks));
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel())
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), attr);
    });
  }
};
} // namespace
