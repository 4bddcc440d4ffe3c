//===- AttnToGPU.cpp - attn.attention -> a gpu.launch kernel --------------===//
//
// Matches: every attn.attention of the module (or the one `attention`
//          names) with a constant scale; static shapes, or dynamic batch
//          dims and query/key lengths (then each tensor is a flat pointer
//          viewed in the kernel with its runtime sizes and strides, and the
//          sizes are index arguments after the tensors).
// Produces: `func.func @attn_fwd(q, k, v, [mask], [sink], out)` on memrefs
//          with one gpu.launch (grid: query blocks x flattened batch dims)
//          running the online-softmax recurrence over key tiles
//            m' = max(m, rowmax S); α = exp(m - m'); P = exp(S - m')
//            ℓ' = α ℓ + rowsum P;   O' = α O + P V;   O = O / ℓ at the end
//          with f32 state in registers; no score tensor exists. Operands
//          are indexed through the op's maps (any layout, K/V without the
//          group dim). Causal and window loops only visit the keys a block
//          can see. The module gets an `attn.bundle` attribute describing
//          the kernel's arguments, launch and launch rules for attn-bundle.
//
// Three kernels: wgmma (sm_90a) and mma.sync (sm_80) on tensor cores for
// f16/bf16 with contiguous head dims, masks, sinks and fills of every kind
// (TileKernel::scoreMod), launch shape from the pass options; and the SIMT
// kernel for everything else (one thread per query row). docs/performance.md has the measurements behind the choices.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "attn/Conversion/Passes.h"
#include "attn/Support/KeptStatistic.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

/// The int32 kernel arguments with no attention layout (their manifest
/// map is their name).
static bool isIndexArg(StringRef name) {
  return llvm::is_contained(
      {"block_table", "kv_lens", "cu_seqlens_q", "cu_seqlens_k"}, name);
}

/// A runtime scale's tensor (`scale<i>`: one element read, manifest map
/// "scale").
static bool isScaleArg(StringRef name) {
  unsigned i;
  return name.consume_front("scale") && !name.empty() &&
         !name.getAsInteger(10, i);
}

namespace {
/// A scale computed at run time as the program computes it: a constant
/// times (or divided by) elements of tensors the kernel takes.
struct ScaleProduct {
  double constant = 1.0;
  struct Factor {
    Value tensor;
    SmallVector<int64_t> indices;
    bool divide;
  };
  SmallVector<Factor> factors;
};
} // namespace

/// `v` as a ScaleProduct (`inverse`: v divides): constants, mulf, divf,
/// extf and tensor.extract at constant indices of a static tensor. On
/// failure `why` says what else computes it.
static LogicalResult asScaleProduct(Value v, bool inverse, ScaleProduct &p,
                                    std::string &why) {
  Operation *def = v.getDefiningOp();
  if (!def) {
    why = "it is a scalar argument (the kernel takes tensors: pass it as a "
          "one-element tensor)";
    return failure();
  }
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr))) {
    auto f = dyn_cast<FloatAttr>(attr);
    double c = f ? f.getValueAsDouble() : 0.0;
    if (!f || (inverse && c == 0.0)) {
      why = f ? "it divides by a constant 0" : "a constant is not a float";
      return failure();
    }
    // Not finite: the caller's finiteness check says so.
    p.constant *= inverse ? 1.0 / c : c;
    return success();
  }
  if (auto mul = dyn_cast<arith::MulFOp>(def))
    return success(succeeded(asScaleProduct(mul.getLhs(), inverse, p, why)) &&
                   succeeded(asScaleProduct(mul.getRhs(), inverse, p, why)));
  if (auto div = dyn_cast<arith::DivFOp>(def))
    return success(succeeded(asScaleProduct(div.getLhs(), inverse, p, why)) &&
                   succeeded(asScaleProduct(div.getRhs(), !inverse, p, why)));
  if (auto ext = dyn_cast<arith::ExtFOp>(def))
    return asScaleProduct(ext.getIn(), inverse, p, why);
  if (auto ex = dyn_cast<tensor::ExtractOp>(def)) {
    auto t = ex.getTensor().getType();
    SmallVector<int64_t> idx;
    for (Value i : ex.getIndices()) {
      std::optional<int64_t> c = getConstantIntValue(i);
      if (!c) {
        why = "it reads a tensor at a computed index";
        return failure();
      }
      idx.push_back(*c);
    }
    if (!t.hasStaticShape() || t.getElementTypeBitWidth() > 32) {
      why = "it reads a dynamic or 64-bit tensor";
      return failure();
    }
    if (matchPattern(ex.getTensor(), m_Constant())) {
      why = "it reads a constant tensor (fold it first: a bundle cannot "
            "carry constant data)";
      return failure();
    }
    p.factors.push_back({ex.getTensor(), idx, inverse});
    return success();
  }
  why = "'" + def->getName().getStringRef().str() + "' computes it";
  return failure();
}

static std::string dtypeName(Type t) {
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isF32())
    return "float32";
  if (t.isInteger(1))
    return "bool";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(64))
    return "int64";
  if (isa<Float8E4M3FNType>(t))
    return "float8_e4m3fn";
  if (isa<Float8E5M2Type>(t))
    return "float8_e5m2";
  return "unknown";
}

/// Why constant `value` cannot travel in a bundle as an argument of type
/// `type` (empty if it can): static shapes, element types the loader
/// knows, and the data itself (not an elided resource).
static std::string constantDataIneligibility(Attribute value,
                                             RankedTensorType type) {
  if (!type || !type.hasStaticShape())
    return "its shape is not static";
  if (dtypeName(type.getElementType()) == "unknown")
    return "its element type is not one a kernel argument takes";
  if (isa<DenseElementsAttr>(value))
    return "";
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return "its data is elided (dense_resource without a blob)";
    return "";
  }
  return "it is not dense data";
}

/// `value` as an elements attribute of `type` (the same elements in
/// row-major order: the constant may sit behind reshapes).
static ElementsAttr reshapedConstant(ElementsAttr value,
                                     RankedTensorType type) {
  if (value.getType() == type)
    return value;
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.reshape(type);
  auto res = cast<DenseResourceElementsAttr>(value);
  return DenseResourceElementsAttr::get(type, res.getRawHandle());
}

/// MmaConfig::tf32 for the f32-precision option (0: SIMT).
static int64_t tf32Passes(const ConvertAttnToGPUOptions &opts) {
  return opts.f32Precision == "ieee" ? 0 : opts.f32Precision == "tf32" ? 1 : 3;
}

/// Whether the score_mod applies a transcendental (tanh, exp, log, a power,
/// rsqrt: MUFU ops) to a value that depends on the score, once per score:
/// soft-capping's cap tanh(s / cap).
static bool scoreModTranscendental(AttentionOp op) {
  Block *body = op.getScoreModBlock();
  if (!body)
    return false;
  llvm::SmallPtrSet<Value, 16> fromScore = {body->getArgument(0)};
  for (Operation &o : body->without_terminator()) {
    if (llvm::none_of(o.getOperands(),
                      [&](Value v) { return fromScore.contains(v); }))
      continue;
    if (isa<math::TanhOp, math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
            math::RsqrtOp, math::PowFOp>(o))
      return true;
    fromScore.insert(o.result_begin(), o.result_end());
  }
  return false;
}

/// The key-tile loop options both tensor-core kernels take: tile-kv
/// (default `defaultKeyTile`), pipeline, stages, rescale-threshold; an error
/// at the attention names a bad one.
static LogicalResult resolveTileLoop(AttentionOp op,
                                     const ConvertAttnToGPUOptions &opts,
                                     int64_t defaultKeyTile, int64_t &keyTile,
                                     bool &pipeline, int64_t &stages,
                                     int64_t &rescaleThreshold,
                                     bool shiftV = false) {
  keyTile = opts.tileKV ? opts.tileKV : defaultKeyTile;
  if (keyTile % 16 != 0 || keyTile < 16 || keyTile > 256)
    return op.emitError("tile-kv must be a multiple of 16 in [16, 256], got ")
           << keyTile;
  if (opts.pipeline < 0 || opts.pipeline > 1)
    return op.emitError("pipeline must be 0 or 1, got ") << opts.pipeline;
  pipeline = opts.pipeline == 1;
  stages = opts.stages ? opts.stages : (pipeline ? 3 : 2);
  if (stages < 2 || stages > 4)
    return op.emitError("stages must be in [2, 4], got ") << stages;
  if (pipeline && stages < 3 && !shiftV)
    return op.emitError("pipeline=1 keeps two key tiles in use while a "
                        "third streams in: stages must be >= 3, got ")
           << stages;
  rescaleThreshold = opts.rescaleThreshold;
  if (rescaleThreshold < 0 || rescaleThreshold > 16)
    return op.emitError("rescale-threshold must be in [0, 16], got ")
           << rescaleThreshold;
  return success();
}

/// Shared memory a block may have on `chip` (sm_80: 163 KB, sm_90a: 227 KB).
static int64_t sharedLimit(StringRef chip) {
  return (chip == "sm_80" ? 163 : 227) * 1024;
}

static LogicalResult checkSharedBytes(AttentionOp op, StringRef kernel,
                                      int64_t bytes, int64_t keyTile,
                                      int64_t stages, int64_t D, int64_t E,
                                      StringRef chip = "sm_90a") {
  if (bytes <= sharedLimit(chip))
    return success();
  return op.emitError("the ")
         << kernel << " kernel needs " << bytes
         << " bytes of shared memory (tile-kv = " << keyTile
         << ", stages = " << stages << ", D = " << D << ", E = " << E
         << "); the limit is " << sharedLimit(chip) << " (" << chip << ")";
}

/// Warps sharing each key tile (key-warps), at least 16 keys each (one
/// P V k-step).
static LogicalResult setKeyWarps(AttentionOp op,
                                 const ConvertAttnToGPUOptions &opts,
                                 MmaConfig &cfg) {
  if (!opts.keyWarps)
    return success();
  cfg.keyWarps = opts.keyWarps;
  if (cfg.keyTile % (16 * cfg.keyWarps) != 0)
    return op.emitError("key-warps = ")
           << cfg.keyWarps << " needs tile-kv a multiple of "
           << 16 * cfg.keyWarps << " (16 keys per warp), got " << cfg.keyTile;
  if (cfg.warps * cfg.keyWarps > 16)
    return op.emitError("warps x key-warps must be at most 16, got ")
           << cfg.warps << " x " << cfg.keyWarps;
  return success();
}

/// The tensor-core launch shape from the pass options (0 / -1: defaults
/// for the head dims), or an error at the attention naming the bad option.
static FailureOr<MmaConfig>
resolveMmaConfig(AttentionOp op, const ConvertAttnToGPUOptions &opts, int64_t M,
                 int64_t D, int64_t E, bool decode) {
  MmaConfig cfg;
  if (op.getQuery().getType().getElementType().isF32())
    cfg.tf32 = tf32Passes(opts);
  if (decode) {
    // Decode shapes: one 16-row tile per warp, as many warps as the query
    // rows need; 64-key tiles (32 past D = 128); 2 or 3 stages by the grid
    // (decodeStages). f32 past D = 64 (Q's fragments as TF32 values, or
    // their split halves): Q from shared memory and 32-key tiles; with Q
    // in registers and 64-key tiles the one-warp kernel spilled 200-2100
    // bytes at D = 80-128 (log step 179).
    const bool f32Wide = cfg.tf32 && std::max(D, E) > 64;
    cfg.warps = std::clamp<int64_t>((M + 15) / 16, 1, 4);
    cfg.rowTiles = 1;
    ConvertAttnToGPUOptions shaped = opts;
    if (!opts.stages)
      shaped.stages = 3; // refined by decodeStages once the grid is known
    if (failed(resolveTileLoop(
            op, shaped, std::max(D, E) <= 128 && !f32Wide ? 64 : 32,
            cfg.keyTile, cfg.pipeline, cfg.stages, cfg.rescaleThreshold)))
      return failure();
    cfg.qShared = opts.qShared == -1 ? f32Wide : opts.qShared == 1;
    if (failed(setKeyWarps(op, opts, cfg)))
      return failure();
    // (The stage count is provisional: checked against the chip once the
    // grid has set it.)
    if (failed(checkSharedBytes(op, "tensor-core", cfg.sharedBytes(D, E),
                                cfg.keyTile, cfg.stages, D, E)))
      return failure();
    return cfg;
  }
  // f32 past D = 64: 8 warps measured 1.19x (TF32) and 1.43x (3xTF32) 4
  // at D = 128, N = 4096 (docs/performance.md, f32 table). On sm_80 (163
  // KB) their 256 rows of f32 Q do not fit beside K/V at D = 128: 4 there.
  auto shapeFor = [&](int64_t warps) -> LogicalResult {
    cfg.warps = warps;
    if (cfg.warps < 1 || cfg.warps > 8)
      return op.emitError("warps must be in [1, 8], got ") << cfg.warps;
    // Defaults measured on an H100 (bench/tune.py, docs/performance.md): two
    // 16-row tiles per warp (each K/V fragment feeds both) and the widest key
    // tile whose S and O fragments fit the 255 registers: 64 keys for head
    // dims up to 64, 32 up to 128; one row tile beyond.
    int64_t widest = std::max(D, E);
    // f32 (TF32) too: two row tiles measured 1.19x one at N = 4096, D = 64
    // and 128 (docs/performance.md, f32 table), Q then read from shared
    // memory past D = 64.
    int64_t tileQ =
        opts.tileQ ? opts.tileQ : 16 * cfg.warps * (widest <= 128 ? 2 : 1);
    cfg.rowTiles = tileQ / (16 * cfg.warps);
    if (tileQ % (16 * cfg.warps) != 0 || cfg.rowTiles < 1 || cfg.rowTiles > 4)
      return op.emitError("tile-q must be 16 x warps x {1, 2, 3, 4} (warps = ")
             << cfg.warps << "), got " << tileQ;
    if (failed(resolveTileLoop(op, opts, widest <= 64 ? 64 : 32, cfg.keyTile,
                               cfg.pipeline, cfg.stages, cfg.rescaleThreshold)))
      return failure();
    if (failed(setKeyWarps(op, opts, cfg)))
      return failure();
    // f32 registers per thread for Q, O and S fragments: past ~200, ptxas
    // spills, so Q is re-read from shared memory instead.
    // Q: 2 halves per register, or 1 TF32 value (2 for the split halves).
    int64_t qRegs = cfg.tf32 ? D / 8 * 4 * (cfg.tf32 == 3 ? 2 : 1) : D / 16 * 4;
    int64_t regs =
        cfg.rowTiles * (qRegs + E / 8 * 4 +
                        cfg.keysPerWarp() / 8 * 4 * (cfg.pipeline ? 2 : 1));
    cfg.qShared = opts.qShared == -1 ? regs > 200 : opts.qShared == 1;
    return success();
  };
  if (failed(shapeFor(opts.warps                        ? opts.warps
                      : cfg.tf32 && std::max(D, E) > 64 ? 8
                                                        : 4)))
    return failure();
  if (opts.chip == "sm_80" && !opts.warps && !opts.tileQ && cfg.warps == 8 &&
      cfg.sharedBytes(D, E) > sharedLimit(opts.chip) && failed(shapeFor(4)))
    return failure();
  if (failed(checkSharedBytes(op, "tensor-core", cfg.sharedBytes(D, E),
                              cfg.keyTile, cfg.stages, D, E, opts.chip)))
    return failure();
  return cfg;
}

/// The Hopper kernel's launch shape from the pass options (0: defaults).
static FailureOr<WgmmaConfig>
resolveWgmmaConfig(AttentionOp op, const ConvertAttnToGPUOptions &opts,
                   int64_t N, int64_t D, int64_t E, bool causal, bool maskArg,
                   bool tmaOk, bool persistentOk, bool keyLinear, bool varlen) {
  WgmmaConfig cfg;
  int64_t warps = opts.warps ? opts.warps : 8;
  if (warps % 4 != 0 || warps < 4 || warps > 12)
    return op.emitError("the wgmma kernel takes warps = 4, 8 or 12 (one "
                        "warpgroup per 64 query rows), got ")
           << warps;
  cfg.warpGroups = warps / 4;
  if (opts.tileQ && opts.tileQ != cfg.rowsPerBlock())
    return op.emitError("the wgmma kernel takes tile-q = 16 x warps = ")
           << cfg.rowsPerBlock() << ", got " << opts.tileQ;
  if (opts.warpSpecialize < -1 || opts.warpSpecialize > 1)
    return op.emitError("warp-specialize must be -1, 0 or 1, got ")
           << opts.warpSpecialize;
  cfg.warpSpecialized = opts.warpSpecialize == 1;
  // Measured on an H100 (docs/performance.md, steps 23-26 and 55): the
  // warp-specialized, pipelined block with 128-key tiles, K/V by TMA, wins
  // at 64 < D <= 128 from N = 1024 (non-causal 1.02-1.09x at N = 1024, as
  // before 7-10% at 4096 <= N <= 16384; causal and the causal forms
  // 1.02-1.07x at N = 1024, 1.12-1.40x at N >= 4096), except D = 80
  // non-causal below N = 4096 (0.92-0.93x at 1024); at N = 512 it lost
  // 2-3%; at N = 32768-131072 it wins 1.18-1.29x. Without TMA (tma=0,
  // more than 5 dims) only non-causal 4096 <= N <= 16384 (causal measured
  // 0.68-1.03x then, step 25, and N = 131072 one head 0.94x). With a
  // causal window: below (windowWs).
  // Only when no launch-shape option is given.
  ConvertAttnToGPUOptions shaped = opts;
  bool defaultShape = !opts.warps && !opts.tileQ && !opts.tileKV &&
                      !opts.stages && !opts.pipeline;
  // A dynamic N is not known to be long. With cp.async the
  // warp-specialized kernel took 1.57x the two-block time at N = 256; with
  // TMA (step 58) it measured 0.90x the two-block kernel at N = 512, 0.98-
  // 1.05x at 1024 and 1.08-1.23x from N = 3000 (the static bundles of each
  // length take it from 1024): so a dynamic N takes it where TMA applies
  // (as the static rule: causal, or non-causal past D = 80).
  // A bias over (m, n) travels in the K/V stages there (staged once per
  // block, not read from global memory per fragment): at N = 1024 that
  // measured 1.13-1.18x the two-block kernel (docs/performance.md, step 48).
  const int64_t ringRowBytes = maskArg ? wgmmaMaskRowBytes(op, N, 64) : 0;
  const bool ringBias = ringRowBytes > 0;
  const int64_t widest = std::max(D, E);
  // A bias under causal on the ring with TMA: 1.23-1.38x the two-block
  // kernel at N = 1024-16384 (two computing warpgroups; three: 0.96-1.30x;
  // log step 59).
  const int64_t minN = ringBias  ? (causal && !tmaOk ? INT64_MAX : 1024)
                       : causal  ? (tmaOk ? 1024 : INT64_MAX)
                       : tmaOk && widest > 80 ? 1024
                                              : 4096;
  const bool longLoop =
      ShapedType::isDynamic(N)
          ? tmaOk && !ringBias && (causal || widest > 80)
          : N >= minN && (N <= 16384 || tmaOk);
  // Persistent blocks (log step 60, H100, against the default of each
  // shape): D = 128 1.10-1.27x at N = 512 (the two-block kernel), 1.04-
  // 1.15x at 1024-4096, 1.00-1.06x at 8192, 0.96-1.00x at 16384; the causal
  // forms (ALiBi, soft-capping, finite fill, sink) 1.03-1.22x to N = 4096;
  // D = 80/96 causal 1.07-1.21x (from N = 1024, where the warp-specialized
  // kernel starts for them; N = 512 not measured); but a mask tensor (bias, key
  // padding) 0.96-1.02x and D = 64 0.81-0.98x (the two-block kernel stays
  // there). D <= 96 non-causal was not measured. Since TMA K/V (step 73) a bias
  // in the K/V stages gains too: 1.01-1.06x at N = 1024-4096 (against three
  // computing warpgroups at 4096), causal 1.09-1.13x; at 16384 0.95-1.02x
  // (N = 512 not measured). Not key padding (trimmed keys need a block per
  // query tile).
  // Packed sequences (varlen tables; N is the average sequence) past
  // D = 96 from 256 tokens a sequence: the empty tile slots (up to one per
  // sequence) run inside a block's loop and causal tiles go by levels: 64
  // sequences of 256 tokens at D = 128 1.045x the two-block kernel causal,
  // 1.004x non-causal, random lengths 1.01-1.03x (log step 218). At D = 64
  // 0.84-0.94x (steps 125 and 218).
  const int64_t minPersistentN = varlen && widest > 96 ? 256 : 512;
  const bool persistentWins =
      tmaOk && persistentOk && (!maskArg || (ringBias && N >= 1024)) &&
      (ShapedType::isDynamic(N) || (N >= minPersistentN && N <= 8192)) &&
      (causal || widest > 96);
  // A causal sliding window (Mistral, Gemma-2's local layers, gpt-oss):
  // every query tile's loop is at most window + tile_q keys, so persistent
  // warp-specialized blocks (no exposed prologue per tile) at any static N
  // from 1024: D = 128, N = 1024-16384, W = 128 1.05-1.06x the two-block
  // kernel, W = 512 1.15-1.21x, W = 4096 1.08-1.28x (a block per query
  // tile: 0.98-0.99x at W = 512; log step 182). With a dynamic N against
  // the dynamic two-block kernel (log step 183): W = 4096 1.04-1.13x,
  // W = 512 0.99-1.02x, W = 128 0.94-0.97x, so there from W = 2048. Not
  // with a mask tensor (not measured).
  const bool windowWs =
      op.getWindow() && causal && tmaOk && persistentOk && !maskArg &&
      (ShapedType::isDynamic(N) ? *op.getWindow() >= 2048 : N >= 1024);
  // Packed documents (a segment-id region, segmentMatch): persistent
  // warp-specialized blocks at any static N from 1024 (and a dynamic N:
  // documents make short loops at any length), whose producer
  // keeps its granules' id ranges across the tiles of a batch entry and
  // whose short per-document loops gain most from no per-tile prologue (a
  // block per query tile rebuilt them per tile: at N = 16384 with
  // 512-token documents 374 us against 169 at N = 4096, log step 184).
  const SegmentMatch seg = segmentMatch(op);
  const bool segmentWs = seg && seg.rangeable() && tmaOk && persistentOk &&
                         !maskArg && (ShapedType::isDynamic(N) || N >= 1024);
  // Persistent blocks past N = 8192 without a mask tensor: taken where
  // measured faster (log steps 160 and 163, below).
  const bool longPersistent = tmaOk && persistentOk && !maskArg &&
                              !ShapedType::isDynamic(N) && N > 8192;
  // FP8 and TF32 (V^T by the producer): three stages of shaped.tileKV
  // keys, pipelined, where they fit beside Q and the staging buffer; else
  // two, not pipelined (unless the options say: stages=2 is not pipelined
  // either).
  auto threeStagesFit = [&](WgmmaConfig probe) {
    probe.keyTile = shaped.tileKV;
    probe.stages = 3;
    return probe.sharedBytes(D, E) <= 227 * 1024;
  };
  auto threeStagesIfFit = [&] {
    const bool three = threeStagesFit(cfg);
    if (!opts.stages)
      shaped.stages = three ? 3 : 2;
    if (!opts.pipeline && three && shaped.stages >= 3)
      shaped.pipeline = 1;
  };
  // FP8: the warp-specialized, pipelined kernel with 128-key tiles (192
  // where wideKeys says), three stages where they fit (else two),
  // persistent blocks up to N = 16384 (the 16-bit kernels: 8192).
  const bool fp8 = isFloat8(op.getQuery().getType());
  if (fp8) {
    if (opts.warpSpecialize == 0)
      return op.emitError("FP8 attention runs on the warp-specialized "
                          "kernel; warp-specialize=0 excludes it");
    if (opts.tileKV && (opts.tileKV % 64 != 0 || opts.tileKV > 256))
      return op.emitError("FP8 attention takes tile-kv a multiple of 64 up "
                          "to 256 (V^T's panels of 128 keys and a last one "
                          "of 64), got ")
             << opts.tileKV;
    cfg.fp8 = true;
    cfg.warpSpecialized = true;
    // Past D = 64 the producer's transpose makes its addresses per tile:
    // 40 registers are enough, and at D = 256 the consumers need the 232
    // (at 224 they spilled 12-32 bytes).
    if (std::max(D, E) > 64)
      cfg.transposeProducerRegs = 40;
    // Past E = 64 (to 128) two V staging buffers: tile t + 1's V lands
    // while the producer transposes tile t's: 1.05-1.09x at D = 128 from
    // N = 4096 (1.00-1.05x at 1024), key padding 1.02-1.09x; at D = 64
    // (three computing warpgroups) 0.89-0.96x, and with a float mask
    // (read from global memory a tile ahead) 0.93-0.99x: one there (log
    // step 101).
    const bool floatMask =
        op.getMask() && isa<FloatType>(op.getMask().getType().getElementType());
    if (E > 64 && E <= 128 && !floatMask)
      cfg.stagingBufs = 2;
    // Non-causal at 64 < D <= 128 from N = 4096 (static, no mask tensor,
    // region or window): 192-key tiles (V^T's last panel of 64 keys in the
    // 64-byte swizzle), three stages, two staging buffers (208 KB): 1.01-
    // 1.03x 128-key tiles in four same-call A/Bs on the H200; causal rows
    // lost 1-3% (10% at N = 1024), where the diagonal tile's masked part
    // grows (log step 199).
    const bool wideKeys = !causal && !op.getWindow() && !maskArg &&
                          !op.hasScoreMod() && !ShapedType::isDynamic(N) &&
                          N >= 4096 && std::max(D, E) > 64 &&
                          std::max(D, E) <= 128;
    shaped.tileKV = opts.tileKV ? opts.tileKV : wideKeys ? 192 : 128;
    // Wider key tiles: one staging buffer where two would leave no room
    // for three stages but one does (else two stages keep two buffers).
    if (cfg.stagingBufs == 2 && !threeStagesFit(cfg)) {
      WgmmaConfig one = cfg;
      one.stagingBufs = 1;
      if (threeStagesFit(one))
        cfg.stagingBufs = 1;
    }
    // Head dims to 64: three computing warpgroups (152 registers each, no
    // spills; more warps to hide the softmax's latency): 1.16-1.33x two at
    // N >= 4096, but 0.87x causal at N = 1024 (fewer, larger blocks; log
    // step 86). At D = 128 they spill 2 KB.
    if (!opts.warps && !opts.tileQ && std::max(D, E) <= 64 &&
        !(causal && !ShapedType::isDynamic(N) && N < 4096))
      cfg.warpGroups = 3;
    // Not with a mask tensor (read from global memory a tile ahead: the
    // 16-bit kernels run it with a block per query tile too). To N = 16384
    // (past the 16-bit kernels' 8192): 1.02-1.04x a block per query tile
    // there at D = 128, 0.99-1.04x at D = 64 (log step 90).
    cfg.wantPersistent = tmaOk && persistentOk && !maskArg &&
                         (ShapedType::isDynamic(N) || N <= 16384);
    // D = 256: three stages do not fit (Q, K, V^T and the staging buffer:
    // 256 KB); two, not pipelined.
    threeStagesIfFit();
  }
  // TF32 (f32 operands, f32-precision=tf32): the FP8 kernel's structure
  // with 32-bit elements: k8 products, V^T written by the producer in
  // 32-key panels, P from the S registers as they are (the key order
  // within each 8 is that of the A fragments, which the transpose
  // follows). 64-key tiles: at D = 128, Q (64 KB), two stages of K and
  // V^T (32 KB each) and the staging buffer take 224 KB; with Q in
  // registers two stages and two staging buffers 192 KB.
  const bool tf32 = op.getQuery().getType().getElementType().isF32();
  if (tf32) {
    if (opts.warpSpecialize == 0)
      return op.emitError("TF32 on wgmma runs on the warp-specialized "
                          "kernel; warp-specialize=0 excludes it");
    if (opts.tileKV % 32 != 0)
      return op.emitError("TF32 on wgmma takes tile-kv a multiple of 32 "
                          "(the panels of V^T in shared memory), got ")
             << opts.tileKV;
    cfg.tf32 = true;
    cfg.outEltBytes = 4;
    cfg.warpSpecialized = true;
    // Head dims to 64: three computing warpgroups, as FP8's; not with a
    // mask tensor (its 32-bit values a tile ahead spilled 136 bytes) nor
    // with dynamic sizes (their persistent kernels spilled 8-32 bytes).
    const bool staticShapes =
        cast<ShapedType>(op.getQuery().getType()).hasStaticShape() &&
        cast<ShapedType>(op.getKey().getType()).hasStaticShape();
    if (!opts.warps && !opts.tileQ && std::max(D, E) <= 64 && !maskArg &&
        staticShapes && !(causal && N < 4096))
      cfg.warpGroups = 3;
    cfg.wantPersistent = tmaOk && persistentOk && !maskArg &&
                         (ShapedType::isDynamic(N) || N <= 16384);
    shaped.tileKV = opts.tileKV ? opts.tileKV : 64;
    // Q in registers (q-regs): no Q in shared memory, so that at D = 128
    // three 64-key stages fit beside the staging buffer; a block per query
    // tile (a persistent block would load each tile's Q under the last
    // one's products, by TMA into shared memory). Not by default beside a
    // mask tensor, whose values a tile ahead take registers too (a key
    // mask with the lse spilled 84 bytes).
    if (opts.qRegs == 1 ||
        (opts.qRegs == -1 && std::max(D, E) > 64 && !maskArg)) {
      cfg.qInRegs = true;
      cfg.wantPersistent = false;
    }
    // Dynamic sizes (persistent blocks): the producer's run-time tile
    // arithmetic beside K's rounding and V's transpose spilled 4-8 bytes at
    // 56 registers; 72 (the consumers keep 216: with Q's fragments in
    // registers they need the 224).
    if (!staticShapes && !cfg.qInRegs)
      cfg.transposeProducerRegs = 72;
    threeStagesIfFit();
    // Two V staging buffers (V a tile ahead: its TMA latency off the
    // producer's path, which rounds K and transposes V per tile) where
    // they fit. With Q in registers at D = 128 they fit beside two stages,
    // not three: two stages, not pipelined, measured 0.99-1.08x three
    // with one staging buffer (log step 176).
    WgmmaConfig probe = cfg;
    probe.keyTile = shaped.tileKV;
    probe.stages = shaped.stages;
    probe.stagingBufs = 2;
    if (probe.sharedBytes(D, E) <= 227 * 1024) {
      cfg.stagingBufs = 2;
    } else if (cfg.qInRegs && !opts.stages && !opts.pipeline) {
      probe.stages = 2;
      if (probe.sharedBytes(D, E) <= 227 * 1024) {
        cfg.stagingBufs = 2;
        shaped.stages = 2;
        shaped.pipeline = 0;
      }
    }
  }
  const bool transposed = fp8 || tf32;
  const bool shortPersistent = persistentWins && widest > 96 &&
                               !ShapedType::isDynamic(N) && N < 1024;
  // Packed documents at D <= 64 too: only a producer warpgroup finds the
  // key ranges (the two-block kernel runs every key).
  if (!transposed && opts.warpSpecialize == -1 && defaultShape &&
      (widest > 64 || segmentWs) && widest <= 128 &&
      (windowWs || segmentWs ||
       (!op.getWindow() && (longLoop || shortPersistent)))) {
    cfg.warpSpecialized = true;
    // Past N = 8192 too where neither a mask tensor nor a region is read:
    // at N = 16384, D = 96 and 128, 1.00-1.08x a block per query tile, a
    // sink 0.98-1.05x, JAX's finite fill 0.97-1.03x; ALiBi 0.98-1.00x (log
    // step 163; step 60 had measured 0.96-1.00x there before TMA Q/K/V).
    cfg.wantPersistent = persistentWins || windowWs || segmentWs ||
                         (longPersistent && !op.hasScoreMod() && widest >= 96);
    shaped.pipeline = 1;
    shaped.stages = 3;
    // A staged mask tile does not fit next to three 128-key K/V stages:
    // 64-key tiles, three stages, each with its mask tile.
    if (ringBias)
      shaped.tileKV = 64;
    // A region with a transcendental of the score (soft-capping's tanh: a
    // second MUFU op beside P's exponential) past N = 8192: three
    // computing warpgroups, not pipelined, two stages, a block per query
    // tile. Measured against the two-warpgroup ping-pong (log step 153):
    // 1.08-1.11x at N = 16384, 1.12-1.15x at 32768, 1.01-1.02x at 8192
    // (persistent there: kept), 0.91-0.94x at 4096. Not measured beside a
    // mask tensor: not there.
    if (!maskArg && widest > 96 && !opts.warps && !opts.pipeline &&
        !opts.stages && !ShapedType::isDynamic(N) && N > 8192 && !windowWs &&
        scoreModTranscendental(op)) {
      cfg.warpGroups = 3;
      cfg.wantPersistent = false;
      shaped.pipeline = 0;
      shaped.stages = 2;
    }
    // From N = 4096, three computing warpgroups (192 rows: K/V read once
    // for more rows) measured 1.03-1.07x two, where their Q, three stages
    // and three bias tiles fit; at N = 1024 0.89-0.91x
    // (docs/performance.md, step 52). Up to N = 8192 persistent blocks with
    // two beat them (step 73; with three they spill).
    if (ringBias && !causal && N >= 4096 && !opts.warps && !persistentWins) {
      WgmmaConfig probe = cfg;
      probe.warpGroups = 3;
      probe.keyTile = shaped.tileKV;
      probe.stages = shaped.stages;
      probe.maskRowBytes = ringRowBytes;
      if (probe.sharedBytes(D, E) <= 227 * 1024)
        cfg.warpGroups = 3;
    }
  }
  // Head dims past 128 (Gemma's 256): O alone is E / 2 registers per
  // thread; the producer warpgroup's registers go to the consumers (at
  // D = 256 0.80-0.86x cuDNN against 0.71-0.82x for the two-warpgroup
  // block, docs/performance.md, head dims). With K/V by TMA and no mask
  // tensor or window: 48-key tiles, three stages (Q 64 KB + 3 x 48 keys of
  // K and V: 214 KB at D = 256), the pipelined ping-pong loop, persistent
  // blocks (log step 79: at D = 256 1.09-1.29x the 64-key, 2-stage block
  // at N = 1024-4096; 32-key tiles lost 2-11%; past N = 8192 a block per
  // query tile measured 1.12-1.16x then, but since their descriptors are
  // 32-bit sums the persistent blocks are 1.03-1.05x faster there too at
  // D = E = 256, log step 160; MLA's D = 192, E = 128 keeps a block per
  // query tile there: 0.91-0.99x persistent, step 162). Otherwise (a bias
  // tile would not fit beside three stages) 64-key tiles, 2 stages.
  if (!transposed && opts.warpSpecialize == -1 && defaultShape &&
      std::max(D, E) > 128) {
    cfg.warpSpecialized = true;
    if (tmaOk && !maskArg && !op.getWindow()) {
      cfg.wantPersistent =
          persistentWins || (longPersistent && std::min(D, E) > 128);
      shaped.pipeline = 1;
      shaped.tileKV = 48;
      shaped.stages = 3;
    } else {
      shaped.tileKV = 64;
      shaped.stages = 2;
    }
  }
  // V a tile behind K in each stage (WgmmaConfig::shiftV): a stage is held
  // for one iteration, so two stages keep the pipelined loop a tile ahead
  // and a 16-bit mask tile fits beside 128-key tiles (Q 32 KB + 2 x (K, V,
  // mask) 192 KB at D = 128), where three stages forced 64-key tiles (log
  // step 102: 1.10-1.30x); an f32 one beside 96-key tiles (Q 32 KB + 2 x
  // 96 KB), where it was read from global memory (log step 107: 1.09-1.46x;
  // 64-key tiles 1.03-1.53x).
  const unsigned maskBits =
      maskArg ? op.getMask().getType().getElementType().getIntOrFloatBitWidth()
              : 0;
  // A bias linear in the key index added on the tensor cores
  // (keyPosMma): its panel of key positions does not fit beside three
  // stages of 128-key tiles at D = 128; two with V a tile behind K measured
  // 1.08-1.12x three with one fma per score (log step 172).
  const bool keyLinearRing = keyLinear && !transposed && opts.keyBiasMma != 0;
  if (opts.shiftV == 1)
    cfg.shiftV = true;
  else if (opts.shiftV == -1 && !transposed && defaultShape &&
           cfg.warpSpecialized && shaped.pipeline == 1 &&
           ((ringBias && (maskBits == 16 || maskBits == 32)) ||
            keyLinearRing) &&
           tmaOk && widest <= 128) {
    cfg.shiftV = true;
    cfg.warpGroups = 2;
    shaped.tileKV = maskBits == 16 || keyLinearRing ? 128 : 96;
    shaped.stages = 2;
  }
  if (cfg.shiftV && (transposed || !cfg.warpSpecialized || !tmaOk))
    return op.emitError("shift-v=1 needs the warp-specialized, pipelined "
                        "kernel with K/V by TMA (16-bit operands)");
  // Defaults measured on an H100 (bench/tune.py, docs/performance.md): two
  // resident blocks per multiprocessor (ptxas keeps to 128 registers) with
  // 128-key tiles for head dims up to 64 and 64-key tiles beyond. The
  // warp-specialized block has the registers for 128-key tiles at D = 128.
  int64_t keyTile = std::max(D, E) <= 64 || cfg.warpSpecialized ? 128 : 64;
  if (failed(resolveTileLoop(op, shaped, keyTile, cfg.keyTile, cfg.pipeline,
                             cfg.stages, cfg.rescaleThreshold, cfg.shiftV)))
    return failure();
  if (cfg.shiftV && !cfg.pipeline)
    return op.emitError("shift-v=1 needs the pipelined loop (pipeline=1)");
  if (opts.pingpong < -1 || opts.pingpong > 1)
    return op.emitError("pingpong must be -1, 0 or 1, got ") << opts.pingpong;
  bool canPingpong = cfg.warpSpecialized && cfg.pipeline && cfg.warpGroups == 2;
  if (opts.pingpong == 1 && !canPingpong)
    return op.emitError("pingpong=1 needs the warp-specialized, pipelined "
                        "kernel with two computing warpgroups "
                        "(warp-specialize=1 pipeline=1 warps=8)");
  // On by default where it applies: measured faster than without in 22 of
  // 24 configs (docs/performance.md, step 24). Not with FP8: its products
  // take half the time, the softmax does not, and strict turns left each
  // warpgroup waiting for the other's softmax (off: 1.05-1.15x, log step
  // 81).
  cfg.pingpong =
      canPingpong && (opts.pingpong == 1 || (opts.pingpong == -1 && !cfg.fp8));
  // The staged mask tile only where it fits (else its fragments are read
  // from global memory).
  // By default not where it costs the second resident block either: at
  // N = 1024 (bias per head, B = 16) the two-block kernel reading the bias
  // straight from global memory measured 339 TFLOP/s, staged one block 315
  // (docs/performance.md, forms).
  cfg.maskRowBytes =
      maskArg && !transposed ? wgmmaMaskRowBytes(op, N, cfg.keyTile) : 0;
  // With shiftV, swizzled panels rather than padded rows where the rows
  // are whole 128-byte panels (WgmmaConfig::maskSwizzled).
  if (cfg.shiftV && cfg.maskInRing()) {
    int64_t rowBytes =
        cfg.keyTile *
        op.getMask().getType().getElementType().getIntOrFloatBitWidth() / 8;
    if (rowBytes % 128 == 0) {
      cfg.maskSwizzle = true;
      cfg.maskRowBytes = rowBytes;
    }
  }
  auto twoBlocks = [&] {
    return 2 * (cfg.sharedBytes(D, E) + 1024) <= 228 * 1024;
  };
  if (cfg.maskRowBytes && !cfg.warpSpecialized && defaultShape &&
      cfg.warpGroups == 2 && !twoBlocks()) {
    int64_t staged = cfg.maskRowBytes;
    cfg.maskRowBytes = 0;
    if (!twoBlocks())
      cfg.maskRowBytes = staged;
  }
  if (cfg.sharedBytes(D, E) > 227 * 1024)
    cfg.maskRowBytes = 0;
  int64_t bytes = cfg.sharedBytes(D, E);
  // Two blocks of two warpgroups per multiprocessor when their shared
  // memory fits (228 KiB, 1 KiB reserved per block): ptxas is asked to keep
  // to 128 registers (attn-gpu-occupancy reads min_blocks). The
  // warp-specialized block runs alone: a register cap at entry (one block)
  // is what lets setmaxnreg move registers between its warpgroups.
  if (cfg.warpSpecialized)
    cfg.minBlocks = 1;
  else if (cfg.warpGroups == 2 && 2 * (bytes + 1024) <= 228 * 1024)
    cfg.minBlocks = 2;
  if (failed(
          checkSharedBytes(op, "wgmma", bytes, cfg.keyTile, cfg.stages, D, E)))
    return failure();
  return cfg;
}

/// Every option's range, checked once for every kernel before one is
/// chosen: an option the chosen kernel does not read is still an error when
/// it is out of range (it would be silently ignored otherwise). The kernels
/// check how options combine (e.g. tile-q against warps).
static LogicalResult validateOptions(AttentionOp op,
                                     const ConvertAttnToGPUOptions &opts) {
  auto range = [&](StringRef name, int64_t v, int64_t lo,
                   int64_t hi) -> LogicalResult {
    if (v >= lo && v <= hi)
      return success();
    return op.emitError() << name << " must be in [" << lo << ", " << hi
                          << "], got " << v;
  };
  auto zeroOr = [&](StringRef name, int64_t v, int64_t lo, int64_t hi,
                    int64_t multipleOf) -> LogicalResult {
    if (v == 0 || (v >= lo && v <= hi && v % multipleOf == 0))
      return success();
    InFlightDiagnostic d = op.emitError();
    d << name << " must be 0 (the kernel's default) or ";
    if (multipleOf > 1)
      d << "a multiple of " << multipleOf << " ";
    d << "in [" << lo << ", " << hi << "], got " << v;
    return d;
  };
  auto tristate = [&](StringRef name, int64_t v) -> LogicalResult {
    if (v >= -1 && v <= 1)
      return success();
    return op.emitError() << name << " must be -1 (default), 0 or 1, got "
                          << v;
  };
  if (opts.chip != "sm_80" && opts.chip != "sm_90a")
    return op.emitError("chip must be sm_80 or sm_90a, got '")
           << opts.chip << "'";
  if (opts.f32Precision != "3xtf32" && opts.f32Precision != "tf32" &&
      opts.f32Precision != "ieee")
    return op.emitError("f32-precision must be 3xtf32, tf32 or ieee, got '")
           << opts.f32Precision << "'";
  if (failed(range("threads (SIMT kernel: query rows per block)", opts.threads,
                   1, 1024)) ||
      failed(zeroOr("tile-q", opts.tileQ, 16, 256, 16)) ||
      failed(zeroOr("tile-kv", opts.tileKV, 16, 256, 16)) ||
      failed(zeroOr("warps", opts.warps, 1, 12, 1)) ||
      failed(zeroOr("stages", opts.stages, 2, 4, 1)) ||
      failed(zeroOr("key-warps", opts.keyWarps, 1, 4, 1)) ||
      failed(range("rescale-threshold", opts.rescaleThreshold, 0, 16)) ||
      failed(range("pipeline", opts.pipeline, 0, 1)) ||
      failed(tristate("q-shared", opts.qShared)) ||
      failed(tristate("wgmma", opts.wgmma)) ||
      failed(tristate("warp-specialize", opts.warpSpecialize)) ||
      failed(tristate("pingpong", opts.pingpong)) ||
      failed(tristate("key-bias-mma", opts.keyBiasMma)) ||
      failed(tristate("q-regs", opts.qRegs)) ||
      failed(tristate("tma", opts.tma)) ||
      failed(tristate("persistent", opts.persistent)) ||
      failed(tristate("shift-v", opts.shiftV)) ||
      failed(range("min-blocks", opts.minBlocks, -1, 32)))
    return failure();
  if (opts.splits != -1 && (opts.splits < 1 || opts.splits > kMaxSplits))
    return op.emitError() << "splits must be -1 (from the shapes), 1 (none) "
                             "or in [2, "
                          << kMaxSplits << "], got " << opts.splits;
  return success();
}

/// Shapes the kernels can index and CUDA can launch: every dimension
/// non-empty, element counts and the grid within 64-bit arithmetic and
/// CUDA's limits (x < 2^31, y < 2^16).
static LogicalResult validateShapes(AttentionOp op,
                                    ArrayRef<std::pair<StringRef, Value>> args,
                                    ArrayRef<int64_t> sizes, unsigned r) {
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t elems = 1;
    for (int64_t d : t.getShape()) {
      if (ShapedType::isDynamic(d)) // bounded by the launcher at each call
        continue;
      if (d <= 0)
        return op.emitError("the GPU kernel needs non-empty shapes; '")
               << name << "' has type " << t;
      if (llvm::MulOverflow(elems, d, elems) ||
          llvm::MulOverflow(elems, int64_t(8), elems))
        return op.emitError("'") << name << "' (" << t
                                 << ") is too large to index with 64 bits";
      elems /= 8;
    }
  }
  // Every kernel unrolls the head dims (a SIMT thread keeps D + E values).
  constexpr int64_t kMaxHeadDim = 512;
  int64_t D = sizes[r + 2], E = sizes[r + 3];
  if (D > kMaxHeadDim || E > kMaxHeadDim)
    return op.emitError("the GPU kernels unroll the head dims, up to ")
           << kMaxHeadDim << "; got D = " << D << ", E = " << E;
  int64_t batch = 1;
  for (unsigned i = 0; i < r; ++i)
    if (!ShapedType::isDynamic(sizes[i]) &&
        (llvm::MulOverflow(batch, sizes[i], batch) || batch > 65535))
      return op.emitError("the batch dims (product ")
             << (batch > 65535 ? "over 65535" : "overflows")
             << ") exceed CUDA's grid limit of 65535 blocks in y";
  return success();
}

namespace {
enum class KernelKind { Wgmma, WgmmaWarpSpecialized, MmaSync, Simt };
} // namespace

/// Why split-KV cannot take `op` ("" if it can). Keys a causal or window
/// rule hides from a whole block still count under a finite fill; the
/// kernel folds them into the block's state once (foldHiddenKeys), which a
/// block holding one key range of several cannot do.
static std::string splitIneligibility(AttentionOp op, float maskValue) {
  if (!std::isinf(maskValue) && (op.getCausal() || op.getWindow()))
    return "a finite fill with causal/window (the hidden keys' share is "
           "folded in by one block)";
  return "";
}

/// Multiprocessors of the target (H100 SXM: 132, A100: 108): split-KV
/// aims at enough blocks to fill them a few times over.
static int64_t multiprocessors(StringRef chip) {
  return chip == "sm_90a" ? 132 : 108;
}

/// Resident blocks of the mma.sync kernel per multiprocessor (228 KiB of
/// shared memory, 1 KiB reserved per block; 64 warps; 32 blocks).
static int64_t residentBlocks(const MmaConfig &cfg, int64_t D, int64_t E) {
  int64_t bySmem = 228 * 1024 / (cfg.sharedBytes(D, E) + 1024);
  return std::max<int64_t>(
      1, std::min(
             {bySmem, int64_t(64) / (cfg.warps * cfg.keyWarps), int64_t(32)}));
}

/// Decode's K/V stages when none are given, for `total` blocks: 2 where
/// only then the grid is one wave (3 blocks per multiprocessor instead of
/// 2), else the count whose last wave is fullest (ties: 2); with one wave
/// either way, 2 with GQA packing and 3 without. Measured on an H100
/// (docs/performance.md, decode sweep): 384 one-warp blocks 8% faster with
/// 2 stages, 512 12% faster with 3; 192 packed blocks 10% faster with 2.
static int64_t decodeStages(MmaConfig cfg, int64_t total, int64_t sms,
                            int64_t D, int64_t E, bool packed) {
  // Blocks of four row warps and two key warps (one per multiprocessor by
  // registers): a third stage, split 0.98-1.09x (log step 123), one key
  // range per tile (B = 16, 8 kv heads) 1.02-1.04x (log step 131).
  if (cfg.keyWarps == 2 && cfg.warps >= 4 && std::max(D, E) <= 128)
    return 3;
  auto slots = [&](int64_t st) {
    cfg.stages = st;
    return sms * residentBlocks(cfg, D, E);
  };
  int64_t s2 = slots(2), s3 = slots(3);
  if (total <= s3)
    return packed ? 2 : 3;
  if (total <= s2)
    return 2;
  auto eff = [&](int64_t sl) {
    return double(total) / double((total + sl - 1) / sl * sl);
  };
  return eff(s3) > eff(s2) ? 3 : 2;
}

/// Decode blocks of four row warps take two key warps and one wave of key
/// ranges only where a range keeps at most this many keys.
constexpr int64_t kMaxOneWaveRange = 16384;

/// How many decode blocks per multiprocessor the split count aims at.
enum class SplitTarget {
  /// About 1.5 (rounded up).
  Default,
  /// About 2.25: one-warp blocks of 32-key tiles (39 KB of shared memory,
  /// up to five per multiprocessor).
  SmallTiles,
  /// One (rounded down): blocks of eight warps, one per multiprocessor by
  /// registers, filling the multiprocessors once.
  OneWave,
};

/// Decode's split count when none is given: enough key ranges for the
/// target's blocks per multiprocessor, ranges of at least kMinSplitKeys keys.
/// Measured on an H100 (docs/performance.md, decode sweep): 8 kv-head
/// tiles at N = 32k ran best as 16-24 ranges (68-70 µs; 33: 72, 48: 80),
/// 128 tiles at N = 8k/32k as 2-3 (203/747 µs; 4: 213/762), 512 tiles
/// unsplit; 32-key tiles over 32 heads at B = 1 as 10 ranges, 1.02-1.03x
/// 7 at N = 8k-128k (log step 128); blocks of eight warps as 16 ranges of 8
/// tiles, 1.11-1.16x 13 at N = 32k-128k (log step 127).
static int64_t decodeSplits(StringRef chip, int64_t blocks, int64_t span,
                            SplitTarget target = SplitTarget::Default) {
  int64_t sms = multiprocessors(chip);
  int64_t want = target == SplitTarget::OneWave ? sms / blocks
                 : target == SplitTarget::SmallTiles
                     ? (9 * sms / 4 + blocks - 1) / blocks
                     : (3 * sms / 2 + blocks - 1) / blocks;
  return std::clamp<int64_t>(std::min(want, span / kMinSplitKeys), 1,
                             kMaxSplits);
}

/// "file:line:col" of the first file location in `loc` (the file's base
/// name: a bundle does not record the machine's paths), or "".
static std::string sourceLocation(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      out = (llvm::sys::path::filename(f.getFilename().getValue()) + ":" +
             Twine(f.getLine()) + ":" + Twine(f.getColumn()))
                .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

/// `flat` (a 1-D memref: a kernel's bare pointer) viewed as a row-major
/// memref of element type `elt` with sizes `dims` (constants or runtime
/// values); strides that fold stay static in the type.
static Value rowMajorView(OpBuilder &b, Location loc, Value flat, Type elt,
                          ArrayRef<OpFoldResult> dims) {
  int64_t rank = dims.size();
  SmallVector<OpFoldResult> strides(rank);
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t p = rank - 1; p >= 0; --p) {
    strides[p] = stride;
    std::optional<int64_t> a = getConstantIntValue(stride),
                           c = getConstantIntValue(dims[p]);
    if (a && c)
      stride = b.getIndexAttr(*a * *c);
    else
      stride = arith::MulIOp::create(
                   b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                   getValueOrCreateConstantIndexOp(b, loc, dims[p]))
                   .getResult();
  }
  SmallVector<int64_t> shape, staticStrides;
  for (int64_t p = 0; p < rank; ++p) {
    shape.push_back(getConstantIntValue(dims[p]).value_or(ShapedType::kDynamic));
    staticStrides.push_back(
        getConstantIntValue(strides[p]).value_or(ShapedType::kDynamic));
  }
  auto type = MemRefType::get(
      shape, elt, StridedLayoutAttr::get(b.getContext(), 0, staticStrides));
  return memref::ReinterpretCastOp::create(b, loc, type, flat,
                                           b.getIndexAttr(0), dims, strides);
}

static LogicalResult buildKernel(ModuleOp module, AttentionOp op,
                                 const ConvertAttnToGPUOptions &opts,
                                 KernelKind &kind, StringRef hostName,
                                 DictionaryAttr &bundleInfo) {
  int64_t threads = opts.threads;
  Location loc = op.getLoc();
  // A scale computed at run time (FP8's per-tensor dequantization scales)
  // is a constant times elements of one-element tensors the kernel takes
  // as arguments (`scale<i>`); it is read in the kernel.
  ScaleProduct scaleProduct, valueScaleProduct;
  std::optional<double> scale;
  {
    std::string why;
    if (failed(asScaleProduct(op.getScale(), false, scaleProduct, why)))
      return op.emitError("the GPU kernel takes a constant scale, or one "
                          "computed from elements of tensors it takes as "
                          "arguments; ")
             << why;
    scale = scaleProduct.constant;
  }
  if (!std::isfinite(*scale) ||
      !std::isfinite(static_cast<float>(*scale)))
    return op.emitError("the GPU kernel needs a finite f32 scale, got ")
           << *scale;
  const bool runtimeScale = !scaleProduct.factors.empty();
  if (runtimeScale && *scale <= 0.0)
    return op.emitError("a runtime scale's constant factor must be positive "
                        "(the kernels fold the scale into the exponent after "
                        "the row max), got ")
           << *scale;
  const bool fp8 = isFloat8(op.getQuery().getType());
  std::optional<double> valueScale;
  if (Value vs = op.getValueScale()) {
    std::string why;
    if (failed(asScaleProduct(vs, false, valueScaleProduct, why)))
      return op.emitError("the GPU kernel takes a constant value_scale, or "
                          "one computed from elements of tensors it takes as "
                          "arguments; ")
             << why;
    valueScale = valueScaleProduct.constant;
    if (!std::isfinite(static_cast<float>(*valueScale)))
      return op.emitError("the GPU kernel needs a finite value_scale");
    if (!fp8)
      return op.emitError("value_scale runs on the GPU with FP8 operands "
                          "only (the FP8 kernel applies it)");
  }
  if (failed(validateOptions(op, opts)))
    return failure();
  // Operands that are constants of the program (a mask or bias buffer
  // that is not exactly causal or a band, a sink vector, a score_mod table
  // too large for the kernel, a fixed block table, lengths or packing)
  // stay kernel arguments and travel in the
  // bundle as data (attn-bundle writes the file), so that they do not
  // become the caller's to pass.
  llvm::StringMap<ElementsAttr> constants;
  // Records `operand` (kernel argument `name`) if it is a constant of the
  // program; fails with a diagnostic where the bundle cannot carry it.
  auto carryConstant = [&](StringRef name, Value operand) -> LogicalResult {
    Value v = operand;
    while (v) {
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                          tensor::CastOp>(def)) {
        v = def->getOperand(0);
        continue;
      }
      // A slice that only drops unit dims (fuseAttention's rank-reducing
      // ones): the same data.
      auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def);
      if (slice && slice.getSourceType().hasStaticShape() &&
          slice.getResultType().hasStaticShape() &&
          slice.getSourceType().getNumElements() ==
              slice.getResultType().getNumElements()) {
        v = slice.getSource();
        continue;
      }
      break;
    }
    if (v && isa_and_nonnull<tensor::ExtractSliceOp>(v.getDefiningOp()) &&
        matchPattern(v.getDefiningOp()->getOperand(0), m_Constant()))
      return op.emitError("the ")
             << name
             << " is a slice of a constant of the program; fold it into a "
                "constant first (a bundle carries the data it is given)";
    Attribute value;
    if (!v || !matchPattern(v, m_Constant(&value)))
      return success();
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    std::string why = constantDataIneligibility(value, type);
    if (!why.empty())
      return op.emitError("the ")
             << name << " is a constant of the program that a bundle cannot "
             << "carry: " << why;
    constants[name] = reshapedConstant(cast<ElementsAttr>(value), type);
    return success();
  };
  if (failed(carryConstant("mask", op.getMask())) ||
      failed(carryConstant("sink", op.getSink())))
    return failure();
  if (std::string why = scoreModIneligibility(op); !why.empty())
    return op.emitError("the GPU kernel cannot take this score_mod: ") << why;
  DictionaryAttr scoreModInfo;
  if (op.hasScoreMod()) {
    std::string why;
    FailureOr<DictionaryAttr> d = describeScoreMod(op, why);
    if (failed(d))
      return op.emitError("the GPU kernel cannot take this score_mod: ")
             << why;
    scoreModInfo = *d;
  }
  // Paged K/V: K and V both attn.page_gather of one block table; the kernel
  // takes the caches and the table and reads pages through it.
  unsigned r = op.getNumBatchDims();
  auto kPages = op.getKey().getDefiningOp<PageGatherOp>();
  auto vPages = op.getValue().getDefiningOp<PageGatherOp>();
  if (kPages || vPages) {
    if (!kPages || !vPages || kPages.getTable() != vPages.getTable())
      return op.emitError("paged K/V: the GPU kernels read K and V through "
                          "one block table (both attn.page_gather of the same "
                          "table)");
    auto dimAt = [](AffineMap m, int64_t pos) {
      return cast<AffineDimExpr>(m.getResult(pos)).getPosition();
    };
    for (auto [g, map] : {std::pair{kPages, op.getKeyMap()},
                          std::pair{vPages, op.getValueMap()}})
      if (dimAt(map, g.getSeqDim()) != 0 || dimAt(map, g.getTokenDim()) != r + 1)
        return op.emitError("paged K/V: the GPU kernels take the cache's page "
                            "dimension as the first batch dim and its token "
                            "dimension as the key dim");
    if (failed(carryConstant("block_table", kPages.getTable())))
      return failure();
    if (kPages.getCache().getType().getDimSize(kPages.getTokenDim()) !=
            vPages.getCache().getType().getDimSize(vPages.getTokenDim()) ||
        kPages.getCache().getType().getDimSize(kPages.getSeqDim()) !=
            vPages.getCache().getType().getDimSize(vPages.getSeqDim()))
      return op.emitError("paged K/V: the K and V caches differ in page size "
                          "or page count");
  }
  // Per-sequence key counts (attn.length_mask, -inf fill): the kernel takes
  // the lengths and ends each sequence's key loop there.
  LengthMaskOp lenMask;
  int64_t lenDim = -1;
  if (op.getMask() && !op.getMaskValue())
    if (auto lm = op.getMask().getDefiningOp<LengthMaskOp>()) {
      AffineMap mm = op.getMaskMap();
      auto d0 = dyn_cast<AffineDimExpr>(mm.getResult(0));
      if (mm.getNumResults() == 2 && d0 && d0.getPosition() < r &&
          mm.getResult(1) == getAffineDimExpr(r + 1, op.getContext())) {
        lenMask = lm;
        lenDim = d0.getPosition();
      }
    }
  // Varlen (attn.varlen_mask over (m, n), -inf fill): the kernel takes the
  // cumulative lengths and runs each query tile over its sequence's keys.
  VarlenMaskOp varlen;
  if (op.getMask() && !op.getMaskValue())
    if (auto vm = op.getMask().getDefiningOp<VarlenMaskOp>())
      if (op.getMaskMap().getResults() ==
          ArrayRef<AffineExpr>{getAffineDimExpr(r, op.getContext()),
                               getAffineDimExpr(r + 1, op.getContext())})
        varlen = vm;
  if (varlen) {
    if (op.getCausal() || op.getWindow() || op.getQueryOffsetOrZero())
      return op.emitError("varlen (attn.varlen_mask): the GPU kernels take "
                          "the causal rule from the varlen mask; they cannot "
                          "combine it with the attention's causal, window or "
                          "query_offset");
    if (kPages)
      return op.emitError("varlen (attn.varlen_mask): the GPU kernels cannot "
                          "combine packed sequences with paged K/V");
    if (failed(carryConstant("cu_seqlens_q", varlen.getCuSeqlensQ())) ||
        failed(carryConstant("cu_seqlens_k", varlen.getCuSeqlensK())))
      return failure();
  }
  SmallVector<std::pair<StringRef, Value>> args = {
      {"q", op.getQuery()},
      {"k", kPages ? kPages.getCache() : op.getKey()},
      {"v", vPages ? vPages.getCache() : op.getValue()}};
  if (lenMask) {
    if (failed(carryConstant("kv_lens", lenMask.getLengths())))
      return failure();
    args.push_back({"kv_lens", lenMask.getLengths()});
  } else if (varlen) {
    args.push_back({"cu_seqlens_q", varlen.getCuSeqlensQ()});
    args.push_back({"cu_seqlens_k", varlen.getCuSeqlensK()});
  } else if (op.getMask())
    args.push_back({"mask", op.getMask()});
  if (op.getSink())
    args.push_back({"sink", op.getSink()});
  if (kPages)
    args.push_back({"block_table", kPages.getTable()});
  // score_mod operands that are not constants: kernel arguments mod<i>.
  SmallVector<std::string> modNames;
  for (auto [i, v] : llvm::enumerate(op.getModOperands()))
    modNames.push_back(scoreModTable(op, i) ? "" : "mod" + std::to_string(i));
  for (auto [i, v] : llvm::enumerate(op.getModOperands()))
    if (!modNames[i].empty()) {
      if (failed(carryConstant(modNames[i], v)))
        return failure();
      args.push_back({modNames[i], v});
    }
  // Runtime scales' tensors: kernel arguments scale<i> (each tensor once).
  SmallVector<Value> scaleTensors;
  SmallVector<std::string> scaleNames;
  for (ScaleProduct *p : {&scaleProduct, &valueScaleProduct})
    for (const ScaleProduct::Factor &f : p->factors)
      if (!llvm::is_contained(scaleTensors, f.tensor)) {
        scaleTensors.push_back(f.tensor);
        scaleNames.push_back("scale" + std::to_string(scaleNames.size()));
      }
  for (auto [t, name] : llvm::zip(scaleTensors, scaleNames))
    args.push_back({name, t});
  auto scaleNameOf = [&](Value t) -> StringRef {
    return scaleNames[llvm::find(scaleTensors, t) - scaleTensors.begin()];
  };
  args.push_back({"out", op.getInit()});
  // The lse result, written beside out (f32, out's dims without e).
  if (op.getLse())
    args.push_back({"lse", op.getLse()});
  // The map list is ordered q, k, v, out, mask, sink; args are q, k, v,
  // mask, sink, out.
  auto mapOf = [&](StringRef name) {
    if (name == "q")
      return op.getQueryMap();
    if (name == "k")
      return op.getKeyMap();
    if (name == "v")
      return op.getValueMap();
    if (name == "mask")
      return op.getMaskMap();
    if (name == "sink")
      return op.getSinkMap();
    if (name.starts_with("mod")) {
      unsigned i = 0;
      (void)name.drop_front(3).getAsInteger(10, i);
      return op.getModOperandMap(i);
    }
    if (name == "lse")
      return op.getOutputMap().dropResult(
          *op.getOutputMap().getResultPosition(
              getAffineDimExpr(op.getEDim(), op.getContext())));
    return op.getOutputMap();
  };
  // Sizes of every attention loop, read through the maps. A size is
  // dynamic only when no operand gives it statically; dynamic sizes become
  // kernel parameters (batch dims, m and n only: the kernels unroll the
  // head dims).
  SmallVector<int64_t> sizes(r + 4, 1);
  SmallVector<bool> known(r + 4, false), dynDim(r + 4, false);
  for (auto &[name, v] : args) {
    if (isIndexArg(name) || isScaleArg(name))
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    for (auto [p, e] : llvm::enumerate(mapOf(name).getResults())) {
      unsigned dim = cast<AffineDimExpr>(e).getPosition();
      // A cache's page and token dims are not the sequences' and keys'.
      if (kPages && (name == "k" || name == "v") && (dim == 0 || dim == r + 1))
        continue;
      if (t.isDynamicDim(p)) {
        if (dim >= r + 2)
          return op.emitError("the GPU kernels unroll the head dims, which "
                              "must be static; '")
                 << name << "' has type " << t;
        dynDim[dim] = true;
        continue;
      }
      if ((name != "mask" && !name.starts_with("mod")) || t.getDimSize(p) != 1) {
        sizes[dim] = t.getDimSize(p);
        known[dim] = true;
      }
    }
  }
  bool dynamic = false;
  for (unsigned d = 0; d < r + 4; ++d) {
    dynDim[d] = dynDim[d] && !known[d];
    if (dynDim[d]) {
      sizes[d] = ShapedType::kDynamic;
      dynamic = true;
    }
  }
  // The block table's and kv_lens' rows follow their batch dim (b0, the
  // lengths' dim): dynamic exactly when it is. Their other dims (the pages
  // per sequence) and the cu_seqlens tables are static.
  auto rowDimOf = [&](StringRef name) -> int {
    return name == "block_table" ? 0 : name == "kv_lens" ? lenDim : -1;
  };
  for (auto &[name, v] : args) {
    if (!isIndexArg(name))
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    int row = rowDimOf(name);
    for (int64_t p = 0; p < t.getRank(); ++p)
      if (t.isDynamicDim(p) && (p != 0 || row < 0))
        return op.emitError("the GPU kernel needs static shapes; '")
               << name << "' has type " << t;
    if (row >= 0 && t.isDynamicDim(0) != bool(dynDim[row]))
      return op.emitError("'")
             << name << "' (" << t << ") must have as many rows as "
             << (row < (int)r ? "batch dim " + std::to_string(row)
                              : std::string("its batch dim"))
             << ", dynamic exactly when that dim is";
  }
  if (dynamic && opts.splits > 1)
    return op.emitError("dynamic shapes: the GPU kernels take dynamic batch "
                        "and sequence sizes, but not with a fixed split-KV "
                        "count (splits > 1) yet");
  // Dynamic shapes: every tensor is a flat pointer (a static 1-D memref,
  // as the bare-pointer convention needs), viewed inside the kernel with
  // its runtime sizes and strides; the dynamic sizes follow the tensors.
  // The index tables only when their rows are dynamic.
  constexpr int64_t kFlatElements = int64_t(1) << 40;
  auto isFlat = [&](unsigned i) {
    return dynamic && !isScaleArg(args[i].first) &&
           (!isIndexArg(args[i].first) ||
            !cast<RankedTensorType>(args[i].second.getType()).hasStaticShape());
  };
  // An operand's shape with the sizes other operands give statically (a
  // `?` over a loop that q, k or v fix): its kernel parameter's and the
  // manifest's, -1 (kDynamic) only along the kernel's dynamic sizes.
  auto shapeOf = [&](StringRef name, RankedTensorType t) {
    SmallVector<int64_t> shape(t.getShape());
    if (isIndexArg(name) || isScaleArg(name) ||
        (kPages && (name == "k" || name == "v")))
      return shape;
    for (auto [p, e] : llvm::enumerate(mapOf(name).getResults())) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (t.isDynamicDim(p) && !dynDim[d])
        shape[p] = sizes[d];
    }
    return shape;
  };
  SmallVector<Type> memrefTypes;
  for (auto [i, a] : llvm::enumerate(args)) {
    auto t = cast<RankedTensorType>(a.second.getType());
    memrefTypes.push_back(
        isFlat(i) ? MemRefType::get({kFlatElements}, t.getElementType())
                  : MemRefType::get(shapeOf(a.first, t), t.getElementType()));
  }
  SmallVector<unsigned> dynDims;
  for (unsigned d = 0; d < r + 2; ++d)
    if (dynDim[d]) {
      dynDims.push_back(d);
      memrefTypes.push_back(IndexType::get(op.getContext()));
    }
  auto dimName = [&](unsigned d) -> std::string {
    return d < r ? "b" + std::to_string(d) : d == r ? "m" : "n";
  };

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, hostName,
                                   b.getFunctionType(memrefTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder kb{b,
                   loc,
                   op,
                   static_cast<float>(*scale),
                   op.getMaskValue() ? op.getMaskValue()->convertToFloat()
                                     : -std::numeric_limits<float>::infinity(),
                   threads};
  if (valueScale)
    kb.valueScale = static_cast<float>(*valueScale);
  if (varlen) {
    kb.varlenSeqs = varlen.getCuSeqlensQ().getType().getDimSize(0) - 1;
    kb.varlenCausal = varlen.getCausal();
    kb.varlenBottomRight = varlen.getBottomRight();
  }
  if (dynamic) {
    kb.dynSizes.assign(r + 4, Value());
    for (auto [i, d] : llvm::enumerate(dynDims))
      kb.dynSizes[d] = entry->getArgument(args.size() + i);
  }
  // Split-KV workspace (kernel arguments after the outputs, allocated by
  // the launcher): per split the normalized partial O and its lse, and a
  // counter per query tile that the last block of the tile to finish
  // sees reach splits - 1 (it merges, then resets it to 0).
  SmallVector<std::pair<std::string, MemRefType>> workspace;
  // TMA: one 128-byte tensor map (int64[16] in global memory) per operand
  // the producer loads with it, encoded by the launcher: (argument name,
  // operand, kernel argument number).
  struct TensorMapArg {
    std::string name, tensor;
    unsigned argNo;
  };
  SmallVector<TensorMapArg> tensorMaps;
  // With dynamic shapes, each tensor's view inside the launch: a
  // reinterpret_cast of its flat pointer with the runtime sizes and
  // row-major strides, all made at the start of the launch body when the
  // kernel first asks for one, in argument order (outlining orders the
  // kernel parameters by first use: q, k, v, ... as in static kernels).
  DenseMap<unsigned, Value> views;
  OpBuilder vb(b.getContext());
  auto makeView = [&](unsigned i) -> Value {
    auto t = cast<RankedTensorType>(args[i].second.getType());
    SmallVector<OpFoldResult> dims;
    if (isIndexArg(args[i].first)) {
      // [rows of its batch dim, static...]
      int row = rowDimOf(args[i].first);
      dims.push_back(kb.dynSizes[row]);
      for (int64_t p = 1; p < t.getRank(); ++p)
        dims.push_back(vb.getIndexAttr(t.getDimSize(p)));
      return rowMajorView(vb, loc, entry->getArgument(i), t.getElementType(),
                          dims);
    }
    AffineMap map = mapOf(args[i].first);
    for (int64_t p = 0; p < t.getRank(); ++p) {
      unsigned d = cast<AffineDimExpr>(map.getResult(p)).getPosition();
      dims.push_back(
          t.isDynamicDim(p)
              ? (kb.dynSizes[d] ? OpFoldResult(kb.dynSizes[d])
                                : OpFoldResult(vb.getIndexAttr(sizes[d])))
              : OpFoldResult(vb.getIndexAttr(t.getDimSize(p))));
    }
    return rowMajorView(vb, loc, entry->getArgument(i), t.getElementType(),
                        dims);
  };
  // The host function's one launch, or null before the kernel builds it
  // (found from the entry block: the insertion point may be in a loop body
  // still being built, not yet linked to it).
  auto launchOf = [&]() -> gpu::LaunchOp {
    for (Operation &o : *entry)
      if (auto l = dyn_cast<gpu::LaunchOp>(o))
        return l;
    return {};
  };
  // The flat arguments' views and the narrowed sizes, made once at the
  // launch body's start when the kernel first asks for any view (a
  // workspace's included).
  bool viewsMade = false;
  auto makeViews = [&](gpu::LaunchOp launch) {
    if (viewsMade)
      return;
    viewsMade = true;
    vb.setInsertionPointToStart(&launch.getBody().front());
    // The sizes as 32-bit values (the loader keeps them below 2^31):
    // index arithmetic on them can then be narrowed like a static
    // kernel's.
    for (Value &v : kb.dynSizes)
      if (v)
        v = arith::IndexCastUIOp::create(
            vb, loc, vb.getIndexType(),
            arith::IndexCastOp::create(vb, loc, vb.getI32Type(), v));
    for (unsigned j = 0; j < args.size(); ++j)
      if (isFlat(j))
        views[j] = makeView(j);
  };
  auto viewOf = [&](unsigned i) -> Value {
    gpu::LaunchOp launch = launchOf();
    if (!launch) // before the kernel only types are asked for
      return entry->getArgument(i);
    makeViews(launch);
    return views.lookup(i);
  };
  auto memArg = [&](StringRef name) -> Value {
    for (auto [i, a] : llvm::enumerate(args))
      if (a.first == name)
        return isFlat(i) ? viewOf(i) : entry->getArgument(i);
    for (auto [i, w] : llvm::enumerate(workspace))
      if (w.first == name) {
        unsigned n = args.size() + dynDims.size() + i;
        gpu::LaunchOp launch = launchOf();
        if (!dynamic || !launch)
          return entry->getArgument(n);
        makeViews(launch);
        if (Value v = views.lookup(n))
          return v;
        // [splits, batch, ...] = [gridDim.z, gridDim.y, ...]; locks
        // [gridDim.y, gridDim.x]; row-major.
        OpBuilder wb(b.getContext());
        wb.setInsertionPointToStart(&launch.getBody().front());
        MemRefType t = w.second;
        gpu::KernelDim3 grid = launch.getGridSize();
        SmallVector<OpFoldResult> dims;
        for (int64_t d = 0; d < t.getRank(); ++d) {
          Value g = name == "locks" ? (d == 0 ? grid.y : grid.x)
                                    : (d == 0 ? grid.z : grid.y);
          dims.push_back(t.isDynamicDim(d) ? OpFoldResult(g)
                                           : wb.getIndexAttr(t.getDimSize(d)));
        }
        Value view = rowMajorView(wb, loc, entry->getArgument(n),
                                  t.getElementType(), dims);
        views[n] = view;
        return view;
      }
    for (const TensorMapArg &tm : tensorMaps)
      if (tm.name == name)
        return entry->getArgument(tm.argNo);
    return Value();
  };
  for (const std::string &name : modNames)
    kb.modMem.push_back(name.empty() ? Value() : memArg(name));
  kb.modView = [&](unsigned i) { return memArg(modNames[i]); };
  // Runtime scales: the constant times each factor's element, loaded from
  // its scale<i> argument and widened to f32, at the kernel's insertion
  // point.
  auto productValue = [&](const ScaleProduct &p) -> Value {
    Value acc = kb.cF32(static_cast<float>(p.constant));
    for (const ScaleProduct::Factor &f : p.factors) {
      SmallVector<Value> idx;
      for (int64_t i : f.indices)
        idx.push_back(kb.cIdx(i));
      Value x =
          memref::LoadOp::create(kb.b, loc, memArg(scaleNameOf(f.tensor)), idx);
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(kb.b, loc, kb.b.getF32Type(), x);
      acc = f.divide ? Value(arith::DivFOp::create(kb.b, loc, acc, x))
                     : Value(arith::MulFOp::create(kb.b, loc, acc, x));
    }
    return acc;
  };
  if (runtimeScale)
    kb.runtimeScale = [&]() { return productValue(scaleProduct); };
  if (!valueScaleProduct.factors.empty())
    kb.runtimeValueScale = [&]() { return productValue(valueScaleProduct); };

  int64_t pageSize = 0, pages = 0;
  if (kPages) {
    auto cache = kPages.getCache().getType();
    pageSize = cache.getDimSize(kPages.getTokenDim());
    pages = cache.getDimSize(kPages.getSeqDim());
    sizes[r + 1] = kPages.getTable().getType().getDimSize(1) * pageSize;
  }
  int64_t M = sizes[r], D = sizes[r + 2], E = sizes[r + 3];
  if (failed(validateShapes(op, args, sizes, r)))
    return failure();
  kb.sizes.assign(sizes.begin(), sizes.end());
  // The static part of the batch product (all of it without dynamic sizes).
  int64_t batch = 1;
  for (unsigned i = 0; i < r; ++i)
    if (!dynDim[i])
      batch *= sizes[i];
  const int64_t tf32 = tf32Passes(opts);
  bool canWgmma = opts.chip == "sm_90a" && wgmmaEligible(op, mapOf, D, E, tf32);
  // FP8 has one kernel: the warp-specialized wgmma kernel with TMA.
  if (fp8) {
    std::string why = opts.chip != "sm_90a"
                          ? "chip=" + opts.chip + " (needs sm_90a)"
                      : !canWgmma ? wgmmaIneligibility(op, mapOf, D, E, tf32)
                      : opts.wgmma == 0 ? std::string("wgmma=0")
                      : opts.splits > 1 ? std::string("split-KV (splits > 1)")
                      : kPages          ? std::string("paged K/V")
                      : lenMask         ? std::string("per-sequence key counts")
                      : varlen          ? std::string("varlen")
                                        : std::string();
    if (!why.empty())
      return op.emitError("FP8 attention runs on the Hopper kernel "
                          "(warp-specialized wgmma with TMA) only: ")
             << why;
  }
  if (opts.wgmma == 1 && !canWgmma)
    return op.emitError("wgmma=1: the wgmma kernel needs chip=sm_90a, "
                        "f16/bf16 inputs and output, D and E multiples of "
                        "16 up to 256, contiguous head dims: ")
           << (opts.chip != "sm_90a"
                   ? "chip=" + opts.chip
                   : wgmmaIneligibility(op, mapOf, D, E, tf32));
  // Decode shapes (M <= 16 query rows: one new token, a few speculative
  // ones) take the mma.sync kernel with 16-row warps even on sm_90a: the
  // wgmma kernel's 64-row warpgroups would compute mostly padding, and the
  // key loop is bound by reading K and V, not by the tensor cores.
  // wgmma=1 keeps the Hopper kernel.
  // Only with the default row shape (tile-kv, stages, pipeline may be set).
  bool mmaOk = mmaEligible(op, mapOf, D, E, tf32);
  if (dynamic && !mmaOk && !fp8)
    return op.emitError("dynamic shapes run on the tensor-core kernels only, "
                        "which cannot take this attention: ")
           << mmaIneligibility(op, mapOf, D, E, tf32);
  bool decode = mmaOk && !dynDim[r] && M <= kDecodeRows && !opts.warps && !opts.tileQ &&
                opts.wgmma != 1;
  std::string splitWhy = splitIneligibility(op, kb.maskValue);
  if (opts.splits > 1) {
    if (!splitWhy.empty())
      return op.emitError("splits=")
             << opts.splits << ": split-KV cannot take this attention: "
             << splitWhy;
    if (!mmaOk)
      return op.emitError("splits=")
             << opts.splits
             << ": split-KV runs on the mma.sync kernel, which cannot take "
                "this attention: "
             << mmaIneligibility(op, mapOf, D, E, tf32);
    if (opts.wgmma == 1)
      return op.emitError("splits=")
             << opts.splits
             << " runs on the mma.sync kernel; it cannot be combined with "
                "wgmma=1";
  }
  if (kPages && !mmaOk)
    return op.emitError("paged K/V: the GPU kernels read pages on the "
                        "mma.sync kernel, which cannot take this attention: ")
           << mmaIneligibility(op, mapOf, D, E, tf32);
  if (lenMask && !mmaOk)
    return op.emitError("per-sequence key counts (attn.length_mask): the GPU "
                        "kernels end key loops there on the mma.sync kernel, "
                        "which cannot take this attention: ")
           << mmaIneligibility(op, mapOf, D, E, tf32);
  if (varlen && !mmaOk)
    return op.emitError("varlen (attn.varlen_mask): the GPU kernels run "
                        "packed sequences on tensor cores only, which cannot "
                        "take this attention: ")
           << mmaIneligibility(op, mapOf, D, E, tf32);
  if (varlen && opts.splits > 1)
    return op.emitError("varlen (attn.varlen_mask) cannot be combined with "
                        "split-KV (splits=")
           << opts.splits << ")";
  if (lenMask && opts.wgmma == 1)
    return op.emitError("per-sequence key counts (attn.length_mask) run on "
                        "the mma.sync kernel; they cannot be combined with "
                        "wgmma=1");
  if (kPages && opts.wgmma == 1)
    return op.emitError("paged K/V runs on the mma.sync kernel; it cannot be "
                        "combined with wgmma=1");
  // f32 as TF32 on wgmma: the warp-specialized kernel with Q, K and V by
  // TMA only (varlen too); else mma.sync runs it.
  const bool f32In = op.getQuery().getType().getElementType().isF32();
  std::string tf32Why;
  if (canWgmma && f32In) {
    tf32Why = opts.tma == 0              ? "tma=0"
              : opts.warpSpecialize == 0 ? "warp-specialize=0"
                                         : tmaIneligibility(op, mapOf);
    if (!tf32Why.empty())
      tf32Why = "TF32 on wgmma needs the warp-specialized kernel with Q, K "
                "and V by TMA: " +
                tf32Why;
  }
  if (opts.wgmma == 1 && !tf32Why.empty())
    return op.emitError("wgmma=1: ") << tf32Why;
  if (opts.qRegs == 1 && !(canWgmma && tf32 == 1 && f32In))
    return op.emitError("q-regs=1: Q's fragments in registers are the Hopper "
                        "TF32 kernel's (f32 with f32-precision=tf32 on "
                        "sm_90a)");
  bool useWgmma = canWgmma && opts.wgmma != 0 && !decode &&
                  !(opts.splits > 1) && !kPages && !lenMask && tf32Why.empty();
  if (opts.qRegs == 1 && !useWgmma)
    return op.emitError("q-regs=1: this attention runs on mma.sync (")
           << (decode ? "a decode shape" : "not the Hopper kernel")
           << "), which keeps Q in shared memory";
  bool useMma = !useWgmma && mmaOk;
  // The wgmma kernel gives each row its sign of a key-linear value under an
  // absolute value (non-causal ALiBi) per key tile. The mma.sync kernel
  // measured 0.96-0.97x that way (its 32-key tiles and one warp-uniform
  // branch per tile cost more than the ops per score it saves; log step
  // 181): it applies |n - m| per score.
  kb.keyAbsAllowed = useWgmma;
  MmaConfig cfg;
  WgmmaConfig wcfg;
  // Why the warp-specialized kernel streams K/V with cp.async (explained).
  std::string noTma;
  if (useWgmma) {
    noTma = tmaIneligibility(op, mapOf);
    // A bias linear in the key index (ALiBi), which the kernel takes apart.
    const bool keyLinear = TileKernel::keyLinearBiasFor(kb, memArg);
    FailureOr<WgmmaConfig> resolved =
        // Varlen: the keys of one sequence (on average N / S) bound a
        // block's loop, not N.
        resolveWgmmaConfig(
            op, opts,
            varlen && !dynDim[r + 1]
                ? std::max<int64_t>(1, sizes[r + 1] / kb.varlenSeqs)
                : sizes[r + 1], // kDynamic when dynamic
            D, E, op.getCausal() || kb.varlenCausal,
            static_cast<bool>(memArg("mask")), noTma.empty() && opts.tma != 0,
            /*persistentOk=*/opts.persistent != 0, keyLinear,
            static_cast<bool>(varlen));
    if (failed(resolved))
      return failure();
    wcfg = *resolved;
    wcfg.varlenSlots = static_cast<bool>(varlen);
    // The two-block kernel (no producer warpgroup) takes TMA from its
    // thread 0 where its loop is not pipelined and no mask tile is staged
    // beside K/V.
    if (!wcfg.warpSpecialized && noTma.empty()) {
      if (wcfg.pipeline)
        noTma = "the pipelined two-block kernel loads K/V with cp.async";
      else if (wcfg.maskRowBytes)
        noTma = "a mask tile staged beside K/V (cp.async)";
    }
    if (opts.tma == 1 && !noTma.empty())
      return op.emitError("tma=1: ") << noTma;
    wcfg.tma = noTma.empty() && opts.tma != 0;
    // A 16- or 32-bit mask tile in swizzled panels beside V a tile behind
    // K: by TMA as well (its rows contiguous along n, 16-byte multiples:
    // wgmmaMaskRowBytes; a tensor map takes at most 5 dims of plain
    // indices).
    if (wcfg.tma && wcfg.shiftV && wcfg.maskSwizzled()) {
      auto maskType = op.getMask().getType();
      unsigned bits = maskType.getElementType().getIntOrFloatBitWidth();
      wcfg.tmaMask = (bits == 16 || bits == 32) && maskType.getRank() <= 5 &&
                     op.getMaskMap().isProjectedPermutation();
    }
    wcfg.tmaQ = wcfg.tma && (!wcfg.maskInRing() || wcfg.tmaMask);
    // Q in registers: not by TMA (nor in shared memory at all).
    if (wcfg.qInRegs)
      wcfg.tmaQ = false;
    if (wcfg.transposedV() &&
        !(wcfg.tma && (wcfg.tmaQ || wcfg.qInRegs) && wcfg.warpSpecialized))
      return op.emitError(fp8 ? "FP8 attention" : "TF32 on wgmma")
             << " runs on the warp-specialized kernel with Q, K and V by "
                "TMA only: "
             << (!noTma.empty()  ? noTma
                 : opts.tma == 0 ? std::string("tma=0")
                                 : std::string("not warp-specialized"));
    wcfg.trimKeys = keyMaskTrimmable(op, kb.maskValue);
    // Packed documents (segment ids compared in the region): the producer
    // finds each query tile's key range from the ids. Keys it leaves out
    // score the region's fill, which causal/window must share (a finite
    // one is folded in after the loop, TileKernel::foldHiddenKeys).
    // Not beside a mask tensor: the keys left out score the region's fill
    // only where no mask applies after it.
    if (SegmentMatch seg = segmentMatch(op))
      wcfg.segTrim = seg.keysSkippable(op, kb.maskValue) &&
                     wcfg.warpSpecialized && wcfg.tma && !wcfg.trims() &&
                     !memArg("mask") && !kb.varlenSeqs;
    // A bias linear in the key index (ALiBi) by one more k-step of the S
    // product where its panel of key positions fits, not at the cost of a
    // resident block: with its fma per score ALiBi measured 0.87-0.92x the
    // causal kernel at locked clocks, with the k-step 0.94-0.98x (log step
    // 172).
    if (opts.keyBiasMma == 1 && (!keyLinear || wcfg.transposedV()))
      return op.emitError("key-bias-mma=1: ")
             << (wcfg.transposedV()
                     ? "FP8 and TF32 add a key-linear bias with one fma per "
                       "score"
                     : "the attention has no score_mod bias linear in the "
                       "key index (score + X * (n - m) with X free of the "
                       "score, m and n)");
    if (keyLinear && !wcfg.transposedV() && opts.keyBiasMma != 0 &&
        !wcfg.maskRowBytes) {
      WgmmaConfig probe = wcfg;
      probe.keyPosMma = true;
      auto resident = [&](const WgmmaConfig &c) {
        return 228 * 1024 / (c.sharedBytes(D, E) + 1024);
      };
      if (probe.sharedBytes(D, E) <= 227 * 1024 &&
          resident(probe) >= std::max<int64_t>(1, wcfg.minBlocks))
        wcfg = probe;
      else if (opts.keyBiasMma == 1)
        return op.emitError("key-bias-mma=1: the panel of key positions (")
               << probe.keyPosBytes() << " bytes) does not fit beside the "
               << wcfg.sharedBytes(D, E) << " bytes of this launch shape";
    }
  }
  // GQA packing for decode: the query-head group (the one batch dim K and
  // V do not index) joins the rows, so that each kv head's K/V are read
  // once per block instead of once per query head. Masks, sinks and a
  // score_mod region's values of the group index are per row (its query
  // and group member).
  int64_t packDim = -1, group = 1;
  // A dynamic decode of four row warps keeps two key warps for the key
  // ranges chosen at launch; where the launch's grid is full with one range
  // a static bundle takes one key warp (with 32-key tiles and four stages
  // where K/V are not paged: log step 206). That kernel is a variant of the
  // bundle (the manifest's `variants`), compiled by attn-bundle with those
  // options and chosen at launch. Static ÷ dynamic on the H200 there
  // (B = 64, N = 4096, 8 kv heads): 0.87-0.89x without it, 1.02-1.03x with
  // it (log step 208).
  bool fullGridVariant = false;
  // Past D = 128 a dynamic packed decode in one-warp blocks keeps two 32-key
  // stages (three blocks per multiprocessor); where a static bundle would
  // take three (decodeStages: a fuller last wave), so does the launch, by a
  // variant (rule "decode_stages"): static ÷ dynamic at B = 64, N = 4096, 8
  // kv heads, D = 256 on the H200 0.935-0.956x without it, 1.043-1.045x
  // with it (log step 211).
  bool stagesVariant = false;
  // Chunked decode (ids from the positions alone): the keys the tile's
  // segment ranges leave, which the split count spreads instead of N (the
  // manifest's key_span, for a count chosen at launch).
  std::optional<int64_t> segKeySpan;
  if (useMma && decode && !varlen) {
    SmallVector<unsigned> groups;
    for (unsigned i = 0; i < r; ++i)
      if (!op.getKeyMap().isFunctionOfDim(i) &&
          !op.getValueMap().isFunctionOfDim(i))
        groups.push_back(i);
    if (groups.size() == 1 && !dynDim[groups[0]] && sizes[groups[0]] > 1 &&
        M * sizes[groups[0]] <= kPackRows) {
      packDim = groups[0];
      group = sizes[packDim];
    }
  }
  const int64_t rowsTotal = M * group, launchBatch = batch / group;
  if (useMma) {
    FailureOr<MmaConfig> resolved =
        resolveMmaConfig(op, opts, rowsTotal, D, E, decode);
    if (failed(resolved))
      return failure();
    cfg = *resolved;
    cfg.packDim = packDim;
    cfg.pageSize = pageSize;
    cfg.pages = pages;
    cfg.lenDim = lenDim;
    int64_t gridQ = (rowsTotal + cfg.rowsPerBlock() - 1) / cfg.rowsPerBlock();
    // The longest key range a block sees: N, or with a window its width
    // plus the block's rows.
    int64_t span = sizes[r + 1];
    if (std::optional<int64_t> w = op.getWindow())
      span = std::min(span, *w + cfg.rowsPerBlock());
    if (decode && !varlen && !dynDim[r] && !dynDim[r + 1] && !op.getMask())
      if (SegmentMatch seg = segmentMatch(op);
          seg && std::isinf(seg.fill) && seg.fill < 0 &&
          seg.keysSkippable(op, kb.maskValue))
        segKeySpan = segmentKeySpan(op, seg, M, sizes[r + 1], 128);
    if (segKeySpan)
      span = std::min(span, *segKeySpan);
    // Static decode without GQA packing, pages or varlen, no launch shape
    // given, at least 512 keys per block: 32-key tiles and two stages (39
    // KB of shared memory at D = 128 instead of 106: five one-warp blocks
    // per multiprocessor instead of two, more of them streaming K/V at
    // once): 1.005-1.08x 64-key tiles with decodeStages on those rows, but
    // 0.90-0.92x with 256 keys per block (B = 1, N = 1024 split four ways:
    // ~20 us) and 0.82-0.99x with packing or 16-key pages (log step 91).
    const bool smallDecodeTiles =
        decode && !dynamic && !varlen && packDim < 0 && !pageSize &&
        !opts.tileKV && !opts.stages && !opts.pipeline &&
        std::max(D, E) <= 128 &&
        span / (opts.splits >= 1
                    ? opts.splits
                    : decodeSplits(opts.chip, gridQ * launchBatch, span)) >=
            512;
    if (smallDecodeTiles)
      cfg.keyTile = 32;
    // GQA-packed decode over a full grid (at least a block per
    // multiprocessor, one key range per query tile, one key warp) at
    // 64 < D <= 128; measured on the H200 (log steps 205, 206), default ÷
    // variant by time:
    // - one-warp blocks (M x G <= 16 rows) of at most 4096 keys: 32-key
    //   tiles, three stages (~55 KB with Q at D = 128: four blocks per
    //   multiprocessor instead of two): 1.02-1.09x at N = 1024-4096;
    //   0.99-1.02x at N = 8192-32768, so not there;
    // - four row warps (49-64 packed rows): 32-key tiles, four stages (the
    //   bytes of two 64-key stages, more of them in flight): 1.01-1.13x
    //   with 64 rows at N = 1024-32768; not with two or three row warps
    //   (0.86-1.0x) nor where the grid takes two key warps (0.78-0.95x).
    // No launch-shape option given: the decode rules below may choose one.
    const bool shapeFree = !opts.tileKV && !opts.stages && !opts.pipeline &&
                           !opts.keyWarps && opts.splits < 1;
    const bool packedOneRange =
        decode && !dynamic && !varlen && packDim >= 0 && !pageSize &&
        !cfg.tf32 && shapeFree && std::max(D, E) > 64 &&
        std::max(D, E) <= 128 &&
        gridQ * launchBatch >= multiprocessors(opts.chip) &&
        decodeSplits(opts.chip, gridQ * launchBatch, span) <= 1;
    const bool packedSmallTiles =
        packedOneRange && cfg.warps == 1 && span <= 4096;
    const bool packedDeepTiles = packedOneRange && cfg.warps == 4;
    // Dynamic decode (key ranges chosen at launch) in one-warp blocks at
    // 64 < D <= 128: 32-key tiles and three stages, as step 205's static
    // rule, whatever the launch's grid. Static time ÷ dynamic on the H200
    // (log step 207): 0.97-1.04x on 16 rows (B = 1-64, N = 1024-32768, 8
    // and 32 kv heads, M = 1-4, 16- and 64-key pages) against 0.87-1.04x
    // with 64-key tiles; not with two or four row warps (0.85-0.94x).
    const bool dynamicSmallTiles =
        decode && dynamic && !varlen && splitWhy.empty() && cfg.warps == 1 &&
        !cfg.tf32 && shapeFree && std::max(D, E) > 64 && std::max(D, E) <= 128;
    if (packedSmallTiles || packedDeepTiles || dynamicSmallTiles)
      cfg.keyTile = 32;
    // Decode may take two key warps by default (log steps 118, 122).
    const bool keyWarpsOk =
        decode && !opts.keyWarps && !cfg.tf32 && cfg.keyTile % 32 == 0;
    if (dynamic) {
      // The split count depends on the batch and key count: chosen at
      // launch (grid z) by the launch rule, the chunks in the kernel.
      cfg.setSplits(1, span);
      cfg.runtimeSplits = decode && splitWhy.empty() && !varlen &&
                          opts.splits != 1;
      // Split or not (chosen at launch), decode blocks take two key warps:
      // 1.00-1.01x on full decode grids, up to 1.10x split (log step 118);
      // blocks of four row warps with the launch rule's one-wave ranges, as
      // static ones (log step 135).
      if (cfg.runtimeSplits && keyWarpsOk)
        cfg.keyWarps = 2;
      // Launch variants (see fullGridVariant, stagesVariant).
      const bool variantsOk = cfg.runtimeSplits && cfg.keyWarps == 2 &&
                              packDim >= 0 && !cfg.tf32 && shapeFree;
      fullGridVariant = variantsOk && cfg.warps == 4 && std::max(D, E) > 64 &&
                        std::max(D, E) <= 128;
      stagesVariant =
          variantsOk && cfg.warps == 1 && !pageSize && std::max(D, E) > 128;
    } else if (opts.splits >= 1)
      cfg.setSplits(opts.splits, span);
    else if (decode && splitWhy.empty() && !varlen) {
      int64_t want = decodeSplits(opts.chip, gridQ * launchBatch, span);
      // Where the grid needs split-KV, two key warps per row tile (each
      // half of every key tile, merged in shared memory): more loads in
      // flight per block. Blocks of four row warps (64 packed rows; one
      // per multiprocessor by registers) take them with as many key ranges
      // as fill the multiprocessors once, where a range then has at most
      // kMaxOneWaveRange keys; longer ranges keep one key warp and every
      // range (a grid short of the multiprocessors would idle some for the
      // whole launch). Measured on an H100 (docs/performance.md, log steps
      // 118, 127): 1.0-1.39x on the split rows; two key warps over two
      // ranges of 64 packed rows 0.91-0.96x, one range of 131072 keys
      // 0.98x.
      if (want > 1 && keyWarpsOk) {
        int64_t wave = decodeSplits(opts.chip, gridQ * launchBatch, span,
                                    SplitTarget::OneWave);
        if (cfg.warps < 4) {
          cfg.keyWarps = 2;
        } else if ((span + wave - 1) / wave <= kMaxOneWaveRange) {
          cfg.keyWarps = 2;
          want = wave;
        }
      } else if (keyWarpsOk && cfg.warps == 1 && packDim >= 0 &&
                 std::max(D, E) > 128) {
        // Past D = 128, GQA-packed one-warp blocks over a full grid take
        // two key warps too: 1.046-1.050x one at D = 256 with 8 and 4 kv
        // heads, 256-1024 blocks, on the H200 (log step 212).
        cfg.keyWarps = 2;
      }
      // 32-key tiles (five blocks per multiprocessor fit) over a grid of
      // at most a quarter as many query tiles as multiprocessors take more
      // ranges, while a range keeps 512 keys or more: 1.02-1.03x at B = 1,
      // 32 heads, N = 8k-128k; 0.99-1.01x with 64 and 128 tiles, so not
      // there (log step 128).
      if (smallDecodeTiles && want > 1 &&
          4 * gridQ * launchBatch <= multiprocessors(opts.chip)) {
        int64_t more = decodeSplits(opts.chip, gridQ * launchBatch, span,
                                    SplitTarget::SmallTiles);
        if (span / more >= 512)
          want = more;
      }
      cfg.setSplits(want, span);
    }
    if (smallDecodeTiles)
      cfg.stages = 2;
    else if (packedSmallTiles || dynamicSmallTiles)
      cfg.stages = 3;
    else if (packedDeepTiles)
      cfg.stages = 4;
    else if (decode && !opts.stages && !opts.pipeline)
      cfg.stages = decodeStages(cfg, gridQ * launchBatch * cfg.splits,
                                multiprocessors(opts.chip), D, E, packDim >= 0);
    // sm_80's 163 KB: a chosen third decode stage that does not fit gives
    // way to two; what still does not is an error here, not an invalid
    // bundle.
    if (decode && !opts.stages && !cfg.pipeline && cfg.stages > 2 &&
        cfg.sharedBytes(D, E) > sharedLimit(opts.chip))
      cfg.stages = 2;
    // The stage variant only where the launch's blocks are not known here
    // (a dynamic batch dim) and this kernel took two stages; else the rule
    // could never pick it.
    stagesVariant = stagesVariant && cfg.stages == 2 &&
                    llvm::any_of(llvm::seq(0u, r),
                                 [&](unsigned i) { return bool(dynDim[i]); });
    if (failed(checkSharedBytes(op, "tensor-core", cfg.sharedBytes(D, E),
                                cfg.keyTile, cfg.stages, D, E, opts.chip)))
      return failure();
    // Packed documents: each block's keys from its rows' ids, found by its
    // threads scanning the key ids (no producer keeps granules here). Not
    // with split-KV, packed rows, pages or a mask tensor (which applies
    // after the region); keys left out score the region's fill, which
    // causal/window must share. Key ids sorted by position (chunks) are
    // found by binary search instead, before the split into key ranges:
    // with split-KV (an infinite fill: a range does not know the others'
    // hidden keys), packed rows (ids not of the group index) and pages.
    if (SegmentMatch seg = segmentMatch(op)) {
      // Per-sequence lengths (cfg.lenDim) bound each block's keys before
      // the search: sorted ids keep their ranges beside them, with the -inf
      // fill (a finite one is folded in for keys up to N, past the length).
      bool skippable =
          seg.keysSkippable(op, kb.maskValue) &&
          (!op.getMask() || (seg.keyMonotone && lenDim >= 0 &&
                             std::isinf(seg.fill) && seg.fill < 0));
      if (seg.keyMonotone)
        cfg.segRanges =
            skippable && (!cfg.splitKV() || std::isinf(seg.fill)) &&
            !(packDim >= 0 &&
              ((seg.rowBatchDims | seg.keyBatchDims) >> packDim & 1));
      else
        cfg.segRanges = skippable && !cfg.splitKV() && packDim < 0 && !kPages;
    }
  }
  int64_t rowsPerBlock = useWgmma ? wcfg.rowsPerBlock()
                         : useMma ? cfg.rowsPerBlock()
                                  : threads;
  int64_t blockThreads = useWgmma ? wcfg.threads()
                         : useMma ? cfg.threads()
                                  : threads;
  int64_t sharedBytes = useWgmma ? wcfg.sharedBytes(D, E)
                        : useMma ? cfg.sharedBytes(D, E)
                                 : 0;
  int64_t gridX = dynDim[r] ? ShapedType::kDynamic
                            : kb.queryBlocks(rowsTotal, rowsPerBlock);
  if (dynamic) {
    // The launch's grid from the runtime sizes, in the host function.
    // Varlen: floor(T / rows) + S tile slots (TileKernel::setVarlen).
    if (dynDim[r] && varlen)
      kb.dynGridX = arith::AddIOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, kb.dynSizes[r], kb.cIdx(rowsPerBlock)),
          kb.cIdx(kb.varlenSeqs));
    else if (dynDim[r])
      kb.dynGridX = arith::CeilDivUIOp::create(
          b, loc, arith::MulIOp::create(b, loc, kb.dynSizes[r], kb.cIdx(group)),
          kb.cIdx(rowsPerBlock));
    Value y = kb.cIdx(launchBatch);
    bool dynBatch = false;
    for (unsigned i = 0; i < r; ++i)
      if (dynDim[i]) {
        y = arith::MulIOp::create(b, loc, y, kb.dynSizes[i]);
        dynBatch = true;
      }
    if (dynBatch)
      kb.dynBatch = y;
  }
  // Persistent: why not (empty if it applies), and then as many blocks as
  // multiprocessors (or tiles, if fewer).
  std::string noPersistent;
  // The tile count is a runtime value (a dynamic m or batch).
  const bool dynTiles = dynDim[r] || kb.dynBatch;
  // Varlen: a persistent producer takes the tiles by levels and publishes
  // each one's batch entry too.
  kb.varlenLevels = useWgmma && varlen && !wcfg.segTrim && kb.varlenSeqs >= 2 &&
                    kb.varlenSeqs <= TileKernel::kVarlenVoteSeqs;
  wcfg.publishMap = dynTiles || kb.varlenLevels;
  if (!useWgmma && opts.tma == 1)
    return op.emitError("tma=1: TMA loads are the Hopper (wgmma) kernel's; "
                        "this attention gets ")
           << (useMma ? "the mma.sync kernel" : "the SIMT kernel");
  if (!useWgmma && opts.persistent == 1)
    return op.emitError("persistent=1: persistent blocks are the Hopper "
                        "warp-specialized kernel's; this attention gets ")
           << (useMma ? "the mma.sync kernel" : "the SIMT kernel");
  if (useWgmma) {
    if (wcfg.qInRegs)
      noPersistent = "Q's fragments are in registers, read once per block "
                     "(q-regs=0 keeps Q in shared memory)";
    else if (!wcfg.warpSpecialized || !wcfg.pipeline)
      noPersistent = "it runs the warp-specialized, pipelined kernel "
                     "(warp-specialize=1 pipeline=1)";
    else if (!dynTiles &&
             gridX * launchBatch > std::numeric_limits<int32_t>::max())
      noPersistent = "more than 2^31 - 1 query tiles (32-bit tile numbers)";
    if (opts.persistent == 1 && !noPersistent.empty())
      return op.emitError("persistent=1: ") << noPersistent;
    if (opts.persistent == 1 ||
        (opts.persistent == -1 && wcfg.wantPersistent && noPersistent.empty())) {
      // Dynamic m or batch: the launch takes min(tiles, this) blocks.
      wcfg.persistentBlocks =
          dynTiles ? multiprocessors(opts.chip)
              : std::min(gridX * launchBatch, multiprocessors(opts.chip));
      // The tile slots must fit too: required, an error; by default, one
      // block per tile then.
      if (wcfg.sharedBytes(D, E) > 227 * 1024) {
        if (opts.persistent == 1)
          return op.emitError("persistent=1: its tile slots do not fit in "
                              "shared memory (")
                 << wcfg.sharedBytes(D, E) << " bytes)";
        wcfg.persistentBlocks = 0;
        noPersistent = "its tile slots do not fit in shared memory";
      }
      sharedBytes = wcfg.sharedBytes(D, E);
    }
  }
  if (!dynDim[r] && gridX > std::numeric_limits<int32_t>::max())
    return op.emitError("M = ")
           << M << " needs " << gridX
           << " query blocks; CUDA's grid limit in x is 2^31 - 1";
  // Which kernel, its launch shape, and why not a faster one: in the
  // manifest (kernel_choice), and as a remark with `explain`.
  std::string choice;
  {
    llvm::raw_string_ostream d(choice);
    if (useWgmma) {
      d << "wgmma (sm_90a), " << wcfg.warpGroups
        << " warpgroup(s) x 64 query rows";
      if (wcfg.tf32)
        d << ", TF32 k8 products (V^T by the producer"
          << (wcfg.qInRegs ? ", Q in registers)" : ")");
      if (wcfg.warpSpecialized)
        d << " + a producer warpgroup (mbarriers, setmaxnreg "
          << wcfg.producerRegs() << "/" << wcfg.consumerRegs() << ")";
      d << ", " << wcfg.keyTile << "-key tiles, " << wcfg.stages << " stages";
      if (wcfg.tma)
        d << (wcfg.tmaMask ? ", Q/K/V and the mask by TMA"
              : wcfg.tmaQ  ? ", Q/K/V by TMA"
                           : ", K/V by TMA");
      else if (wcfg.warpSpecialized)
        d << ", K/V by cp.async ("
          << (noTma.empty() ? std::string("tma=0") : noTma) << ")";
      if (wcfg.maskRowBytes)
        d << ", mask tiles staged in shared memory"
          << (wcfg.maskInRing() ? " (in the K/V stages)" : "");
      if (wcfg.trims())
        d << ", keys past the mask's last kept key skipped";
      if (wcfg.segTrim) {
        SegmentMatch seg = segmentMatch(op);
        d << ", each tile's keys limited to those its segment ids match"
          << (seg.rowFromPositions && seg.keyFromPositions
                  ? " (ids computed from the positions)"
              : seg.keyFromPositions ? " (key ids computed from the positions)"
              : seg.rowFromPositions
                  ? " (query ids computed from the positions)"
                  : "");
      }
      if (wcfg.keyPosMma)
        d << ", the key-linear bias on the tensor cores";
      if (wcfg.pipeline)
        d << ", pipelined";
      if (wcfg.shiftV)
        d << ", V a tile behind K in each stage";
      if (wcfg.pingpong)
        d << ", ping-pong";
      if (wcfg.persistent())
        if (dynTiles)
          d << ", persistent: up to " << wcfg.persistentBlocks
            << " blocks take the query tiles from a counter";
        else
          d << ", persistent: " << wcfg.persistentBlocks
            << " blocks take the " << gridX * launchBatch
            << " query tiles from a counter";
      else if (wcfg.warpSpecialized)
        d << ", a block per query tile ("
          << (opts.persistent == 0    ? std::string("persistent=0")
              : !noPersistent.empty() ? noPersistent
                                      : std::string("persistent: not faster "
                                                    "measured here"))
          << ")";
      if (wcfg.minBlocks > 0)
        d << ", " << wcfg.minBlocks << " block(s) per multiprocessor";
      if (varlen)
        d << ", varlen: " << kb.varlenSeqs << " packed sequences";
      if (kb.varlenLevels && wcfg.persistent())
        d << " (tiles by levels, every sequence's last first, where "
             "the lengths give no more tiles than slots)";
    } else {
      std::string notWgmma =
          opts.chip != "sm_90a" ? "chip=" + opts.chip + " (wgmma needs sm_90a)"
          : opts.wgmma == 0     ? std::string("wgmma=0")
          : !tf32Why.empty()    ? tf32Why
                                : wgmmaIneligibility(op, mapOf, D, E, tf32);
      if (decode && canWgmma && opts.wgmma != 0)
        notWgmma = "decode shape (M = " + std::to_string(M) + " <= " +
                   std::to_string(kDecodeRows) +
                   " query rows: wgmma's 64-row warpgroups would compute "
                   "padding; the loop is bound by K/V reads)";
      else if (lenMask && canWgmma && opts.wgmma != 0)
        notWgmma = "per-sequence key counts (key loops end there on mma.sync)";
      else if (kPages && canWgmma && opts.wgmma != 0)
        notWgmma = "paged K/V (read through the block table on mma.sync)";
      else if (opts.splits > 1 && canWgmma && opts.wgmma != 0)
        notWgmma = "splits=" + std::to_string(opts.splits) +
                   " (split-KV runs on mma.sync)";
      if (useMma) {
        d << (cfg.tf32 == 3   ? "mma.sync m16n8k8 3xTF32 (f32 split in "
                                "TF32 halves: f32-accurate), "
              : cfg.tf32 == 1 ? "mma.sync m16n8k8 TF32, "
                              : "mma.sync m16n8k16, ")
          << cfg.warps << " warps x " << cfg.rowTiles
          << " x 16 query rows, " << cfg.keyTile << "-key tiles, " << cfg.stages
          << " stages";
        if (cfg.keyWarps > 1)
          d << ", " << cfg.keyWarps << " key warps per row tile ("
            << cfg.keysPerWarp()
            << " keys of each tile each, merged at the "
               "end)";
        if (kPages)
          d << ", paged K/V (pages of " << pageSize << " keys)";
        if (lenMask)
          d << ", per-sequence key counts";
        if (varlen)
          d << ", varlen: " << kb.varlenSeqs << " packed sequences";
        if (packDim >= 0)
          d << ", GQA packing: " << group << " query heads x " << M
            << " rows per kv head";
        if (cfg.runtimeSplits || cfg.splits > 1) {
          if (cfg.runtimeSplits)
            d << ", split-KV: the key ranges per query tile chosen at launch "
                 "(grid z, launch_rules.splits), merged by the last block";
          else if (cfg.segRanges && !segKeySpan)
            d << ", split-KV: " << cfg.splits
              << " key ranges per query tile over the keys its segment ids "
                 "leave, merged by the last block";
          else
            d << ", split-KV: " << cfg.splits << " key ranges of " << cfg.chunk
              << " keys per query tile, merged by the last block";
          int64_t k =
              mergeSlices(cfg.runtimeSplits ? ShapedType::kDynamic : cfg.splits,
                          cfg.rowsPerBlock(), rowsTotal, E, cfg.threads());
          if (k > 1 && cfg.runtimeSplits)
            d << "s to finish from "
              << minSlicedSplits(std::min(cfg.rowsPerBlock(), rowsTotal), E, k)
              << " ranges";
          else if (k > 1)
            d << "s to finish";
          if (k > 1)
            d << " (" << k << ", a slice of rows each)";
          if (fullGridVariant)
            d << "; a full grid with one key range takes variant v1 (one "
                 "key warp, "
              << (pageSize ? "" : "32-key tiles, 4 stages, ")
              << "no split), another launch with one key range v2 (this "
                 "launch shape, no split)";
          if (stagesVariant)
            d << "; a launch with one key range whose last wave three "
                 "stages fill better takes variant v1 (three stages, no "
                 "split)";
        } else if (decode)
          d << ", no split-KV ("
            << (splitWhy.empty() ? "the grid is full or the keys few"
                                 : splitWhy)
            << ")";
        d << "; not wgmma: " << notWgmma;
      }
      else
        d << "SIMT (one thread per query row, no tensor cores, far slower); "
             "no tensor cores: "
          << mmaIneligibility(op, mapOf, D, E, tf32);
    }
  }
  // Segment ids compared per score (no key ranges): why, for the remark.
  SegmentMatch seg = segmentMatch(op);
  if (seg && useMma && cfg.segRanges && seg.keyMonotone) {
    choice += "; each block's keys limited to those its segment ids match "
              "(the key ids, computed from the positions, never decrease: "
              "found by binary search";
    choice += cfg.splitKV() ? ", before the split into key ranges" : "";
    choice += exactSegmentKeys(seg, M, pageSize != 0)
                  ? "; one query position: exactly those keys, no region per "
                    "score)"
                  : ")";
  } else if (seg && useMma && cfg.segRanges) {
    choice += seg.keyFromPositions
                  ? "; each block's keys limited to those its segment ids "
                    "match (its threads scan the key ids, computed from the "
                    "positions)"
                  : "; each block's keys limited to those its segment ids "
                    "match (its threads scan the key ids)";
  } else if (seg && !(useWgmma && wcfg.segTrim)) {
    std::string why =
        !useWgmma && !useMma     ? "the key ranges need a tensor-core kernel"
        : !seg.rangeable()       ? "the ids are unsigned 64-bit"
        : kb.varlenSeqs          ? "varlen sequences bound the keys instead"
        : memArg("mask")         ? "a mask tensor applies after the region"
        : useMma && op.getMask() ? "per-sequence lengths bound the keys"
        : useMma && !seg.keysSkippable(op, kb.maskValue)
            ? "the region's fill is not the mask value"
        : useMma && packDim >= 0 && seg.keyMonotone &&
                ((seg.rowBatchDims | seg.keyBatchDims) >> packDim & 1)
            ? "the ids read the group index of the packed query heads"
        : useMma && cfg.splitKV() && seg.keyMonotone
            ? "split-KV with a finite fill: a key range would not count the "
              "keys the others leave out"
        : useMma && cfg.splitKV()
            ? "split-KV spreads the keys over blocks, and the key ids are "
              "not sorted by position"
        : useMma && packDim >= 0 ? "grouped query heads are packed as rows"
        : useMma && kPages       ? "K/V are paged"
        : useWgmma && !wcfg.warpSpecialized
            ? "the key ranges need the Hopper kernel's producer warpgroup"
        : useWgmma && !wcfg.tma ? "K/V are not loaded by TMA"
                                : "the region's fill is not the mask value";
    choice += "; segment ids compared per score over every key (" + why + ")";
  }
  if (dynamic) {
    choice += "; dynamic sizes (";
    for (auto [i, d] : llvm::enumerate(dynDims))
      choice += (i ? ", " : "") + dimName(d);
    choice += ") as kernel parameters";
  }
  // Persistent: the counter blocks take their next tile from, and the
  // count of blocks past the last (the last of them zeroes both).
  if (useWgmma && wcfg.persistent()) {
    workspace.push_back(
        {"tile_counter", MemRefType::get({2}, b.getI32Type())});
    if (failed(func.insertArgument(func.getNumArguments(),
                                   workspace.back().second, {}, loc)))
      return op.emitError("cannot add the tile counter argument");
  }
  if (useMma && cfg.splitKV()) {
    int64_t eDim = E;
    Type f32 = b.getF32Type();
    // Dynamic: splits (grid z) and batch entries (grid y) may be runtime.
    int64_t z = cfg.runtimeSplits ? ShapedType::kDynamic : cfg.splits;
    int64_t y = kb.dynBatch ? ShapedType::kDynamic : launchBatch;
    workspace.push_back(
        {"o_part", MemRefType::get({z, y, rowsTotal, eDim}, f32)});
    workspace.push_back(
        {"ml_part", MemRefType::get({z, y, rowsTotal, 2}, f32)});
    workspace.push_back(
        {"locks", MemRefType::get({y, gridX}, b.getI32Type())});
    for (auto &[name, type] : workspace)
      if (failed(func.insertArgument(
              func.getNumArguments(),
              dynamic ? MemRefType::get({kFlatElements}, type.getElementType())
                      : type,
              {}, loc)))
        return op.emitError("cannot add the split-KV workspace argument ")
               << name;
    // The host's grid z (the kernel reads its own gridDim.z).
    if (cfg.runtimeSplits) {
      if (failed(func.insertArgument(func.getNumArguments(), b.getIndexType(),
                                     {}, loc)))
        return op.emitError("cannot add the split count argument");
      kb.dynSplits = entry->getArgument(func.getNumArguments() - 1);
    }
  }
  if (useWgmma && wcfg.tma)
    for (StringRef t : {"q", "k", "v", "mask"}) {
      if ((t == "q" && !wcfg.tmaQ) || (t == "mask" && !wcfg.tmaMask))
        continue;
      unsigned n = func.getNumArguments();
      if (failed(func.insertArgument(
              n, MemRefType::get({16}, b.getI64Type()), {}, loc)))
        return op.emitError("cannot add the tensor map argument of ") << t;
      tensorMaps.push_back({("tmap_" + t).str(), t.str(), n});
    }
  if (opts.explain)
    op.emitRemark() << "GPU kernel: " << choice;
  kind = useWgmma ? (wcfg.warpSpecialized ? KernelKind::WgmmaWarpSpecialized
                                          : KernelKind::Wgmma)
         : useMma ? KernelKind::MmaSync
                  : KernelKind::Simt;
  if (useWgmma) {
    buildWgmmaKernel(kb, memArg, mapOf, sizes, r, batch, wcfg);
  } else if (useMma) {
    buildMmaKernel(kb, memArg, mapOf, sizes, r, launchBatch, cfg);
  } else {
    buildSimtKernel(kb, memArg, mapOf, sizes, r, gridX, batch);
  }
  // Describe the kernel for attn-bundle.
  SmallVector<Attribute> argAttrs;
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    Attribute map = isIndexArg(name) ? Attribute(b.getStringAttr(name))
                    : isScaleArg(name)
                        ? Attribute(b.getStringAttr("scale"))
                        : Attribute(AffineMapAttr::get(mapOf(name)));
    // -1: a dynamic size, given at each launch by the size_* arguments.
    SmallVector<int64_t> shape =
        llvm::map_to_vector(shapeOf(name, t), [](int64_t d) {
          return ShapedType::isDynamic(d) ? int64_t(-1) : d;
        });
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getStringAttr(dtypeName(t.getElementType()))),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(shape)),
        b.getNamedAttr("map", map)};
    // A constant of the program: its data, for attn-bundle to write.
    if (auto it = constants.find(name); it != constants.end())
      fields.push_back(b.getNamedAttr("value", it->second));
    argAttrs.push_back(b.getDictionaryAttr(fields));
  }
  // The runtime sizes (int64 kernel parameters after the tensors).
  for (unsigned d : dynDims)
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr("size_" + dimName(d))),
         b.getNamedAttr("dtype", b.getStringAttr("int64")),
         b.getNamedAttr("shape", b.getDenseI64ArrayAttr({})),
         b.getNamedAttr("map", b.getStringAttr("size"))}));
  // Workspace: no attention dims ("workspace" for a map); the launcher
  // allocates it once per kernel (locks zeroed).
  for (auto &[name, t] : workspace) {
    SmallVector<int64_t> shape = llvm::map_to_vector(
        t.getShape(),
        [](int64_t d) { return ShapedType::isDynamic(d) ? int64_t(-1) : d; });
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getStringAttr(t.getElementType().isInteger(32)
                                                    ? "int32"
                                                    : "float32")),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(shape)),
        b.getNamedAttr("map", b.getStringAttr("workspace"))};
    argAttrs.push_back(b.getDictionaryAttr(fields));
  }
  // Tensor maps: the operand they describe and the box (elements per
  // operand dim): 64 columns along the head dim, a key tile along n.
  for (const TensorMapArg &tm : tensorMaps) {
    SmallVector<int64_t> box;
    // 128 bytes along the contiguous dim (the head dim; the mask's keys).
    Value tensor;
    for (auto &[name, v] : args)
      if (name == tm.tensor)
        tensor = v;
    const int64_t panel =
        1024 /
        cast<RankedTensorType>(tensor.getType()).getElementTypeBitWidth();
    for (AffineExpr e : mapOf(tm.tensor).getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      // q: a block's rows along m; k, v: a key tile along n; the mask: a
      // block's rows by a panel of keys.
      box.push_back(d == r                              ? wcfg.rowsPerBlock()
                    : d == r + 1 && tm.tensor != "mask" ? wcfg.keyTile
                    : d >= r + 1                        ? panel
                                                        : 1);
    }
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(tm.name)),
         b.getNamedAttr("dtype", b.getStringAttr("int64")),
         b.getNamedAttr("shape", b.getDenseI64ArrayAttr({16})),
         b.getNamedAttr("map", b.getStringAttr("tensormap")),
         b.getNamedAttr("tensor", b.getStringAttr(tm.tensor)),
         b.getNamedAttr("box", b.getDenseI64ArrayAttr(box))}));
  }
  int64_t gridZ = useMma ? (cfg.runtimeSplits ? -1 : cfg.splits) : 1;
  SmallVector<NamedAttribute> info = {
      b.getNamedAttr("kernel", b.getStringAttr(hostName + "_kernel")),
      b.getNamedAttr("args", b.getArrayAttr(argAttrs)),
      // -1: from the runtime sizes by launch_rules.grid.
      b.getNamedAttr("grid",
                     wcfg.persistent()
                         ? b.getDenseI64ArrayAttr(
                               {dynTiles ? int64_t(-1)
                                    : wcfg.persistentBlocks,
                                1, 1})
                         : b.getDenseI64ArrayAttr(
                               {dynDim[r] ? int64_t(-1) : gridX,
                                kb.dynBatch ? int64_t(-1) : launchBatch,
                                gridZ})),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr({blockThreads, 1, 1})),
      b.getNamedAttr("tensor_cores", b.getBoolAttr(useMma || useWgmma)),
      b.getNamedAttr("mma", b.getStringAttr(useWgmma ? "wgmma"
                                            : useMma ? "mma.sync"
                                                     : "none")),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(sharedBytes)),
      b.getNamedAttr("kernel_choice", b.getStringAttr(choice)),
      b.getNamedAttr("tile_q", b.getI64IntegerAttr(rowsPerBlock)),
      b.getNamedAttr("scale", b.getF32FloatAttr(kb.scale)),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal())),
      b.getNamedAttr("mask_value", b.getF32FloatAttr(kb.maskValue)),
      b.getNamedAttr("batch_dims", b.getI64IntegerAttr(r))};
  if (useMma && cfg.tf32)
    info.push_back(b.getNamedAttr(
        "f32_precision", b.getStringAttr(cfg.tf32 == 3 ? "3xtf32" : "tf32")));
  else if (useWgmma && wcfg.tf32)
    info.push_back(b.getNamedAttr("f32_precision", b.getStringAttr("tf32")));
  if (std::optional<int64_t> window = op.getWindow())
    info.push_back(b.getNamedAttr("window", b.getI64IntegerAttr(*window)));
  if (kb.valueScale != 1.0f || !valueScaleProduct.factors.empty())
    info.push_back(
        b.getNamedAttr("value_scale", b.getF32FloatAttr(kb.valueScale)));
  // Runtime scales: `scale` and `value_scale` above are the constant
  // factors; each entry multiplies (or divides) by one element of a
  // scale<i> argument.
  auto factorList = [&](const ScaleProduct &p) {
    SmallVector<Attribute> list;
    for (const ScaleProduct::Factor &f : p.factors)
      list.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("arg", b.getStringAttr(scaleNameOf(f.tensor))),
           b.getNamedAttr("index", b.getDenseI64ArrayAttr(f.indices)),
           b.getNamedAttr("divide", b.getBoolAttr(f.divide))}));
    return b.getArrayAttr(list);
  };
  if (runtimeScale)
    info.push_back(b.getNamedAttr("scale_factors", factorList(scaleProduct)));
  if (!valueScaleProduct.factors.empty())
    info.push_back(
        b.getNamedAttr("value_scale_factors", factorList(valueScaleProduct)));
  if (scoreModInfo)
    info.push_back(b.getNamedAttr("score_mod", scoreModInfo));
  // Its index arithmetic is exact below the limit (scoreModNeedsIndexLimit);
  // the loader refuses a dynamic m or n at or past it.
  if (segKeySpan && useMma && cfg.segRanges && cfg.runtimeSplits)
    info.push_back(
        b.getNamedAttr("key_span", b.getI64IntegerAttr(*segKeySpan)));
  if (scoreModNeedsIndexLimit(op, sizes))
    info.push_back(b.getNamedAttr("index_limit",
                                  b.getI64IntegerAttr(kScoreModIndexLimit)));
  if (op.getQueryOffsetOrZero())
    info.push_back(b.getNamedAttr(
        "query_offset", b.getI64IntegerAttr(op.getQueryOffsetOrZero())));
  if (varlen)
    info.push_back(b.getNamedAttr(
        "varlen",
        b.getDictionaryAttr(
            {b.getNamedAttr("seqs", b.getI64IntegerAttr(kb.varlenSeqs)),
             b.getNamedAttr("causal", b.getBoolAttr(kb.varlenCausal)),
             b.getNamedAttr("bottom_right",
                            b.getBoolAttr(kb.varlenBottomRight))})));
  // The launch as functions of the shapes (the kernel itself is compiled
  // for the shapes in `args`; these say how grid, block and shared memory
  // follow from them and from the launch shape).
  std::string batchProduct;
  for (unsigned i = 0; i < r; ++i)
    batchProduct += (i ? " * " : "") + ("b" + std::to_string(i));
  if (batchProduct.empty())
    batchProduct = "1";
  // The wgmma kernel's shared memory (WgmmaConfig::sharedBytes): Q and the
  // K/V stages in 128-byte panel rows (64 16-bit or, FP8, 128 8-bit
  // elements, TF32 32), the V staging buffers and their barriers (FP8,
  // TF32), the barriers.
  const std::string panel = wcfg.fp8 ? "128" : wcfg.tf32 ? "32" : "64";
  // A staged mask tile follows them, 16-byte aligned.
  const std::string wgmmaBuffers =
      "max(stages * tile_kv * (ceil(d / " + panel + ") + ceil(e / " + panel +
      ")) * 128 + " +
      (wcfg.transposedV()
           ? "(" +
                 (wcfg.qInRegs ? std::string()
                               : "tile_q * ceil(d / " + panel + ") + ") +
                 std::to_string(wcfg.stagingBufs) + " * tile_kv * ceil(e / " +
                 panel + "))"
           : std::string("tile_q * ceil(d / 64)")) +
      (wcfg.tf32 ? " * 128, tile_q * (e + 8) * sizeof(out))"
                 : " * 128, tile_q * (e * sizeof(out) + 16))") +
      " + 8 * (2 * stages + 1) * max(warp_specialize, tma)" +
      (wcfg.transposedV() ? " + " + std::to_string(8 * (wcfg.stagingBufs +
                                                        wcfg.kLandedSlots()))
                          : "") +
      (wcfg.persistent() ? " + " + std::to_string(8 * wcfg.persistentSlots())
                         : "") +
      (wcfg.trims() ? " + 40" : "") +
      (wcfg.segTrim ? " + " + std::to_string(8 * WgmmaConfig::kSegSlots) : "");
  const std::string wgmmaSharedRule =
      wcfg.maskRowBytes ? "1024 + ceil((" + wgmmaBuffers + ") / " +
                              std::to_string(wcfg.maskAlign()) + ") * " +
                              std::to_string(wcfg.maskAlign()) +
                              " + (1 + (stages - 1) * warp_specialize) * "
                              "tile_q * mask_row_bytes"
                        : "1024 + " + wgmmaBuffers;
  SmallVector<NamedAttribute> rules = {
      b.getNamedAttr("grid", b.getStringAttr(
                                 wcfg.persistent()
                                     ? (varlen ? "[min((floor(m / tile_q) + "
                                                 "seqs) * "
                                               : "[min(ceil(m / tile_q) * ") +
                                           batchProduct + ", persistent), 1, 1]"
                                     : (varlen ? "[floor(m / tile_q) + seqs, "
                                               : "[ceil(m * g / tile_q), ") +
                                           batchProduct + " / g, splits]")),
      b.getNamedAttr(
          "splits",
          b.getStringAttr(
              "1 unless decode (m <= " + std::to_string(kDecodeRows) +
              ", mma.sync, no finite fill with causal/window): span = n "
              "(with a window min(n, window + tile_q); with "
              "attention.key_span, "
              "the keys chunked ids leave: min(n, key_span)); want = "
              "clamp(ceil(1.5 "
              "* multiprocessors / (ceil(m * g / tile_q) * " +
              batchProduct + " / g)), 1, floor(span / " +
              std::to_string(kMinSplitKeys) +
              ")); where want > 1 with 16-bit inputs, key_warps = 2, and "
              "with warps = 4 want is taken again as floor(multiprocessors / "
              "blocks) (same clamp) if then ceil(span / want) <= " +
              std::to_string(kMaxOneWaveRange) +
              " (else key_warps = 1 and the first want; a count chosen at "
              "launch keeps key_warps = 2 and the second want); with tile_kv = "
              "32 (static, no packing or pages, span / want >= 512) and "
              "4 * blocks <= multiprocessors, want is taken again with "
              "2.25 for 1.5 if then span / want >= 512; chunk = "
              "ceil(ceil(span / want) / tile_kv) * tile_kv; splits = "
              "ceil(span / chunk)")),
      b.getNamedAttr("block",
                     b.getStringAttr(useWgmma ? "[32 * warps + 128 * "
                                                "warp_specialize, 1, 1]"
                                     : useMma ? "[32 * warps * key_warps, 1, 1]"
                                              : "[tile_q, 1, 1]")),
      b.getNamedAttr(
          "shared_bytes",
          b.getStringAttr(useWgmma ? wgmmaSharedRule
                          : useMma ? "max(stages * tile_kv * (d + e + 32 / "
                                     "sizeof(q)) * sizeof(q) + tile_q * (d + "
                                     "16 / sizeof(q)) * sizeof(q), tile_q * (e "
                                     "* sizeof(out) + 16), min(key_warps - 1, "
                                     "1) * tile_q * key_warps * 8 * (4 + e / "
                                     "2))"
                                   : "0")),
      b.getNamedAttr("dims",
                     b.getStringAttr("b0.. batch dims, m queries, n "
                                     "keys, d = q/k head dim, e = v/out "
                                     "head dim, g = the size of batch dim "
                                     "pack_dim with GQA packing (else 1), "
                                     "splits = the split-KV ranges"))};
  info.push_back(b.getNamedAttr("launch_rules", b.getDictionaryAttr(rules)));
  if (useWgmma) {
    info.push_back(
        b.getNamedAttr("tile_kv", b.getI64IntegerAttr(wcfg.keyTile)));
    info.push_back(b.getNamedAttr(
        "warps", b.getI64IntegerAttr(wcfg.consumerThreads() / 32)));
    info.push_back(b.getNamedAttr(
        "warp_specialize", b.getI64IntegerAttr(wcfg.warpSpecialized ? 1 : 0)));
    // Q/K/V (or K/V) by TMA: the mbarriers take shared memory too.
    info.push_back(
        b.getNamedAttr("tma", b.getI64IntegerAttr(wcfg.tma ? 1 : 0)));
    info.push_back(b.getNamedAttr("pingpong", b.getBoolAttr(wcfg.pingpong)));
    info.push_back(b.getNamedAttr("stages", b.getI64IntegerAttr(wcfg.stages)));
    info.push_back(b.getNamedAttr("pipeline", b.getBoolAttr(wcfg.pipeline)));
    if (wcfg.keyPosMma)
      info.push_back(b.getNamedAttr("key_bias_mma", b.getBoolAttr(true)));
    if (wcfg.maskRowBytes)
      info.push_back(b.getNamedAttr("mask_row_bytes",
                                    b.getI64IntegerAttr(wcfg.maskRowBytes)));
    info.push_back(b.getNamedAttr("rescale_threshold",
                                  b.getI64IntegerAttr(wcfg.rescaleThreshold)));
    if (wcfg.minBlocks > 0)
      info.push_back(
          b.getNamedAttr("min_blocks", b.getI64IntegerAttr(wcfg.minBlocks)));
    // The blocks of a persistent launch (grid x), which loop over the
    // ceil(m / tile_q) * batch query tiles.
    if (wcfg.persistent())
      info.push_back(b.getNamedAttr(
          "persistent", b.getI64IntegerAttr(wcfg.persistentBlocks)));
  }
  if (useMma) {
    info.push_back(b.getNamedAttr("tile_kv", b.getI64IntegerAttr(cfg.keyTile)));
    info.push_back(b.getNamedAttr("warps", b.getI64IntegerAttr(cfg.warps)));
    info.push_back(
        b.getNamedAttr("key_warps", b.getI64IntegerAttr(cfg.keyWarps)));
    info.push_back(b.getNamedAttr("stages", b.getI64IntegerAttr(cfg.stages)));
    info.push_back(b.getNamedAttr("q_shared", b.getBoolAttr(cfg.qShared)));
    info.push_back(b.getNamedAttr("pipeline", b.getBoolAttr(cfg.pipeline)));
    info.push_back(b.getNamedAttr("rescale_threshold",
                                  b.getI64IntegerAttr(cfg.rescaleThreshold)));
    // -1: chosen at launch (launch_rules.splits).
    info.push_back(b.getNamedAttr(
        "splits", b.getI64IntegerAttr(cfg.runtimeSplits ? -1 : cfg.splits)));
    if (packDim >= 0)
      info.push_back(b.getNamedAttr("pack_dim", b.getI64IntegerAttr(packDim)));
    if (lenMask)
      info.push_back(b.getNamedAttr(
          "kv_lens", b.getDictionaryAttr({b.getNamedAttr(
                         "batch_dim", b.getI64IntegerAttr(lenDim))})));
    if (kPages)
      info.push_back(b.getNamedAttr(
          "paged", b.getDictionaryAttr(
                       {b.getNamedAttr("page_size", b.getI64IntegerAttr(pageSize)),
                        b.getNamedAttr("pages", b.getI64IntegerAttr(pages))})));
    // (With segment ranges each tile's ranges divide the keys its ids
    // leave, at run time: no one length.)
    if (cfg.splits > 1 && !cfg.segRanges)
      info.push_back(
          b.getNamedAttr("split_chunk", b.getI64IntegerAttr(cfg.chunk)));
    // Launch variants, in the order the loader tries their rules.
    SmallVector<Attribute> variants;
    if (fullGridVariant) {
      SmallVector<NamedAttribute> v = {
          b.getNamedAttr("when", b.getStringAttr("full_grid_one_range")),
          b.getNamedAttr("key_warps", b.getI64IntegerAttr(1)),
          b.getNamedAttr("splits", b.getI64IntegerAttr(1))};
      // Paged: the default tiles (1.034x against 1.020x with 32-key tiles
      // and four stages).
      if (!pageSize) {
        v.push_back(b.getNamedAttr("tile_kv", b.getI64IntegerAttr(32)));
        v.push_back(b.getNamedAttr("stages", b.getI64IntegerAttr(4)));
      }
      variants.push_back(b.getDictionaryAttr(v));
      // Where the launch's count is one range on a grid short of full:
      // the same launch shape without the machinery of a count chosen at
      // launch (0.954 -> 0.981x static at B = 16, 128 query tiles; log step
      // 209).
      variants.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("when", b.getStringAttr("one_range")),
           b.getNamedAttr("key_warps", b.getI64IntegerAttr(2)),
           b.getNamedAttr("splits", b.getI64IntegerAttr(1))}));
    }
    if (stagesVariant)
      variants.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("when", b.getStringAttr("decode_stages")),
           b.getNamedAttr("key_warps", b.getI64IntegerAttr(2)),
           b.getNamedAttr("stages", b.getI64IntegerAttr(3)),
           b.getNamedAttr("splits", b.getI64IntegerAttr(1))}));
    if (!variants.empty())
      info.push_back(b.getNamedAttr("variants", b.getArrayAttr(variants)));
  }
  // Where the attention came from: a module with many (one per layer)
  // gives one kernel each, told apart by these.
  info.push_back(
      b.getNamedAttr("location", b.getStringAttr(sourceLocation(loc))));
  if (auto fn = op->getParentOfType<FunctionOpInterface>())
    info.push_back(b.getNamedAttr("function", b.getStringAttr(fn.getName())));
  bundleInfo = b.getDictionaryAttr(info);
  return success();
}

namespace {
struct ConvertAttnToGPUPass
    : public attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using ConvertAttnToGPUBase::ConvertAttnToGPUBase;

  // --mlir-pass-statistics: which kernel each attention got.
  KeptStatistic numWgmma{this, "kernels-wgmma", "Hopper wgmma kernels"};
  KeptStatistic numWgmmaWarpSpecialized{
      this, "kernels-wgmma-warp-specialized",
      "Hopper wgmma kernels with a producer warpgroup"};
  KeptStatistic numMmaSync{this, "kernels-mma-sync",
                           "mma.sync tensor-core kernels"};
  KeptStatistic numSimt{this, "kernels-simt",
                        "SIMT kernels (no tensor cores; --attn-explain says "
                        "why)"};
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty()) {
      module.emitError("the GPU kernel path takes a module with at least one "
                       "attention (after --attn-fuse), found none");
      return signalPassFailure();
    }
    if (attention < -1 || attention >= static_cast<int64_t>(ops.size())) {
      module.emitError("attention=")
          << static_cast<int64_t>(attention) << " is not an attention of the "
          << "module (it has " << ops.size() << "; -1 takes all)";
      return signalPassFailure();
    }
    if (attention >= 0)
      ops = {ops[attention]};
    ConvertAttnToGPUOptions opts;
    opts.threads = threads;
    opts.tileQ = tileQ;
    opts.tileKV = tileKV;
    opts.warps = warps;
    opts.stages = stages;
    opts.qShared = qShared;
    opts.rescaleThreshold = rescaleThreshold;
    opts.pipeline = pipeline;
    opts.chip = chip;
    opts.wgmma = wgmma;
    opts.warpSpecialize = warpSpecialize;
    opts.pingpong = pingpong;
    opts.keyBiasMma = keyBiasMma;
    opts.qRegs = qRegs;
    opts.tma = tma;
    opts.persistent = persistent;
    opts.shiftV = shiftV;
    opts.minBlocks = minBlocks;
    opts.splits = splits;
    opts.keyWarps = keyWarps;
    opts.f32Precision = f32Precision;
    opts.explain = explain || explainRequested();
    // The kernel host function replaces everything the module held (by
    // identity, not by name: a user function may itself be called
    // @attn_fwd; nested modules go too): the bundle holds only the
    // attention.
    SmallVector<Operation *> userOps = llvm::map_to_vector(
        *module.getBody(), [](Operation &op) { return &op; });
    // One host function and kernel per attention: @attn_fwd alone, else
    // @attn_fwd_0, @attn_fwd_1, ... in module order.
    SmallVector<Attribute> infos;
    bool failedAny = false;
    for (auto [i, op] : llvm::enumerate(ops)) {
      KernelKind kind;
      DictionaryAttr info;
      std::string name =
          ops.size() == 1 ? "attn_fwd" : "attn_fwd_" + std::to_string(i);
      if (failed(buildKernel(module, op, opts, kind, name, info))) {
        failedAny = true;
        continue;
      }
      infos.push_back(info);
      switch (kind) {
      case KernelKind::WgmmaWarpSpecialized:
        ++numWgmmaWarpSpecialized;
        [[fallthrough]];
      case KernelKind::Wgmma:
        ++numWgmma;
        break;
      case KernelKind::MmaSync:
        ++numMmaSync;
        break;
      case KernelKind::Simt:
        ++numSimt;
        break;
      }
    }
    if (failedAny)
      return signalPassFailure();
    if (infos.size() == 1)
      module->setAttr("attn.bundle", infos.front());
    else
      module->setAttr("attn.bundles",
                      ArrayAttr::get(module.getContext(), infos));
    for (Operation *op : userOps)
      op->dropAllReferences();
    for (Operation *op : userOps)
      op->erase();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
  }
};
} // namespace
