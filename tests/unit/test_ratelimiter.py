"""The client-side token bucket (client-go's flowcontrol / rate.Limiter.Wait semantics)."""

from __future__ import annotations

import pytest

from kubesched.runtime.cluster import kubernetes as k


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 6))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    t = FakeTime()
    monkeypatch.setattr(k.time, "monotonic", t.monotonic)
    monkeypatch.setattr(k.time, "sleep", t.sleep)
    return t


def test_burst_then_reservations_one_sleep_each(clock: FakeTime) -> None:
    lim = k.RateLimiter(qps=10, burst=3)
    for _ in range(3):
        lim.acquire()
    assert clock.sleeps == []  # the burst is free
    lim.acquire()
    lim.acquire()
    # each caller reserves the next token and sleeps exactly until its turn, once
    assert clock.sleeps == [0.1, 0.2]


def test_tokens_refill_at_qps_up_to_burst(clock: FakeTime) -> None:
    lim = k.RateLimiter(qps=10, burst=3)
    for _ in range(5):
        lim.acquire()
    clock.sleeps.clear()
    clock.now += 0.2 + 10  # the two reservations are paid, then the bucket refills to burst only
    for _ in range(3):
        lim.acquire()
    assert clock.sleeps == []
    lim.acquire()
    assert clock.sleeps == [0.1]


def test_zero_qps_means_no_limit(clock: FakeTime) -> None:
    lim = k.RateLimiter(qps=0, burst=1)
    for _ in range(100):
        lim.acquire()
    assert clock.sleeps == []
