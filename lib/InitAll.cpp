//===- InitAll.cpp - registration for embedders ---------------------------===//
#include "attn/InitAll.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

void mlir::attn::registerAllAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect, linalg::LinalgDialect, math::MathDialect,
                  scf::SCFDialect>();
}

void mlir::attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnPipelines();
}
