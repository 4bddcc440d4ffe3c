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

struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target: sm_80 or sm_90a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Binary format: isa (PTX text) or bin (cubin, ptxas)"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("SIMT kernel (f32, mask/sink tensors): threads per "
                     "block"),
      llvm::cl::init(128)};
  // Tensor-core kernel launch shape (see convert-attn-to-gpu); 0 picks the
  // default for the head dims.
  PassOptions::Option<int64_t> tileQ{
      *this, "tile-q",
      llvm::cl::desc("Query rows per block: 16 x warps x {1..4}"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tileKV{
      *this, "tile-kv",
      llvm::cl::desc("Keys per shared-memory tile (multiple of 16, <= 256)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> warps{
      *this, "warps", llvm::cl::desc("Warps per block (1-8)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> keyWarps{
      *this, "key-warps",
      llvm::cl::desc("Warps sharing each key tile, each with its own keys "
                     "and softmax state (1-4; 0: from the shapes)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("K/V shared-memory buffers, cp.async pipeline depth "
                     "(2-4)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> qShared{
      *this, "q-shared",
      llvm::cl::desc("Q fragments from shared memory every tile (1), in "
                     "registers (0), by register count (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> rescaleThreshold{
      *this, "rescale-threshold",
      llvm::cl::desc("Rescale O only when a row max grew by more than 2^N "
                     "(0: every key tile)"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> pipeline{
      *this, "pipeline",
      llvm::cl::desc("Issue Q K^T of the next key tile before the softmax of "
                     "this one (1; stages >= 3)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> wgmma{
      *this, "wgmma",
      llvm::cl::desc("Hopper wgmma kernel on sm_90a: -1 where it applies, 0 "
                     "never, 1 required"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> warpSpecialize{
      *this, "warp-specialize",
      llvm::cl::desc("Hopper kernel: a producer warpgroup streams the tiles "
                     "in (mbarriers), the others compute (setmaxnreg); -1: "
                     "for long non-causal key loops at D = 128"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> tma{
      *this, "tma",
      llvm::cl::desc("Hopper kernel: Q/K/V tiles by the tensor memory "
                     "accelerator (1), by cp.async (0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> persistent{
      *this, "persistent",
      llvm::cl::desc("Warp-specialized pipelined kernel: one block per "
                     "multiprocessor looping over the query tiles (1), one "
                     "block per tile (0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> shiftV{
      *this, "shift-v",
      llvm::cl::desc("Warp-specialized pipelined kernel with TMA: V of key "
                     "tile t - 1 in the stage of K of tile t (1), K and V of "
                     "one tile per stage (0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> pingpong{
      *this, "pingpong",
      llvm::cl::desc("Warp-specialized pipelined kernel: the two computing "
                     "warpgroups take turns on the tensor cores (1), not "
                     "(0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> keyBiasMma{
      *this, "key-bias-mma",
      llvm::cl::desc("Hopper kernel: a bias linear in the key index (ALiBi) "
                     "added on the tensor cores (1), by one fma per score "
                     "(0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> qRegs{
      *this, "q-regs",
      llvm::cl::desc("Hopper TF32 kernel: Q's A fragments in registers (1), "
                     "in shared memory (0), default (-1)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> explain{
      *this, "explain",
      llvm::cl::desc("Remark which kernel the attention gets and why not a "
                     "faster one"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> attention{
      *this, "attention",
      llvm::cl::desc("The attention to compile, by position in the module "
                     "(-1: all, a kernel each)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> splits{
      *this, "splits",
      llvm::cl::desc("Split-KV blocks per query tile (-1: from the shapes; "
                     "1: none; 2-256)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> minBlocks{
      *this, "min-blocks",
      llvm::cl::desc("Blocks per multiprocessor ptxas must leave registers "
                     "for (nvvm.minctasm; 0: no request; -1: the kernel's "
                     "default)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> f32Precision{
      *this, "f32-precision",
      llvm::cl::desc("f32 attention: 3xtf32 (tensor cores, f32-accurate), "
                     "tf32 (tensor cores, 10-bit mantissa products), ieee "
                     "(SIMT f32 FMAs)"),
      llvm::cl::init("3xtf32")};
};

/// fuse -> attn-to-gpu -> kernel outlining -> NVVM -> PTX/cubin, and its
/// two halves (attn-bundle reads the kernel's parameter order in between).
void buildAttnGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);
void buildAttnGpuKernelPipeline(OpPassManager &pm,
                                const GpuPipelineOptions &options);
void buildAttnGpuBinaryPipeline(OpPassManager &pm,
                                const GpuPipelineOptions &options);

/// fuse -> tile -> attn-to-linalg -> bufferize -> loops -> LLVM dialect, for
/// a whole module that mlir-runner can execute.
void buildAttnCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers --attn-cpu-pipeline and --attn-gpu-pipeline.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
