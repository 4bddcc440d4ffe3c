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
#include "llvm/Support/thread.h"

static int attnOptMain(int argc, char **argv) {
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

// MLIR's parser and verifier recurse once per nesting level; on the default
// 8 MiB stack a few thousand nested regions overflow it (stock mlir-opt
// crashes on 5000 nested scf.if). A 1 GiB stack (reserved, not committed)
// takes that depth.
int main(int argc, char **argv) {
  int rc = 1;
  llvm::thread worker(std::optional<unsigned>(1u << 30), [&] { rc = attnOptMain(argc, argv); });
  worker.join();
  return rc;
}
