"""The Kubernetes writer sends one pod's writes in the order they were issued (kube-scheduler
v1.36's API dispatcher: one call in flight per object, a newer queued call merged into the older
one), while different pods' writes go out in parallel; a bind waits until the pod's status writes
issued before it (in flight and queued) have landed.

The writer's neighbour, the API server, is a small in-memory one (``FakeApiServer``): it applies
the status / annotation patches and bindings to its pods as the real one does for these fields,
and can hold a pod's first request until the test lets it go, then turn it away with a 429 so
that the writer retries it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.runtime.cluster.kubernetes import writers
from kubesched.runtime.cluster.kubernetes.errors import Conflict, error_for
from kubesched.runtime.cluster.kubernetes.retry import Backoff
from kubesched.runtime.cluster.kubernetes.writers import Writer
from kubesched.sdk import Pod

WAIT = 10.0  # a bound on waits for what must happen; never reached when the test passes


class Hold:
    """The first request to ``path`` waits until ``release`` is set (or a waiting test gives up),
    then fails with a 429."""

    def __init__(self, method: str, path: str) -> None:
        self.method, self.path = method, path
        self.started = threading.Event()
        self.release = threading.Event()
        self.used = False


class FakeApiServer:
    def __init__(self, *names: str) -> None:
        self.pods: dict[str, dict[str, Any]] = {n: {"metadata": {"name": n, "namespace": "ns", "uid": f"uid-{n}", "annotations": {}}, "spec": {}, "status": {}} for n in names}
        self.holds: list[Hold] = []
        self.applied: list[tuple[str, str, Any]] = []  # requests that succeeded, in order
        self.changed = threading.Condition()

    def hold(self, method: str, path: str) -> Hold:
        h = Hold(method, path)
        self.holds.append(h)
        return h

    def wait_applied(self, pred: Any, timeout: float = WAIT) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: any(pred(*a) for a in self.applied), timeout)

    def request(self, method: str, path: str, *, body: Any = None, **options: Any) -> Any:
        if type(body) is bytes:  # the writer encodes its bodies itself (codec.dumps)
            body = json.loads(body)
        for h in self.holds:
            if (h.method, h.path) == (method, path) and not h.used:
                h.used = True
                h.started.set()
                h.release.wait(WAIT)
                raise error_for(429, {"message": "too many requests"}, method, path)
        with self.changed:
            out = self._apply(method, path, body)
            self.applied.append((method, path, body))
            self.changed.notify_all()
            return out

    def _apply(self, method: str, path: str, body: Any) -> Any:
        if path.startswith("/apis/events.k8s.io/"):
            return None
        parts = path.split("/")  # /api/v1/namespaces/ns/pods/NAME[/sub]
        pod = self.pods[parts[6]]
        sub = parts[7] if len(parts) > 7 else ""
        if method == "GET":
            return pod
        if sub == "binding":
            if pod["spec"].get("nodeName"):
                raise error_for(409, {"message": "already assigned"}, method, path)
            pod["spec"]["nodeName"] = body["target"]["name"]
            pod["status"].pop("nominatedNodeName", None)
            pod["status"]["conditions"] = {"PodScheduled": {"type": "PodScheduled", "status": "True"}}
            return None
        if sub == "status":
            st = body["status"]
            conds = pod["status"].setdefault("conditions", {})
            for c in st["conditions"]:
                conds[c["type"]] = c
            if "nominatedNodeName" in st:
                if st["nominatedNodeName"] is None:
                    pod["status"].pop("nominatedNodeName", None)
                else:
                    pod["status"]["nominatedNodeName"] = st["nominatedNodeName"]
            return None
        pod["metadata"]["annotations"].update(body["metadata"]["annotations"])
        return None

    def state(self, name: str) -> tuple[str | None, dict[str, str]]:
        """The pod's nomination and its conditions' messages by type."""
        st = self.pods[name]["status"]
        return st.get("nominatedNodeName"), {t: c.get("message", "") for t, c in st.get("conditions", {}).items()}


def _pod(name: str) -> Pod:
    return Pod({"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}})


def _status(path: str) -> str:
    return f"/api/v1/namespaces/ns/pods/{path}/status"


def _unschedulable(message: str) -> dict[str, str]:
    return {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}


def _summary(method: str, path: str, body: Any) -> tuple[Any, ...]:
    """What one applied request wrote, without its timestamps."""
    name = path.split("/")[6]
    if path.endswith("/binding"):
        return ("bind", name, body["target"]["name"])
    if path.endswith("/status"):
        st = body["status"]
        return ("status", name, [c["message"] for c in st["conditions"]], st.get("nominatedNodeName", "-"))
    return ("annotate", name, body["metadata"]["annotations"])


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writers, "WRITE_BACKOFF", Backoff(0.01, 0.01))


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer("p", "q")
    yield server
    for h in server.holds:  # a failed test never leaves a writer thread waiting
        h.release.set()


def _writer(api: FakeApiServer) -> Writer:
    return Writer(api, reporting_controller="kubesched", instance="test")  # type: ignore[arg-type]


def test_a_late_retry_of_a_pods_first_status_write_does_not_undo_its_second(api: FakeApiServer) -> None:
    # set the nomination, then clear it (clearNominatedNode); the first write is retried late
    first = api.hold("PATCH", _status("p"))
    w = _writer(api)
    try:
        w.update_pod_condition(_pod("p"), _unschedulable("one"), "node-a")
        assert first.started.wait(WAIT)
        w.update_pod_condition(_pod("p"), _unschedulable("two"), "")
        # sent in parallel, the clear would land here, before the first write's retry
        api.wait_applied(lambda m, path, body: path == _status("p"), timeout=1.0)
        first.release.set()
        w.flush()
    finally:
        w.stop()
    assert [_summary(*a) for a in api.applied] == [("status", "p", ["one"], "node-a"), ("status", "p", ["two"], None)]
    assert api.state("p") == (None, {"PodScheduled": "two"})


def test_an_older_condition_message_never_overwrites_a_newer_one(api: FakeApiServer) -> None:
    first = api.hold("PATCH", _status("p"))
    w = _writer(api)
    try:
        w.update_pod_condition(_pod("p"), _unschedulable("0/3 nodes are available: old"), None)
        assert first.started.wait(WAIT)
        w.update_pod_condition(_pod("p"), _unschedulable("0/3 nodes are available: new"), None)
        api.wait_applied(lambda m, path, body: path == _status("p"), timeout=1.0)
        first.release.set()
        w.flush()
    finally:
        w.stop()
    assert api.state("p") == (None, {"PodScheduled": "0/3 nodes are available: new"})


def test_a_slow_write_for_one_pod_does_not_hold_back_another_pods(api: FakeApiServer) -> None:
    slow = api.hold("PATCH", _status("p"))
    w = _writer(api)
    try:
        w.update_pod_condition(_pod("p"), _unschedulable("p's"), "node-a")
        assert slow.started.wait(WAIT)
        w.update_pod_condition(_pod("q"), _unschedulable("q's"), None)
        w.annotate_pod(_pod("p"), {"selected-node": "node-a"})  # p's annotations: not its status
        w.event(api.pods["p"], "Warning", "FailedScheduling", "Scheduling", "p's event")
        # all three land while p's status write is still held
        assert api.wait_applied(lambda m, path, body: path == _status("q"))
        assert api.wait_applied(lambda m, path, body: path == "/api/v1/namespaces/ns/pods/p")
        assert api.wait_applied(lambda m, path, body: path.startswith("/apis/events.k8s.io/"))
        assert not slow.release.is_set()
        slow.release.set()
        w.flush()
    finally:
        w.stop()
    assert [path for m, path, body in api.applied][-1] == _status("p")
    assert api.state("p") == ("node-a", {"PodScheduled": "p's"})
    assert api.state("q") == (None, {"PodScheduled": "q's"})


def test_writes_queued_behind_one_in_flight_are_merged_into_one(api: FakeApiServer) -> None:
    # PodStatusPatchCall.Merge: the newer condition wins, a nomination of None keeps the older one's
    first = api.hold("PATCH", _status("p"))
    first_annotation = api.hold("PATCH", "/api/v1/namespaces/ns/pods/p")
    w = _writer(api)
    try:
        w.update_pod_condition(_pod("p"), _unschedulable("one"), "")
        w.annotate_pod(_pod("p"), {"a": "1", "b": "1"})
        assert first.started.wait(WAIT) and first_annotation.started.wait(WAIT)
        w.update_pod_condition(_pod("p"), _unschedulable("two"), "node-a")
        w.update_pod_condition(_pod("p"), {"type": "Other", "status": "True", "message": "other"}, None)
        w.update_pod_condition(_pod("p"), _unschedulable("three"), None)
        w.annotate_pod(_pod("p"), {"b": "2", "c": "2"})
        w.annotate_pod(_pod("p"), {"c": "3"})
        first.release.set()
        first_annotation.release.set()
        w.flush()
        assert w._writes_pending == 0
    finally:
        w.stop()
    sent = [_summary(*a) for a in api.applied]
    assert [s for s in sent if s[0] == "status"] == [("status", "p", ["one"], None), ("status", "p", ["three", "other"], "node-a")]
    assert [s for s in sent if s[0] == "annotate"] == [("annotate", "p", {"a": "1", "b": "1"}), ("annotate", "p", {"b": "2", "c": "3"})]
    assert api.state("p") == ("node-a", {"PodScheduled": "three", "Other": "other"})
    assert api.pods["p"]["metadata"]["annotations"] == {"a": "1", "b": "2", "c": "3"}


def test_many_alternating_writes_for_one_pod_end_with_the_last_ones(api: FakeApiServer) -> None:
    w = _writer(api)
    try:
        for i in range(200):
            w.update_pod_condition(_pod("p"), _unschedulable(f"attempt {i}"), "" if i % 2 else f"node-{i}")
        w.flush()
    finally:
        w.stop()
    assert api.state("p") == (None, {"PodScheduled": "attempt 199"})
    w2 = _writer(api)
    try:
        for i in range(200):
            w2.update_pod_condition(_pod("p"), _unschedulable(f"attempt {i}"), f"node-{i}" if i % 2 else "")
        w2.flush()
    finally:
        w2.stop()
    assert api.state("p") == ("node-199", {"PodScheduled": "attempt 199"})


def test_a_bind_waits_for_the_status_writes_issued_before_it(api: FakeApiServer) -> None:
    # kube-scheduler writes a failure's condition and nomination synchronously, before the pod's
    # next attempt (handleSchedulingFailure -> updatePod): a retried pod's bind lands after them
    first = api.hold("PATCH", _status("p"))
    w = _writer(api)
    bound: list[BaseException | None] = []
    try:
        w.update_pod_condition(_pod("p"), _unschedulable("one"), "node-a")
        assert first.started.wait(WAIT)
        w.update_pod_condition(_pod("p"), _unschedulable("two"), None)

        def bind() -> None:
            try:
                w.bind(_pod("p"), "node-a")
                bound.append(None)
            except BaseException as e:  # reported below
                bound.append(e)

        t = threading.Thread(target=bind)
        t.start()
        # sent at once, the binding would land here, before the status write's retry
        api.wait_applied(lambda m, path, body: path.endswith("/binding"), timeout=1.0)
        first.release.set()
        t.join(WAIT)
        w.update_pod_condition(_pod("p"), _unschedulable("after the bind"), None)  # sent after it
        w.flush()
        assert w._writes_pending == 0
    finally:
        w.stop()
    assert bound == [None]
    assert [_summary(*a) for a in api.applied] == [
        ("status", "p", ["one"], "node-a"),
        ("status", "p", ["two"], "-"),
        ("bind", "p", "node-a"),
        ("status", "p", ["after the bind"], "-"),
    ]


def test_a_bind_that_conflicts_is_done_when_the_pod_is_on_that_node_and_raised_otherwise(api: FakeApiServer) -> None:
    api.pods["p"]["spec"]["nodeName"] = "node-a"  # an earlier attempt that timed out but landed
    api.pods["q"]["spec"]["nodeName"] = "node-b"
    w = _writer(api)
    try:
        w.bind(_pod("p"), "node-a")
        with pytest.raises(Conflict, match="already assigned"):
            w.bind(_pod("q"), "node-a")
    finally:
        w.stop()
    assert [(m, path) for m, path, body in api.applied] == [("GET", "/api/v1/namespaces/ns/pods/p"), ("GET", "/api/v1/namespaces/ns/pods/q")]


def test_a_pods_status_write_goes_before_queued_events(api: FakeApiServer) -> None:
    """Status writes (a failure's condition and nomination) are taken before events queued
    earlier: kube-scheduler writes them in the scheduling goroutine and its events through a
    separate broadcaster, and preemption reads the nomination back from the watch."""
    events = "/apis/events.k8s.io/v1/namespaces/ns/events"
    first = api.hold("POST", events)
    w = Writer(api, reporting_controller="kubesched", instance="test", writers=1)  # type: ignore[arg-type]
    try:
        w.event(api.pods["p"], "Normal", "Preempted", "Preempting", "e1")
        assert first.started.wait(WAIT)  # the one writer is busy with e1
        w.event(api.pods["q"], "Normal", "Preempted", "Preempting", "e2")
        w.event(api.pods["q"], "Normal", "Preempted", "Preempting", "e3")
        w.update_pod_condition(_pod("p"), _unschedulable("p's"), "node-a")
        first.release.set()
        w.flush()
    finally:
        w.stop()
    order = [body["note"] if path == events else _summary(m, path, body) for m, path, body in api.applied]
    assert order == ["e1", ("status", "p", ["p's"], "node-a"), "e2", "e3"]


def test_events_are_not_starved_by_a_stream_of_pod_writes(api: FakeApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """With pod writes and events both queued, one write in EVENT_EVERY is an event."""
    monkeypatch.setattr(writers, "EVENT_EVERY", 2)
    events = "/apis/events.k8s.io/v1/namespaces/ns/events"
    names = [f"p{i}" for i in range(6)]
    for n in names:
        api.pods[n] = {"metadata": {"name": n, "namespace": "ns", "uid": f"uid-{n}", "annotations": {}}, "spec": {}, "status": {}}
    first = api.hold("POST", events)
    w = Writer(api, reporting_controller="kubesched", instance="test", writers=1)  # type: ignore[arg-type]
    try:
        w.event(api.pods["p"], "Normal", "Preempted", "Preempting", "e0")
        assert first.started.wait(WAIT)
        for i in (1, 2):
            w.event(api.pods["q"], "Normal", "Preempted", "Preempting", f"e{i}")
        for n in names:
            w.update_pod_condition(_pod(n), _unschedulable(n), None)
        first.release.set()
        w.flush()
    finally:
        w.stop()
    order = [body["note"] if path == events else path.split("/")[6] for m, path, body in api.applied]
    assert order == ["e0", "p0", "p1", "e1", "p2", "p3", "e2", "p4", "p5"]
