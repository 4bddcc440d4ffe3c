#!/usr/bin/env bash
# FlashInfer as a decode peer (bench/bench_decode.py), for a GPU machine
# that cannot fetch packages:
#
#   bash bench/flashinfer.sh fetch     # here: its source distribution (3.8 MB)
#                                      # into bench/flashinfer/ (git-ignored)
#   bash bench/flashinfer.sh install   # there (carry bench/flashinfer): pip
#                                      # installs it without the network
#
# 0.3.1 is the newest release whose dependencies the device image already
# has (torch, numpy, ninja, requests, einops, click, tqdm, tabulate,
# packaging, nvidia-ml-py; cuDNN's frontend is optional); later ones need
# apache-tvm-ffi, cutlass-dsl and more. Its kernels are compiled by the
# device's nvcc on first use (about 20 s for the decode module).
set -euo pipefail
cd "$(dirname "$0")"
VERSION=0.3.1
case "${1:-}" in
  fetch)
    python3 -m pip download --no-deps "flashinfer-python==$VERSION" -d flashinfer ;;
  install)
    python3 -m pip install --no-index --no-deps --no-build-isolation \
        "flashinfer/flashinfer_python-$VERSION.tar.gz" ;;
  *)
    echo "usage: $0 fetch|install" >&2; exit 2 ;;
esac
