"""Pieces the GPU scripts share (bench/bench_attention.py,
test/Integration/GPU/run_gpu_checks.py): a watchdog for launches that hang
and a check that the CUDA context still works. torch is passed in, never
imported here."""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional


class Watchdog:
    """Calls `on_expire` (from a daemon thread) unless the `with` block ends
    within `seconds`; 0 or less disables it."""

    def __init__(self, seconds: float, on_expire: Callable[[], None]) -> None:
        self.seconds = seconds
        self.on_expire = on_expire
        self.timer: Optional[threading.Timer] = None

    def __enter__(self) -> "Watchdog":
        if self.seconds > 0:
            self.timer = threading.Timer(self.seconds, self.on_expire)
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.timer:
            self.timer.cancel()


def cuda_healthy(torch: Any) -> bool:
    """False once a kernel has broken the CUDA context (illegal address...)."""
    try:
        x = torch.ones(4, device="cuda")
        return float((x + 1).sum().item()) == 8.0
    except Exception:
        return False
