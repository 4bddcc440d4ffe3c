//===- OutlineAttentions.cpp - one private function per attention ---------===//
//
// A function of hundreds of fused attentions (one per layer of a model)
// lowers in time superlinear in its size on the CPU path: upstream
// SCF-to-CF and the buffer deallocation simplification work on the whole
// function body (600 chained attentions: 39 s, 6.4 GB). Moving each
// attention into a private function of its own keeps every body small;
// one-shot bufferization crosses the calls (function boundaries) and the
// results are the same.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOUTLINE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
/// Values made from nothing (constants, a static tensor.empty) are cloned
/// into the callee rather than passed: the kernels and the tiling read a
/// constant scale or score_mod table as such, and an init tensor then
/// needs no buffer from the caller.
bool madeFromNothing(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->getNumResults() == 1 && isMemoryEffectFree(def);
}

void outline(attn::AttentionOp op, func::FuncOp caller, SymbolTable &symbols,
             int64_t index) {
  // The values the op reads: its operands and what its score_mod region
  // uses from above.
  llvm::SetVector<Value> used(op->getOperands().begin(),
                              op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), used);
  SmallVector<Value> args;
  SmallVector<Type> argTypes;
  for (Value v : used)
    if (!madeFromNothing(v)) {
      args.push_back(v);
      argTypes.push_back(v.getType());
    }

  OpBuilder b(caller);
  auto fnType = b.getFunctionType(argTypes, op->getResultTypes());
  auto callee = func::FuncOp::create(
      b, op.getLoc(), (caller.getSymName() + "_attn" + Twine(index)).str(),
      fnType);
  callee.setPrivate();
  symbols.insert(callee, Block::iterator(caller));

  Block *entry = callee.addEntryBlock();
  OpBuilder body = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(args, entry->getArguments()))
    map.map(v, arg);
  for (Value v : used)
    if (madeFromNothing(v))
      map.map(v, body.clone(*v.getDefiningOp())->getResult(0));
  Operation *clone = body.clone(*op, map);
  func::ReturnOp::create(body, op.getLoc(), clone->getResults());

  OpBuilder at(op);
  auto call = func::CallOp::create(at, op.getLoc(), callee, args);
  op->replaceAllUsesWith(call.getResults());
  op->erase();
}

struct AttnOutlinePass : public attn::impl::AttnOutlineBase<AttnOutlinePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : funcs) {
      if (fn.isDeclaration())
        continue;
      SmallVector<attn::AttentionOp> ops;
      fn.walk([&](attn::AttentionOp op) { ops.push_back(op); });
      if (ops.empty() || static_cast<int64_t>(ops.size()) < minCount)
        continue;
      for (auto [i, op] : llvm::enumerate(ops))
        outline(op, fn, symbols, i);
    }
  }
};
} // namespace
