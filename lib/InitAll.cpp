//===- InitAll.cpp - registration for embedders ---------------------------===//
#include "attn/InitAll.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::attn::registerAllAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, linalg::LinalgDialect, math::MathDialect,
                  scf::SCFDialect>();
  // --attn-gpu-pipeline serializes gpu.modules through LLVM IR and NVVM.
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void mlir::attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnPipelines();
}
