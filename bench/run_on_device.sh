#!/usr/bin/env bash
# Everything attn-opt does on the lent GPU machine, in one command (installs
# nothing; uses the image's python3 with torch, triton, matplotlib):
#
#   bash bench/run_on_device.sh [BENCH ARGS]     # results in $OUT (else bench/results)
#
# BENCH ARGS go to bench/bench_attention.py: --quick (16 configs), or e.g.
# --only float16_ to split the full set (56 configs) over two calls.
# SKIP_CHECKS=1 skips step 2. ROUNDS (default 3): the kernels of a config are
# timed in that many rounds, reported by the median; within a round each runs
# a whole phase, the order rotating per round, or with INTERLEAVE=1 they take
# turns launch by launch (--interleave; log step 165 compares the two).
# LOCKED=1 adds step 4: the bundles against cuDNN at ncu's locked clocks.
#
# 1. env.txt: GPU, driver, clocks, torch/triton/cuDNN versions.
# 2. GPU correctness (test/Integration/GPU/run_gpu_checks.py) of the bundles
#    in $CHECK_BUNDLES (default: test/Integration/GPU/bundles if it exists,
#    else the N=512 bundles of bench/bundles): gpu_checks.csv, gpu_checks.log.
# 3. The benchmark (bench/bench_attention.py) over bench/bundles:
#    bench.csv, bench.png, bench.log.
# The whole run keeps inside $BUDGET seconds (default 570; the device's
# per-command limit is 600): the benchmark starts no config after its
# deadline and is cut off (then reported from its CSV) if it runs over.
# Exit status: non-zero when a GPU check or an attn-opt bundle in the
# benchmark failed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench/results}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
BUDGET=${BUDGET:-570}
start=$SECONDS
left() { echo $((BUDGET - (SECONDS - start))); }

{
  echo "== $(date -u +%FT%TZ) $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv 2>&1
  python3 - <<'EOF' 2>&1
import torch, triton
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("triton", triton.__version__)
p = torch.cuda.get_device_properties(0)
print(p.name, "SMs", p.multi_processor_count, "mem GiB", round(p.total_memory / 2**30, 1))
EOF
  command -v nvcc >/dev/null && nvcc --version | tail -1
} | tee "$OUT/env.txt"

# --- 2. correctness --------------------------------------------------------
check_rc=0
checks=()
if [[ -n "${SKIP_CHECKS:-}" ]]; then
  :
elif [[ -n "${CHECK_BUNDLES:-}" ]]; then
  read -r -a checks <<<"$CHECK_BUNDLES"
elif [[ -d test/Integration/GPU/bundles ]]; then
  checks=(test/Integration/GPU/bundles)
else
  mapfile -t checks < <(find bench/bundles -maxdepth 1 -type d -name '*_n512_*' 2>/dev/null | sort)
fi
if ((${#checks[@]})); then
  echo "== GPU checks: ${checks[*]}"
  timeout $(( $(left) / 3 )) python3 test/Integration/GPU/run_gpu_checks.py "${checks[@]}" \
      --csv "$OUT/gpu_checks.csv" --timeout 60 2>&1 | tee "$OUT/gpu_checks.log"
  check_rc=${PIPESTATUS[0]}
  [[ $check_rc == 124 ]] && echo "GPU checks cut off at their time limit"
else
  echo "== GPU checks: no bundles to check"
fi

# --- 3. benchmark -------------------------------------------------------------
echo "== benchmark ($(left) s left)"
bench_left=$(( $(left) - 15 ))
deadline=$(( bench_left - 150 ))
(( deadline < 30 )) && deadline=30
timeout "$bench_left" python3 bench/bench_attention.py --bundles bench/bundles --out "$OUT" --rounds "${ROUNDS:-3}" \
    $([[ ${INTERLEAVE:-0} == 1 ]] && echo --interleave) --deadline "$deadline" --kernel-timeout 120 "$@" 2>&1 | tee "$OUT/bench.log"
bench_rc=${PIPESTATUS[0]}
if [[ $bench_rc == 124 ]]; then
  echo "benchmark cut off at its time limit; reporting what it measured"
  python3 bench/bench_attention.py --report-only --out "$OUT" 2>&1 | tee -a "$OUT/bench.log"
fi
# --- 4. optional: speed per clock --------------------------------------------
# LOCKED=1: attn-opt against cuDNN once more at ncu's locked clocks
# (bench/locked_clocks.py; about 25 s for the 56 bundles): locked.csv.
if [[ ${LOCKED:-0} == 1 ]] && command -v ncu >/dev/null; then
  echo "== locked clocks ($(left) s left)"
  timeout $(( $(left) > 30 ? $(left) - 10 : 20 )) python3 bench/locked_clocks.py \
      --bundles bench/bundles --out "$OUT" 2>&1 | tail -3 | tee -a "$OUT/bench.log"
fi
echo "== done in $((SECONDS - start)) s: checks rc=$check_rc, bench rc=$bench_rc; files in $OUT"
ls -la "$OUT"
(( check_rc == 0 && (bench_rc == 0 || bench_rc == 124) ))
