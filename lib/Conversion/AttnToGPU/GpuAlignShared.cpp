//===- GpuAlignShared.cpp - aligned dynamic shared memory -----------------===//
//
// convert-gpu-to-nvvm gives `gpu.dynamic_shared_memory` a 16-byte aligned
// global. The Hopper kernel's swizzled buffers need 1024-byte alignment, so
// it rounds the address up at run time; with only 16 known, that pad is a
// runtime value live through the whole kernel (ptxas spilled it in the
// persistent consumers). A global declared with the alignment makes the pad
// a constant LLVM folds.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUALIGNSHARED
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
/// NVVM's shared (workgroup) address space.
constexpr unsigned kSharedSpace = 3;

struct AttnGpuAlignSharedPass
    : public attn::impl::AttnGpuAlignSharedBase<AttnGpuAlignSharedPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](gpu::GPUModuleOp module) {
      SmallVector<gpu::DynamicSharedMemoryOp> ops;
      module.walk([&](gpu::DynamicSharedMemoryOp op) {
        if (op->hasAttr("attn.align"))
          ops.push_back(op);
      });
      for (gpu::DynamicSharedMemoryOp op : ops)
        failed |= replace(module, op).failed();
    });
    if (failed)
      signalPassFailure();
  }

  LogicalResult replace(gpu::GPUModuleOp module,
                        gpu::DynamicSharedMemoryOp op) {
    auto alignAttr = op->getAttrOfType<IntegerAttr>("attn.align");
    if (!alignAttr || alignAttr.getInt() < 16 ||
        !llvm::isPowerOf2_64(alignAttr.getInt()))
      return op.emitError("attn.align must be a power of two >= 16");
    auto memrefType = op.getResultMemref().getType();
    if (memrefType.getRank() != 1 || !memrefType.getLayout().isIdentity())
      return op.emitError("attn.align takes a 1-d identity memref");
    const int64_t align = alignAttr.getInt();
    MLIRContext *ctx = op.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx, kSharedSpace);

    // One global per alignment and module (every kernel of the module may
    // share it: each one's dynamic shared memory starts there).
    // A symbol of that name that is not such a global (the program's own)
    // makes the name unique instead.
    auto byteArray = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 0);
    auto fits = [&](Operation *sym) {
      auto g = dyn_cast_or_null<LLVM::GlobalOp>(sym);
      return g && g.getAddrSpace() == kSharedSpace &&
             g.getGlobalType() == byteArray &&
             g.getAlignment().value_or(0) == static_cast<uint64_t>(align);
    };
    const std::string stem = "__attn_dynamic_shared_" + std::to_string(align);
    std::string name = stem;
    for (unsigned k = 0;
         module.lookupSymbol(name) && !fits(module.lookupSymbol(name)); ++k)
      name = stem + "_" + std::to_string(k);
    if (!module.lookupSymbol(name)) {
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      LLVM::GlobalOp::create(mb, module.getLoc(), byteArray,
                             /*isConstant=*/false, LLVM::Linkage::Internal,
                             name, Attribute(), align, kSharedSpace);
    }

    // The memref descriptor convert-gpu-to-nvvm would build: both pointers
    // at the global, offset 0, size 0 (the size is the launch's), stride 1.
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto i64 = b.getI64Type();
    auto dims = LLVM::LLVMArrayType::get(i64, 1);
    auto descType = LLVM::LLVMStructType::getLiteral(
        ctx, {ptrType, ptrType, i64, dims, dims});
    Value addr = LLVM::AddressOfOp::create(b, loc, ptrType, name);
    Value desc = LLVM::PoisonOp::create(b, loc, descType);
    auto insert = [&](Value v, ArrayRef<int64_t> pos) {
      desc = LLVM::InsertValueOp::create(b, loc, desc, v, pos);
    };
    auto c = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    insert(addr, {0});
    insert(addr, {1});
    insert(c(0), {2});
    insert(c(0), {3, 0});
    insert(c(1), {4, 0});
    Value memref = UnrealizedConversionCastOp::create(b, loc, memrefType, desc)
                       .getResult(0);
    op.getResultMemref().replaceAllUsesWith(memref);
    op.erase();
    return success();
  }
};
} // namespace
