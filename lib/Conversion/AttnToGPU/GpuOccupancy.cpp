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
    // -1: each kernel's own request, from its description (attn.bundle,
    // or the entry of attn.bundles naming it).
    auto recorded = [&](StringRef kernel) -> int64_t {
      Operation *m = getOperation();
      SmallVector<DictionaryAttr> infos;
      if (auto one = m->getAttrOfType<DictionaryAttr>("attn.bundle"))
        infos.push_back(one);
      if (auto many = m->getAttrOfType<ArrayAttr>("attn.bundles"))
        for (Attribute a : many)
          if (auto d = dyn_cast<DictionaryAttr>(a)) {
            auto name = d.getAs<StringAttr>("kernel");
            if (name && name.getValue() == kernel)
              infos.push_back(d);
          }
      for (DictionaryAttr info : infos)
        if (auto n = info.getAs<IntegerAttr>("min_blocks"))
          return n.getInt();
      return 0;
    };
    getOperation().walk([&](gpu::GPUFuncOp func) {
      if (!func.isKernel())
        return;
      int64_t blocks = minBlocks == -1 ? recorded(func.getName()) : minBlocks;
      if (blocks > 0)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      IntegerAttr::get(IntegerType::get(&getContext(), 32),
                                       static_cast<int32_t>(blocks)));
    });
  }
};
} // namespace
