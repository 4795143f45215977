"""The one retry loop of the client: jittered exponential backoff (client-go's ``wait.Backoff``).

Every loop that tries an API call again uses :func:`retry` with its own :class:`Backoff`: the
informers' list/watch, binding, the read-back after a bind conflict, the status/event writers and
leader election. What differs between them is a parameter: which errors are worth another try,
how many tries or until when, and how to wait (``time.sleep``, or ``Event.wait`` so that a stop
ends the wait and the retries).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from .errors import retryable

__all__ = ["Backoff", "retry"]

T = TypeVar("T")


@dataclass(frozen=True)
class Backoff:
    """Waits of ``initial``, ``initial × factor``, ... never above ``cap``; each one stretched by
    a random fraction of at most ``jitter`` of itself (so replicas and informers that failed
    together do not retry in step), and still at most ``cap``."""

    initial: float
    cap: float
    factor: float = 2.0
    jitter: float = 0.0

    def delays(self, rand: Callable[[], float] = random.random) -> Iterator[float]:
        d = min(self.initial, self.cap)
        while True:
            yield min(self.cap, d + d * self.jitter * rand()) if self.jitter else d
            d = min(d * self.factor, self.cap)


def retry(
    call: Callable[[], T],
    backoff: Backoff,
    *,
    retry_on: Callable[[BaseException], bool] | None = retryable,
    attempts: int | None = None,
    deadline: float | None = None,
    wait: Callable[[float], object] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rand: Callable[[], float] = random.random,
    on_retry: Callable[[Exception, float], None] | None = None,
) -> T:
    """``call()``'s result, trying again after each failure that ``retry_on`` accepts.

    ``retry_on`` says which errors are worth another try (None: every ``Exception``); by default
    those of :func:`~.errors.retryable`. It gives up, raising the last error, when the error is
    not retried, after ``attempts`` tries, when the next wait would end past ``deadline`` (a
    ``clock()`` reading), or when ``wait`` returns a true value (``threading.Event.wait`` does
    once the event is set: a stop).
    ``on_retry(error, delay)`` is called before each wait.
    """
    delays = None  # made on the first failure: most calls succeed at once
    tries = 0
    while True:
        try:
            return call()
        except Exception as e:
            tries += 1
            if (retry_on is not None and not retry_on(e)) or (attempts is not None and tries >= attempts):
                raise
            if delays is None:
                delays = backoff.delays(rand)
            delay = next(delays)
            if deadline is not None and clock() + delay > deadline:
                raise
            if on_retry is not None:
                on_retry(e, delay)
            if wait(delay):
                raise
