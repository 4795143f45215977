"""The scheduler's clocks: wall time on a real cluster, virtual time on the simulated one."""

from __future__ import annotations

import time

__all__ = ["RealClock", "SimClock"]


class RealClock:
    def now(self) -> float:
        return time.time()


class SimClock:
    """Virtual time for the simulated cluster: it only moves when the scheduler is idle."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        if t > self._now:
            self._now = t
