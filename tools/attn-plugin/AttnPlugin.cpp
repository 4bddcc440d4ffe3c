//===- AttnPlugin.cpp - attn dialect and passes as an MLIR plugin ---------===//
//
// Lets the stock driver run every attn pass and pipeline without linking
// attn-opt:
//
//   mlir-opt-22 --load-dialect-plugin=build/lib/AttnPlugin.so \
//               --load-pass-plugin=build/lib/AttnPlugin.so \
//               in.mlir --attn-fuse --attn-cpu-pipeline
//
// The plugin links the same shared libMLIR/libLLVM as Debian's mlir-opt, so
// one copy of MLIR is in the process.
//
//===----------------------------------------------------------------------===//
#include "attn/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnDialect", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            attn::registerAllAttnDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "AttnPasses", LLVM_VERSION_STRING,
          []() { attn::registerAttnPasses(); }};
}
