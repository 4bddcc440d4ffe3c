//===- Pipelines.h - registered attn pipelines ------------------*- C++ -*-===//
#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> tileQ{*this, "tile-q",
                                     llvm::cl::desc("Query rows per tile"),
                                     llvm::cl::init(64)};
  PassOptions::Option<int64_t> tileKV{*this, "tile-kv",
                                      llvm::cl::desc("Keys per tile"),
                                      llvm::cl::init(64)};
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Recognize attention first (off: only lower attn ops "
                     "already present)"),
      llvm::cl::init(true)};
};

/// fuse -> tile -> attn-to-linalg -> bufferize -> loops -> LLVM dialect, for
/// a whole module that mlir-runner can execute.
void buildAttnCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers --attn-cpu-pipeline.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
