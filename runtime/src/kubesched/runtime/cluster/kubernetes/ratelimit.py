"""The client-side token bucket of ``clientConnection.qps``/``burst`` (client-go's flowcontrol)."""

from __future__ import annotations

import threading
import time

__all__ = ["RateLimiter"]


class RateLimiter:
    """Token bucket (client-go's flowcontrol): ``qps`` tokens per second, up to ``burst``."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Take a token, waiting for it if there is none: as ``rate.Limiter.Wait``, the token
        is reserved at once (the bucket may go below zero) and the caller sleeps exactly until
        its turn, so waiting threads never poll."""
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps) - 1
            self._last = now
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)
