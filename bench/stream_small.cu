// stream_small.cu: how fast blocks stream a decode-sized K/V (32 and 128
// MiB, the M = 16, B = 1, 8 kv head rows at N = 8192 and 32768) through a
// shared-memory ring, by block count, threads, stages and copy mechanism,
// against a device-to-device copy of the same bytes (read + write counted,
// as bench_decode.py's copy figure), L2 flushed before each launch: the
// bound a decode kernel of those rows could reach (docs/performance.md,
// "Session 39"). Not part of any test; on the GPU machine:
//
//   nvcc -arch=sm_90a -O3 -std=c++17 bench/stream_small.cu -o /tmp/ss
//   /tmp/ss [MiB ...]   (default: 32 128)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstdint>
#include <cuda_runtime.h>
#include "stream_kernels.cuh"
template <int THREADS, int TILE, int STAGES>
__global__ void __launch_bounds__(THREADS) readAsync(const char *src, const char *, size_t chunk, float *out) {
  extern __shared__ __align__(128) char smem[];
  const char *base = src + blockIdx.x * chunk;
  int tid = threadIdx.x;
  size_t tiles = chunk / TILE;
  float acc = 0;
  auto issue = [&](size_t t) {
    char *dst = smem + (t % STAGES) * TILE;
    for (int i = tid * 16; i < TILE; i += THREADS * 16) {
      unsigned s = (unsigned)__cvta_generic_to_shared(dst + i);
      asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" :: "r"(s), "l"(base + t * TILE + i));
    }
    asm volatile("cp.async.commit_group;");
  };
  for (int s = 0; s < STAGES - 1; ++s) if (s < tiles) issue(s); else asm volatile("cp.async.commit_group;");
  for (size_t t = 0; t < tiles; ++t) {
    if (t + STAGES - 1 < tiles) issue(t + STAGES - 1); else asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 1));
    __syncthreads();
    acc += ((const float *)(smem + (t % STAGES) * TILE))[tid];
    __syncthreads();
  }
  if (acc == 1234.5f) out[blockIdx.x] = acc;
}
static char *flushBuf;
template <typename K>
float timeIt(K k, int blocks, int threads, int smem, const char *src, size_t total, float *out) {
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  size_t chunk = total / blocks;
  k<<<blocks, threads, smem>>>(src, src, chunk, out);
  float best = 1e9;
  for (int r = 0; r < 15; ++r) {
    cudaMemset(flushBuf, r, 256 << 20);
    cudaEventRecord(a); k<<<blocks, threads, smem>>>(src, src, chunk, out); cudaEventRecord(b);
    cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  return best;
}
int main(int argc, char **argv) {
  cudaMalloc(&flushBuf, 256 << 20);
  float *out; cudaMalloc(&out, 1 << 20);
  // Sizes in MiB from the command line (default: 32 and 128).
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(size_t(atoll(argv[i])) << 20);
  if (sizes.empty())
    sizes = {size_t(32) << 20, size_t(128) << 20};
  for (size_t total : sizes) {
    char *src, *dst; cudaMalloc(&src, total); cudaMalloc(&dst, total); cudaMemset(src, 1, total);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float best = 1e9;
    for (int r = 0; r < 15; ++r) { cudaMemset(flushBuf, r, 256 << 20); cudaEventRecord(a); cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
    double copy = 2.0 * total / best / 1e6;
    printf("== %zu MB: copy %.0f GB/s (%.1f us)\n", total >> 20, copy, best * 1e3);
    auto row = [&](const char *name, float ms) { double g = total / ms / 1e6; printf("  %-34s %7.1f us %6.0f GB/s %5.1f%% of copy\n", name, ms * 1e3, g, 100 * g / copy); };
    for (int blocks : {128, 256, 512}) {
      if (total / blocks < 2 * 32768) // two 32 KB tiles per block at least
        continue;
      char nm[64];
      snprintf(nm, 64, "async 256t 32KBx3 %d blk", blocks); row(nm, timeIt(readAsync<256, 32768, 3>, blocks, 256, 98304, src, total, out));
      snprintf(nm, 64, "async 256t 32KBx4 %d blk", blocks); row(nm, timeIt(readAsync<256, 32768, 4>, blocks, 256, 131072, src, total, out));
      snprintf(nm, 64, "async 256t 32KBx6 %d blk", blocks); row(nm, timeIt(readAsync<256, 32768, 6>, blocks, 256, 196608, src, total, out));
      snprintf(nm, 64, "async 64t 32KBx3 %d blk", blocks); row(nm, timeIt(readAsync<64, 32768, 3>, blocks, 64, 98304, src, total, out));
      snprintf(nm, 64, "bulk 32KBx3 %d blk", blocks); row(nm, timeIt(readBulk<32768, 3>, blocks, 32, 98304, src, total, out));
      snprintf(nm, 64, "bulk 32KBx6 %d blk", blocks); row(nm, timeIt(readBulk<32768, 6>, blocks, 32, 196608, src, total, out));
    }
    cudaFree(src); cudaFree(dst);
  }
  cudaError_t e = cudaGetLastError(); printf("%s\n", cudaGetErrorString(e));
  return 0;
}
