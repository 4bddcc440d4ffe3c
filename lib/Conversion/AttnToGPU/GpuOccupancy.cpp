//===- GpuOccupancy.cpp - nvvm.minctasm on outlined kernels ---------------===//
//
// Register pressure decides how many blocks of the tensor-core kernel share
// a multiprocessor; this pass lets the pipeline trade registers (ptxas may
// spill) for resident blocks.
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
    if (minBlocks < 0 || minBlocks > 32) {
      getOperation().emitError("min-blocks must be in [0, 32], got ")
          << static_cast<int64_t>(minBlocks);
      return signalPassFailure();
    }
    if (minBlocks == 0)
      return;
    auto attr = IntegerAttr::get(IntegerType::get(&getContext(), 32),
                                 static_cast<int32_t>(minBlocks));
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (func.isKernel())
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(), attr);
    });
  }
};
} // namespace
