//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn ops to linalg, arith and math on tensors";
  let description = [{
    `attn.online_update` becomes a row max, the exponentials, the rescale by
    `α = exp(m - m')`, a row sum and the P·V contraction as `linalg.generic`
    ops; `attn.finalize` becomes one elementwise division. Any
    `attn.attention` still present is first tiled with the default tile sizes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Turn the module's attention into a gpu.launch kernel";
  let description = [{
    The module's `attn.attention` (constant scale; static shapes, or
    dynamic batch dims and query/key lengths, which become index arguments
    and int64 kernel parameters) becomes
    `func.func @attn_fwd(q, k, v, [mask], [sink], out)` on memrefs with one
    `gpu.launch`; every other function is dropped and the module gets an
    `attn.bundle` attribute (arguments, grid, block, shared memory, launch
    shape, source location) that `attn-bundle` turns into the bundle
    manifest. A module with several attentions (one per layer) gets one
    host function and kernel each, `@attn_fwd_0`, `@attn_fwd_1`, ... in
    module order, described by the array `attn.bundles`; `attention=i`
    takes the i-th alone (as `@attn_fwd`).

    f16/bf16 attention (output of the same type) without mask/sink tensors,
    with Q/K rows contiguous along d, V rows along e, and D, E multiples of
    16 gets the tensor-core kernel: one block per (query tile, flattened
    batch), Q staged in shared memory, K/V tiles streamed through `stages`
    shared-memory buffers by cp.async, ldmatrix fragments, mma.sync
    m16n8k16 for Q·Kᵀ and P·V with f32 accumulators, P kept in registers,
    row max/sum by quad shuffles, exp2 with the scale folded in, lazy
    rescaling of O (only when a row max grew by more than
    2^rescale-threshold; exact), one divide per row, the output block
    written with 16-byte stores through shared memory. Causal and window
    bounds skip invisible key tiles; only boundary tiles are masked.
    With `chip=sm_90a` and D, E in {64, 128} the same attention gets the
    Hopper kernel instead (`wgmma`): 64 query rows per warpgroup, Q and the
    K/V tiles in 128-byte-swizzled shared memory read by wgmma through
    matrix descriptors, P from registers, the same online softmax.
    Everything else gets the SIMT kernel (one thread per query row,
    `threads` per block) with the same recurrence.
  }];
  let options = [
    Option<"attention", "attention", "int64_t", /*default=*/"-1",
           "The attention to compile, by its position in the module (-1: "
           "every one, a kernel each)">,
    Option<"threads", "threads", "int64_t", /*default=*/"128",
           "SIMT kernel: threads per block (query rows per block)">,
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"0",
           "Tensor-core kernel: query rows per block, 16 x warps x {1..4} "
           "(0: chosen from the head dims)">,
    Option<"tileKV", "tile-kv", "int64_t", /*default=*/"0",
           "Tensor-core kernel: keys per shared-memory tile, a multiple of "
           "16 up to 256 (0: chosen from the head dims)">,
    Option<"warps", "warps", "int64_t", /*default=*/"0",
           "Tensor-core kernel: warps per block, 1-8 (0: 4)">,
    Option<"keyWarps", "key-warps", "int64_t", /*default=*/"0",
           "mma.sync kernel: warps sharing each key tile (each takes its "
           "own 1 / key-warps of the keys, with its own online-softmax "
           "state, merged in shared memory at the end), 1-4 (0: chosen "
           "from the shapes)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "Tensor-core kernel: K/V shared-memory buffers, 2-4 (0: 2)">,
    Option<"qShared", "q-shared", "int64_t", /*default=*/"-1",
           "Tensor-core kernel: 1 re-reads Q from shared memory every key "
           "tile, 0 keeps it in registers, -1 decides by register count">,
    Option<"rescaleThreshold", "rescale-threshold", "int64_t",
           /*default=*/"8",
           "Tensor-core kernel: rescale O and the row sum only when a row max "
           "of the warp grew by more than 2^N (P <= 2^N in between; exact); "
           "0 rescales every key tile">,
    Option<"pipeline", "pipeline", "int64_t", /*default=*/"0",
           "Tensor-core kernel: 1 issues S = Q K^T of the next key tile "
           "before the softmax of this one (needs stages >= 3; default "
           "stages 3)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Target: sm_80 or sm_90a (sm_90a allows the wgmma kernel)">,
    Option<"wgmma", "wgmma", "int64_t", /*default=*/"-1",
           "Hopper kernel (wgmma, sm_90a, D and E in {64, 128}): -1 uses it "
           "where it applies, 0 never, 1 requires it">,
    Option<"warpSpecialize", "warp-specialize", "int64_t", /*default=*/"-1",
           "Hopper kernel: 1 adds a producer warpgroup that streams Q/K/V "
           "in with cp.async completing on mbarriers, while the other "
           "warpgroups only compute, with more registers (setmaxnreg); "
           "-1 uses it (pipelined, 3 stages) for the default launch shape "
           "of long non-causal key loops (4096 <= N <= 16384, D or E = 128); "
           "ignored where another kernel runs">,
    Option<"tma", "tma", "int64_t", /*default=*/"-1",
           "Hopper kernel: 1 loads Q, K and V tiles with the tensor memory "
           "accelerator (one thread issues cp.async.bulk.tensor from tensor "
           "maps the launcher encodes, completing on the stage mbarriers; "
           "Q by cp.async beside a staged mask), 0 with cp.async, -1 where "
           "it applies (no varlen, head dims contiguous; not with a "
           "pipelined two-block loop or a mask tile staged beside it)">,
    Option<"persistent", "persistent", "int64_t", /*default=*/"-1",
           "Warp-specialized, pipelined Hopper kernel: 1 launches one block "
           "per multiprocessor (at most one per query tile), each running "
           "query tiles it takes from a counter (workspace tile_counter) "
           "until none is left, the next tile's loads under this one's "
           "epilogue; 0 one block per tile; -1 where it applies">,
    Option<"shiftV", "shift-v", "int64_t", /*default=*/"-1",
           "Warp-specialized, pipelined Hopper kernel with TMA: 1 loads V of "
           "key tile t - 1 into the stage of K of tile t (both read in the "
           "same iteration, so a stage is held for one iteration and two "
           "stages prefetch a whole tile), 0 K and V of one tile per stage; "
           "-1 where it lets a mask tile sit beside the key tiles (a 16-bit "
           "bias at 128 keys, an f32 one at 96)">,
    Option<"pingpong", "pingpong", "int64_t", /*default=*/"-1",
           "Hopper kernel, warp-specialized and pipelined with two computing "
           "warpgroups: 1 makes them take turns issuing their wgmma (named "
           "barriers), 0 not, -1 where it applies">,
    Option<"keyBiasMma", "key-bias-mma", "int64_t", /*default=*/"-1",
           "Hopper kernel, a score_mod bias linear in the key index (ALiBi): "
           "1 adds it on the tensor cores (one more k-step of S = Q K^T "
           "against a constant panel of key positions), 0 with one fma per "
           "score, -1 where the panel fits">,
    Option<"qRegs", "q-regs", "int64_t", /*default=*/"-1",
           "Hopper TF32 kernel: Q's A fragments in registers, read from global "
           "memory once per block (no Q in shared memory: a third K/V stage "
           "fits at D = 128), 1 required, 0 not, -1 where it applies">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"-1",
           "Only range-checked here, with the other launch options, before a "
           "kernel is chosen; attn-gpu-occupancy applies it">,
    Option<"splits", "splits", "int64_t", /*default=*/"-1",
           "Split-KV (flash-decoding): each query tile's keys are spread over "
           "this many blocks (grid z), whose partial (O, lse) the last one to "
           "finish merges exactly. -1: chosen from the shapes (decode shapes, "
           "few query tiles, long key ranges); 1: none; 2-256 forces it "
           "(mma.sync kernel)">,
    Option<"f32Precision", "f32-precision", "std::string",
           /*default=*/"\"3xtf32\"",
           "f32 attention: 3xtf32 runs it on tensor cores with each product "
           "split into three TF32 products (f32-accurate); tf32 with one "
           "(10-bit mantissas, as cuBLAS/Triton TF32); ieee on the SIMT "
           "kernel's f32 FMAs">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Remark at the attention which kernel it gets, with its launch "
           "shape, and why not a faster one (also --attn-explain)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def AttnGpuOccupancy : Pass<"attn-gpu-occupancy", "::mlir::ModuleOp"> {
  let summary = "Ask ptxas for a number of resident blocks per multiprocessor";
  let description = [{
    Sets `nvvm.minctasm` (PTX `.minnctapersm`) on every `gpu.func` kernel of
    the module, after outlining: ptxas then caps the registers per thread so
    that `min-blocks` blocks fit one multiprocessor (65536 registers), at the
    price of spills where the kernel needs more. 0 leaves the kernels alone;
    -1 (the default) asks for the `min_blocks` that --convert-attn-to-gpu
    recorded in the module's `attn.bundle` (the wgmma kernel: 2), if any.
  }];
  let options = [
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"-1",
           "Blocks per multiprocessor to leave room for (0: no request; -1: "
           "the kernel's own, attn.bundle min_blocks)">
  ];
}

def AttnGpuAlignShared : Pass<"attn-gpu-align-shared", "::mlir::ModuleOp"> {
  let summary = "Give kernels' dynamic shared memory the alignment they ask";
  let description = [{
    After outlining: every `gpu.dynamic_shared_memory` op that carries an
    `attn.align` attribute (bytes, a power of two) becomes the address of a
    zero-length workgroup global of that alignment in its `gpu.module`,
    `__attn_dynamic_shared_<align>`, instead of the 16-byte-aligned global
    that `convert-gpu-to-nvvm` would create. The Hopper kernel asks for
    1024 bytes, the period of the 128-byte swizzle (where measured faster:
    dynamic persistent kernels with segment-id ranges): LLVM then knows the
    address modulo 1024, so the kernel's alignment pad folds to a constant
    instead of a runtime value that ptxas keeps (or spills) through the
    whole kernel. A symbol of the global's name that is not such a global
    makes the name unique.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ATTN_CONVERSION_PASSES_TD
