//===- my-compiler.cpp - a compiler that embeds the attn passes -----------===//
//
// Reads an MLIR file, runs its own pipeline in which attn's fusion and tiling
// are two stages among others, and prints the result. This is what a
// consumer writes: no attn-opt, only the library API.
//
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/InitAll.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: my-compiler FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect>();
  mlir::attn::registerAllAttnDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  pm.addPass(mlir::createCanonicalizerPass()); // the consumer's own stage
  pm.addPass(mlir::attn::createAttnFuse());
  mlir::attn::AttnTileOptions tile;
  tile.tileQ = 16;
  tile.tileKV = 16;
  pm.addPass(mlir::attn::createAttnTile(tile));
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
