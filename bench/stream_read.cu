// stream_read.cu: how fast one warp per block streams a contiguous chunk
// through a shared-memory ring on the H100, the decode kernel's K/V access
// pattern, against a device-to-device copy in the same run (log step 106
// in docs/performance.md). Not part of any test; on the GPU machine:
//
//   nvcc -arch=sm_90a -O3 -std=c++17 bench/stream_read.cu -o /tmp/stream_read
//   /tmp/stream_read
//
// Variants: cp.async (16 bytes per thread, groups) and cp.async.bulk (one
// thread, mbarrier), tile and stage counts, 512-2048 blocks over 2 GB; and
// two streams (K and V halves) with a dependent chain of fma per tile
// standing in for the kernel's compute.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include "stream_kernels.cuh"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)




// STREAMS 1: one chunk per block; 2: its halves come from src and src2
// (K and V), TILE / 2 bytes of each per stage. DELAY dependent fma per tile.
template <int TILE, int STAGES, int DELAY, int STREAMS>
__global__ void __launch_bounds__(32) readAsync(const char *src, const char *src2, size_t chunk, float *out) {
  extern __shared__ __align__(128) char smem[];
  const char *base[2] = {src + blockIdx.x * chunk / STREAMS, src2 + blockIdx.x * chunk / STREAMS};
  int lane = threadIdx.x;
  size_t tiles = chunk / TILE;
  float acc = 0;
  auto issue = [&](size_t t) {
    char *dst = smem + (t % STAGES) * TILE;
    for (int k = 0; k < STREAMS; ++k)
      for (int i = lane * 16; i < TILE / STREAMS; i += 32 * 16) {
        unsigned s = (unsigned)__cvta_generic_to_shared(dst + k * TILE / STREAMS + i);
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" :: "r"(s), "l"(base[k] + t * TILE / STREAMS + i));
      }
    asm volatile("cp.async.commit_group;");
  };
  for (int s = 0; s < STAGES - 1; ++s) if (s < tiles) issue(s); else asm volatile("cp.async.commit_group;");
  for (size_t t = 0; t < tiles; ++t) {
    if (t + STAGES - 1 < tiles) issue(t + STAGES - 1); else asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 1));
    __syncwarp();
    float x = ((const float *)(smem + (t % STAGES) * TILE))[lane];
    for (int d = 0; d < DELAY; ++d) x = x * 0.999f + 0.5f;  // dependent chain: ~4 cycles each
    acc += x;
    __syncwarp();
  }
  if (acc == 1234.5f) out[blockIdx.x] = acc;
}

template <typename K>
float timeIt(K k, int blocks, int smem, const char *src, const char *src2, size_t chunk, float *out) {
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  k<<<blocks, 32, smem>>>(src, src2, chunk, out);
  float best = 1e9;
  for (int r = 0; r < 7; ++r) {
    cudaEventRecord(a); k<<<blocks, 32, smem>>>(src, src2, chunk, out); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  return best;
}

int main() {
  size_t total = size_t(2) << 30;
  char *src, *dst; float *out;
  CK(cudaMalloc(&src, total)); CK(cudaMalloc(&dst, total)); CK(cudaMalloc(&out, 4096 * 4));
  CK(cudaMemset(src, 1, total));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float best = 1e9;
  for (int r = 0; r < 5; ++r) { cudaEventRecord(a); cudaMemcpy(dst, src, total, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
  printf("copy          %.1f GB/s (read+write)\n", 2 * total / best / 1e6);
  {
    size_t chunk = total / 512;
    printf("two streams (K, V halves), 512 blocks, 16 KB stages\n");
    printf("  x2 delay 0     %.1f GB/s\n", total / timeIt(readAsync<16384, 2, 0, 2>, 512, 32768, src, src + total / 2, chunk, out) / 1e6);
    printf("  x2 delay 250   %.1f GB/s\n", total / timeIt(readAsync<16384, 2, 250, 2>, 512, 32768, src, src + total / 2, chunk, out) / 1e6);
    printf("  x2 delay 500   %.1f GB/s\n", total / timeIt(readAsync<16384, 2, 500, 2>, 512, 32768, src, src + total / 2, chunk, out) / 1e6);
    printf("  x2 delay 1000  %.1f GB/s\n", total / timeIt(readAsync<16384, 2, 1000, 2>, 512, 32768, src, src + total / 2, chunk, out) / 1e6);
    printf("  x3 delay 500   %.1f GB/s\n", total / timeIt(readAsync<16384, 3, 500, 2>, 512, 49152, src, src + total / 2, chunk, out) / 1e6);
    printf("  x3 delay 1000  %.1f GB/s\n", total / timeIt(readAsync<16384, 3, 1000, 2>, 512, 49152, src, src + total / 2, chunk, out) / 1e6);
  }
  for (int blocks : {512, 1024, 2048}) {
    size_t chunk = total / blocks;
    printf("blocks %d\n", blocks);
    printf("  cp.async 16KB x2  %.1f GB/s\n", total / timeIt(readAsync<16384, 2, 0, 1>, blocks, 32768, src, src, chunk, out) / 1e6);
    printf("  cp.async 16KB x3  %.1f GB/s\n", total / timeIt(readAsync<16384, 3, 0, 1>, blocks, 49152, src, src, chunk, out) / 1e6);
    printf("  cp.async 8KB x4   %.1f GB/s\n", total / timeIt(readAsync<8192, 4, 0, 1>, blocks, 32768, src, src, chunk, out) / 1e6);
    printf("  bulk 16KB x2      %.1f GB/s\n", total / timeIt(readBulk<16384, 2>, blocks, 32768, src, src, chunk, out) / 1e6);
    printf("  bulk 16KB x3      %.1f GB/s\n", total / timeIt(readBulk<16384, 3>, blocks, 49152, src, src, chunk, out) / 1e6);
    printf("  bulk 8KB x4       %.1f GB/s\n", total / timeIt(readBulk<8192, 4>, blocks, 32768, src, src, chunk, out) / 1e6);
    printf("  bulk 32KB x3      %.1f GB/s\n", total / timeIt(readBulk<32768, 3>, blocks, 98304, src, src, chunk, out) / 1e6);
  }
  CK(cudaGetLastError());
  return 0;
}
