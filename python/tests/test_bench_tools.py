"""The benchmark tools' pure-Python parts (no GPU): the parser of
bench/locked_clocks.py over an ncu report as ncu prints it, and
bench/ab_bundles.py's shape rows."""
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import ab_bundles  # noqa: E402
import locked_clocks  # noqa: E402


def result(name: str, value: str, unit: str, ghz: str = "1.35") -> str:
    return f"""  {name} (132, 1, 1)x(384, 1, 1), Context 1, Stream 7, Device 0, CC 9.0

    NVTX Push/Pop Stack for Thread 721:
      <default domain>
        <0,m>
    Section: Command line profiler metrics
    --------------------------------- ----------- ------------
    Metric Name                       Metric Unit Metric Value
    --------------------------------- ----------- ------------
    gpu__time_duration.sum                     {unit}       {value}
    sm__cycles_elapsed.avg.per_second         Ghz         {ghz}
    --------------------------------- ----------- ------------
"""


CUDNN = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_kernel0_0"


def report(*results: str) -> str:
    head = """==PROF== Connected to process 721 (/usr/bin/python3.12)
==PROF== Profiling "attn_fwd_kernel" - 0: 0%....50%....100% - 1 pass
==PROF== Profiling "cudnn_generated_fort_native_s..." - 1: 0%....50%....100% - 1 pass
BUNDLE float16_d128_n1024_b16_h16_causal
==PROF== Profiling "attn_fwd_kernel" - 2: 0%....50%....100% - 1 pass
==PROF== Profiling "cudnn_generated_fort_native_s..." - 3: 0%....50%....100% - 1 pass
BUNDLE float16_d128_n131072_b1_h1_full
==PROF== Disconnected from process 721
[721] python3.12@127.0.0.1
"""
    return head + "\n".join(results)


def test_locked_clocks_parses_units_and_order():
    rows = locked_clocks.parse(report(
        result("attn_fwd_kernel", "176.16", "us"),
        result(CUDNN, "191.74", "us", "1.39"),
        result("attn_fwd_kernel", "14.18", "ms"),
        result(CUDNN, "14,460.00", "us")))
    assert [r[0] for r in rows] == ["float16_d128_n1024_b16_h16_causal",
                                    "float16_d128_n131072_b1_h1_full"]
    assert rows[0][1:] == pytest.approx((176.16, 191.74, 1.35, 1.39))
    assert rows[1][1] == pytest.approx(14180.0)
    assert rows[1][2] == pytest.approx(14460.0)


def test_locked_clocks_pairs_two_of_ours():
    rows = locked_clocks.parse(report(
        result("attn_fwd_kernel", "205.4", "us"), result("attn_fwd_kernel", "172.3", "us"),
        result("attn_fwd_kernel", "2.22", "ms"), result("attn_fwd_kernel", "1.80", "ms")),
        pair=True)
    assert rows[0][1:3] == pytest.approx((205.4, 172.3))
    assert rows[1][1:3] == pytest.approx((2220.0, 1800.0))


def test_locked_clocks_refuses_the_wrong_kernels():
    # A peer in the place of ours (a launch missing from the range) is an
    # error, not a silently shifted table.
    with pytest.raises(SystemExit):
        locked_clocks.parse(report(
            result(CUDNN, "191.74", "us"), result("attn_fwd_kernel", "176.16", "us"),
            result("attn_fwd_kernel", "14.18", "ms"), result(CUDNN, "14.46", "ms")))


def test_ab_bundles_shapes_take_dtypes():
    rows = ab_bundles.shape_configs("128:4096:full,64:1024:causal:8", "float8_e4m3fn")
    assert rows == [("float8_e4m3fn", 128, 4096, 4, 16, False),
                    ("float8_e4m3fn", 64, 1024, 16, 8, True)]
    assert [r[0] for r in ab_bundles.shape_configs("128:512:causal")] == ["float16", "bfloat16"]
