"""The Kubernetes client's one status -> exception map and its one retry helper."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
import urllib3

from kubesched.runtime.cluster.kubernetes import errors as e
from kubesched.runtime.cluster.kubernetes.retry import Backoff, retry
from kubesched.sdk import ObjectConflict, ObjectNotFound


# the status map ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, e.ApiError),
        (401, e.Unauthorized),
        (403, e.Forbidden),
        (404, e.NotFound),
        (409, e.Conflict),
        (410, e.Gone),
        (422, e.Invalid),
        (429, e.TooManyRequests),
        (500, e.ServerError),
        (503, e.ServerError),
        (504, e.ServerError),
    ],
)
def test_each_status_has_its_exception(status: int, cls: type[e.ApiError]) -> None:
    body = {"kind": "Status", "message": f"the message of {status}", "reason": "SomeReason"}
    err = e.error_for(status, body, "GET", "/api/v1/namespaces/default/pods/p")
    assert type(err) is cls
    assert isinstance(err, e.ApiError)
    assert str(err) == f"GET /api/v1/namespaces/default/pods/p: {status}: the message of {status}"
    assert (err.status, err.reason, err.body) == (status, "SomeReason", body)


def test_not_found_and_conflict_are_the_sdk_errors_plugins_catch() -> None:
    assert isinstance(e.error_for(404, {}), ObjectNotFound)
    assert isinstance(e.error_for(409, {}), ObjectConflict)
    for status in (400, 401, 403, 410, 422, 429, 500):
        err = e.error_for(status, {})
        assert not isinstance(err, (ObjectNotFound, ObjectConflict)), status


def test_a_body_that_is_not_a_status_is_quoted_in_the_message() -> None:
    err = e.error_for(502, "<html>bad gateway</html>", "POST", "/api/v1/namespaces/a/pods/b/binding")
    assert str(err) == "POST /api/v1/namespaces/a/pods/b/binding: 502: <html>bad gateway</html>"
    assert err.reason == ""


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (e.error_for(429, {}), True),
        (e.error_for(500, {}), True),
        (e.error_for(503, {}), True),
        (e.error_for(400, {}), False),
        (e.error_for(401, {}), False),
        (e.error_for(403, {}), False),
        (e.error_for(404, {}), False),
        (e.error_for(409, {}), False),
        (e.error_for(410, {}), False),
        (e.error_for(422, {}), False),
        (ConnectionRefusedError(111, "Connection refused"), True),
        (TimeoutError("timed out"), True),
        (urllib3.exceptions.ProtocolError("Connection aborted."), True),
        (ValueError("a bug"), False),
    ],
)
def test_retryable(error: BaseException, expected: bool) -> None:
    assert e.retryable(error) is expected


# the backoff -------------------------------------------------------------------------------------
def _take(backoff: Backoff, n: int, rand: Any = random.random) -> list[float]:
    it = backoff.delays(rand)
    return [round(next(it), 6) for _ in range(n)]


def test_backoff_doubles_up_to_its_cap() -> None:
    assert _take(Backoff(0.2, 5.0), 8) == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
    assert _take(Backoff(2.0, 2.0), 3) == [2.0, 2.0, 2.0]  # a fixed period


def test_jitter_stretches_each_wait_by_at_most_its_fraction_and_never_past_the_cap() -> None:
    b = Backoff(0.5, 30.0, jitter=0.2)
    assert _take(b, 8, rand=lambda: 0.0) == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert _take(b, 8, rand=lambda: 1.0) == [0.6, 1.2, 2.4, 4.8, 9.6, 19.2, 30.0, 30.0]
    rng = random.Random(7)
    base = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    for _ in range(200):
        got = _take(b, 8, rand=rng.random)
        assert all(lo <= d <= min(30.0, lo * 1.2) for lo, d in zip(base, got, strict=True)), got
    # the waits differ from one run to the next (informers that failed together spread out)
    assert len({tuple(_take(b, 3, rand=rng.random)) for _ in range(10)}) > 1


# retry -------------------------------------------------------------------------------------------
class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def wait(self, s: float) -> bool:
        self.waits.append(round(s, 6))
        self.now += s
        return False


class Flaky:
    """Fails with the given errors, one per call, then returns "ok"."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def test_retry_returns_after_retryable_failures_waiting_the_backoff() -> None:
    t = FakeTime()
    call = Flaky(e.error_for(503, {}), ConnectionResetError(104, "reset"), e.error_for(429, {}))
    seen: list[tuple[str, float]] = []
    out = retry(call, Backoff(0.2, 5.0), wait=t.wait, clock=t.clock, on_retry=lambda err, d: seen.append((type(err).__name__, d)))
    assert out == "ok"
    assert call.calls == 4
    assert t.waits == [0.2, 0.4, 0.8]
    assert seen == [("ServerError", 0.2), ("ConnectionResetError", 0.4), ("TooManyRequests", 0.8)]


def test_retry_raises_an_error_that_is_not_retried_at_once() -> None:
    t = FakeTime()
    call = Flaky(e.error_for(409, {"message": "pod p is already assigned to node n1"}, "POST", "/b"), e.error_for(503, {}))
    with pytest.raises(e.Conflict) as exc:
        retry(call, Backoff(0.2, 5.0), wait=t.wait, clock=t.clock)
    assert str(exc.value) == "POST /b: 409: pod p is already assigned to node n1"
    assert call.calls == 1 and t.waits == []


def test_retry_gives_up_after_its_attempts_with_the_last_error() -> None:
    t = FakeTime()
    call = Flaky(*[e.error_for(500, {"message": f"try {i}"}) for i in range(1, 10)])
    with pytest.raises(e.ServerError) as exc:
        retry(call, Backoff(0.2, 5.0), attempts=5, wait=t.wait, clock=t.clock)
    assert str(exc.value) == " : 500: try 5"
    assert call.calls == 5
    assert t.waits == [0.2, 0.4, 0.8, 1.6]


def test_retry_gives_up_when_the_next_wait_would_pass_the_deadline() -> None:
    t = FakeTime()
    call = Flaky(*[TimeoutError("timed out")] * 100)
    with pytest.raises(TimeoutError):
        retry(call, Backoff(0.5, 5.0), deadline=t.clock() + 120, wait=t.wait, clock=t.clock)
    assert t.waits == [0.5, 1.0, 2.0, 4.0] + [5.0] * 22
    assert sum(t.waits) == 117.5  # one more 5 s wait would end at 122.5, past the deadline
    assert call.calls == 27


def test_a_stop_ends_the_wait_and_the_retries() -> None:
    stop = threading.Event()
    calls = 0

    def call() -> None:
        nonlocal calls
        calls += 1
        stop.set()
        raise ValueError("any error")

    with pytest.raises(ValueError, match=r"^any error$"):
        retry(call, Backoff(30.0, 30.0), retry_on=None, wait=stop.wait)
    assert calls == 1  # the set event ended the wait at once, and with it the retries


def test_retry_on_none_retries_every_exception() -> None:
    t = FakeTime()
    call = Flaky(ValueError("a"), KeyError("b"))
    assert retry(call, Backoff(1.0, 1.0), retry_on=None, wait=t.wait, clock=t.clock) == "ok"
    assert t.waits == [1.0, 1.0]
