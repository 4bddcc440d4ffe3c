// Varlen: an attention whose mask is attn.varlen_mask (with the -inf fill)
// takes the int32 tables cu_seqlens_q/_k as kernel arguments instead of a
// mask tensor; each block finds its sequence (the tile slots
// cu_q[s] / tile_q + s at most blockIdx.x, counted by a warp vote; past 256
// sequences a binary search), reads Q/K/V at the sequence's offsets
// and ends rows and keys at its lengths. The grid has floor(T / tile_q) + S
// query blocks. Look-alikes stay masks or are refused with a reason.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_80" -verify-diagnostics | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1" -verify-diagnostics | FileCheck %s --check-prefix=WSV
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1 pipeline=1 persistent=1" -verify-diagnostics | FileCheck %s --check-prefix=PERS

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: map = "cu_seqlens_q", name = "cu_seqlens_q", shape = array<i64: 5>
// CHECK-SAME: map = "cu_seqlens_k", name = "cu_seqlens_k", shape = array<i64: 5>
// CHECK-NOT: name = "mask"
// CHECK-SAME: grid = array<i64: 11, 8, 1>
// CHECK-SAME: kernel_choice = "wgmma (sm_90a)
// CHECK-SAME: varlen: 4 packed sequences
// CHECK-SAME: grid = "[floor(m / tile_q) + seqs, b0 / g, splits]"
// CHECK-SAME: varlen = {bottom_right = true, causal = true, seqs = 4 : i64}
// CHECK: func.func @attn_fwd(
// The slots counted by one vote for S = 4 (one load per lane).
// CHECK: gpu.launch
// CHECK: arith.cmpi ule
// CHECK: vote.sync.ballot.b32
// CHECK-NOT: vote.sync.ballot
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// Slots past the sequence's tiles skip the body.
// CHECK: %[[LIVE:.*]] = arith.cmpi ugt
// CHECK-NEXT: scf.if %[[LIVE]] {

// TMA boxes start at the sequence's packed rows.
// WSV-LABEL: attn.bundle = {
// WSV-SAME: Q/K/V by TMA
// WSV-SAME: varlen: 4 packed sequences

// Persistent blocks take the tile slots of every head from a counter; an
// empty slot runs an empty key loop. The producer takes them by levels:
// under causal up to 128 sequences exactly (every sequence's tile count in
// a lane: the most and the sum by redux; blocks past the last tile counted
// out before the loop, since the counters' reset needs every block; per
// tile a binary search over the levels of warp sums, then ballots for the
// sequence; no vote over the slots).
// PERS-LABEL: attn.bundle = {
// PERS-SAME: name = "tile_counter"
// PERS-SAME: grid = array<i64: 88, 1, 1>
// PERS-SAME: persistent: 88 blocks take the 88 query tiles from a counter
// PERS-SAME: varlen: 4 packed sequences (tiles by levels, every sequence's last first, where the lengths give no more tiles than slots)
// PERS-SAME: grid = "[min((floor(m / tile_q) + seqs) * b0, persistent), 1, 1]"
// PERS-SAME: persistent = 88 : i64
// PERS: redux.sync.max.u32
// PERS: redux.sync.add.u32
// PERS: memref.atomic_rmw addi %{{.*}}, %{{.*}}[%{{.*}}] : (i32, memref<2xi32>)
// PERS: scf.while
// PERS: scf.while
// PERS: redux.sync.add.u32
// PERS: %lanemask_lt
// PERS: vote.sync.ballot.b32 $0
// PERS: bfind.u32
// PERS-NOT: popc.b32 $0, v;

// SM80-LABEL: attn.bundle = {
// SM80-SAME: grid = array<i64: 11, 8, 1>
// SM80-SAME: kernel_choice = "mma.sync m16n8k16, 4 warps x 2 x 16 query rows
// SM80-SAME: varlen: 4 packed sequences
func.func @varlen(%q: tensor<1000x8x128xf16>, %k: tensor<1020x8x128xf16>, %v: tensor<1020x8x128xf16>, %cq: tensor<5xi32>, %ck: tensor<5xi32>, %o: tensor<1000x8x128xf16>) -> tensor<1000x8x128xf16> {
  %s = arith.constant 0.088 : f32
  %m = attn.varlen_mask %cq, %ck causal bottom_right : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1020xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<1000x8x128xf16>, tensor<1020x8x128xf16>, tensor<1020x8x128xf16>) scale(%s)
      mask(%m : tensor<1000x1020xi1>)
      outs(%o : tensor<1000x8x128xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<1000x8x128xf16>
  return %r : tensor<1000x8x128xf16>
}

// -----

// Sequences of 256 tokens on average past D = 96: persistent blocks by
// default (the empty slots run inside a block's loop, causal tiles by
// levels); at D = 64 the two-block kernel stays.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: persistent: 132 blocks take the 3072 query tiles from a counter
// CHECK-SAME: varlen: 64 packed sequences (tiles by levels
// SM80-LABEL: attn.bundle = {
// PERS-LABEL: attn.bundle = {
func.func @varlen_256(%q: tensor<16384x16x128xf16>, %k: tensor<16384x16x128xf16>, %v: tensor<16384x16x128xf16>, %cu: tensor<65xi32>, %o: tensor<16384x16x128xf16>) -> tensor<16384x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %m = attn.varlen_mask %cu, %cu causal : tensor<65xi32>, tensor<65xi32> -> tensor<16384x16384xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<16384x16x128xf16>, tensor<16384x16x128xf16>, tensor<16384x16x128xf16>) scale(%s)
      mask(%m : tensor<16384x16384xi1>)
      outs(%o : tensor<16384x16x128xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<16384x16x128xf16>
  return %r : tensor<16384x16x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle = {
// CHECK-NOT: persistent:
// CHECK-SAME: 2 block(s) per multiprocessor, varlen: 64 packed sequences"
// SM80-LABEL: attn.bundle = {
// PERS-LABEL: attn.bundle = {
// PERS-SAME: varlen: 64 packed sequences (tiles by levels
func.func @varlen_256_d64(%q: tensor<16384x16x64xf16>, %k: tensor<16384x16x64xf16>, %v: tensor<16384x16x64xf16>, %cu: tensor<65xi32>, %o: tensor<16384x16x64xf16>) -> tensor<16384x16x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cu, %cu causal : tensor<65xi32>, tensor<65xi32> -> tensor<16384x16384xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<16384x16x64xf16>, tensor<16384x16x64xf16>, tensor<16384x16x64xf16>) scale(%s)
      mask(%m : tensor<16384x16384xi1>)
      outs(%o : tensor<16384x16x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<16384x16x64xf16>
  return %r : tensor<16384x16x64xf16>
}

// -----

// 300 sequences: past 256, the binary search (nine steps); 70 sequences:
// three votes (lanes read 3 x 32 slots).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: varlen: 300 packed sequences
// CHECK: gpu.launch
// CHECK-NOT: vote.sync
// CHECK-COUNT-9: arith.cmpi ule
// CHECK: arith.cmpi sge
// SM80-LABEL: attn.bundle = {
// Persistent, past 256 sequences: slots, no levels.
// PERS-LABEL: attn.bundle = {
// PERS-SAME: varlen: 300 packed sequences"
func.func @varlen_many(%q: tensor<4000x2x64xf16>, %k: tensor<4000x2x64xf16>, %v: tensor<4000x2x64xf16>, %cq: tensor<301xi32>, %ck: tensor<301xi32>, %o: tensor<4000x2x64xf16>) -> tensor<4000x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cq, %ck causal : tensor<301xi32>, tensor<301xi32> -> tensor<4000x4000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4000x2x64xf16>, tensor<4000x2x64xf16>, tensor<4000x2x64xf16>) scale(%s)
      mask(%m : tensor<4000x4000xi1>)
      outs(%o : tensor<4000x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<4000x2x64xf16>
  return %r : tensor<4000x2x64xf16>
}

// -----

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: varlen: 70 packed sequences
// CHECK: gpu.launch
// CHECK-COUNT-3: vote.sync.ballot.b32
// CHECK-NOT: vote.sync
// CHECK: arith.cmpi sge
// SM80-LABEL: attn.bundle = {
// 70 sequences: exact levels over three lanes' chunks.
// PERS-LABEL: attn.bundle = {
// PERS-SAME: varlen: 70 packed sequences (tiles by levels
// PERS: redux.sync.max.u32
// PERS: bfind.u32
// PERS-NOT: popc.b32 $0, v;
func.func @varlen_70(%q: tensor<4000x2x64xf16>, %k: tensor<4000x2x64xf16>, %v: tensor<4000x2x64xf16>, %cq: tensor<71xi32>, %ck: tensor<71xi32>, %o: tensor<4000x2x64xf16>) -> tensor<4000x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cq, %ck causal : tensor<71xi32>, tensor<71xi32> -> tensor<4000x4000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4000x2x64xf16>, tensor<4000x2x64xf16>, tensor<4000x2x64xf16>) scale(%s)
      mask(%m : tensor<4000x4000xi1>)
      outs(%o : tensor<4000x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<4000x2x64xf16>
  return %r : tensor<4000x2x64xf16>
}

// -----

// 200 sequences: the tmax levels where they apply (a uniform branch per
// tile), else exact over seven lanes' chunks.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: varlen: 200 packed sequences
// SM80-LABEL: attn.bundle = {
// PERS-LABEL: attn.bundle = {
// PERS-SAME: varlen: 200 packed sequences (tiles by levels
// PERS: redux.sync.max.u32
// PERS: redux.sync.add.u32
// PERS: scf.while
// PERS: %{{.*}}:3 = scf.if %{{.*}} -> (index, index, index) {
// PERS: } else {
// PERS: scf.while
// PERS: bfind.u32
func.func @varlen_200(%q: tensor<4000x2x64xf16>, %k: tensor<4000x2x64xf16>, %v: tensor<4000x2x64xf16>, %cq: tensor<201xi32>, %ck: tensor<201xi32>, %o: tensor<4000x2x64xf16>) -> tensor<4000x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cq, %ck causal : tensor<201xi32>, tensor<201xi32> -> tensor<4000x4000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4000x2x64xf16>, tensor<4000x2x64xf16>, tensor<4000x2x64xf16>) scale(%s)
      mask(%m : tensor<4000x4000xi1>)
      outs(%o : tensor<4000x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<4000x2x64xf16>
  return %r : tensor<4000x2x64xf16>
}

// -----

// A finite fill: keys of other sequences would score the fill, so the
// mask stays a mask tensor (a constant-free program: it is computed).
// CHECK-LABEL: attn.bundle = {
// CHECK-NOT: cu_seqlens
// CHECK-SAME: name = "mask"
// SM80-LABEL: attn.bundle = {
// PERS-LABEL: attn.bundle = {
// PERS-NOT: cu_seqlens
func.func @finite_fill(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %m: tensor<256x256xi1>, %o: tensor<256x2x64xf16>) -> tensor<256x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf16>) mask_value = -1.0e4 indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<256x2x64xf16>
  return %r : tensor<256x2x64xf16>
}

// -----

func.func @with_causal(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %cu: tensor<3xi32>, %o: tensor<256x2x64xf16>) -> tensor<256x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cu, %cu : tensor<3xi32>, tensor<3xi32> -> tensor<256x256xi1>
  // expected-error @below {{varlen (attn.varlen_mask): the GPU kernels take the causal rule from the varlen mask; they cannot combine it with the attention's causal, window or query_offset}}
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf16>) causal indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<256x2x64xf16>
  return %r : tensor<256x2x64xf16>
}

// -----

// A fixed packing: the constant tables travel in the bundle with their
// data (one file per table).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: {dtype = "int32", map = "cu_seqlens_q", name = "cu_seqlens_q", shape = array<i64: 3>, value = dense<[0, 100, 256]> : tensor<3xi32>}
// CHECK-SAME: {dtype = "int32", map = "cu_seqlens_k", name = "cu_seqlens_k", shape = array<i64: 3>, value = dense<[0, 100, 256]> : tensor<3xi32>}
// SM80-LABEL: attn.bundle = {
// SM80-SAME: name = "cu_seqlens_q", shape = array<i64: 3>, value = dense<[0, 100, 256]>
// WSV-LABEL: attn.bundle = {
// Without causal too (the levels leave no empty slot for equal lengths):
// levels where the tables give no more tiles than slots (the most tiles a
// sequence has), else the slots' vote.
// PERS-LABEL: attn.bundle = {
// PERS-SAME: varlen: 2 packed sequences (tiles by levels
// PERS: redux.sync.max.u32
// PERS-NOT: bfind.u32
// PERS: :6 = scf.if %{{.*}} -> (index, index, index, index, index, index)
// PERS: } else {
// PERS: popc.b32 $0, v;
func.func @constant_tables(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %o: tensor<256x2x64xf16>) -> tensor<256x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %cu = arith.constant dense<[0, 100, 256]> : tensor<3xi32>
  %m = attn.varlen_mask %cu, %cu : tensor<3xi32>, tensor<3xi32> -> tensor<256x256xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<256x2x64xf16>
  return %r : tensor<256x2x64xf16>
}

// -----

// f16 inputs into an f32 output: no tensor-core kernel takes it.
func.func @mixed(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %cu: tensor<3xi32>, %o: tensor<256x2x64xf32>) -> tensor<256x2x64xf32> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cu, %cu : tensor<3xi32>, tensor<3xi32> -> tensor<256x256xi1>
  // expected-error @below {{varlen (attn.varlen_mask): the GPU kernels run packed sequences on tensor cores only, which cannot take this attention}}
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf32>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<256x2x64xf32>
  return %r : tensor<256x2x64xf32>
}

// -----

// A score_mod region (soft-capping) on packed sequences.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "cu_seqlens_q"
// CHECK-SAME: score_mod = {num_args = 4
// CHECK-SAME: varlen = {bottom_right = false, causal = true, seqs = 2 : i64}
// CHECK: tanh.approx.f32
// SM80-LABEL: attn.bundle = {
// SM80-SAME: score_mod = {num_args = 4
func.func @softcap(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %cu: tensor<3xi32>, %o: tensor<256x2x64xf16>) -> tensor<256x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cu, %cu causal : tensor<3xi32>, tensor<3xi32> -> tensor<256x256xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] score_mod {
      ^bb0(%x: f32, %h: index, %qi: index, %ki: index):
        %c = arith.constant 30.0 : f32
        %y = arith.divf %x, %c : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %c : f32
        attn.yield %z : f32
      } -> tensor<256x2x64xf16>
  return %r : tensor<256x2x64xf16>
}

// -----

// ALiBi reads n - m: the kernels count rows and keys within the sequence
// and add its offsets (cu_q[s], cu_k[s]) for the region, which sees the
// op's packed positions.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: function = "alibi"
// CHECK-SAME: score_mod = {num_args = 4
// SM80-LABEL: attn.bundle = {
// SM80-SAME: function = "alibi"
func.func @alibi(%q: tensor<256x2x64xf16>, %k: tensor<256x2x64xf16>, %v: tensor<256x2x64xf16>, %cu: tensor<3xi32>, %o: tensor<256x2x64xf16>) -> tensor<256x2x64xf16> {
  %s = arith.constant 0.125 : f32
  %m = attn.varlen_mask %cu, %cu : tensor<3xi32>, tensor<3xi32> -> tensor<256x256xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<256x2x64xf16>, tensor<256x2x64xf16>, tensor<256x2x64xf16>) scale(%s)
      mask(%m : tensor<256x256xi1>)
      outs(%o : tensor<256x2x64xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] score_mod {
      ^bb0(%x: f32, %h: index, %qi: index, %ki: index):
        %d = arith.subi %ki, %qi : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %c = arith.constant -0.5 : f32
        %b = arith.mulf %c, %df : f32
        %y = arith.addf %x, %b : f32
        attn.yield %y : f32
      } -> tensor<256x2x64xf16>
  return %r : tensor<256x2x64xf16>
}
