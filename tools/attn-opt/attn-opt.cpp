//===- attn-opt.cpp - mlir-opt with the attn dialect and passes -----------===//
#include "attn/InitAll.h"
#include "attn/Support/KeptStatistic.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // Release LLVM compiles pass statistics out; the attn passes keep theirs
  // and they are printed here for --mlir-pass-statistics.
  bool statistics = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = llvm::StringRef(argv[i]).ltrim('-');
    statistics |= arg == "mlir-pass-statistics";
  }
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::attn::registerAllAttnDialects(registry);
  mlir::LogicalResult result = mlir::MlirOptMain(
      argc, argv, "attn-opt: attention fusion for MLIR\n", registry);
  if (statistics && !mlir::attn::llvmStatisticsEnabled())
    mlir::attn::printKeptStatistics(llvm::errs());
  return mlir::asMainReturnCode(result);
}
