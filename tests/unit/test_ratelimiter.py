"""The client-side token bucket (client-go's flowcontrol / rate.Limiter.Wait semantics)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.cluster.kubernetes import api, ratelimit
from kubesched.runtime.timefmt import rfc3339


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
    monkeypatch.setattr(ratelimit.time, "monotonic", t.monotonic)
    monkeypatch.setattr(ratelimit.time, "sleep", t.sleep)
    return t


def test_burst_then_reservations_one_sleep_each(clock: FakeTime) -> None:
    lim = ratelimit.RateLimiter(qps=10, burst=3)
    for _ in range(3):
        lim.acquire()
    assert clock.sleeps == []  # the burst is free
    lim.acquire()
    lim.acquire()
    # each caller reserves the next token and sleeps exactly until its turn, once
    assert clock.sleeps == [0.1, 0.2]


def test_tokens_refill_at_qps_up_to_burst(clock: FakeTime) -> None:
    lim = ratelimit.RateLimiter(qps=10, burst=3)
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
    lim = ratelimit.RateLimiter(qps=0, burst=1)
    for _ in range(100):
        lim.acquire()
    assert clock.sleeps == []


# the other small pieces of the API client --------------------------------------------------------
def test_rfc3339_timestamps_match_the_clock() -> None:
    import datetime as dt
    import time

    before = time.time()
    plain, micro = rfc3339(), rfc3339(micro=True)
    after = time.time()
    assert plain.endswith("Z") and len(plain) == 20
    t = dt.datetime.fromisoformat(micro.replace("Z", "+00:00")).timestamp()
    assert before - 1e-6 <= t <= after + 1e-6
    assert micro[:19] >= plain[:19]  # the same second, or the next one


def test_connection_stack_is_a_bounded_lifo_that_never_blocks() -> None:
    import queue

    s = api._ConnStack(2)
    assert s.qsize() == 2 and s.get() is None and s.get() is None  # urllib3's placeholders
    with pytest.raises(queue.Empty):
        s.get(block=False)
    s.put("a")
    s.put("b")
    with pytest.raises(queue.Full):
        s.put("c", block=False)
    assert s.get() == "b" and s.get() == "a"


def test_a_path_in_the_server_url_prefixes_every_request(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443/k8s/clusters/c-1', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: abc}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    client = api.KubeClient(str(kubeconfig), qps=0)
    sent: list[tuple[str, str, Any]] = []

    class Resp:
        status = 200
        data = b'{"kind": "PodList"}'

    def urlopen(method: str, url: str, **kw: Any) -> Resp:
        sent.append((method, url, kw["headers"].get("Authorization")))
        return Resp()

    monkeypatch.setattr(client._conn_pool, "urlopen", urlopen)
    assert client.request("GET", "/api/v1/pods", query={"limit": 5}) == {"kind": "PodList"}
    assert sent == [("GET", "/k8s/clusters/c-1/api/v1/pods?limit=5", "Bearer abc")]
