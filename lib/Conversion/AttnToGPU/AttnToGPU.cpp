//===- AttnToGPU.cpp - attn.attention -> a gpu.launch kernel --------------===//
//
// Matches: a function holding one attn.attention with static shapes and a
//          constant scale.
// Produces: `func.func @attn_fwd(q, k, v, [mask], [sink], out)` on memrefs
//          whose gpu.launch runs one thread per query row (grid: query
//          blocks x flattened batch dims) over the online-softmax recurrence
//          with key tiles of one:
//            m' = max(m, s); α = exp(m - m'); p = exp(s - m')
//            ℓ' = α ℓ + p;   O' = α O + p v;   O = O / ℓ at the end
//          State is f32 in registers/local memory; no score tensor exists.
//          Operands are indexed through the op's maps (any layout, K/V
//          without the group dim). Causal and window loops only visit the
//          keys a row can see. The module gets an `attn.bundle` attribute
//          describing the kernel's arguments and launch for attn-bundle.
//
// This is the correctness baseline of the GPU path (SIMT, no tensor cores);
// see docs/performance.md for where it stands.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Builds the kernel body for one attention.
struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  AttentionOp op;
  float scale;
  float maskValue;
  int64_t threads;

  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cF32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// exp(x) = 2^(x log2 e) on the special function unit (ex2.approx), as
  /// FlashAttention kernels do; -inf gives 0. No libdevice needed.
  Value exp(Value x) {
    Value y = arith::MulFOp::create(b, loc, x, cF32(1.4426950408889634f));
    return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                     ValueRange{y}, ValueRange{},
                                     "ex2.approx.ftz.f32 $0, $1;", Value())
        ->getResult(0);
  }
  /// a * b + c, contractible into one fma by the backend (no libdevice).
  Value fma(Value a, Value x, Value c) {
    auto fm = arith::FastMathFlagsAttr::get(b.getContext(),
                                            arith::FastMathFlags::contract);
    Value prod = arith::MulFOp::create(b, loc, a, x, fm);
    return arith::AddFOp::create(b, loc, prod, c, fm);
  }
  Value ext(Value x) {
    if (x.getType().isF32())
      return x;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  /// memref[map(loopValues)]
  Value load(Value mem, AffineMap map, ArrayRef<Value> loops) {
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
    return memref::LoadOp::create(b, loc, mem, idx);
  }
};
} // namespace

static std::string dtypeName(Type t) {
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isF32())
    return "float32";
  if (t.isInteger(1))
    return "bool";
  return "unknown";
}

static LogicalResult buildKernel(ModuleOp module, AttentionOp op,
                                 int64_t threads) {
  Location loc = op.getLoc();
  std::optional<double> scale;
  {
    Attribute attr;
    if (matchPattern(op.getScale(), m_Constant(&attr)))
      if (auto f = dyn_cast<FloatAttr>(attr))
        scale = f.getValueAsDouble();
  }
  if (!scale)
    return op.emitError("the GPU kernel needs a constant scale");
  SmallVector<std::pair<StringRef, Value>> args = {
      {"q", op.getQuery()}, {"k", op.getKey()}, {"v", op.getValue()}};
  if (op.getMask())
    args.push_back({"mask", op.getMask()});
  if (op.getSink())
    args.push_back({"sink", op.getSink()});
  args.push_back({"out", op.getInit()});
  SmallVector<Type> memrefTypes;
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    if (!t.hasStaticShape())
      return op.emitError("the GPU kernel needs static shapes; '")
             << name << "' has type " << t;
    memrefTypes.push_back(MemRefType::get(t.getShape(), t.getElementType()));
  }

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, "attn_fwd",
                                   b.getFunctionType(memrefTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  KernelBuilder kb{b, loc, op, static_cast<float>(*scale),
                   op.getMaskValue()
                       ? op.getMaskValue()->convertToFloat()
                       : -std::numeric_limits<float>::infinity(),
                   threads};
  auto memArg = [&](StringRef name) -> Value {
    for (auto [i, a] : llvm::enumerate(args))
      if (a.first == name)
        return entry->getArgument(i);
    return Value();
  };

  unsigned r = op.getNumBatchDims();
  // Static sizes of every attention loop.
  SmallVector<int64_t> sizes(r + 4, 1);
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
    return op.getOutputMap();
  };
  // Re-read sizes with the right maps (the loop above used list order).
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    for (auto [p, e] : llvm::enumerate(mapOf(name).getResults()))
      if (name != "mask" || t.getDimSize(p) != 1)
        sizes[cast<AffineDimExpr>(e).getPosition()] = t.getDimSize(p);
  }
  int64_t M = sizes[r], N = sizes[r + 1], D = sizes[r + 2], E = sizes[r + 3];
  int64_t batch = 1;
  for (unsigned i = 0; i < r; ++i)
    batch *= sizes[i];
  int64_t gridX = (M + threads - 1) / threads;

  Value c1 = kb.cIdx(1);
  auto launch = gpu::LaunchOp::create(b, loc, kb.cIdx(gridX), kb.cIdx(batch),
                                      c1, kb.cIdx(threads), c1, c1);
  func::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, kb.cIdx(threads)),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        row, kb.cIdx(M));
  auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  c1 = kb.cIdx(1); // defined in the kernel: nothing but the tensors is passed

  // Loop values (b..., m, n, d, e); n, d, e filled in by the loops.
  SmallVector<Value> loops(r + 4);
  Value rest = launch.getBlockIds().y;
  for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i) {
    loops[i] = arith::RemUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
    rest = arith::DivUIOp::create(b, loc, rest, kb.cIdx(sizes[i]));
  }
  loops[r] = row;
  Value c0 = kb.cIdx(0);
  Type f32 = b.getF32Type();

  // The query row and the accumulator live in registers: the d and e loops
  // are unrolled (static head dims), so each thread keeps D + E f32 values.
  SmallVector<Value> qv;
  for (int64_t d = 0; d < D; ++d) {
    loops[r + 2] = kb.cIdx(d);
    qv.push_back(kb.ext(kb.load(memArg("q"), mapOf("q"), loops)));
  }
  Value zero = kb.cF32(0.0f);
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Value m0 = ninf, l0 = zero;
  if (Value sink = memArg("sink")) {
    m0 = kb.ext(kb.load(sink, mapOf("sink"), loops));
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m0, ninf);
    l0 = arith::SelectOp::create(b, loc, none, zero, kb.cF32(1.0f));
  }

  // Keys this row can see. With a finite mask value masked keys still count
  // (they average a fully masked row), so the bounds only shrink for -inf.
  bool skip = std::isinf(kb.maskValue);
  Value lb = c0, ub = kb.cIdx(N);
  std::optional<int64_t> window = op.getWindow();
  if (op.getCausal() && skip)
    ub = arith::MinUIOp::create(b, loc, ub,
                                arith::AddIOp::create(b, loc, row, c1));
  if (window && skip) {
    Value reach = kb.cIdx(*window - 1);
    Value far = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, row,
                                      reach);
    lb = arith::SelectOp::create(b, loc, far,
                                 arith::SubIOp::create(b, loc, row, reach), c0);
  }
  Value maskFill = kb.cF32(kb.maskValue);
  Value scaleV = kb.cF32(kb.scale);
  SmallVector<Value> init = {m0, l0};
  init.append(E, zero);
  auto keyLoop = scf::ForOp::create(
      b, loc, lb, ub, c1, init,
      [&](OpBuilder &nb, Location l, Value n, ValueRange state) {
        loops[r + 1] = n;
        Value s = zero;
        for (int64_t d = 0; d < D; ++d) {
          loops[r + 2] = kb.cIdx(d);
          Value k = kb.ext(kb.load(memArg("k"), mapOf("k"), loops));
          s = kb.fma(qv[d], k, s);
        }
        s = arith::MulFOp::create(nb, l, s, scaleV);
        if (Value mask = memArg("mask")) {
          Value mv = kb.load(mask, mapOf("mask"), loops);
          if (mv.getType().isInteger(1))
            s = arith::SelectOp::create(nb, l, mv, s, maskFill);
          else
            s = arith::AddFOp::create(nb, l, s, kb.ext(mv));
        }
        if (op.getCausal()) {
          Value after =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ugt, n, row);
          s = arith::SelectOp::create(nb, l, after, maskFill, s);
        }
        if (window) {
          Value reachN = arith::AddIOp::create(nb, l, n, kb.cIdx(*window));
          Value far = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::uge,
                                            row, reachN);
          s = arith::SelectOp::create(nb, l, far, maskFill, s);
        }
        // m' = max(m, s); ms keeps a fully -inf row finite.
        Value mNew = arith::MaximumFOp::create(nb, l, state[0], s);
        Value isNinf =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, mNew, ninf);
        Value ms = arith::SelectOp::create(nb, l, isNinf, zero, mNew);
        Value alpha = kb.exp(arith::SubFOp::create(nb, l, state[0], ms));
        Value p = kb.exp(arith::SubFOp::create(nb, l, s, ms));
        Value lNew = kb.fma(alpha, state[1], p);
        SmallVector<Value> next = {mNew, lNew};
        for (int64_t e = 0; e < E; ++e) {
          loops[r + 3] = kb.cIdx(e);
          Value vv = kb.ext(kb.load(memArg("v"), mapOf("v"), loops));
          // O' = α O + p v
          next.push_back(
              kb.fma(p, vv, arith::MulFOp::create(nb, l, alpha, state[2 + e])));
        }
        scf::YieldOp::create(nb, l, next);
      });
  Value lFinal = keyLoop.getResult(1);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lFinal, zero);
  Value inv = arith::DivFOp::create(b, loc, kb.cF32(1.0f), lFinal);
  Value outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();
  for (int64_t e = 0; e < E; ++e) {
    loops[r + 3] = kb.cIdx(e);
    Value o = arith::SelectOp::create(
        b, loc, empty, zero,
        arith::MulFOp::create(b, loc, keyLoop.getResult(2 + e), inv));
    if (outElt != f32)
      o = arith::TruncFOp::create(b, loc, outElt, o);
    SmallVector<Value> idx;
    for (AffineExpr ex : mapOf("out").getResults())
      idx.push_back(loops[cast<AffineDimExpr>(ex).getPosition()]);
    memref::StoreOp::create(b, loc, o, outMem, idx);
  }

  // Describe the kernel for attn-bundle.
  SmallVector<Attribute> argAttrs;
  for (auto &[name, v] : args) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("dtype", b.getStringAttr(dtypeName(t.getElementType()))),
        b.getNamedAttr("shape", b.getDenseI64ArrayAttr(t.getShape())),
        b.getNamedAttr("map", AffineMapAttr::get(mapOf(name)))};
    argAttrs.push_back(b.getDictionaryAttr(fields));
  }
  SmallVector<NamedAttribute> info = {
      b.getNamedAttr("kernel", b.getStringAttr("attn_fwd_kernel")),
      b.getNamedAttr("args", b.getArrayAttr(argAttrs)),
      b.getNamedAttr("grid", b.getDenseI64ArrayAttr({gridX, batch, 1})),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr({threads, 1, 1})),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(0)),
      b.getNamedAttr("scale", b.getF32FloatAttr(kb.scale)),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal())),
      b.getNamedAttr("mask_value", b.getF32FloatAttr(kb.maskValue)),
      b.getNamedAttr("batch_dims", b.getI64IntegerAttr(r))};
  if (window)
    info.push_back(b.getNamedAttr("window", b.getI64IntegerAttr(*window)));
  module->setAttr("attn.bundle", b.getDictionaryAttr(info));
  return success();
}

namespace {
struct ConvertAttnToGPUPass
    : public attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using ConvertAttnToGPUBase::ConvertAttnToGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.size() != 1) {
      module.emitError("the GPU kernel path takes a module with exactly one "
                       "attention (after --attn-fuse), found ")
          << ops.size();
      return signalPassFailure();
    }
    if (failed(buildKernel(module, ops.front(), threads)))
      return signalPassFailure();
    // The kernel host function replaces everything else: the bundle holds
    // only the attention.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (auto f = dyn_cast<func::FuncOp>(op); f && f.getName() != "attn_fwd")
        f.erase();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
  }
};
} // namespace
