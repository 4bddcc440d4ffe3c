//===- TileKernel.cpp - pieces shared by the tensor-core kernels ----------===//
//
// The mma.sync (MmaKernel.cpp) and wgmma (WgmmaKernel.cpp) kernel bodies
// differ in how they multiply; how they index operands, stream tile rows,
// bound and mask keys, vote on rescaling and write the output is the same
// and lives here.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn::gpu_kernel;

Value TileKernel::add(Value x, int64_t k) {
  return k ? arith::AddIOp::create(kb.b, kb.loc, x, idx(k)).getResult() : x;
}
Value TileKernel::add(Value x, Value y) {
  return arith::AddIOp::create(kb.b, kb.loc, x, y);
}
Value TileKernel::mul(Value x, int64_t k) {
  return arith::MulIOp::create(kb.b, kb.loc, x, idx(k));
}
Value TileKernel::divu(Value x, int64_t k) {
  return arith::DivUIOp::create(kb.b, kb.loc, x, idx(k));
}
Value TileKernel::remu(Value x, int64_t k) {
  return arith::RemUIOp::create(kb.b, kb.loc, x, idx(k));
}
Value TileKernel::byteAddress(Value mem, ValueRange idx, Value base) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto type = cast<MemRefType>(mem.getType());
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, mem);
  Value off = md.getOffset();
  for (auto [i, v] : llvm::enumerate(idx))
    off = add(off, arith::MulIOp::create(b, loc, v, md.getStrides()[i]));
  int64_t eltBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  if (!base)
    base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem);
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                      add(base, mul(off, eltBytes)));
}

void TileKernel::asyncCopy16(Value dst, ValueRange dstIdx, Value src,
                             ValueRange srcIdx) {
  OpBuilder &b = kb.b;
  MLIRContext *ctx = b.getContext();
  LLVM::InlineAsmOp::create(
      b, kb.loc, LLVM::LLVMVoidType::get(ctx),
      ValueRange{byteAddress(dst, dstIdx), byteAddress(src, srcIdx)},
      "cp.async.cg.shared.global.L2::128B [$0], [$1], 16;", "l,l",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr());
}

TileKernel::FastDiv TileKernel::fastDiv(Value d) {
  if (getConstantIntValue(d))
    return {d, Value(), Value()};
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value d64 = arith::IndexCastUIOp::create(b, loc, i64, d);
  Value d32 = arith::TruncIOp::create(b, loc, i32, d64);
  // l = 32 - clz(d - 1) (0 for d = 1).
  Value l = arith::SubIOp::create(
      b, loc, arith::ConstantIntOp::create(b, loc, 32, 32),
      NVVM::InlinePtxOp::create(
          b, loc, TypeRange{i32},
          ValueRange{arith::SubIOp::create(
              b, loc, d32, arith::ConstantIntOp::create(b, loc, 1, 32))},
          ValueRange{}, "clz.b32 $0, $1;", Value())
          ->getResult(0));
  Value p = arith::SubIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::ConstantIntOp::create(b, loc, 1, 64),
                            arith::ExtUIOp::create(b, loc, i64, l)),
      d64);
  Value m = arith::AddIOp::create(
      b, loc,
      arith::DivUIOp::create(
          b, loc,
          arith::ShLIOp::create(b, loc, p,
                                arith::ConstantIntOp::create(b, loc, 32, 64)),
          d64),
      arith::ConstantIntOp::create(b, loc, 1, 64));
  return {d, arith::TruncIOp::create(b, loc, i32, m), l};
}

Value TileKernel::divu(const FastDiv &f, Value n) {
  if (!f.m)
    return arith::DivUIOp::create(kb.b, kb.loc, n, f.d);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value n32 = arith::TruncIOp::create(
      b, loc, b.getI32Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), n));
  Value hi = arith::MulUIExtendedOp::create(b, loc, n32, f.m).getHigh();
  Value q = arith::ShRUIOp::create(b, loc,
                                   arith::AddIOp::create(b, loc, hi, n32), f.l);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), q);
}

Value TileKernel::remu(const FastDiv &f, Value n) {
  if (!f.m)
    return arith::RemUIOp::create(kb.b, kb.loc, n, f.d);
  return arith::SubIOp::create(
      kb.b, kb.loc, n, arith::MulIOp::create(kb.b, kb.loc, divu(f, n), f.d));
}

Value TileKernel::clamp(Value x, int64_t hi) {
  return arith::MinUIOp::create(kb.b, kb.loc, x, idx(hi - 1));
}
Value TileKernel::clamp(Value x, Value hi) {
  // A constant bound folds here, so that static kernels stay as they were.
  if (std::optional<int64_t> c = getConstantIntValue(hi))
    return clamp(x, *c);
  return arith::MinUIOp::create(kb.b, kb.loc, x, add(hi, -1));
}

void TileKernel::setRow(Value rho) {
  if (packDim < 0) {
    loops[r] = rho;
    return;
  }
  loops[r] = remu(rho, M());
  loops[packDim] = divu(rho, M());
}

Value TileKernel::queryOf(Value rho) {
  return packDim < 0 ? rho : remu(rho, M());
}

SmallVector<unsigned> TileKernel::batchOrder() {
  AffineMap maskMap = memArg("mask") ? mapOf("mask") : AffineMap();
  auto shared = [&](unsigned i) {
    return maskMap && !maskMap.isFunctionOfDim(i);
  };
  SmallVector<unsigned> fastestFirst;
  for (bool first : {true, false})
    for (int64_t i = static_cast<int64_t>(r) - 1; i >= 0; --i)
      if (shared(i) == first && i != packDim)
        fastestFirst.push_back(i);
  return fastestFirst;
}

Value TileKernel::reduxCombine(NVVM::ReduxKind kind, Value x, Value y) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  switch (kind) {
  case NVVM::ReduxKind::MIN:
    return arith::MinSIOp::create(b, loc, x, y);
  case NVVM::ReduxKind::MAX:
    return arith::MaxSIOp::create(b, loc, x, y);
  case NVVM::ReduxKind::UMIN:
    return arith::MinUIOp::create(b, loc, x, y);
  case NVVM::ReduxKind::UMAX:
    return arith::MaxUIOp::create(b, loc, x, y);
  default:
    return arith::AddIOp::create(b, loc, x, y);
  }
}

Value TileKernel::segmentId(int operand, unsigned dim, Value at) {
  SmallVector<Value> at2(loops.begin(), loops.begin() + r + 2);
  at2[r] = at2[r + 1] = idx(0);
  at2[dim] = at;
  return idToI32(kb.readScoreModOperand(operand, at2));
}

Value TileKernel::segmentId(const SegmentMatch &seg, bool key, Value at) {
  int operand = key ? seg.keyOperand : seg.rowOperand;
  if (operand >= 0)
    return segmentId(operand, key ? r + 1 : r, at);
  // A computed id: its ops cloned with the position at `at` (the other
  // position 0: the id does not read it), the batch indices of the current
  // entry, and the operands it reads at those.
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value expr = key ? seg.keyExpr : seg.rowExpr;
  Block *block = expr.getParentBlock();
  llvm::SmallPtrSet<Operation *, 16> slice;
  SmallVector<Value> work = {expr};
  while (!work.empty()) {
    Operation *d = work.pop_back_val().getDefiningOp();
    if (d && slice.insert(d).second)
      llvm::append_range(work, d->getOperands());
  }
  SmallVector<Value> at2(loops.begin(), loops.begin() + r + 2);
  at2[r] = at2[r + 1] = idx(0);
  at2[key ? r + 1 : r] = at;
  IRMapping map;
  for (unsigned d = 0; d < r + 2; ++d)
    map.map(block->getArgument(1 + d), at2[d]);
  // Operands the id reads (or is: a bare id tensor of the right type).
  for (unsigned i = r + 3; i < block->getNumArguments(); ++i) {
    BlockArgument arg = block->getArgument(i);
    if (arg == expr || llvm::any_of(arg.getUsers(), [&](Operation *user) {
          return slice.contains(user);
        }))
      map.map(arg, kb.readScoreModOperand(i - (r + 3), at2));
  }
  for (Operation &o : *block)
    if (slice.contains(&o))
      b.clone(o, map);
  Value v = map.lookup(expr);
  if (v.getType().isIndex())
    v = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  return idToI32(v); // i32 or i64 (segmentMatch)
}

Value TileKernel::idToI32(Value v) {
  if (v.getType().isInteger(32))
    return v;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto c64 = [&](int64_t x) {
    return arith::ConstantIntOp::create(b, loc, x, 64).getResult();
  };
  v = arith::MaxSIOp::create(b, loc,
                             arith::MinSIOp::create(b, loc, v, c64(INT32_MAX)),
                             c64(INT32_MIN));
  return arith::TruncIOp::create(b, loc, b.getI32Type(), v);
}

void TileKernel::prepareBatchDivs() {
  batchDivs.assign(r, std::nullopt);
  SmallVector<unsigned> order = batchOrder();
  for (unsigned i : order)
    if (kb.isDynamic(i) && i != order.back())
      batchDivs[i] = fastDiv(size(i));
}

void TileKernel::setBatch(Value flat) {
  SmallVector<unsigned> fastestFirst = batchOrder();
  for (unsigned i : fastestFirst) {
    // The slowest dim is what is left (flat is below the batch's size): a
    // runtime size needs no division there (its multipliers would be live
    // in every block's registers).
    if (i == fastestFirst.back() && kb.isDynamic(i)) {
      loops[i] = flat;
      continue;
    }
    if (i < batchDivs.size() && batchDivs[i]) {
      Value q = divu(*batchDivs[i], flat);
      loops[i] = arith::SubIOp::create(
          kb.b, kb.loc, flat, arith::MulIOp::create(kb.b, kb.loc, q, size(i)));
      flat = q;
      continue;
    }
    if (kb.isDynamic(i)) {
      loops[i] = arith::RemUIOp::create(kb.b, kb.loc, flat, size(i));
      flat = arith::DivUIOp::create(kb.b, kb.loc, flat, size(i));
      continue;
    }
    loops[i] = remu(flat, sizes[i]);
    flat = divu(flat, sizes[i]);
  }
}

Value TileKernel::maskBase() {
  return memref::ExtractAlignedPointerAsIndexOp::create(kb.b, kb.loc,
                                                        memArg("mask"));
}

Value TileKernel::maskAddress(Value base) {
  return byteAddress(memArg("mask"), indices("mask"), base);
}

void TileKernel::prefetchMask(Value n0, Value blockRow, int64_t rows,
                              int64_t tile) {
  Value mask = memArg("mask");
  if (!mask)
    return;
  AffineMap map = mapOf("mask");
  if (!map.isFunctionOfDim(r) || !map.isFunctionOfDim(r + 1))
    return;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto type = cast<MemRefType>(mask.getType());
  // A mask of dynamic shape: its strides are runtime values; no prefetch.
  if (!type.hasStaticShape())
    return;
  int64_t eltBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  int64_t perLine = 128 / eltBytes;
  int64_t lines = (tile + perLine - 1) / perLine, total = rows * lines;
  Value base = maskBase();
  MLIRContext *ctx = b.getContext();
  for (int64_t it = 0; it * threads < total; ++it) {
    Value i = add(tid, it * threads);
    if ((it + 1) * threads > total)
      i = clamp(i, total);
    loops[r] = clamp(add(blockRow, divu(i, lines)), Mv());
    loops[r + 1] = clamp(add(n0, mul(remu(i, lines), perLine)), Nv());
    Value addr = maskAddress(base);
    LLVM::InlineAsmOp::create(
        b, loc, LLVM::LLVMVoidType::get(ctx), ValueRange{addr},
        "prefetch.global.L2 [$0];", "l", /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr());
  }
}

Value TileKernel::lastKeptKey(llvm::function_ref<void()> between) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value mask = memArg("mask");
  auto type = cast<MemRefType>(mask.getType());
  const int64_t N = type.getShape().back(), chunks = N / 16;
  auto i32c = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32).getResult();
  };
  // The block's mask row (bytes): its batch indices, key 0.
  loops[r + 1] = idx(0);
  Value row = maskAddress(maskBase());
  // 16-byte loads need a 16-byte aligned row; else every key counts.
  Value aligned = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, row,
                            arith::ConstantIntOp::create(b, loc, 15, 64)),
      arith::ConstantIntOp::create(b, loc, 0, 64));
  // Chunks c, c + T, ..., c + 3T per group: four loads in flight. The
  // first group's loads go out before `between` (the caller's other
  // copies), the rest after.
  const int64_t group = 4;
  auto loadGroup = [&](Value c0) {
    SmallVector<std::pair<Value, Value>> loaded; // (chunk, 4 x i32)
    for (int64_t u = 0; u < group; ++u) {
      // Past the row (or not aligned): chunk 0 again, not counted.
      Value c = add(c0, u * threads);
      Value in = arith::AndIOp::create(
          b, loc, aligned,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                idx(chunks)));
      c = arith::SelectOp::create(b, loc, in, c, idx(0));
      Value addr = arith::AddIOp::create(
          b, loc, row, arith::IndexCastUIOp::create(b, loc, i64, mul(c, 16)));
      // Aligned down: a no-op where the row is aligned; else (nothing
      // counted) an aligned address within the row's first 16 bytes.
      addr = arith::AndIOp::create(
          b, loc, addr, arith::ConstantIntOp::create(b, loc, ~15LL, 64));
      Value v = LLVM::LoadOp::create(
          b, loc, VectorType::get({4}, i32),
          LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 1),
                                   addr),
          /*alignment=*/16);
      loaded.push_back({in, v});
    }
    return loaded;
  };
  auto reduceGroup = [&](Value hi, Value c0,
                         ArrayRef<std::pair<Value, Value>> loaded) {
    for (auto [u, inV] : llvm::enumerate(loaded)) {
      auto [in, v] = inV;
      Value key0 = arith::IndexCastOp::create(
                       b, loc, i32, mul(add(c0, u * threads), 16))
                       .getResult();
      for (int64_t j = 0; j < 4; ++j) {
        Value w = LLVM::ExtractElementOp::create(b, loc, v, i32c(j));
        Value kept = arith::AndIOp::create(
            b, loc, in,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, w,
                                  i32c(0)));
        // Bytes are 0 or 1: the highest set bit gives the last byte.
        Value lz = LLVM::CountLeadingZerosOp::create(b, loc, i32, w,
                                                     b.getBoolAttr(false));
        Value last = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, key0, i32c(4 * j)),
            arith::ShRUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, i32c(31), lz), i32c(3)));
        hi = arith::SelectOp::create(
            b, loc, kept, arith::MaxSIOp::create(b, loc, hi, last), hi);
      }
    }
    return hi;
  };
  SmallVector<std::pair<Value, Value>> firstGroup = loadGroup(tid);
  if (between)
    between();
  Value hi0 = reduceGroup(i32c(-1), tid, firstGroup);
  Value end = arith::SelectOp::create(b, loc, aligned, idx(chunks), idx(0));
  auto scan = scf::ForOp::create(
      b, loc, add(tid, group * threads), end, idx(group * threads),
      ValueRange{hi0}, [&](OpBuilder &, Location, Value c0, ValueRange st) {
        scf::YieldOp::create(b, loc,
                             ValueRange{reduceGroup(st[0], c0, loadGroup(c0))});
      });
  Value hi = arith::SelectOp::create(b, loc, aligned, scan.getResult(0),
                                     i32c(N - 1));
  return NVVM::ReduxOp::create(
      b, loc, i32, hi, NVVM::ReduxKindAttr::get(ctx, NVVM::ReduxKind::MAX),
      i32c(-1));
}

/// The i32 entry of the block table at `column` of this sequence's row.
static Value tableEntry(TileKernel &tk, Value column) {
  return memref::LoadOp::create(tk.kb.b, tk.kb.loc, tk.memArg("block_table"),
                                ValueRange{tk.loops[tk.seqDim], column});
}

/// A table entry as a cache page, clamped to the cache's pages.
static Value clampedPage(TileKernel &tk, Value entry) {
  OpBuilder &b = tk.kb.b;
  Location loc = tk.kb.loc;
  Value page = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  return arith::MaxSIOp::create(
      b, loc, arith::MinSIOp::create(b, loc, page, tk.idx(tk.pages - 1)),
      tk.idx(0));
}

Value TileKernel::pageAt(Value column) {
  // The column clamped too: a key past the table (limit - 1 of an empty
  // key range wraps around) reads its last entry.
  int64_t perSeq =
      cast<MemRefType>(memArg("block_table").getType()).getDimSize(1);
  return clampedPage(*this, tableEntry(*this, clamp(column, perSeq)));
}

SmallVector<Value> TileKernel::loadPageEntries(Value row0, int64_t count) {
  SmallVector<Value> out;
  int64_t spanned = pageSize > 0 ? (count + pageSize - 1) / pageSize + 1 : 0;
  if (!spanned || spanned > 8)
    return out;
  int64_t perSeq =
      cast<MemRefType>(memArg("block_table").getType()).getDimSize(1);
  Value first = divu(row0, pageSize);
  for (int64_t j = 0; j < spanned; ++j)
    out.push_back(tableEntry(*this, clamp(add(first, j), perSeq)));
  return out;
}

/// The cache page and slot of key `key` of this sequence.
static std::pair<Value, Value> pageSlotOf(TileKernel &tk, Value key) {
  return {tk.pageAt(tk.divu(key, tk.pageSize)), tk.remu(key, tk.pageSize)};
}

void TileKernel::hoistLastPage(Value limit) {
  lastPageLimit = limit;
  std::tie(lastPage, lastSlot) = pageSlotOf(*this, add(limit, -1));
}

/// The same index value: one SSA value or equal constants.
static bool sameIndex(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  return ca && cb && *ca == *cb;
}

void TileKernel::setPageEntries(Value row0, ValueRange entries) {
  pageRow0 = row0;
  pageFirst = divu(row0, pageSize);
  pageEntries.clear();
  for (Value e : entries)
    pageEntries.push_back(clampedPage(*this, e));
}

SmallVector<Value> TileKernel::indices(StringRef name) {
  bool paged = pageSize > 0 && (name == "k" || name == "v");
  Value page, slot;
  if (paged && pageOverride) {
    page = pageOverride;
    slot = slotOverride;
  } else if (paged && pageRow0) {
    // One of the entries read for this copy (selects on the page offset).
    OpBuilder &b = kb.b;
    Location loc = kb.loc;
    Value key = loops[r + 1];
    Value rel = arith::SubIOp::create(b, loc, divu(key, pageSize), pageFirst);
    page = pageEntries.front();
    for (int64_t j = 1, e = pageEntries.size(); j < e; ++j)
      page = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rel, idx(j)),
          pageEntries[j], page);
    slot = remu(key, pageSize);
  } else if (paged) {
    std::tie(page, slot) = pageSlotOf(*this, loops[r + 1]);
  }
  // Varlen: positions within the sequence, offset to its packed rows.
  bool rowsPacked = qBase && (name == "q" || name == "out" || name == "lse");
  bool keysPacked = kBase && (name == "k" || name == "v");
  SmallVector<Value> out;
  for (AffineExpr e : mapOf(name).getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (rowsPacked && d == r)
      out.push_back(clamp(add(qBase, loops[d]), Mv()));
    else if (keysPacked && d == r + 1)
      out.push_back(clamp(add(kBase, loops[d]), Nv()));
    else
      out.push_back(paged && d == seqDim  ? page
                    : paged && d == r + 1 ? slot
                                          : loops[d]);
  }
  return out;
}

/// A varlen table's entry `i`, clamped to [0, T] (hostile tables stay in
/// bounds).
static Value tableEntry(KernelBuilder &kb, Value table, Value i, Value T) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value x = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), memref::LoadOp::create(b, loc, table, i));
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, x, kb.cIdx(0)), T);
}

/// Sequence `s`'s first token and length (>= 0) in `table`.
static std::pair<Value, Value> tableLength(KernelBuilder &kb, Value table,
                                           Value s, Value T) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value lo = tableEntry(kb, table, s, T);
  Value hi = tableEntry(
      kb, table, arith::AddIOp::create(b, loc, s, kb.cIdx(1)).getResult(), T);
  return {lo, arith::MaxSIOp::create(
                  b, loc, arith::SubIOp::create(b, loc, hi, lo), kb.cIdx(0))};
}

Value TileKernel::setVarlen(Value blockX, int64_t rows) {
  if (!levelOn)
    return setVarlenSlot(blockX, rows);
  if (matchPattern(levelOn, m_One()))
    return setVarlenTile(levelSeq, levelTile, rows);
  // Both ways under a block-uniform branch (the slot's vote needs the warp
  // converged, which a uniform branch keeps).
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  SmallVector<Type> types(6, b.getIndexType());
  auto ifOp = scf::IfOp::create(b, loc, types, levelOn, /*withElse=*/true);
  auto yieldFields = [&](Value row) {
    scf::YieldOp::create(
        b, loc, ValueRange{row, qBase, kBase, rowLimit, keyLimit, offsetV});
  };
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    yieldFields(setVarlenTile(levelSeq, levelTile, rows));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    yieldFields(setVarlenSlot(blockX, rows));
  }
  qBase = ifOp.getResult(1);
  kBase = ifOp.getResult(2);
  rowLimit = ifOp.getResult(3);
  keyLimit = ifOp.getResult(4);
  offsetV = ifOp.getResult(5);
  return ifOp.getResult(0);
}

SmallVector<Value> TileKernel::varlenTileCounts(int64_t rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t S = kb.varlenSeqs;
  Value cq = memArg("cu_seqlens_q");
  Type i32 = b.getI32Type();
  Value lane = remu(tid, 32);
  SmallVector<Value> counts;
  for (int64_t j = 0; j * 32 < S; ++j) {
    Value s = add(lane, 32 * j);
    Value in =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, s, idx(S));
    Value len =
        tableLength(kb, cq, arith::MinUIOp::create(b, loc, s, idx(S - 1)), Mv())
            .second;
    Value tiles = arith::SelectOp::create(
        b, loc, in, divu(add(len, rows - 1), rows), idx(0));
    counts.push_back(arith::IndexCastUIOp::create(b, loc, i32, tiles));
  }
  return counts;
}

Value TileKernel::setVarlenTile(Value seq, Value tile, int64_t rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value cq = memArg("cu_seqlens_q"), ck = memArg("cu_seqlens_k");
  auto [q0, lq] = tableLength(kb, cq, seq, Mv());
  auto [k0, lk] = tableLength(kb, ck, seq, Nv());
  Value found = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      mul(tile, rows), lq);
  return setVarlenFound(found, q0, lq, k0, lk, tile, rows);
}

Value TileKernel::setVarlenFound(Value found, Value q0, Value lq, Value k0,
                                 Value lk, Value tile, int64_t rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  qBase = q0;
  kBase = k0;
  rowLimit = arith::SelectOp::create(b, loc, found, lq, idx(0));
  keyLimit = arith::SelectOp::create(b, loc, found, lk, idx(0));
  offsetV = kb.varlenBottomRight
                ? arith::SubIOp::create(b, loc, lk, lq).getResult()
                : idx(0);
  return arith::SelectOp::create(b, loc, found, mul(tile, rows), idx(0));
}

Value TileKernel::setVarlenSlot(Value blockX, int64_t rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t S = kb.varlenSeqs;
  Value cq = memArg("cu_seqlens_q"), ck = memArg("cu_seqlens_k");
  auto entry = [&](Value table, Value i, Value T) {
    return tableEntry(kb, table, i, T);
  };
  auto length = [&](Value table, Value s, Value T) {
    return tableLength(kb, table, s, T);
  };
  // Tile slots: sequence s owns blocks from V(s) = cu_q[s] / rows + s on
  // (V grows by at least ceil(len_q / rows) from s to s + 1, so each
  // sequence has a slot per tile, and V(S - 1) + its tiles <= M / rows + S
  // blocks cover all). The block's sequence is the last s with V(s) <=
  // blockX: counted by a warp vote, or past kVarlenVoteSeqs sequences a
  // binary search of ceil(log2 S) steps over the table.
  auto slot = [&](Value s) { return add(divu(entry(cq, s, Mv()), rows), s); };
  Value s;
  if (S >= 2 && S <= kVarlenVoteSeqs) {
    // Up to kVarlenVoteSeqs sequences: the warp's lanes read every V(s) at
    // once (ceil(S / 32) loads each, independent) and count those <=
    // blockX by ballot: one round trip to the table instead of the
    // search's ceil(log2 S) dependent ones. The last such s is the count
    // minus one (V is nondecreasing; a hostile table still gives an s in
    // [0, S), which the checks below bound). The warp must be converged.
    Value lane = remu(tid, 32);
    Type i32 = b.getI32Type();
    Value count = arith::ConstantIntOp::create(b, loc, 0, 32);
    for (int64_t j = 0; j * 32 < S; ++j) {
      Value t = add(lane, 32 * j);
      Value in =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t, idx(S));
      Value le = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ule,
          slot(arith::MinUIOp::create(b, loc, t, idx(S - 1))), blockX);
      Value bit = arith::ExtUIOp::create(b, loc, i32,
                                         arith::AndIOp::create(b, loc, in, le));
      Value votes =
          NVVM::InlinePtxOp::create(
              b, loc, TypeRange{i32}, ValueRange{bit}, ValueRange{},
              "{ .reg .pred p; .reg .b32 v; setp.ne.u32 p, $1, 0; "
              "vote.sync.ballot.b32 v, p, 0xffffffff; popc.b32 $0, v; }",
              Value())
              ->getResult(0);
      count = arith::AddIOp::create(b, loc, count, votes);
    }
    Value n = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
    s = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, n, idx(0)),
        add(n, -1), idx(0));
  } else {
    Value lo = idx(0), hi = idx(S);
    for (int64_t span = S; span > 1; span = (span + 1) / 2) {
      Value mid = divu(add(lo, hi), 2);
      Value le = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                       slot(mid), blockX);
      lo = arith::SelectOp::create(b, loc, le, mid, lo);
      hi = arith::SelectOp::create(b, loc, le, hi, mid);
    }
    s = lo;
  }
  // The tile within the sequence (signed: a hostile cu_q[0] > 0 puts
  // V(0) past the first blocks).
  Value t = arith::SubIOp::create(b, loc, blockX, slot(s));
  auto [q0, lq] = length(cq, s, Mv());
  auto [k0, lk] = length(ck, s, Nv());
  Value tiles = divu(add(lq, rows - 1), rows);
  Value found = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, t, idx(0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, tiles));
  return setVarlenFound(found, q0, lq, k0, lk, t, rows);
}

void TileKernel::setVarlen(Value q0, Value k0, Value rowsLeft, Value keysLeft) {
  qBase = q0;
  kBase = k0;
  rowLimit = rowsLeft;
  keyLimit = keysLeft;
  // len_k - len_q where the tile exists (no rows otherwise).
  offsetV =
      kb.varlenBottomRight
          ? arith::SubIOp::create(kb.b, kb.loc, keysLeft, rowsLeft).getResult()
          : idx(0);
}

void TileKernel::copyRows(StringRef name, Value tile, int64_t count,
                          int64_t width, unsigned rowDim, Value row0,
                          Value limit, unsigned colDim, DstFn dst) {
  // 16-byte chunks: 8 halves or 4 f32.
  Type elt = cast<MemRefType>(memArg(name).getType()).getElementType();
  const int64_t vec = 128 / elt.getIntOrFloatBitWidth();
  int64_t perRow = width / vec, chunks = count * perRow;
  // Paged K/V: the few table entries of this copy's pages, up front.
  bool paged = pageSize > 0 && (name == "k" || name == "v");
  int64_t spanned = paged ? (count + pageSize - 1) / pageSize + 1 : 0;
  if (paged && spanned <= 8 && pageRow0 != row0) {
    setPageEntries(row0, loadPageEntries(row0, count));
  } else if (paged && spanned > 8) {
    pageRow0 = Value();
  }
  // Whole tiles starting on a page (no window: the key loop starts at 0 or
  // at a split range's start, multiples of the tile), each iteration's
  // rows within one page: the chunk's entry is known here and its slot is
  // the thread's row plus a constant, instead of a select over the entries
  // per chunk. Rows past `limit` (a ragged last tile) read the last key's.
  const int64_t rowsPerIt = threads / perRow;
  const bool staticPages = paged && pageRow0 && !window &&
                           threads % perRow == 0 && chunks % threads == 0 &&
                           count % pageSize == 0 && pageSize % rowsPerIt == 0;
  Value threadRow, lastPage, lastSlot, ragged;
  if (staticPages) {
    threadRow = divu(tid, perRow);
    int64_t n = kb.isDynamic(r + 1) ? -1 : sizes[r + 1];
    if (n < 0 || n % count != 0) {
      std::tie(lastPage, lastSlot) =
          lastPageLimit && sameIndex(limit, lastPageLimit)
              ? std::make_pair(this->lastPage, this->lastSlot)
              : pageSlotOf(*this, add(limit, -1));
      ragged = arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::ugt,
                                     add(row0, count), limit);
    }
  }
  // The indices as the caller left them: a partial round sets them inside
  // its guard.
  SmallVector<Value> callerLoops(loops);
  bool partial = chunks % threads != 0;
  for (int64_t it = 0; it * threads < chunks; ++it) {
    Value i = add(tid, it * threads);
    // A last, partial round: the threads past the chunks copy nothing (a
    // clamped chunk would be written by several threads at once).
    std::optional<OpBuilder::InsertionGuard> guard;
    if ((it + 1) * threads > chunks) {
      OpBuilder &b = kb.b;
      auto ifOp = scf::IfOp::create(
          b, kb.loc,
          arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::ult, i,
                                idx(chunks)),
          /*withElse=*/false);
      guard.emplace(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    Value rowLocal = divu(i, perRow);
    Value chunk = remu(i, perRow);
    Value col = mul(chunk, vec);
    if (staticPages) {
      OpBuilder &b = kb.b;
      Location loc = kb.loc;
      int64_t first = it * rowsPerIt;
      pageOverride = pageEntries[first / pageSize];
      slotOverride = add(threadRow, first % pageSize);
      if (ragged) {
        Value past = arith::AndIOp::create(
            b, loc, ragged,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                  add(add(row0, first), threadRow), limit));
        pageOverride =
            arith::SelectOp::create(b, loc, past, lastPage, pageOverride);
        slotOverride =
            arith::SelectOp::create(b, loc, past, lastSlot, slotOverride);
      }
    }
    if (rowDim == r && packDim >= 0)
      setRow(clamp(add(row0, rowLocal), rowsTotal()));
    else
      loops[rowDim] = clamp(add(row0, rowLocal), limit);
    loops[colDim] = col;
    // .cg: streamed once per block.
    asyncCopy16(tile, dst(rowLocal, chunk), memArg(name), indices(name));
    pageOverride = slotOverride = Value();
  }
  if (partial)
    loops = callerLoops;
}

Value TileKernel::queryBlock(Value blockX, Value gridDimX, int64_t gridX) {
  if (!causal)
    return blockX;
  return arith::SubIOp::create(
      kb.b, kb.loc, kb.dynGridX ? add(gridDimX, -1) : idx(gridX - 1), blockX);
}

Value TileKernel::firstRow(Value blockX, int64_t rows) {
  if (!kb.varlenSeqs)
    return mul(blockX, rows);
  Value row = setVarlen(blockX, rows);
  OpBuilder &b = kb.b;
  Value live = arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::ugt,
                                     rowLimit, idx(0));
  auto ifOp = scf::IfOp::create(b, kb.loc, live, /*withElse=*/false);
  bodyGuard = ifOp;
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  return row;
}

void TileKernel::terminate() {
  if (bodyGuard)
    kb.b.setInsertionPointAfter(bodyGuard);
  gpu::TerminatorOp::create(kb.b, kb.loc);
}

std::pair<Value, Value> TileKernel::keyRange(Value blockRow, int64_t rows) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value lb = idx(0), ub = keyEnd();
  Value qPos = keyPosOf(blockRow);
  // Signed: a bottom-right varlen offset may place the block before key 0
  // (then no key is visible: ub = lb).
  if (causal)
    ub = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, ub, add(qPos, rows)), lb);
  if (window) {
    Value reach = idx(*window - 1);
    Value far = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      qPos, reach);
    lb = arith::SelectOp::create(
        b, loc, far, arith::SubIOp::create(b, loc, qPos, reach), idx(0));
    // Past the keys only when the whole block sees none (M > N + ...).
    lb = arith::MinUIOp::create(b, loc, lb, ub);
  }
  return {lb, ub};
}

Value TileKernel::unmaskedEnd(Value lb, Value ub, Value blockRow,
                              int64_t tile) {
  if (window)
    return lb;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value limit = keyEnd();
  if (causal)
    limit = arith::MinSIOp::create(b, loc, limit,
                                   add(keyPosOf(blockRow), 1));
  Value ahead =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, limit, lb);
  Value span = arith::SelectOp::create(
      b, loc, ahead, arith::SubIOp::create(b, loc, limit, lb), idx(0));
  return arith::MinUIOp::create(b, loc, add(lb, mul(divu(span, tile), tile)),
                                ub);
}

SmallVector<Value> TileKernel::tileLoops(Value lb, Value split, Value ub,
                                         int64_t tile, ValueRange init,
                                         TileBodyFn body, Value maskedFrom) {
  auto loop = [&](Value from, Value to, ValueRange state, bool withMask) {
    return scf::ForOp::create(kb.b, kb.loc, from, to, idx(tile), state,
                              [&](OpBuilder &, Location, Value n0,
                                  ValueRange st) { body(n0, st, withMask); });
  };
  auto unmasked = loop(lb, split, init, /*withMask=*/false);
  auto masked = loop(maskedFrom ? maskedFrom : split, ub, unmasked.getResults(),
                     /*withMask=*/true);
  return SmallVector<Value>(masked.getResults());
}

SmallVector<Value> TileKernel::loadMaskPairs(
    ArrayRef<std::pair<Value, Value>> rowCol, bool boundary, bool packed) {
  SmallVector<Value> out;
  Value mask = memArg("mask");
  if (!mask)
    return out;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type elt = cast<MemRefType>(mask.getType()).getElementType();
  AffineMap map = mapOf("mask");
  // A pair is one aligned 2-element load when n is the mask's contiguous
  // dim, rows hold an even count and tiles start at even keys (no window,
  // or an odd one: tiles then start at block row - (W - 1)). i1 is stored
  // a byte per element, not as a packed vector: scalar loads.
  bool pairs = !elt.isInteger(1) && map.getNumResults() > 0 &&
               cast<AffineDimExpr>(map.getResults().back()).getPosition() ==
                   r + 1 &&
               !kb.isDynamic(r + 1) && N() % 2 == 0 &&
               (!window || *window % 2 == 1);
  for (auto [row, col] : rowCol) {
    // Rows past M (the last block) and keys past N (a boundary tile) read
    // an element in range; their scores are not used or are -inf.
    loops[r] = clamp(row, Mv());
    if (pairs) {
      loops[r + 1] = boundary ? clamp(col, N() - 1) : col;
      Value v = vector::LoadOp::create(b, loc, VectorType::get({2}, elt), mask,
                                       indices("mask"), /*nontemporal=*/false,
                                       llvm::MaybeAlign(2 * (elt.getIntOrFloatBitWidth() / 8)));
      if (packed) {
        out.push_back(v);
        continue;
      }
      for (int64_t j = 0; j < 2; ++j)
        out.push_back(
            vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{j}));
      continue;
    }
    for (int64_t j = 0; j < 2; ++j) {
      Value c = add(col, j);
      loops[r + 1] = boundary ? clamp(c, Nv()) : c;
      out.push_back(memref::LoadOp::create(b, loc, mask, indices("mask")));
    }
  }
  return out;
}

SmallVector<Value> TileKernel::unpackMask(ArrayRef<Value> vals) {
  SmallVector<Value> out;
  for (Value v : vals) {
    if (!isa<VectorType>(v.getType())) {
      out.push_back(v);
      continue;
    }
    for (int64_t j = 0; j < 2; ++j)
      out.push_back(
          vector::ExtractOp::create(kb.b, kb.loc, v, ArrayRef<int64_t>{j}));
  }
  return out;
}

Value TileKernel::keyAbsSign(Value n0, Value row, int64_t keys, Value &sign) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  KernelBuilder::KeyAbsProbe probe;
  Value term;
  kb.keyAbsProbe = &probe;
  kb.keyLinearSign = kb.cF32(1.0f);
  kb.keyLinearRowTerm = &term;
  Value zero = kb.cF32(0.0f);
  scoreMod(zero, n0, row, /*boundary=*/false, Value(), n0, 1);
  kb.keyAbsProbe = nullptr;
  kb.keyLinearSign = Value();
  kb.keyLinearRowTerm = nullptr;
  // keyLinearForm mirrors applyScoreMod, so the probe finds the value;
  // were it not to, every tile would take the whole body.
  if (!probe.base) {
    sign = kb.cF32(1.0f);
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  }
  // The value's extremes over the keys (integers, exact in f32).
  const float span = probe.step * static_cast<float>(keys - 1);
  Value lo =
      arith::AddFOp::create(b, loc, probe.base, kb.cF32(std::min(0.0f, span)));
  Value hi =
      arith::AddFOp::create(b, loc, probe.base, kb.cF32(std::max(0.0f, span)));
  Value nonPos =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, hi, zero);
  sign = arith::SelectOp::create(b, loc, nonPos, kb.cF32(-1.0f), kb.cF32(1.0f));
  return arith::AndIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, lo, zero),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, hi, zero));
}

Value TileKernel::scoreMod(Value x, Value col, Value row, bool boundary,
                           Value maskElt, Value colBase, int64_t colOffset) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto fill = [&] { return kb.cF32(kb.maskValue); };
  Value query = queryOf(row);
  if (kb.op.hasScoreMod() && !skipRegion) {
    SmallVector<Value> at(loops.begin(), loops.begin() + r);
    // GQA packing: the row's group member (values of it are per row).
    if (packDim >= 0)
      at[packDim] = divu(row, M());
    // Varlen: rows and keys count within the sequence; the region sees the
    // op's packed positions.
    Value regionQuery = query, regionCol = col, regionColBase = colBase;
    if (qBase) {
      regionQuery = add(query, qBase);
      regionCol = add(col, kBase);
      if (colBase)
        regionColBase = add(colBase, kBase);
    }
    at.append({regionQuery, regionCol});
    x = kb.applyScoreMod(x, at, regionColBase, colOffset);
  }
  if (Value mask = memArg("mask")) {
    Value mv = maskElt;
    if (!mv) {
      setRow(clampRow(row));
      loops[r + 1] = boundary ? clamp(col, Nv()) : col;
      mv = memref::LoadOp::create(b, loc, mask, indices("mask"));
    }
    x = mv.getType().isInteger(1)
            ? arith::SelectOp::create(b, loc, mv, x, fill()).getResult()
            : arith::AddFOp::create(b, loc, x, kb.ext(mv),
                                    arith::FastMathFlags::contract)
                  .getResult();
  }
  if (!boundary)
    return x;
  Value ninfV = kb.cF32(-std::numeric_limits<float>::infinity());
  // The scores' keys as colBase + a constant: each bound becomes one i32
  // limit per row relative to colBase (shared by the row's scores), and
  // each score one compare against an immediate. With the -inf fill the
  // causal diagonal and the keys past the end are one bound.
  if (colBase && !window) {
    Type i32 = b.getI32Type();
    auto rel = [&](Value v) -> Value {
      return arith::TruncIOp::create(
          b, loc, i32,
          arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                     arith::SubIOp::create(b, loc, v, colBase)));
    };
    Value off = arith::ConstantIntOp::create(b, loc, colOffset, 32);
    // Past the keys: colOffset > keyEnd - colBase - 1; causal hides
    // colOffset > qPos - colBase.
    Value last = arith::SubIOp::create(
        b, loc, rel(keyEnd()), arith::ConstantIntOp::create(b, loc, 1, 32));
    if (causal) {
      Value diag = rel(keyPosOf(query));
      if (std::isinf(kb.maskValue) && kb.maskValue < 0) {
        last = arith::MinSIOp::create(b, loc, diag, last);
      } else {
        Value hidden = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sgt, off, diag);
        x = arith::SelectOp::create(b, loc, hidden, fill(), x);
      }
    }
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, off, last);
    return arith::SelectOp::create(b, loc, past, ninfV, x);
  }
  Value hidden;
  auto orInto = [&](Value c) {
    hidden = hidden ? arith::OrIOp::create(b, loc, hidden, c).getResult() : c;
  };
  Value qPos = keyPosOf(query);
  if (causal)
    orInto(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, col, qPos));
  if (window)
    orInto(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, qPos,
                                 add(col, *window)));
  if (hidden)
    x = arith::SelectOp::create(b, loc, hidden, fill(), x);
  Value past =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, col, keyEnd());
  return arith::SelectOp::create(b, loc, past, ninfV, x);
}

std::pair<Value, Value> TileKernel::initialState(Value row) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value ninf = kb.cF32(-std::numeric_limits<float>::infinity());
  Value zero = kb.cF32(0.0f);
  Value sink = memArg("sink");
  if (!sink)
    return {ninf, zero};
  setRow(clampRow(row));
  Value m = kb.ext(memref::LoadOp::create(b, loc, sink, indices("sink")));
  // The sink is a natural score: in the exp2 domain, m is in log2 units
  // (kept below 2^126, where 2^(s - m) of any key is 0, as it would be).
  if (!natural)
    m = arith::MinimumFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, m, kb.cF32(1.4426950408889634f)),
        kb.cF32(0x1p126f));
  Value none = arith::OrIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, c2, idx(0)));
  return {m, arith::SelectOp::create(b, loc, none, zero, kb.cF32(1.0f))};
}

void TileKernel::foldHiddenKeys(Value lb, Value ub, int64_t tile,
                                MutableArrayRef<Value> m, MutableArrayRef<Value> l,
                                MutableArrayRef<SmallVector<Value>> o,
                                int64_t E) {
  float fillValue = hiddenFill ? *hiddenFill : kb.maskValue;
  if (std::isinf(fillValue) || (!causal && !window && !hiddenFill))
    return;
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type f32 = b.getF32Type();
  // The key loop visits whole tiles from lb while below ub: [lb, end).
  Value ahead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, ub, lb);
  Value span = arith::SelectOp::create(
      b, loc, ahead, arith::SubIOp::create(b, loc, ub, lb), idx(0));
  Value end = arith::MinUIOp::create(
      b, loc, Nv(), add(lb, mul(divu(add(span, tile - 1), tile), tile)));
  Value count = add(lb, arith::SubIOp::create(b, loc, Nv(), end));
  Value countF = arith::UIToFPOp::create(
      b, loc, f32, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), count));
  Value fill = kb.cF32(fillValue);
  Value log2e = kb.cF32(1.4426950408889634f);
  Value zero = kb.cF32(0.0f);
  auto expDiff = [&](Value x, Value ref) {
    return ex2(arith::MulFOp::create(
        b, loc, arith::SubFOp::create(b, loc, x, ref), log2e));
  };
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c2, idx(0));
  Value any = arith::ConstantIntOp::create(b, loc, 0, 1);
  SmallVector<Value> alpha, beta, mNews;
  for (auto [s, ms] : llvm::enumerate(m)) {
    Value mNew = arith::MaximumFOp::create(b, loc, ms, fill);
    mNews.push_back(mNew);
    alpha.push_back(expDiff(ms, mNew));
    beta.push_back(expDiff(fill, mNew));
    any = arith::OrIOp::create(
        b, loc, any,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, beta.back(),
                              zero));
    Value extra = arith::SelectOp::create(
        b, loc, firstLane,
        arith::MulFOp::create(b, loc, countF, beta.back()), zero);
    l[s] = kb.fma(alpha.back(), l[s], extra);
  }
  any = arith::AndIOp::create(
      b, loc, any,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, count, idx(0)));
  Value allLanes = arith::ConstantIntOp::create(b, loc, -1, 32);
  any = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), allLanes, any,
                                 NVVM::VoteSyncKind::any);
  // Σ V over the hidden keys at this thread's columns (shared by its rows).
  int64_t cols = E / 4;
  SmallVector<Type> types(cols, f32);
  auto ifOp = scf::IfOp::create(b, loc, types, any, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    auto sumOver = [&](Value from, Value to, ValueRange init) {
      auto loop = scf::ForOp::create(
          b, loc, from, to, idx(1), init,
          [&](OpBuilder &, Location, Value n, ValueRange acc) {
            loops[r + 1] = n;
            SmallVector<Value> next;
            for (int64_t k = 0; k < cols; ++k) {
              loops[r + 3] = add(c2, (k / 2) * 8 + k % 2);
              Value v = kb.ext(memref::LoadOp::create(b, loc, memArg("v"),
                                                      indices("v")));
              next.push_back(arith::AddFOp::create(b, loc, acc[k], v));
            }
            scf::YieldOp::create(b, loc, next);
          });
      return SmallVector<Value>(loop.getResults());
    };
    SmallVector<Value> sums = sumOver(idx(0), lb, SmallVector<Value>(cols, zero));
    sums = sumOver(end, Nv(), sums);
    scf::YieldOp::create(b, loc, sums);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, SmallVector<Value>(cols, zero));
  }
  for (auto [s, os] : llvm::enumerate(o))
    for (int64_t k = 0; k < cols; ++k)
      os[k] = kb.fma(beta[s], ifOp.getResult(k),
                     arith::MulFOp::create(b, loc, alpha[s], os[k]));
  // l and O are now relative to the new maxima (the lse reads them).
  for (auto [s, mNew] : llvm::enumerate(mNews))
    m[s] = mNew;
}

Value TileKernel::laneReduce(Value x, bool isMax, int64_t lanes) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  for (int32_t off = 1; off < lanes; off *= 2) {
    Value o = gpu::ShuffleOp::create(b, loc, x, off, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, o).getResult()
              : arith::AddFOp::create(b, loc, x, o).getResult();
  }
  return x;
}

Value TileKernel::ex2(Value x) {
  return NVVM::InlinePtxOp::create(kb.b, kb.loc, TypeRange{kb.b.getF32Type()},
                                   ValueRange{x}, ValueRange{},
                                   "ex2.approx.ftz.f32 $0, $1;", Value())
      ->getResult(0);
}

bool TileKernel::naturalScores(KernelBuilder &kb, MemArgFn memArg) {
  if (kb.op.hasScoreMod() || !std::isinf(kb.maskValue))
    return true;
  // Only a mask the kernel reads (not the lengths or cu_seqlens tables
  // that stand for length and varlen masks).
  Value mask = memArg("mask");
  return mask &&
         !cast<MemRefType>(mask.getType()).getElementType().isInteger(1);
}

bool TileKernel::fmaExponent() const {
  if (!natural || !std::isinf(kb.maskValue))
    return false;
  // A body that yields a large finite score (a fill in a region's select:
  // JAX's -0.7 FLT_MAX, Flax's -1e10) breaks s log2 e - round(m log2 e)
  // on a row whose scores are all that fill: the rounding residual is
  // 2^(hundreds) (and past FLT_MAX / log2 e, -inf - -inf). (s - m) log2 e
  // there, exact at s = m; the bound is the f16 bias's (65504).
  if (Block *body = kb.op.getScoreModBlock()) {
    bool huge = false;
    body->walk([&](arith::ConstantOp c) {
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        huge |= std::isfinite(f.getValueAsDouble()) &&
                std::abs(f.getValueAsDouble()) > 65536.0;
    });
    if (huge)
      return false;
  }
  Value mask = memArg("mask");
  if (!mask)
    return true;
  Type elt = cast<MemRefType>(mask.getType()).getElementType();
  return elt.isF16() || elt.isInteger(1);
}

Value TileKernel::expDiff(Value x, Value ref) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  if (!natural)
    return ex2(arith::SubFOp::create(b, loc, x, ref));
  Value log2e = kb.cF32(1.4426950408889634f);
  if (fmaExponent())
    return ex2(arith::SubFOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, log2e),
        arith::MulFOp::create(b, loc, ref, log2e)));
  return ex2(arith::MulFOp::create(
      b, loc, arith::SubFOp::create(b, loc, x, ref), log2e));
}

Value TileKernel::anyRowGrew(ArrayRef<Value> tileMax, ArrayRef<Value> m,
                             int64_t threshold) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value need = arith::ConstantIntOp::create(b, loc, 0, 1);
  Value tau = kb.cF32(static_cast<float>(threshold) *
                      (natural ? 0.6931471805599453f : 1.0f));
  for (auto [t, ref] : llvm::zip_equal(tileMax, m))
    need = arith::OrIOp::create(
        b, loc, need,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, t,
                              arith::AddFOp::create(b, loc, ref, tau)));
  Value allLanes = arith::ConstantIntOp::create(b, loc, -1, 32);
  return NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), allLanes, need,
                                  NVVM::VoteSyncKind::any);
}

void TileKernel::blockBarrier() {
  if (!barrierThreads) {
    gpu::BarrierOp::create(kb.b, kb.loc);
    return;
  }
  MLIRContext *ctx = kb.b.getContext();
  LLVM::InlineAsmOp::create(
      kb.b, kb.loc, LLVM::LLVMVoidType::get(ctx), ValueRange{},
      "bar.sync 1, " + std::to_string(barrierThreads) + ";", "",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr());
}

bool TileKernel::outputStaged() {
  AffineMap outMap = mapOf("out");
  return cast<AffineDimExpr>(outMap.getResults().back()).getPosition() == r + 3;
}

void TileKernel::storeOutput(
    Value oTile, int64_t rowsPerBlock, int64_t E, Value blockRow,
    ArrayRef<Value> l, ArrayRef<Value> rows,
    llvm::function_ref<Value(int64_t)> rowLocalAt,
    llvm::function_ref<Value(int64_t, int64_t, int64_t)> oAt, ArrayRef<Value> m,
    bool mLog2, Value writer) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value outMem = memArg("out");
  Type outElt = cast<MemRefType>(outMem.getType()).getElementType();
  Value zero = kb.cF32(0.0f);
  const bool pairStores = !oTile && outputStaged();
  // 16-bit outputs with e a multiple of 32: the quad's lanes swap their
  // pairs (three xor shuffles per 32 columns) so that lane q holds the 8
  // columns of block 4k + q, stored as 16 bytes.
  const bool quadStores = pairStores && !outElt.isF32() && E % 32 == 0;
  Value quadLane = quadStores ? divu(c2, 2) : Value();
  Type i32 = b.getI32Type();
  // The quad transpose by two xor permutations (16 selects per 32 columns)
  // up to e = 128; past it by a 4-way pick per value (24): with 128 O
  // registers per thread the permutations made ptxas wait for every
  // product before the main loop's softmax in some D = 256 kernels (with
  // zeroed O too; log step 216), which `spills.py --sass` counts.
  const bool xorQuad = E <= 128;
  auto pick = [&](ArrayRef<Value> vals, Value sel) {
    Value out = vals[0];
    for (int64_t i = 1; i < static_cast<int64_t>(vals.size()); ++i)
      out = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sel, idx(i)),
          vals[i], out);
    return out;
  };
  // out[i] = vals[i ^ q] for the lane's quad position q (bits 0 and 1).
  Value qBit[2];
  if (quadStores && xorQuad)
    for (int64_t bit = 0; bit < 2; ++bit)
      qBit[bit] = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, quadLane, idx(1 << bit)), idx(0));
  auto xorPermute = [&](ArrayRef<Value> vals) {
    SmallVector<Value> out(vals);
    for (int64_t bit = 0; bit < 2; ++bit) {
      SmallVector<Value> in(out);
      for (int64_t i = 0; i < 4; ++i)
        out[i] = arith::SelectOp::create(b, loc, qBit[bit], in[i ^ (1 << bit)],
                                         in[i]);
    }
    return out;
  };
  Value vScale = kb.valueScaleValue();
  for (int64_t s = 0, e = l.size(); s < e; ++s) {
    Value sum = quadReduce(l[s], /*isMax=*/false);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
    Value inv = arith::SelectOp::create(
        b, loc, empty, zero, arith::DivFOp::create(b, loc, vScale, sum));
    // Quad stores: the transposed groups, built before the row guard (the
    // shuffles need every lane).
    SmallVector<Value> groups;
    if (quadStores) {
      auto pairType = VectorType::get({2}, outElt);
      auto one = VectorType::get({1}, i32);
      for (int64_t k = 0; k < E / 32; ++k) {
        SmallVector<Value> own;
        for (int64_t i = 0; i < 4; ++i) {
          SmallVector<Value> pair;
          for (int64_t j = 0; j < 2; ++j)
            pair.push_back(arith::TruncFOp::create(
                b, loc, outElt,
                arith::MulFOp::create(b, loc, oAt(s, 4 * k + i, j), inv)));
          own.push_back(vector::ExtractOp::create(
              b, loc,
              vector::BitCastOp::create(
                  b, loc, one,
                  vector::FromElementsOp::create(b, loc, pairType, pair)),
              ArrayRef<int64_t>{0}));
        }
        // Lane q sends own[q ^ i] to lane q ^ i, which keeps it as its
        // column pair q: own permuted by q first (send[i] = own[i ^ q]),
        // the received ones after (cols[j] = got[j ^ q]), each as two
        // conditional swaps (8 selects) rather than a 4-way pick per value.
        SmallVector<Value> cols;
        if (xorQuad) {
          SmallVector<Value> send = xorPermute(own);
          SmallVector<Value> got = {send[0]};
          for (int32_t i = 1; i < 4; ++i)
            got.push_back(gpu::ShuffleOp::create(b, loc, send[i], i, 32,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
          cols = xorPermute(got);
        } else {
          // got[i]: lane q ^ i's pair of block 4k + q.
          SmallVector<Value> got = {pick(own, quadLane)};
          for (int32_t i = 1; i < 4; ++i) {
            Value send =
                pick(own, arith::XOrIOp::create(b, loc, quadLane, idx(i)));
            got.push_back(gpu::ShuffleOp::create(b, loc, send, i, 32,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
          }
          for (int64_t lane = 0; lane < 4; ++lane)
            cols.push_back(
                pick(got, arith::XOrIOp::create(b, loc, quadLane, idx(lane))));
        }
        groups.push_back(vector::BitCastOp::create(
            b, loc, VectorType::get({8}, outElt),
            vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32),
                                           cols)));
      }
    }
    // Rows past the end are not stored (staged: they go to the tile and
    // stop there); with `writer`, only the warps it holds store.
    std::optional<OpBuilder::InsertionGuard> guard;
    Value cond = writer;
    if (!oTile) {
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            rows[s], rowEnd());
      cond = cond ? arith::AndIOp::create(b, loc, cond, inRange).getResult()
                  : inRange;
    }
    if (cond) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
      guard.emplace(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    setRow(rows[s]);
    if (Value lseMem = memArg("lse"); lseMem && !m.empty()) {
      // One lane of the quad writes the row's lse (rows past M skipped).
      Value x = kb.lse(m[s], sum, mLog2);
      Value ok = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c2, idx(0)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rows[s],
                                rowEnd()));
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      memref::StoreOp::create(b, loc, x, lseMem, indices("lse"));
    }
    for (auto [k, v] : llvm::enumerate(groups)) {
      loops[r + 3] = mul(add(quadLane, 4 * static_cast<int64_t>(k)), 8);
      vector::StoreOp::create(b, loc, v, outMem, indices("out"),
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    }
    if (quadStores)
      continue;
    Value rowLocal = rowLocalAt(s);
    for (int64_t eb = 0; eb < E / 8; ++eb) {
      SmallVector<Value> pair;
      for (int64_t j = 0; j < 2; ++j) {
        Value x = arith::MulFOp::create(b, loc, oAt(s, eb, j), inv);
        if (!outElt.isF32())
          x = arith::TruncFOp::create(b, loc, outElt, x);
        pair.push_back(x);
      }
      if (oTile) {
        Value vec = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, outElt), pair);
        vector::StoreOp::create(b, loc, vec, oTile,
                                ValueRange{rowLocal, add(c2, eb * 8)},
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(outElt.isF32() ? 8 : 4));
        continue;
      }
      // Not staged although e is the output's last dim (a persistent
      // block: the buffers already hold the next tile): one store per pair.
      if (pairStores) {
        loops[r + 3] = add(c2, eb * 8);
        vector::StoreOp::create(
            b, loc,
            vector::FromElementsOp::create(
                b, loc, VectorType::get({2}, outElt), pair),
            outMem, indices("out"), /*nontemporal=*/false,
            llvm::MaybeAlign(outElt.isF32() ? 8 : 4));
        continue;
      }
      for (int64_t j = 0; j < 2; ++j) {
        loops[r + 3] = add(c2, eb * 8 + j);
        memref::StoreOp::create(b, loc, pair[j], outMem, indices("out"));
      }
    }
  }
  if (!oTile)
    return;
  blockBarrier();
  const int64_t chunk = outElt.isF32() ? 4 : 8; // per 16-byte store
  int64_t perRow = E / chunk, chunks = rowsPerBlock * perRow;
  auto chunkType = VectorType::get({chunk}, outElt);
  for (int64_t it = 0; it * threads < chunks; ++it) {
    Value i = add(tid, it * threads);
    Value rowLocal = divu(i, perRow);
    Value col = mul(remu(i, perRow), chunk);
    Value row = add(blockRow, rowLocal);
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                              rowEnd());
    if ((it + 1) * threads > chunks)
      ok = arith::AndIOp::create(
          b, loc, ok,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                idx(chunks)));
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value v = vector::LoadOp::create(
        b, loc, chunkType, oTile, ValueRange{rowLocal, col},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    setRow(row);
    loops[r + 3] = col;
    vector::StoreOp::create(b, loc, v, outMem, indices("out"),
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}
