//===- ScoreMod.cpp - the score_mod region inside the GPU kernels ---------===//
//
// Every kernel (wgmma, mma.sync, SIMT) applies attn.attention's score_mod
// body to each score it computes, inline, after the scale and before the
// mask: the body's ops are cloned per score with the batch, query and key
// indices of that score. Transcendental math ops become the PTX approximate
// instructions the softmax already uses (no libdevice), and constant
// operands (ALiBi's per-head slopes) become constant vectors read at the
// score's indices.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernel;

DenseElementsAttr gpu_kernel::scoreModTable(AttentionOp op, unsigned i) {
  Value v = op.getModOperands()[i];
  // fuseAttention drops unit dims with a rank-reducing slice: same data.
  if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    bool whole = slice.getSourceType().getNumElements() ==
                     slice.getResultType().getNumElements() &&
                 slice.getSourceType().hasStaticShape() &&
                 slice.getResultType().hasStaticShape();
    if (!whole)
      return {};
    v = slice.getSource();
  }
  DenseElementsAttr data;
  if (!matchPattern(v, m_Constant(&data)))
    return {};
  // A larger constant is a kernel argument whose data the bundle carries.
  if (data.getNumElements() > kMaxScoreModTable)
    return {};
  return data;
}

std::string gpu_kernel::scoreModIneligibility(AttentionOp op) {
  for (unsigned i = 0; i < op.getModOperands().size(); ++i) {
    DenseElementsAttr t = scoreModTable(op, i);
    if (!t) {
      // A runtime tensor: a kernel argument, read at the score's indices.
      auto type = cast<RankedTensorType>(op.getModOperands()[i].getType());
      Type elt = type.getElementType();
      if (!(elt.isF32() || elt.isF16() || elt.isBF16() || elt.isInteger(32) ||
            elt.isInteger(64)))
        return "score_mod operand #" + std::to_string(i) +
               " is a runtime tensor of a type the kernels do not take "
               "(f32/f16/bf16/i32/i64)";
      continue;
    }
  }
  return "";
}

static Value inlinePtx(OpBuilder &b, Location loc, StringRef ptx, Value x) {
  return NVVM::InlinePtxOp::create(b, loc, TypeRange{b.getF32Type()},
                                   ValueRange{x}, ValueRange{}, ptx, Value())
      ->getResult(0);
}

/// `op` (a math op of the body) on the PTX approximate instructions, or
/// null where the upstream lowering needs no library call.
static Value lowerMath(KernelBuilder &kb, Operation *op, ValueRange in) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto ex2 = [&](Value x) { return inlinePtx(b, loc, "ex2.approx.ftz.f32 $0, $1;", x); };
  auto lg2 = [&](Value x) { return inlinePtx(b, loc, "lg2.approx.ftz.f32 $0, $1;", x); };
  auto mul = [&](Value x, float c) {
    return arith::MulFOp::create(b, loc, x, kb.cF32(c)).getResult();
  };
  if (isa<math::ExpOp>(op))
    return kb.exp(in[0]);
  if (isa<math::Exp2Op>(op))
    return ex2(in[0]);
  if (isa<math::LogOp>(op))
    return mul(lg2(in[0]), 0.6931471805599453f);
  if (isa<math::Log2Op>(op))
    return lg2(in[0]);
  if (isa<math::RsqrtOp>(op))
    return inlinePtx(b, loc, "rsqrt.approx.ftz.f32 $0, $1;", in[0]);
  if (isa<math::SqrtOp>(op))
    return inlinePtx(b, loc, "sqrt.rn.f32 $0, $1;", in[0]);
  if (isa<math::TanhOp>(op)) {
    if (kb.approxTanh)
      return inlinePtx(b, loc, "tanh.approx.f32 $0, $1;", in[0]);
    // tanh x = 1 - 2 / (1 + 2^(2 x log2 e)): two MUFU ops, ~1e-7 absolute
    // (e = inf gives 1, e = 0 gives -1).
    Value e = ex2(mul(in[0], 2.8853900817779268f));
    Value one = kb.cF32(1.0f);
    Value r = inlinePtx(b, loc, "rcp.approx.ftz.f32 $0, $1;",
                        arith::AddFOp::create(b, loc, one, e));
    return kb.fma(r, kb.cF32(-2.0f), one);
  }
  // x / c for a constant c: x * (1 / c), within an ulp, no MUFU rcp.
  if (auto div = dyn_cast<arith::DivFOp>(op)) {
    FloatAttr c;
    if (matchPattern(div.getRhs(), m_Constant(&c)) && c.getValueAsDouble() != 0 &&
        std::isfinite(1.0 / c.getValueAsDouble()))
      return arith::MulFOp::create(
          b, loc, in[0],
          kb.cF32(static_cast<float>(1.0 / c.getValueAsDouble())),
          arith::FastMathFlags::contract | arith::FastMathFlags::reassoc);
  }
  if (isa<math::PowFOp>(op)) // x^y = 2^(y log2 x), x > 0
    return ex2(arith::MulFOp::create(b, loc, in[1], lg2(in[0])));
  return Value();
}

/// The score's indices into score_mod operand `i` of shape `shape`, each
/// clamped (rows past M and keys past N are computed and discarded), and
/// with `lin` their row-major linear index.
static SmallVector<Value> clampedIndices(KernelBuilder &kb, unsigned i,
                                         ArrayRef<Value> loops,
                                         ArrayRef<int64_t> shape,
                                         Value *lin = nullptr) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AffineMap m = kb.op.getModOperandMap(i);
  SmallVector<Value> idx(shape.size());
  if (lin)
    *lin = kb.cIdx(0);
  int64_t stride = 1;
  for (int64_t p = shape.size() - 1; p >= 0; --p) {
    unsigned d = cast<AffineDimExpr>(m.getResult(p)).getPosition();
    idx[p] = arith::MinUIOp::create(b, loc, loops[d], kb.cIdx(shape[p] - 1));
    if (!lin)
      continue;
    *lin = arith::AddIOp::create(
        b, loc, *lin, arith::MulIOp::create(b, loc, idx[p], kb.cIdx(stride)));
    stride *= shape[p];
  }
  return idx;
}

/// Reads constant table `i` of `op` at `loops` (b..., m, n).
static Value readTable(KernelBuilder &kb, unsigned i, ArrayRef<Value> loops) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  AttentionOp op = kb.op;
  Value lin;
  if (i < kb.modMem.size() && kb.modMem[i]) {
    auto type = cast<RankedTensorType>(op.getModOperands()[i].getType());
    if (!type.hasStaticShape()) {
      // Dynamic dims (the loops' runtime sizes): the launch's view of the
      // flat argument, each index clamped to its dim's runtime size.
      Value view = kb.modView(i);
      AffineMap m = op.getModOperandMap(i);
      SmallVector<Value> idx;
      for (int64_t p = 0; p < type.getRank(); ++p) {
        unsigned d = cast<AffineDimExpr>(m.getResult(p)).getPosition();
        auto vt = cast<MemRefType>(view.getType());
        Value last = vt.isDynamicDim(p)
                         ? arith::SubIOp::create(
                               b, loc, memref::DimOp::create(b, loc, view, p),
                               kb.cIdx(1))
                               .getResult()
                         : kb.cIdx(vt.getDimSize(p) - 1);
        idx.push_back(arith::MinUIOp::create(b, loc, loops[d], last));
      }
      return memref::LoadOp::create(b, loc, view, idx);
    }
    // A kernel argument of a static shape. Dynamic-shape kernels take
    // their arguments as flat buffers: there the index is the row-major
    // one.
    bool flat =
        cast<MemRefType>(kb.modMem[i].getType()).getShape() != type.getShape();
    SmallVector<Value> idx =
        clampedIndices(kb, i, loops, type.getShape(), flat ? &lin : nullptr);
    return memref::LoadOp::create(b, loc, kb.modMem[i],
                                  flat ? ValueRange{lin} : ValueRange{idx});
  }
  DenseElementsAttr table = scoreModTable(op, i);
  auto type = cast<ShapedType>(table.getType());
  clampedIndices(kb, i, loops, type.getShape(), &lin);
  auto vecType =
      VectorType::get({type.getNumElements()}, type.getElementType());
  Value vec = arith::ConstantOp::create(b, loc, table.reshape(vecType));
  return vector::ExtractOp::create(b, loc, vec, ArrayRef<OpFoldResult>{lin});
}

Value KernelBuilder::readScoreModOperand(unsigned i, ArrayRef<Value> loops) {
  return readTable(*this, i, loops);
}

namespace {
/// What the monotonicity check knows of an integer the region computes: its
/// signed range, whether it varies with the position, and if so whether it
/// never decreases as the position grows. An i1 is a range within [0, 1].
struct MonoValue {
  __int128 lo = std::numeric_limits<int64_t>::min();
  __int128 hi = std::numeric_limits<int64_t>::max();
  bool varies = false, monotone = true;
  static MonoValue exact(__int128 v) { return {v, v, false, true}; }
  bool known() const { return lo == hi; }
};
} // namespace

/// Positions (and batch indices) the kernels see are below 2^31.
static constexpr int64_t kMonoPositionMax = INT32_MAX;

/// What is known of `expr`, an integer the score_mod body computes from the
/// position `pos` (block argument), batch indices, constants and operands,
/// as that position ranges over [0, 2^31): its range, and (monotoneInPosition)
/// whether it never decreases as the position grows: a sorted key axis, whose
/// key ranges a binary search finds. Tracks signed ranges, so that an
/// operation that could wrap is not taken as monotone, and so that JAX's
/// floor division (lax.div with a sign correction that is false for
/// non-negative positions) folds to a plain division.
static MonoValue analyzeInPosition(AttentionOp op, Value expr,
                                   BlockArgument pos) {
  unsigned r = op.getNumBatchDims();
  unsigned loop = pos.getArgNumber() - 1; // r: m, r + 1: n
  llvm::DenseMap<Value, MonoValue> memo;
  Block *block = pos.getOwner();
  std::function<MonoValue(Value, int)> eval = [&](Value v,
                                                  int depth) -> MonoValue {
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    MonoValue res;
    unsigned width =
        v.getType().isIndex()
            ? 64
            : (v.getType().isIntOrIndex() ? v.getType().getIntOrFloatBitWidth()
                                          : 0);
    __int128 tmin = width == 1 ? 0 : -(__int128(1) << (width ? width - 1 : 63));
    __int128 tmax =
        width == 1 ? 1 : (__int128(1) << (width ? width - 1 : 63)) - 1;
    // A result that may leave the type's range wraps: unknown, and not
    // monotone where it varies.
    auto fit = [&](MonoValue x) {
      if (x.lo < tmin || x.hi > tmax)
        return MonoValue{tmin, tmax, x.varies, !x.varies};
      return x;
    };
    auto unknown = [&](bool varies) {
      return MonoValue{tmin, tmax, varies, !varies};
    };
    APInt cst;
    Operation *d = v.getDefiningOp();
    if (width == 0 || depth > 64) {
      res = unknown(true);
    } else if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg == pos)
        res = {0, kMonoPositionMax, true, true};
      else if (arg.getOwner() == block && arg.getArgNumber() >= 1 &&
               arg.getArgNumber() <= r + 2)
        res = {0, kMonoPositionMax, false, true}; // a batch index
      else if (arg.getOwner() == block && arg.getArgNumber() >= r + 3)
        // An operand's element: read at the position, a table (no order).
        res = unknown(op.getModOperandMap(arg.getArgNumber() - (r + 3))
                          .isFunctionOfDim(loop));
      else
        res = unknown(true);
    } else if (matchPattern(v, m_ConstantInt(&cst))) {
      res = MonoValue::exact(width == 1 ? __int128(cst.getZExtValue())
                                        : __int128(cst.getSExtValue()));
    } else if (!d || d->getBlock() != block || d->getNumResults() != 1) {
      res = unknown(true);
    } else {
      SmallVector<MonoValue, 3> x;
      for (Value o : d->getOperands())
        x.push_back(eval(o, depth + 1));
      bool anyVaries =
          llvm::any_of(x, [](const MonoValue &y) { return y.varies; });
      // Monotone where each operand that varies is, and the others do not
      // vary (by the op's direction in each operand).
      auto upIn = [&](std::initializer_list<unsigned> up) {
        for (auto [i, y] : llvm::enumerate(x))
          if (y.varies && (!llvm::is_contained(up, unsigned(i)) || !y.monotone))
            return false;
        return true;
      };
      auto with = [&](__int128 lo, __int128 hi, bool mono) {
        return fit(MonoValue{lo, hi, anyVaries, !anyVaries || mono});
      };
      auto div = [&](__int128 a, __int128 c,
                     int mode) { // -1 floor, 0 trunc, 1 ceil
        __int128 q = a / c, r = a % c;
        if (r != 0 && mode < 0 && ((r < 0) != (c < 0)))
          --q;
        if (r != 0 && mode > 0 && ((r < 0) == (c < 0)))
          ++q;
        return q;
      };
      auto predicate = [&](arith::CmpIPredicate p, const MonoValue &a,
                           const MonoValue &c) -> std::optional<bool> {
        using P = arith::CmpIPredicate;
        if (!(a.lo >= 0 && c.lo >= 0) &&
            (p == P::ult || p == P::ule || p == P::ugt || p == P::uge))
          return std::nullopt; // unsigned order of possibly negative values
        switch (p) {
        case P::eq:
          if (a.known() && c.known())
            return a.lo == c.lo;
          if (a.hi < c.lo || c.hi < a.lo)
            return false;
          return std::nullopt;
        case P::ne:
          if (a.known() && c.known())
            return a.lo != c.lo;
          if (a.hi < c.lo || c.hi < a.lo)
            return true;
          return std::nullopt;
        case P::slt:
        case P::ult:
          if (a.hi < c.lo)
            return true;
          if (a.lo >= c.hi)
            return false;
          return std::nullopt;
        case P::sle:
        case P::ule:
          if (a.hi <= c.lo)
            return true;
          if (a.lo > c.hi)
            return false;
          return std::nullopt;
        case P::sgt:
        case P::ugt:
          if (a.lo > c.hi)
            return true;
          if (a.hi <= c.lo)
            return false;
          return std::nullopt;
        case P::sge:
        case P::uge:
          if (a.lo >= c.hi)
            return true;
          if (a.hi < c.lo)
            return false;
          return std::nullopt;
        }
        return std::nullopt;
      };
      bool fromI1 =
          d->getNumOperands() && d->getOperand(0).getType().isInteger(1);
      if (fromI1 && !isa<arith::ExtUIOp, arith::AndIOp, arith::OrIOp,
                         arith::SelectOp, arith::CmpIOp>(d)) {
        res = unknown(anyVaries); // i1 as a signed value (true is -1)
      } else if (auto cmp = dyn_cast<arith::CmpIOp>(d)) {
        std::optional<bool> p =
            fromI1 && cmp.getPredicate() != arith::CmpIPredicate::eq &&
                    cmp.getPredicate() != arith::CmpIPredicate::ne
                ? std::nullopt
                : predicate(cmp.getPredicate(), x[0], x[1]);
        res = p ? MonoValue::exact(*p) : MonoValue{0, 1, anyVaries, !anyVaries};
      } else if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(d)) {
        res = fit(x[0]); // narrower: kept only where it fits
      } else if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(d)) {
        res = x[0].lo >= 0 ? fit(x[0]) : unknown(x[0].varies);
      } else if (isa<arith::AddIOp>(d)) {
        res = with(x[0].lo + x[1].lo, x[0].hi + x[1].hi, upIn({0, 1}));
      } else if (isa<arith::SubIOp>(d)) {
        res = with(x[0].lo - x[1].hi, x[0].hi - x[1].lo, upIn({0}));
      } else if (isa<arith::MulIOp>(d) && (x[0].known() || x[1].known()) &&
                 (x[0].known() ? x[0] : x[1]).lo >= 0 &&
                 (x[0].known() ? x[0] : x[1]).lo < (__int128(1) << 32) &&
                 (x[0].known() ? x[1] : x[0]).lo > -(__int128(1) << 64) &&
                 (x[0].known() ? x[1] : x[0]).hi < (__int128(1) << 64)) {
        const MonoValue &c = x[0].known() ? x[0] : x[1];
        const MonoValue &a = x[0].known() ? x[1] : x[0];
        res = with(a.lo * c.lo, a.hi * c.lo, upIn({0, 1}));
      } else if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
                     d) &&
                 x[1].known() && x[1].lo > 0) {
        int mode = isa<arith::FloorDivSIOp>(d)  ? -1
                   : isa<arith::CeilDivSIOp>(d) ? 1
                                                : 0;
        res = with(div(x[0].lo, x[1].lo, mode), div(x[0].hi, x[1].lo, mode),
                   upIn({0}));
      } else if (isa<arith::RemSIOp>(d) && x[1].known() && x[1].lo != 0) {
        __int128 c = x[1].lo < 0 ? -x[1].lo : x[1].lo;
        if (x[0].lo >= 0 && x[0].hi < c)
          res = x[0]; // already below the divisor: itself
        else
          res = with(x[0].lo >= 0 ? 0 : -(c - 1), x[0].hi <= 0 ? 0 : c - 1,
                     /*mono=*/false);
      } else if (isa<arith::ShRSIOp>(d) && x[1].known() && x[1].lo >= 0 &&
                 x[1].lo < width) {
        int s = static_cast<int>(x[1].lo);
        res = with(x[0].lo >> s, x[0].hi >> s, upIn({0}));
      } else if (isa<arith::ShLIOp>(d) && x[1].known() && x[1].lo >= 0 &&
                 x[1].lo < 32 && x[0].lo > -(__int128(1) << 64) &&
                 x[0].hi < (__int128(1) << 64)) {
        int s = static_cast<int>(x[1].lo);
        res = with(x[0].lo * (__int128(1) << s), x[0].hi * (__int128(1) << s),
                   upIn({0}));
      } else if (isa<arith::MaxSIOp>(d)) {
        res = with(std::max(x[0].lo, x[1].lo), std::max(x[0].hi, x[1].hi),
                   upIn({0, 1}));
      } else if (isa<arith::MinSIOp>(d)) {
        res = with(std::min(x[0].lo, x[1].lo), std::min(x[0].hi, x[1].hi),
                   upIn({0, 1}));
      } else if (isa<arith::AndIOp, arith::OrIOp>(d) && width == 1) {
        bool isAnd = isa<arith::AndIOp>(d);
        __int128 absorb = isAnd ? 0 : 1;
        if ((x[0].known() && x[0].lo == absorb) ||
            (x[1].known() && x[1].lo == absorb))
          res = MonoValue::exact(absorb);
        else if (x[0].known() && x[1].known())
          res = MonoValue::exact(1 - absorb);
        else if (x[0].known() || x[1].known())
          res = x[0].known() ? x[1] : x[0]; // the identity element
        else
          res = MonoValue{0, 1, anyVaries, !anyVaries};
      } else if (isa<arith::SelectOp>(d)) {
        if (x[0].known())
          res = x[0].lo ? x[1] : x[2];
        else
          res = with(std::min(x[1].lo, x[2].lo), std::max(x[1].hi, x[2].hi),
                     /*mono=*/false);
      } else {
        res = unknown(anyVaries);
      }
    }
    memo[v] = res;
    return res;
  };
  return eval(expr, 0);
}

static bool monotoneInPosition(AttentionOp op, Value expr, BlockArgument pos) {
  MonoValue v = analyzeInPosition(op, expr, pos);
  return !v.varies || v.monotone;
}

/// The value of `expr` (an integer the score_mod body computes) at position
/// `p` of `pos`, as MLIR's arith ops compute it (wrapping at the type's
/// width); none where it reads anything but that position and constants,
/// or an op would be poison or trap.
static std::optional<int64_t> evalAtPosition(Value expr, BlockArgument pos,
                                             int64_t p) {
  llvm::DenseMap<Value, int64_t> memo;
  auto widthOf = [](Type t) -> unsigned {
    return t.isIndex() ? 64 : t.isIntOrIndex() ? t.getIntOrFloatBitWidth() : 0;
  };
  // Sign-extends the low `w` bits (i1: 0 or 1).
  auto norm = [](uint64_t v, unsigned w) -> int64_t {
    if (w == 1)
      return v & 1;
    if (w >= 64)
      return static_cast<int64_t>(v);
    uint64_t m = (uint64_t(1) << w) - 1;
    v &= m;
    return static_cast<int64_t>((v ^ (uint64_t(1) << (w - 1))) -
                                (uint64_t(1) << (w - 1)));
  };
  std::function<std::optional<int64_t>(Value, int)> eval =
      [&](Value v, int depth) -> std::optional<int64_t> {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    unsigned w = widthOf(v.getType());
    if (!w || depth > 64)
      return std::nullopt;
    std::optional<int64_t> res;
    APInt cst;
    Operation *d = v.getDefiningOp();
    if (v == pos) {
      res = p;
    } else if (matchPattern(v, m_ConstantInt(&cst))) {
      res = norm(cst.getZExtValue(), w);
    } else if (d && d->getBlock() == pos.getOwner() &&
               d->getNumResults() == 1 && d->getNumOperands() <= 3) {
      SmallVector<int64_t, 3> x;
      for (Value o : d->getOperands()) {
        std::optional<int64_t> y = eval(o, depth + 1);
        if (!y)
          return std::nullopt;
        x.push_back(*y);
      }
      unsigned iw =
          d->getNumOperands() ? widthOf(d->getOperand(0).getType()) : w;
      auto u = [](int64_t a) { return static_cast<uint64_t>(a); };
      auto unsignedOf = [&](int64_t a) {
        return iw >= 64 ? u(a) : u(a) & ((uint64_t(1) << iw) - 1);
      };
      int64_t lo = w >= 64 ? INT64_MIN : -(int64_t(1) << (w - 1));
      // i1 is kept as 0 / 1: where it would be a signed value (true is
      // -1), no value.
      bool fromI1 =
          d->getNumOperands() && d->getOperand(0).getType().isInteger(1);
      if (fromI1 &&
          !isa<arith::ExtUIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
               arith::SelectOp>(d) &&
          !(isa<arith::CmpIOp>(d) && (cast<arith::CmpIOp>(d).getPredicate() ==
                                          arith::CmpIPredicate::eq ||
                                      cast<arith::CmpIOp>(d).getPredicate() ==
                                          arith::CmpIPredicate::ne)))
        return std::nullopt;
      if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(d)) {
        res = norm(u(x[0]), w);
      } else if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(d)) {
        res = norm(unsignedOf(x[0]), w);
      } else if (isa<arith::AddIOp>(d)) {
        res = norm(u(x[0]) + u(x[1]), w);
      } else if (isa<arith::SubIOp>(d)) {
        res = norm(u(x[0]) - u(x[1]), w);
      } else if (isa<arith::MulIOp>(d)) {
        res = norm(u(x[0]) * u(x[1]), w);
      } else if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
                     arith::RemSIOp>(d)) {
        if (x[1] == 0 || (x[0] == lo && x[1] == -1))
          return std::nullopt;
        int64_t q = x[0] / x[1], r = x[0] % x[1];
        if (isa<arith::RemSIOp>(d))
          res = r;
        else if (isa<arith::FloorDivSIOp>(d))
          res = q - (r != 0 && ((r < 0) != (x[1] < 0)));
        else if (isa<arith::CeilDivSIOp>(d))
          res = q + (r != 0 && ((r < 0) == (x[1] < 0)));
        else
          res = q;
      } else if (isa<arith::ShRSIOp, arith::ShLIOp>(d)) {
        if (x[1] < 0 || u(x[1]) >= w)
          return std::nullopt;
        res = isa<arith::ShRSIOp>(d) ? x[0] >> x[1] : norm(u(x[0]) << x[1], w);
      } else if (isa<arith::MaxSIOp>(d)) {
        res = std::max(x[0], x[1]);
      } else if (isa<arith::MinSIOp>(d)) {
        res = std::min(x[0], x[1]);
      } else if (auto cmp = dyn_cast<arith::CmpIOp>(d)) {
        uint64_t a = unsignedOf(x[0]), c = unsignedOf(x[1]);
        using P = arith::CmpIPredicate;
        bool t = false;
        switch (cmp.getPredicate()) {
        case P::eq:
          t = x[0] == x[1];
          break;
        case P::ne:
          t = x[0] != x[1];
          break;
        case P::slt:
          t = x[0] < x[1];
          break;
        case P::sle:
          t = x[0] <= x[1];
          break;
        case P::sgt:
          t = x[0] > x[1];
          break;
        case P::sge:
          t = x[0] >= x[1];
          break;
        case P::ult:
          t = a < c;
          break;
        case P::ule:
          t = a <= c;
          break;
        case P::ugt:
          t = a > c;
          break;
        case P::uge:
          t = a >= c;
          break;
        }
        res = t;
      } else if (isa<arith::AndIOp>(d)) {
        res = norm(u(x[0]) & u(x[1]), w);
      } else if (isa<arith::OrIOp>(d)) {
        res = norm(u(x[0]) | u(x[1]), w);
      } else if (isa<arith::XOrIOp>(d)) {
        res = norm(u(x[0]) ^ u(x[1]), w);
      } else if (isa<arith::SelectOp>(d)) {
        res = x[0] ? x[1] : x[2];
      }
    }
    if (res)
      memo[v] = *res;
    return res;
  };
  return eval(expr, 0);
}

std::optional<int64_t> gpu_kernel::segmentKeySpan(AttentionOp op,
                                                  const SegmentMatch &seg,
                                                  int64_t M, int64_t N,
                                                  int64_t tile) {
  if (!seg.keyMonotone || !seg.rowExpr || M < 1 || N < 1 || M > 64)
    return std::nullopt;
  Block *block = op.getScoreModBlock();
  unsigned r = op.getNumBatchDims();
  BlockArgument mArg = block->getArgument(r + 1),
                nArg = block->getArgument(r + 2);
  // Ids as the kernels compare them: saturated to 32 bits.
  auto sat = [](int64_t v) {
    return std::clamp<int64_t>(v, INT32_MIN, INT32_MAX);
  };
  int64_t qlo = INT64_MAX, qhi = INT64_MIN;
  for (int64_t m = 0; m < M; ++m) {
    std::optional<int64_t> id = evalAtPosition(seg.rowExpr, mArg, m);
    if (!id)
      return std::nullopt;
    qlo = std::min(qlo, sat(*id));
    qhi = std::max(qhi, sat(*id));
  }
  // The keys the rows can see (TileKernel::keyRange over queries [0, M)).
  int64_t off = op.getQueryOffsetOrZero(), lb = 0, ub = N;
  if (op.getCausal())
    ub = std::max<int64_t>(0, std::min(N, off + M));
  if (std::optional<int64_t> w = op.getWindow())
    lb = std::min(ub, std::max<int64_t>(0, off - (*w - 1)));
  std::optional<int64_t> failed;
  auto lowerBound = [&](int64_t from, auto past) -> std::optional<int64_t> {
    int64_t lo = from, hi = ub;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      std::optional<int64_t> id = evalAtPosition(seg.keyExpr, nArg, mid);
      if (!id)
        return failed;
      if (past(sat(*id)))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  std::optional<int64_t> first =
      lowerBound(lb, [&](int64_t id) { return id >= qlo; });
  if (!first)
    return std::nullopt;
  std::optional<int64_t> end =
      lowerBound(*first, [&](int64_t id) { return id > qhi; });
  if (!end)
    return std::nullopt;
  // From the first key's tile (the kernels' start where not exact).
  int64_t from = lb + (*first - lb) / tile * tile;
  return std::clamp<int64_t>(*end - from, 1, N);
}

SegmentMatch gpu_kernel::segmentMatch(AttentionOp op) {
  Block *block = op.getScoreModBlock();
  if (!block)
    return {};
  unsigned r = op.getNumBatchDims();
  // An operand's block argument through sign (or zero) extensions.
  auto operandOf = [&](Value v, bool &zext) -> int {
    while (Operation *d = v.getDefiningOp()) {
      if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(d))
        zext = true;
      else if (!isa<arith::ExtSIOp, arith::IndexCastOp>(d))
        return -1;
      v = d->getOperand(0);
    }
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != block || arg.getArgNumber() < r + 3)
      return -1;
    int i = arg.getArgNumber() - (r + 3);
    auto type = cast<ShapedType>(op.getModOperands()[i].getType());
    Type elt = type.getElementType();
    return elt.isInteger(32) || elt.isInteger(64) ? i : -1;
  };
  auto isI32 = [&](int i) {
    return cast<ShapedType>(op.getModOperands()[i].getType())
        .getElementType()
        .isInteger(32);
  };
  auto rowOnly = [&](int i, unsigned d) {
    AffineMap m = op.getModOperandMap(i);
    return m.isFunctionOfDim(d) && !m.isFunctionOfDim(d == r ? r + 1 : r);
  };
  // An id the body computes from one position (loop r: m, r + 1: n), batch
  // indices, constants and operands that no other position indexes: that
  // loop, or -1. `batch` gets the batch loops it varies with.
  auto computedSide = [&](Value v, uint64_t &batch, bool &position) -> int {
    int side = -1;
    batch = 0;
    position = false;
    SmallVector<Value> work = {v};
    llvm::SmallPtrSet<Operation *, 16> seen;
    while (!work.empty()) {
      Value x = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        if (arg.getOwner() != block)
          return -1;
        unsigned a = arg.getArgNumber();
        int loop = -1;
        if (a == 0)
          return -1; // the score
        if (a <= r) {
          batch |= uint64_t(1) << (a - 1);
          continue;
        }
        if (a <= r + 2) {
          loop = a - 1;
          position = true;
        } else {
          int i = a - (r + 3);
          AffineMap m = op.getModOperandMap(i);
          bool onM = m.isFunctionOfDim(r), onN = m.isFunctionOfDim(r + 1);
          if (onM && onN)
            return -1;
          for (unsigned d = 0; d < r; ++d)
            if (m.isFunctionOfDim(d))
              batch |= uint64_t(1) << d;
          // Indexed by batch dims alone (a sequence's length): a value of
          // the batch, as a batch index is.
          if (!onM && !onN)
            continue;
          loop = onM ? r : r + 1;
        }
        if (side >= 0 && side != loop)
          return -1;
        side = loop;
        continue;
      }
      Operation *d = x.getDefiningOp();
      if (!d || d->getBlock() != block || d->getNumRegions() ||
          d->getNumResults() != 1 || !isPure(d))
        return -1;
      if (!seen.insert(d).second)
        continue;
      if (seen.size() > 64)
        return -1;
      llvm::append_range(work, d->getOperands());
    }
    return side;
  };
  // The yield through selects with one constant side (the fill), each
  // keeping the score where its condition holds (or fails): the conjuncts
  // of those conditions.
  Value y = block->getTerminator()->getOperand(0);
  std::optional<double> fill;
  for (int depth = 0; depth < 8; ++depth) {
    auto sel = y.getDefiningOp<arith::SelectOp>();
    if (!sel)
      return {};
    FloatAttr a, c;
    bool aConst = matchPattern(sel.getTrueValue(), m_Constant(&a));
    bool cConst = matchPattern(sel.getFalseValue(), m_Constant(&c));
    if (aConst == cConst)
      return {};
    double f = (aConst ? a : c).getValueAsDouble();
    if (std::isnan(f) || f > 0 || (fill && *fill != f))
      return {};
    fill = f;
    SmallVector<std::pair<Value, bool>> work = {{sel.getCondition(), cConst}};
    while (!work.empty()) {
      auto [cond, keepTrue] = work.pop_back_val();
      Operation *d = cond.getDefiningOp();
      if (d && ((keepTrue && isa<arith::AndIOp>(d)) ||
                (!keepTrue && isa<arith::OrIOp>(d)))) {
        work.push_back({d->getOperand(0), keepTrue});
        work.push_back({d->getOperand(1), keepTrue});
        continue;
      }
      auto cmp = dyn_cast_or_null<arith::CmpIOp>(d);
      if (!cmp || cmp.getPredicate() != (keepTrue ? arith::CmpIPredicate::eq
                                                  : arith::CmpIPredicate::ne))
        continue;
      bool zu = false, zv = false;
      int u = operandOf(cmp.getLhs(), zu), v = operandOf(cmp.getRhs(), zv);
      Value kept = aConst ? sel.getFalseValue() : sel.getTrueValue();
      bool pure = depth == 0 && sel.getCondition() == cmp.getResult() &&
                  kept == block->getArgument(0);
      if (u < 0 || v < 0) {
        // Ids computed from positions (chunks), on integers of any width
        // (i64 ones saturated to i32 as 64-bit id tensors are).
        uint64_t bu = 0, bv = 0;
        bool pu = false, pv = false;
        int su = computedSide(cmp.getLhs(), bu, pu),
            sv = computedSide(cmp.getRhs(), bv, pv);
        Type t = cmp.getLhs().getType();
        if (su < 0 || sv < 0 || su == sv ||
            !(t.isIndex() || t.isInteger(32) || t.isInteger(64)))
          continue;
        SegmentMatch sm;
        sm.rowExpr = su == static_cast<int>(r) ? cmp.getLhs() : cmp.getRhs();
        sm.keyExpr = su == static_cast<int>(r) ? cmp.getRhs() : cmp.getLhs();
        sm.keyBatchDims = su == static_cast<int>(r) ? bv : bu;
        sm.rowBatchDims = su == static_cast<int>(r) ? bu : bv;
        sm.keyMonotone =
            monotoneInPosition(op, sm.keyExpr, block->getArgument(r + 2));
        sm.rowFromPositions = su == static_cast<int>(r) ? pu : pv;
        sm.keyFromPositions = su == static_cast<int>(r) ? pv : pu;
        sm.int32 = t.isInteger(32);
        // Ids past 32 bits saturate (TileKernel::idToI32): distinct ones
        // at the bounds compare equal after it.
        MonoValue rows =
            analyzeInPosition(op, sm.rowExpr, block->getArgument(r + 1));
        sm.rowIdsUnsaturated =
            sm.int32 || (rows.lo > INT32_MIN && rows.hi < INT32_MAX);
        sm.pure = pure;
        sm.fill = f;
        return sm;
      }
      if (zu != zv)
        continue;
      if (rowOnly(v, r) && rowOnly(u, r + 1))
        std::swap(u, v);
      if (rowOnly(u, r) && rowOnly(v, r + 1)) {
        SegmentMatch sm;
        sm.rowOperand = u;
        sm.keyOperand = v;
        AffineMap keyMap = op.getModOperandMap(v);
        for (unsigned d = 0; d < r; ++d)
          if (keyMap.isFunctionOfDim(d))
            sm.keyBatchDims |= uint64_t(1) << d;
        sm.zeroExtend = zu;
        sm.int32 = isI32(u) && isI32(v);
        sm.pure = pure;
        sm.fill = f;
        return sm;
      }
    }
    y = aConst ? sel.getFalseValue() : sel.getTrueValue();
  }
  return {};
}

/// Clones (or lowers) body op `o` with its operands from `map`.
static void emitBodyOp(KernelBuilder &kb, Operation &o, IRMapping &map) {
  SmallVector<Value> in;
  for (Value v : o.getOperands())
    in.push_back(map.lookup(v));
  if (Value lowered = lowerMath(kb, &o, in)) {
    map.map(o.getResult(0), lowered);
    return;
  }
  Operation *c = kb.b.clone(o, map);
  // Float arithmetic may contract into fma and reassociate (ALiBi's
  // slope * (f + k) = slope * f + slope * k, one fma per score): the
  // kernels' softmax is approximate already; no nnan/ninf (-inf is data).
  if (auto fm = dyn_cast<arith::ArithFastMathInterface>(c))
    c->setAttr(fm.getFastMathAttrName(),
               arith::FastMathFlagsAttr::get(
                   c->getContext(), arith::FastMathFlags::contract |
                                        arith::FastMathFlags::reassoc));
}

void KernelBuilder::hoistScoreMod(ArrayRef<Value> batch, int64_t perRowDim) {
  scoreModPerRowDim = perRowDim;
  Block *block = op.getScoreModBlock();
  if (!block)
    return;
  unsigned r = op.getNumBatchDims();
  IRMapping &map = scoreModHoisted;
  for (unsigned i = 0; i < r; ++i)
    if (static_cast<int64_t>(i) != perRowDim)
      map.map(block->getArgument(1 + i), batch[i]);
  SmallVector<Value> loops(batch.begin(), batch.end());
  loops.append(2, Value());
  for (unsigned i = 0; i < op.getModOperands().size(); ++i) {
    AffineMap m = op.getModOperandMap(i);
    if (!m.isFunctionOfDim(r) && !m.isFunctionOfDim(r + 1) &&
        (perRowDim < 0 || !m.isFunctionOfDim(perRowDim)))
      map.map(block->getArgument(r + 3 + i), readTable(*this, i, loops));
  }
  for (Operation &o : block->without_terminator())
    if (llvm::all_of(o.getOperands(), [&](Value v) { return map.contains(v); }))
      emitBodyOp(*this, o, map);
}

namespace {
/// The body's yield as g * c for a positive, finite f32 constant c (no
/// `mul` where it does not end that way).
struct OuterScale {
  arith::MulFOp mul;
  Value g;
  float c = 0;
};
} // namespace

static OuterScale outerScale(Block *block) {
  if (!block)
    return {};
  auto mul =
      block->getTerminator()->getOperand(0).getDefiningOp<arith::MulFOp>();
  if (!mul || !mul.getType().isF32())
    return {};
  for (int i = 0; i < 2; ++i) {
    FloatAttr attr;
    if (!matchPattern(mul->getOperand(i), m_Constant(&attr)))
      continue;
    float k = attr.getValue().convertToFloat();
    if (k > 0 && std::isfinite(k))
      return {mul, mul->getOperand(1 - i), k};
  }
  return {};
}

float KernelBuilder::scoreModOuterScale() {
  return outerScale(op.getScoreModBlock()).c;
}

/// m and n below 2^20 (kScoreModIndexLimit): sums of at most 8 score
/// indices then convert to f32 exactly (applyScoreMod's split). A dynamic
/// size counts as small: the manifest's index_limit makes the loader refuse
/// larger ones.
static bool smallKeyRange(ArrayRef<int64_t> sizes, unsigned r) {
  auto small = [](int64_t s) {
    return ShapedType::isDynamic(s) || (s >= 0 && s < kScoreModIndexLimit);
  };
  return sizes.size() == r + 4 && small(sizes[r]) && small(sizes[r + 1]);
}

bool gpu_kernel::scoreModNeedsIndexLimit(AttentionOp op,
                                         ArrayRef<int64_t> sizes) {
  Block *block = op.getScoreModBlock();
  unsigned r = op.getNumBatchDims();
  if (!block || sizes.size() != r + 4 ||
      (!ShapedType::isDynamic(sizes[r]) &&
       !ShapedType::isDynamic(sizes[r + 1])))
    return false;
  return !block->getArgument(r + 1).use_empty() ||
         !block->getArgument(r + 2).use_empty();
}

/// Whether `v` (or the value it index_casts) is one of the score's indices
/// (b..., m, n: the body's arguments 1..r + 2).
static bool isScoreIndex(Value v, Block *block, unsigned r) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == block && arg.getArgNumber() >= 1 &&
         arg.getArgNumber() <= r + 2;
}

/// The value the body adds to its score argument to yield `result`
/// (score + v or v + score), or subtracts (score - v: `negated`), or null.
static Value addedToScore(Value result, Block *block, bool &negated) {
  Value score = block->getArgument(0);
  negated = false;
  if (auto sub = result.getDefiningOp<arith::SubFOp>()) {
    negated = true;
    return sub.getType().isF32() && sub.getLhs() == score ? sub.getRhs()
                                                          : Value();
  }
  auto add = result.getDefiningOp<arith::AddFOp>();
  if (!add || !add.getType().isF32())
    return Value();
  return add.getLhs() == score   ? add.getRhs()
         : add.getRhs() == score ? add.getLhs()
                                 : Value();
}

/// `v` without the negations applied to it (applyScoreMod carries them
/// through a split value and through a key-linear product).
static Value withoutNeg(Value v) {
  while (auto neg = v.getDefiningOp<arith::NegFOp>())
    v = neg.getOperand();
  return v;
}

/// The key-linear form of the body's bias: 0 none, 1 X * sitofp(e), 2 with
/// an absolute value of e or of its conversion.
int KernelBuilder::keyLinearForm() {
  Block *block = op.getScoreModBlock();
  unsigned r = op.getNumBatchDims();
  if (!block || !smallKeyRange(sizes, r))
    return 0;
  bool negated;
  Value bias =
      addedToScore(block->getTerminator()->getOperand(0), block, negated);
  auto mul =
      bias ? withoutNeg(bias).getDefiningOp<arith::MulFOp>() : arith::MulFOp();
  if (!mul)
    return 0;
  auto isIndexArg = [&](Value v) { return isScoreIndex(v, block, r); };
  // The number of index terms of an integer sum or difference holding n,
  // as applyScoreMod splits it (0: not split).
  std::function<int(Value)> keyTerms = [&](Value v) -> int {
    if (v == block->getArgument(r + 2))
      return 1;
    Operation *def = v.getDefiningOp();
    if (auto cast = dyn_cast_or_null<arith::IndexCastOp>(def))
      return cast.getType().isIntOrIndex() ? keyTerms(cast.getIn()) : 0;
    if (!isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
      return 0;
    int a = keyTerms(def->getOperand(0)), c = keyTerms(def->getOperand(1));
    if ((!a && !c) || (!a && !isIndexArg(def->getOperand(0))) ||
        (!c && !isIndexArg(def->getOperand(1))))
      return 0;
    int terms = (a ? a : 1) + (c ? c : 1);
    return terms <= 8 ? terms : 0;
  };
  // Computed once per block by hoistScoreMod: free of the score, m and n.
  std::function<bool(Value)> perBlock = [&](Value v) -> bool {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != block)
        return false;
      unsigned i = arg.getArgNumber();
      if (i == 0 || i == r + 1 || i == r + 2)
        return false;
      if (i <= r)
        return static_cast<int64_t>(i) - 1 != scoreModPerRowDim;
      AffineMap m = op.getModOperandMap(i - (r + 3));
      return !m.isFunctionOfDim(r) && !m.isFunctionOfDim(r + 1) &&
             (scoreModPerRowDim < 0 || !m.isFunctionOfDim(scoreModPerRowDim));
    }
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == block && def->getNumResults() == 1 &&
           llvm::all_of(def->getOperands(), perBlock);
  };
  // X * A, A = -...(|sitofp(e)|), -...(sitofp(|e|)) or -...(sitofp(e)).
  for (int i = 0; i < 2; ++i) {
    Value a = withoutNeg(mul->getOperand(i));
    bool abs = false;
    if (auto absf = a.getDefiningOp<math::AbsFOp>()) {
      a = absf.getOperand();
      abs = true;
    }
    auto conv = a.getDefiningOp<arith::SIToFPOp>();
    Value x = mul->getOperand(1 - i);
    if (!conv || !conv.getType().isF32() ||
        x.getDefiningOp<arith::SIToFPOp>() || !perBlock(x))
      continue;
    Value e = conv.getIn();
    if (auto absi = e.getDefiningOp<math::AbsIOp>(); absi && !abs) {
      e = absi.getOperand();
      abs = true;
    }
    if (keyTerms(e))
      return abs ? 2 : 1;
  }
  return 0;
}

bool KernelBuilder::scoreModKeyLinear() {
  int form = keyLinearForm();
  return form == 1 || (form == 2 && keyAbsAllowed);
}

bool KernelBuilder::scoreModKeyAbs() { return keyLinearForm() == 2; }

Value KernelBuilder::applyScoreMod(Value x, ArrayRef<Value> loops,
                                   Value nBase, int64_t nOffset) {
  Block *block = op.getScoreModBlock();
  if (!block)
    return x;
  unsigned r = op.getNumBatchDims();
  IRMapping map = scoreModHoisted;
  // Key-linear split (keyLinearRowTerm): `x` is the unscaled score; the
  // body sees it scaled where the split does not apply.
  Value *rowTerm = keyLinearRowTerm;
  Value rawScore = x;
  if (rowTerm)
    x = arith::MulFOp::create(b, loc, x, scaleValue());
  map.map(block->getArgument(0), x);
  for (unsigned i = 0; i < r + 2; ++i)
    map.map(block->getArgument(1 + i), loops[i]);
  for (unsigned i = 0; i < op.getModOperands().size(); ++i) {
    if (map.contains(block->getArgument(r + 3 + i)))
      continue;
    map.map(block->getArgument(r + 3 + i), readTable(*this, i, loops));
  }
  // Integer sums and differences of the key index n = nBase + nOffset are
  // kept as (value without the offset, offset), so that a conversion to
  // float (ALiBi's n - m) is one per fragment row, plus a constant per
  // score: sitofp(v + k) = sitofp(v) + k, exact while |v|, |v + k| < 2^24,
  // which sums and differences of at most 8 score indices below 2^20 keep
  // to (anything else sees the whole value).
  struct Split {
    Value base;
    int64_t offset;
    int terms;
  };
  DenseMap<Value, Split> split;
  DenseMap<Value, std::pair<Value, float>> fsplit; // f32 value + constant
  // With keyLinearSign, absolute values of split values: |e| = sign * e
  // (fsign: the sign of a float split, +1 where absent; absSplit: |e| for a
  // split integer e, until converted).
  DenseMap<Value, Value> fsign;
  DenseMap<Value, Split> absSplit;
  // A float split's whole value.
  auto whole = [&](Value v, arith::FastMathFlags flags) -> Value {
    auto [f, k] = fsplit.lookup(v);
    Value w = arith::AddFOp::create(b, loc, f, cF32(k), flags);
    if (Value sg = fsign.lookup(v))
      w = arith::MulFOp::create(b, loc, w, sg);
    return w;
  };
  // m, n below 2^20, or dynamic (bounded by the manifest's index_limit).
  bool small = smallKeyRange(sizes, r);
  if (nBase && (nOffset || rowTerm) && small)
    split[block->getArgument(r + 2)] = {nBase, nOffset, 1};
  // X * (f + k) products: X, the row part X f, and k.
  struct KeyProduct {
    Value x, rowPart;
    float k;
  };
  DenseMap<Value, KeyProduct> products;
  // -X (f + k): the product of -X.
  auto negated = [&](const KeyProduct &kp) -> KeyProduct {
    return {arith::NegFOp::create(b, loc, kp.x),
            arith::NegFOp::create(b, loc, kp.rowPart), kp.k};
  };
  auto isInt = [](Value v) { return v.getType().isIntOrIndex(); };
  OuterScale outer = dropScoreModOuterScale ? outerScale(block) : OuterScale();
  for (Operation &o : block->without_terminator()) {
    if (map.contains(o.getResult(0)))
      continue;
    // The caller multiplies by c later (dropScoreModOuterScale): g itself.
    if (outer.mul && &o == outer.mul.getOperation()) {
      Value g = outer.g;
      if (fsplit.count(g) && !map.contains(g))
        map.map(g, whole(g, arith::FastMathFlags::none));
      map.map(o.getResult(0), map.lookup(g));
      continue;
    }
    // |e| of a split e with the tile's sign: sign * e, split alike. The
    // probe (keyAbsProbe) takes e at nBase and its step per key.
    if (isa<math::AbsFOp, math::AbsIOp>(o) && keyLinearSign) {
      Value in = o.getOperand(0);
      bool isF = isa<math::AbsFOp>(o);
      if (isF ? fsplit.count(in) && !fsign.count(in) : split.count(in) > 0) {
        if (keyAbsProbe) {
          keyAbsProbe->base = isF ? fsplit[in].first
                                  : arith::SIToFPOp::create(
                                        b, loc, b.getF32Type(), split[in].base)
                                        .getResult();
          keyAbsProbe->step =
              isF ? fsplit[in].second : static_cast<float>(split[in].offset);
        }
        if (isF) {
          fsplit[o.getResult(0)] = fsplit[in];
          fsign[o.getResult(0)] = keyLinearSign;
        } else {
          absSplit[o.getResult(0)] = split[in];
        }
        continue;
      }
    }
    if (auto conv = dyn_cast<arith::SIToFPOp>(o);
        conv && conv.getType().isF32() && absSplit.count(conv.getIn())) {
      Split a = absSplit[conv.getIn()];
      fsplit[o.getResult(0)] = {
          arith::SIToFPOp::create(b, loc, b.getF32Type(), a.base),
          static_cast<float>(a.offset)};
      fsign[o.getResult(0)] = keyLinearSign;
      continue;
    }
    // -(f + k) = -f + -k; -(X (f + k)) = -X (f + k), a product still.
    if (auto neg = dyn_cast<arith::NegFOp>(o)) {
      Value in = neg.getOperand();
      if (auto fs = fsplit.find(in); fs != fsplit.end() && !map.contains(in)) {
        fsplit[o.getResult(0)] = {
            arith::NegFOp::create(b, loc, fs->second.first),
            -fs->second.second};
        if (Value sg = fsign.lookup(in))
          fsign[o.getResult(0)] = sg;
        continue;
      }
      if (auto it = products.find(in); it != products.end())
        products[o.getResult(0)] = negated(it->second);
    }
    auto splitOf = [&](Value v) -> std::optional<Split> {
      auto it = split.find(v);
      if (it != split.end())
        return it->second;
      return std::nullopt;
    };
    if (isa<arith::IndexCastOp, arith::AddIOp, arith::SubIOp,
            arith::SIToFPOp>(o) &&
        llvm::any_of(o.getOperands(), [&](Value v) { return split.count(v); })) {
      std::optional<Split> a = splitOf(o.getOperand(0));
      std::optional<Split> c =
          o.getNumOperands() > 1 ? splitOf(o.getOperand(1)) : std::nullopt;
      auto base = [&](Value v, const std::optional<Split> &sv) {
        return sv ? sv->base : map.lookup(v);
      };
      if (isa<arith::IndexCastOp>(o) && isInt(o.getResult(0))) {
        Value cast = arith::IndexCastOp::create(b, loc, o.getResult(0).getType(),
                                                a->base);
        split[o.getResult(0)] = {cast, a->offset, a->terms};
        continue;
      }
      // The other operand: split too, or an index of the score (below
      // 2^20 like n), so that the bound holds.
      auto isIndex = [&](Value v) { return isScoreIndex(v, block, r); };
      if (isa<arith::AddIOp, arith::SubIOp>(o) &&
          (a || isIndex(o.getOperand(0))) && (c || isIndex(o.getOperand(1)))) {
        bool sub = isa<arith::SubIOp>(o);
        int terms = (a ? a->terms : 1) + (c ? c->terms : 1);
        if (terms <= 8) {
          Value lhs = base(o.getOperand(0), a), rhs = base(o.getOperand(1), c);
          Value v = sub ? arith::SubIOp::create(b, loc, lhs, rhs).getResult()
                        : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
          int64_t off = (a ? a->offset : 0) +
                        (c ? (sub ? -c->offset : c->offset) : 0);
          split[o.getResult(0)] = {v, off, terms};
          continue;
        }
      }
      if (isa<arith::SIToFPOp>(o) && o.getResult(0).getType().isF32()) {
        // Kept as (float value, constant) too, until used.
        fsplit[o.getResult(0)] = {
            arith::SIToFPOp::create(b, loc, b.getF32Type(), a->base),
            static_cast<float>(a->offset)};
        continue;
      }
    }
    // x * (f + k) = fma(x, k, x * f): x * f is one per fragment row (ALiBi's
    // slope times the distance), one fma per score.
    if (auto mul = dyn_cast<arith::MulFOp>(o)) {
      for (int i = 0; i < 2; ++i) {
        auto fs = fsplit.find(mul->getOperand(i));
        Value x = mul->getOperand(1 - i);
        if (fs == fsplit.end() || fsplit.count(x) || !map.contains(x))
          continue;
        Value xv = map.lookup(x);
        if (Value sg = fsign.lookup(fs->first))
          xv = arith::MulFOp::create(b, loc, xv, sg);
        Value rowPart = arith::MulFOp::create(b, loc, xv, fs->second.first);
        map.map(o.getResult(0), fma(xv, cF32(fs->second.second), rowPart));
        products[o.getResult(0)] = {xv, rowPart, fs->second.second};
        break;
      }
      if (map.contains(o.getResult(0)))
        continue;
    }
    // Any other use sees the whole value.
    for (Value v : o.getOperands()) {
      if (std::optional<Split> sv = splitOf(v); sv && !map.contains(v)) {
        Value k = arith::ConstantOp::create(
            b, loc, b.getIntegerAttr(v.getType(), sv->offset));
        map.map(v, arith::AddIOp::create(b, loc, sv->base, k));
      }
      if (fsplit.count(v) && !map.contains(v))
        map.map(v, whole(v, arith::FastMathFlags::contract |
                                arith::FastMathFlags::reassoc));
      if (auto as = absSplit.find(v);
          as != absSplit.end() && !map.contains(v)) {
        Value k = arith::ConstantOp::create(
            b, loc, b.getIntegerAttr(v.getType(), as->second.offset));
        map.map(v,
                math::AbsIOp::create(
                    b, loc, arith::AddIOp::create(b, loc, as->second.base, k)));
      }
    }
    emitBodyOp(*this, o, map);
  }
  // The yield's value, if it is still split.
  if (Value y = block->getTerminator()->getOperand(0);
      fsplit.count(y) && !map.contains(y))
    map.map(y, whole(y, arith::FastMathFlags::none));
  Value result = block->getTerminator()->getOperand(0);
  if (rowTerm) {
    // score + X (f + k) = scale (s + k X / scale) + X f.
    bool subtracted;
    Value bias = addedToScore(result, block, subtracted);
    auto it = bias ? products.find(bias) : products.end();
    if (it != products.end() && scale > 0 && !runtimeScale) {
      // score - X (f + k) = score + (-X) (f + k).
      KeyProduct kp = subtracted ? negated(it->second) : it->second;
      *rowTerm = kp.rowPart;
      if (keyLinearSlope)
        *keyLinearSlope =
            arith::MulFOp::create(b, loc, kp.x, cF32(kp.k / scale));
      if (keyLinearSlope || keyLinearOnMma || kp.k == 0)
        return rawScore;
      Value sigma = arith::MulFOp::create(b, loc, kp.x, cF32(1.0f / scale));
      // One fma with k as its immediate (a contractible multiply and add
      // would leave the loop-invariant k X / scale in a register per k).
      return LLVM::FMAOp::create(b, loc, sigma, cF32(kp.k), rawScore);
    }
    *rowTerm = cF32(0.0f);
    return arith::MulFOp::create(b, loc, map.lookup(result),
                                 cF32(1.0f / scale));
  }
  return map.lookup(result);
}

/// The manifest's type name of a score_mod value, or "" if it has none.
static std::string typeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isIndex())
    return "index";
  if (t.isInteger(64) || t.isInteger(32) || t.isInteger(1))
    return "i" + std::to_string(t.getIntOrFloatBitWidth());
  return "";
}

FailureOr<DictionaryAttr> gpu_kernel::describeScoreMod(AttentionOp op,
                                                       std::string &why) {
  Block *block = op.getScoreModBlock();
  MLIRContext *ctx = op.getContext();
  Builder b(ctx);
  unsigned r = op.getNumBatchDims();
  unsigned numArgs = r + 3;
  DenseMap<Value, int64_t> ids;
  for (unsigned i = 0; i < numArgs; ++i)
    ids[block->getArgument(i)] = i;
  SmallVector<Attribute> ops;
  auto entry = [&](StringRef name, Type type,
                   ArrayRef<NamedAttribute> extra) -> LogicalResult {
    std::string t = typeName(type);
    if (t.empty()) {
      why = "a score_mod value has type " +
            llvm::formatv("{0}", type).str() +
            " (a bundle describes f32, i64, i32, i1 and index values)";
      return failure();
    }
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("op", b.getStringAttr(name)),
        b.getNamedAttr("type", b.getStringAttr(t))};
    fields.append(extra.begin(), extra.end());
    ops.push_back(b.getDictionaryAttr(fields));
    return success();
  };
  auto operandIds = [&](ValueRange vs) {
    SmallVector<Attribute> out;
    for (Value v : vs)
      out.push_back(b.getI64IntegerAttr(ids.lookup(v)));
    return b.getArrayAttr(out);
  };
  // Constant operands: tables read at the indices of their map; runtime
  // ones: the kernel argument mod<i> read there.
  for (unsigned i = 0; i < op.getModOperands().size(); ++i) {
    DenseElementsAttr table = scoreModTable(op, i);
    if (!table) {
      SmallVector<Attribute> at;
      for (AffineExpr e : op.getModOperandMap(i).getResults())
        at.push_back(b.getI64IntegerAttr(
            1 + cast<AffineDimExpr>(e).getPosition()));
      Type elt = cast<ShapedType>(op.getModOperands()[i].getType())
                     .getElementType();
      if (isa<FloatType>(elt))
        elt = b.getF32Type();
      if (failed(entry("attn.arg", elt,
                       {b.getNamedAttr("operands", b.getArrayAttr(at)),
                        b.getNamedAttr("name", b.getStringAttr(
                                                   "mod" + std::to_string(i)))})))
        return failure();
      ids[block->getArgument(numArgs + i)] = numArgs + ops.size() - 1;
      continue;
    }
    auto type = cast<ShapedType>(table.getType());
    SmallVector<Attribute> shape, values, at;
    for (int64_t d : type.getShape())
      shape.push_back(b.getI64IntegerAttr(d));
    if (isa<FloatType>(type.getElementType()))
      for (const APFloat &x : table.getValues<APFloat>())
        values.push_back(b.getF64FloatAttr(x.convertToDouble()));
    else
      for (const APInt &x : table.getValues<APInt>())
        values.push_back(b.getI64IntegerAttr(
            type.getElementType().isInteger(1) ? x.getZExtValue()
                                               : x.getSExtValue()));
    for (AffineExpr e : op.getModOperandMap(i).getResults())
      at.push_back(b.getI64IntegerAttr(
          1 + cast<AffineDimExpr>(e).getPosition()));
    Type elt = type.getElementType();
    if (isa<FloatType>(elt))
      elt = b.getF32Type(); // every float is computed as f32
    if (failed(entry("attn.table", elt,
                     {b.getNamedAttr("operands", b.getArrayAttr(at)),
                      b.getNamedAttr("shape", b.getArrayAttr(shape)),
                      b.getNamedAttr("values", b.getArrayAttr(values))})))
      return failure();
    ids[block->getArgument(numArgs + i)] = numArgs + ops.size() - 1;
  }
  for (Operation &o : block->without_terminator()) {
    SmallVector<NamedAttribute> extra = {
        b.getNamedAttr("operands", operandIds(o.getOperands()))};
    Type type = o.getResult(0).getType();
    if (auto c = dyn_cast<arith::ConstantOp>(o)) {
      extra.clear();
      if (auto f = dyn_cast<FloatAttr>(c.getValue())) {
        if (std::isnan(f.getValueAsDouble())) {
          why = "a score_mod constant is NaN";
          return failure();
        }
        extra.push_back(b.getNamedAttr(
            "value", b.getF64FloatAttr(f.getValueAsDouble())));
      } else if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
        extra.push_back(b.getNamedAttr(
            "value", b.getI64IntegerAttr(i.getType().isInteger(1)
                                             ? i.getValue().getZExtValue()
                                             : i.getValue().getSExtValue())));
      } else {
        why = "a score_mod constant is not a scalar";
        return failure();
      }
    } else if (auto c = dyn_cast<arith::CmpFOp>(o)) {
      extra.push_back(b.getNamedAttr(
          "predicate",
          b.getStringAttr(arith::stringifyCmpFPredicate(c.getPredicate()))));
    } else if (auto c = dyn_cast<arith::CmpIOp>(o)) {
      extra.push_back(b.getNamedAttr(
          "predicate",
          b.getStringAttr(arith::stringifyCmpIPredicate(c.getPredicate()))));
    }
    if (o.getNumResults() != 1) {
      why = "a score_mod op has more than one result";
      return failure();
    }
    if (failed(entry(o.getName().getStringRef(), type, extra)))
      return failure();
    ids[o.getResult(0)] = numArgs + ops.size() - 1;
  }
  return b.getDictionaryAttr(
      {b.getNamedAttr("num_args", b.getI64IntegerAttr(numArgs)),
       b.getNamedAttr("ops", b.getArrayAttr(ops)),
       b.getNamedAttr("result",
                      b.getI64IntegerAttr(ids.lookup(
                          block->getTerminator()->getOperand(0))))});
}
