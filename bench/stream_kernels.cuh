// stream_kernels.cuh: the bulk-copy streaming kernel shared by
// stream_read.cu and stream_small.cu (one thread issues cp.async.bulk
// copies of TILE bytes into a STAGES-deep shared-memory ring, completing on
// mbarriers; the block's chunk of src read once).
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

template <int TILE, int STAGES>
__global__ void __launch_bounds__(32) readBulk(const char *src, const char *, size_t chunk, float *out) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) uint64_t bar[STAGES];
  const char *p = src + blockIdx.x * chunk;
  int lane = threadIdx.x;
  size_t tiles = chunk / TILE;
  if (lane == 0)
    for (int s = 0; s < STAGES; ++s) {
      unsigned b = (unsigned)__cvta_generic_to_shared(&bar[s]);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    }
  __syncwarp();
  asm volatile("fence.mbarrier_init.release.cluster;");
  auto issue = [&](size_t t) {
    if (lane != 0) return;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar[t % STAGES]);
    unsigned d = (unsigned)__cvta_generic_to_shared(smem + (t % STAGES) * TILE);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(TILE));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(d), "l"(p + t * TILE), "r"(TILE), "r"(b) : "memory");
  };
  float acc = 0;
  for (int s = 0; s < STAGES - 1 && s < tiles; ++s) issue(s);
  for (size_t t = 0; t < tiles; ++t) {
    if (t + STAGES - 1 < tiles) issue(t + STAGES - 1);
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar[t % STAGES]);
    unsigned par = (t / STAGES) & 1;
    asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}" :: "r"(b), "r"(par) : "memory");
    acc += ((const float *)(smem + (t % STAGES) * TILE))[lane];
    __syncwarp();
  }
  if (acc == 1234.5f) out[blockIdx.x] = acc;
}
