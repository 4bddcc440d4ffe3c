//===- Pipelines.cpp - --attn-cpu-pipeline --------------------------------===//
#include "attn/Pipelines/Pipelines.h"
#include "attn/Conversion/Passes.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// The CPU lowering of one module (its own functions, not those of modules
/// nested in it: one-shot bufferization and the function passes below see
/// only the module's own symbol table).
static void buildCpuModulePipeline(OpPassManager &pm,
                                   const attn::CpuPipelineOptions &options) {
  using namespace attn;
  if (options.fuse) {
    pm.addPass(createAttnFuse());
    pm.addPass(createAttnFoldPageGather());
    pm.addPass(createAttnFoldLengthMask());
  }
  // TOSA left unfused is lowered the standard way.
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  // Each attention of a many-attention function in a function of its own:
  // the lowering below is superlinear in a function's size.
  pm.addPass(createAttnOutline());
  pm.addPass(createAttnTile(AttnTileOptions{options.tileQ, options.tileKV}));
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createAttnDecomposeAggregates());
  pm.addPass(createCanonicalizerPass());
  // Rank-reducing slices name their dropped dims explicitly before
  // memref.subview would guess them again.
  pm.addPass(createAttnExplicitUnitDrops());

  bufferization::OneShotBufferizePassOptions bufOpts;
  bufOpts.bufferizeFunctionBoundaries = true;
  // The running max is recomputed into a fresh row buffer each key tile.
  bufOpts.allowReturnAllocsFromLoops = true;
  bufOpts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufOpts));
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  // Results returned across calls (attn-outline's) may leave clones.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // The CPU runs query tiles one after another (after bufferization: the
  // conversion does not handle scf.forall with tensor shared_outs).
  pm.addNestedPass<func::FuncOp>(createForallToForLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createAttnExpandF8());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
/// Runs the per-module CPU lowering on every module of the input, innermost
/// first, so an attention in a nested builtin.module is lowered as one at
/// the top level is.
using attn::CpuPipelineOptions;
struct CpuModulesPass
    : public PassWrapper<CpuModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CpuModulesPass)
  CpuModulesPass(const CpuPipelineOptions &options) {
    this->options.copyOptionValuesFrom(options);
    buildCpuModulePipeline(pipeline, options);
  }
  CpuModulesPass(const CpuModulesPass &other)
      : PassWrapper(other), pipeline(other.pipeline) {
    options.copyOptionValuesFrom(other.options);
  }
  StringRef getArgument() const override { return "attn-cpu-modules"; }
  StringRef getDescription() const override {
    return "The attn CPU lowering on every module, innermost first";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    pipeline.getDependentDialects(registry);
  }
  void runOnOperation() override {
    SmallVector<ModuleOp> modules;
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](ModuleOp m) { modules.push_back(m); });
    for (ModuleOp m : modules) {
      OpPassManager pm = pipeline;
      if (failed(runPipeline(pm, m)))
        return signalPassFailure();
    }
  }
  CpuPipelineOptions options;
  OpPassManager pipeline{ModuleOp::getOperationName()};
};
} // namespace

void attn::buildAttnCpuPipeline(OpPassManager &pm,
                                const CpuPipelineOptions &options) {
  pm.addPass(std::make_unique<CpuModulesPass>(options));
}

void attn::buildAttnGpuKernelPipeline(OpPassManager &pm,
                                      const GpuPipelineOptions &options) {
  pm.addPass(createAttnFuse());
  pm.addPass(createAttnFoldPageGather());
  pm.addPass(createAttnFoldLengthMask());
  ConvertAttnToGPUOptions gpuOpts;
  gpuOpts.threads = options.threads;
  gpuOpts.tileQ = options.tileQ;
  gpuOpts.tileKV = options.tileKV;
  gpuOpts.warps = options.warps;
  gpuOpts.stages = options.stages;
  gpuOpts.qShared = options.qShared;
  gpuOpts.rescaleThreshold = options.rescaleThreshold;
  gpuOpts.pipeline = options.pipeline;
  gpuOpts.chip = options.chip;
  gpuOpts.wgmma = options.wgmma;
  gpuOpts.warpSpecialize = options.warpSpecialize;
  gpuOpts.pingpong = options.pingpong;
  gpuOpts.keyBiasMma = options.keyBiasMma;
  gpuOpts.qRegs = options.qRegs;
  gpuOpts.tma = options.tma;
  gpuOpts.persistent = options.persistent;
  gpuOpts.shiftV = options.shiftV;
  gpuOpts.minBlocks = options.minBlocks;
  gpuOpts.splits = options.splits;
  gpuOpts.keyWarps = options.keyWarps;
  gpuOpts.f32Precision = options.f32Precision;
  gpuOpts.explain = options.explain;
  gpuOpts.attention = options.attention;
  pm.addPass(createConvertAttnToGPU(gpuOpts));
  // Outline before any canonicalization: hoisted constants would otherwise
  // become kernel parameters. The kernel takes one pointer per tensor.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAttnGpuOccupancy(AttnGpuOccupancyOptions{options.minBlocks}));
  pm.addPass(createAttnGpuAlignShared());
}

void attn::buildAttnGpuBinaryPipeline(OpPassManager &pm,
                                      const GpuPipelineOptions &options) {
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  // sm_80: PTX 7.4 for cp.async's L2::128B prefetch qualifier (with 7.0
  // ptxas refused every kernel that copies rows, so sm_80 bundles had no
  // cubin and their PTX did not JIT-compile either).
  nvvm.cubinFeatures = options.chip == "sm_80" ? "+ptx74" : "+ptx80";
  nvvm.cubinFormat = options.format;
  nvvm.kernelUseBarePtrCallConv = true;
  nvvm.optLevel = 3;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void attn::buildAttnGpuPipeline(OpPassManager &pm,
                                const GpuPipelineOptions &options) {
  buildAttnGpuKernelPipeline(pm, options);
  buildAttnGpuBinaryPipeline(pm, options);
}

void attn::registerAttnPipelines() {
  PassPipelineRegistration<GpuPipelineOptions>(
      "attn-gpu-pipeline",
      "Fuse attention and compile it to a GPU kernel (PTX or cubin in a "
      "gpu.binary)",
      buildAttnGpuPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "attn-cpu-pipeline",
      "Fuse and tile attention, then lower the whole module to the LLVM "
      "dialect for mlir-runner",
      buildAttnCpuPipeline);
}
