"""The scheduling queue: backoff, QueueSort order, requeueing by registered events and queueing
hints, PreEnqueue gating (kube-scheduler's backend/queue/scheduling_queue.go)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.runtime.plugins.queuesort import PrioritySort
from kubesched.runtime.queue import (
    BACKOFF_ORDERING_WINDOW,
    POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    UNSCHEDULABLE_TIMEOUT,
    SchedulingQueue,
    backoff_duration,
)
from kubesched.runtime.scheduler import SimClock
from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EventResource,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.testing import make_pod

NODE_ADD = ClusterEvent(EventResource.NODE.value, ActionType.ADD)
NODE_LABEL = ClusterEvent(EventResource.NODE.value, ActionType.UPDATE_NODE_LABEL)
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME.value, ActionType.ADD)


def _pod(name: str, priority: int = 0, scheduler: str = "test") -> Pod:
    return make_pod().name(name).uid(name).priority(priority).scheduler_name(scheduler).pod()


def _queue(
    events: dict[str, Any] | None = None, *, clock: SimClock | None = None, **kw: Any
) -> tuple[SchedulingQueue, SimClock]:
    clock = clock or SimClock(1000.0)
    q = SchedulingQueue(PrioritySort().queue_sort_less, clock, events={"test": events or {}}, **kw)
    return q, clock


# backoff ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempts", "expected"),
    [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (100, 10)],
)
def test_backoff_duration_examples(attempts, expected):
    assert backoff_duration(attempts, 1.0, 10.0) == expected


def test_backoff_duration_without_attempts_is_zero():
    """calculateBackoffDuration: a pod never attempted gets no backoff penalty."""
    assert backoff_duration(0, 1.0, 10.0) == 0


@given(
    attempts=st.integers(min_value=1, max_value=200),
    initial=st.integers(min_value=1, max_value=60),
    extra=st.integers(min_value=0, max_value=10_000),
)
def test_backoff_duration_formula(attempts, initial, extra):
    maximum = initial + extra
    assert backoff_duration(attempts, float(initial), float(maximum)) == min(
        initial * 2 ** (attempts - 1), maximum
    )


def test_failed_pod_backs_off_by_consecutive_errors():
    """An error backs off by the consecutive errors; the expiry's window (1 s) must be past
    (the clock starts on a whole second), and a pod that failed with an error is never popped
    from backoff early."""
    q, clock = _queue(initial_backoff=1.0, max_backoff=10.0, error_to_backoff=True)
    q.add(_pod("p"))
    for attempt, expected in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0)]:
        qpi = q.pop()
        assert qpi is not None and qpi.attempts == attempt
        q.requeue_failed(qpi, Status.failed("boom"))
        assert qpi.consecutive_errors == attempt
        expected += BACKOFF_ORDERING_WINDOW
        assert q.next_backoff_expiry() == pytest.approx(clock.now() + expected)
        assert q.pop() is None  # still backing off
        clock.advance_to(clock.now() + expected - 0.001)
        assert q.flush_backoff_completed() == 0
        clock.advance_to(clock.now() + 0.001)
        assert q.flush_backoff_completed() == 1


# QueueSort ------------------------------------------------------------------------------------------


def test_priority_sort_orders_by_priority_then_time():
    q, clock = _queue()
    order = [
        ("low-early", 0),
        ("high-late", 100),
        ("mid", 50),
        ("low-late", 0),
        ("high-later", 100),
    ]
    for name, prio in order:
        q.add(_pod(name, prio))
        clock.advance_to(clock.now() + 1)
    popped = []
    while (qpi := q.pop()) is not None:
        popped.append(qpi.pod.name)
    assert popped == ["high-late", "high-later", "mid", "low-early", "low-late"]


def test_priority_sort_less():
    from kubesched.sdk import QueuedPodInfo

    less = PrioritySort().queue_sort_less
    a = QueuedPodInfo(_pod("a", 10), timestamp=5)
    b = QueuedPodInfo(_pod("b", 1), timestamp=1)
    c = QueuedPodInfo(_pod("c", 10), timestamp=6)
    assert less(a, b) and not less(b, a)
    assert less(a, c) and not less(c, a)


def test_scheduler_pops_by_priority(ks, calls):
    class F:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    T0 = "2024-01-01T00:00:00Z"
    pods = [
        ks.pod("low", priority=1, created=T0),
        ks.pod("high", priority=1000, created=T0),
        ks.pod("mid", priority=10, created=T0),
    ]
    ks.run({"F": F}, {"filter": ["F"]}, ks.nodes(1) + pods)
    assert calls == ["high", "mid", "low"]


# requeue by events -------------------------------------------------------------------------------


def _fail(q: SchedulingQueue, name: str, plugins: set[str], status: Status | None = None) -> None:
    qpi = q.pop()
    assert qpi is not None and qpi.pod.name == name
    q.requeue_failed(qpi, status or Status.unschedulable("no"), plugins)
    assert [p.pod.name for p in q.unschedulable_pods()] == [name]


def test_unschedulable_pod_moved_only_by_its_rejectors_events():
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)], "G": [ClusterEventWithHint(PV_ADD)]})
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    assert q.move_all_to_active_or_backoff(NODE_LABEL) == 0
    assert q.move_all_to_active_or_backoff(PV_ADD) == 0  # registered by G, which did not reject p
    assert q.unschedulable_pods()
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert not q.unschedulable_pods()


def test_any_rejectors_event_moves_the_pod():
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)], "G": [ClusterEventWithHint(PV_ADD)]})
    q.add(_pod("p"))
    _fail(q, "p", {"F", "G"})
    assert q.move_all_to_active_or_backoff(PV_ADD) == 1


def test_broader_registered_action_matches_specific_event():
    q, clock = _queue(
        {"F": [ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE))]}
    )
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    assert q.move_all_to_active_or_backoff(NODE_LABEL) == 1


def test_queueing_hint_skip_prevents_the_move():
    seen: list = []

    def hint(pod, old, new):
        seen.append((pod.name, old, new))
        return QueueingHint.QUEUE if (new or {}).get("good") else QueueingHint.SKIP

    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD, hint)]})
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, {"good": False}) == 0
    assert q.unschedulable_pods()
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, {"good": True}) == 1
    assert seen == [("p", None, {"good": False}), ("p", None, {"good": True})]


def test_plugin_without_events_to_register_is_requeued_by_any_event():
    q, clock = _queue({"F": None})
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    assert q.move_all_to_active_or_backoff(ClusterEvent("ConfigMap", ActionType.ADD)) == 1


def test_wildcard_event_moves_every_unschedulable_pod():
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)]})
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    assert q.move_all_to_active_or_backoff(UNSCHEDULABLE_TIMEOUT) == 1


def test_moved_pod_respects_backoff():
    """A rejected pod moved by an event while backing off goes to backoffQ; activeQ's pods go
    first, and only when activeQ is empty is it popped from backoffQ before its backoff ends
    (SchedulerPopFromBackoffQ)."""
    q, clock = _queue({"F": None}, initial_backoff=4.0, max_backoff=10.0)
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    q.move_all_to_active_or_backoff(NODE_ADD)
    assert q.pending() == {"active": 0, "backoff": 1, "unschedulable": 0, "gated": 0}
    assert q.next_backoff_expiry() == pytest.approx(clock.now() + 4.0 + BACKOFF_ORDERING_WINDOW)
    q.add(_pod("later"))
    assert [q.pop().pod.name, q.pop().pod.name] == ["later", "p"]
    assert q.pop() is None
    q2, clock2 = _queue({"F": None}, initial_backoff=4.0, max_backoff=10.0)
    q2.add(_pod("p"))
    _fail(q2, "p", {"F"})
    q2.move_all_to_active_or_backoff(NODE_ADD)
    clock2.advance_to(clock2.now() + 4.0 + BACKOFF_ORDERING_WINDOW)
    assert q2.flush_backoff_completed() == 1
    assert q2.pending()["active"] == 1


def test_unschedulable_pods_flushed_after_five_minutes():
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)]})
    q.add(_pod("p"))
    _fail(q, "p", {"F"})
    clock.advance_to(clock.now() + POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION - 1)
    assert q.flush_unschedulable_left_over() == 0
    clock.advance_to(clock.now() + 2)
    assert q.flush_unschedulable_left_over() == 1


def _reject_until_labelled(calls: list, events: Any = "node-add") -> type:
    class F:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(node_info.name)
            if node_info.node.labels.get("good") != "true":
                return Status.unschedulable("node(s) were not good")

    if events == "node-add":

        def events_to_register(self):
            return [ClusterEventWithHint(NODE_ADD)]

        F.events_to_register = hookimpl(events_to_register)
    elif callable(events):
        F.events_to_register = hookimpl(events)
    return F


def test_node_add_requeues_pod_and_it_gets_scheduled(ks, calls):
    F = _reject_until_labelled(calls)
    r = ks.build({"F": F}, {"filter": ["F"]}, ks.nodes(2) + [ks.pod("p")]).start()
    assert r.result("p").status == "Unschedulable"
    assert calls == ["n1", "n2"]
    r.create(ks.node("n3", labels={"good": "true"}))
    assert r.result("p").status == "Scheduled"
    assert r.result("p").node == "n3"


def test_unrelated_event_does_not_requeue(ks, calls):
    F = _reject_until_labelled(calls)
    r = ks.build({"F": F}, {"filter": ["F"]}, ks.nodes(2) + [ks.pod("p")]).start()
    before = list(calls)
    r.create(
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {}}
    )
    # a node label update is not Node/Add either
    r.cluster.store.patch("v1", "Node", "n1", {"metadata": {"labels": {"good": "true"}}})
    r.settle()
    assert calls == before
    assert r.result("p").status == "Unschedulable"


def test_queueing_hint_skip_prevents_requeue_in_scheduler(ks, calls):
    def events(self):
        def hint(pod, old, new):  # new: the added Node, as a view
            return QueueingHint.QUEUE if new.labels.get("good") == "true" else QueueingHint.SKIP

        return [ClusterEventWithHint(NODE_ADD, hint)]

    F = _reject_until_labelled(calls, events)
    r = ks.build({"F": F}, {"filter": ["F"]}, ks.nodes(1) + [ks.pod("p")]).start()
    assert calls == ["n1"]
    r.create(ks.node("n2"))  # hint says SKIP
    assert calls == ["n1"]
    r.create(ks.node("n3", labels={"good": "true"}))
    assert r.result("p").node == "n3"


def test_queueing_hints_get_typed_views_for_pods_and_nodes(ks, calls):
    """Pod and Node events reach a hint as Pod / Node views; any other kind as its mapping."""
    seen = []

    def events(self):
        def hint(pod, old, new):
            seen.append((type(pod).__name__, type(old).__name__, type(new).__name__))
            return QueueingHint.SKIP

        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE.value, ActionType.ALL), hint),
            ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.ALL), hint),
            ClusterEventWithHint(PV_ADD, hint),
        ]

    F = _reject_until_labelled(calls, events)
    r = ks.build({"F": F}, {"filter": ["F"]}, ks.nodes(1) + [ks.pod("p")]).start()
    r.create(ks.node("n2"))
    r.cluster.store.patch("v1", "Node", "n2", {"metadata": {"labels": {"x": "y"}}})
    r.create(ks.pod("running", node_name="n1"))
    r.cluster.store.delete("v1", "Pod", "running", "default")
    r.cluster.store.delete("v1", "Node", "n2")
    r.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {}})
    r.settle()
    assert seen == [
        ("Pod", "NoneType", "Node"),
        ("Pod", "Node", "Node"),
        ("Pod", "NoneType", "Pod"),
        ("Pod", "Pod", "NoneType"),
        ("Pod", "Node", "NoneType"),
        ("Pod", "NoneType", "ReadOnlyDict"),  # the stored object, read-only (a dict subclass)
    ]


def test_plugin_without_events_is_requeued_by_any_event_in_scheduler(ks, calls):
    F = _reject_until_labelled(calls, events=None)
    r = ks.build({"F": F}, {"filter": ["F"]}, ks.nodes(1) + [ks.pod("p")]).start()
    assert r.framework.events["F"] is None
    before = len(calls)
    r.create(
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": {}}
    )
    assert len(calls) > before  # retried


# PreEnqueue -------------------------------------------------------------------------------------


class Gate:
    """A scheduling-gates style PreEnqueue plugin: pods annotated ``gate`` stay out of the queue."""

    calls: list = []

    @hookimpl
    def pre_enqueue(self, pod):
        Gate.calls.append(pod.name)
        if "gate" in pod.annotations:
            return Status.unresolvable("waiting for scheduling gates: [gate]")
        return None


def test_pre_enqueue_keeps_pod_out_until_gate_removed(ks, calls):
    Gate.calls = []

    class F:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    r = ks.build(
        {"Gate": Gate, "F": F},
        {"preEnqueue": ["Gate"], "filter": ["F"]},
        ks.nodes(1) + [ks.pod("gated", annotations={"gate": "x"}), ks.pod("free")],
    ).start()
    assert calls == ["free"]
    assert r.result("gated").status == "Pending"
    assert r.scheduler.queue.pending()["gated"] == 1
    assert "gated" in Gate.calls
    # unrelated events do not let it in
    r.create(ks.node("n2"))
    assert "gated" not in calls
    # an update that keeps the gate keeps it out
    r.cluster.store.patch("v1", "Pod", "gated", {"metadata": {"labels": {"x": "y"}}}, "default")
    r.settle()
    assert "gated" not in calls
    # removing the gate lets it in
    r.cluster.store.patch(
        "v1", "Pod", "gated", {"metadata": {"annotations": {"gate": None}}}, "default"
    )
    r.settle()
    assert "gated" in calls
    assert r.result("gated").status == "Scheduled"
    assert r.scheduler.queue.pending()["gated"] == 0


def test_gated_pod_is_not_backed_off_when_gate_removed():
    """A gated pod has never been attempted: once PreEnqueue passes it goes straight to activeQ."""
    gated = {"on": True}
    q, clock = _queue(
        pre_enqueue=lambda p: Status.unschedulable("gated") if gated["on"] else Status()
    )
    p = _pod("p")
    q.add(p)
    assert q.pop() is None
    gated["on"] = False
    new = Pod({**p.raw, "metadata": {**p.metadata, "labels": {"changed": "1"}}})
    q.update(p, new)
    qpi = q.pop()
    assert qpi is not None and qpi.pod.name == "p"


def test_custom_queue_sort_plugin_orders_the_active_queue(ks, calls):
    class ByNameDesc:
        @hookimpl
        def queue_sort_less(self, pod_info_1, pod_info_2):
            return pod_info_1.pod.name > pod_info_2.pod.name

    class F:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    T0 = "2024-01-01T00:00:00Z"
    pods = [ks.pod(n, priority=p, created=T0) for n, p in (("b", 100), ("c", 0), ("a", 50))]
    r = ks.run(
        {"ByNameDesc": ByNameDesc, "F": F},
        {"queueSort": ["ByNameDesc"], "filter": ["F"]},
        ks.nodes(1) + pods,
    )
    assert calls == ["c", "b", "a"]  # priority ignored: the profile's QueueSort decides
    assert r.framework.queue_sort_func().__self__ is r.framework.plugins["ByNameDesc"]


def test_exactly_one_queue_sort_plugin_is_required(ks):
    from kubesched.runtime.config import ConfigError

    class Other:
        @hookimpl
        def queue_sort_less(self, pod_info_1, pod_info_2):
            return False

    with pytest.raises(ConfigError):
        ks.build({"Other": Other}, {"queueSort": ["PrioritySort", "Other"]}, [])


def test_queueing_hint_that_raises_queues_the_pod_and_is_logged_once(caplog):
    """A hint written for mappings (``new.get``) gets a view: it raises on every event; the pod
    is queued each time and the error is logged once per plugin and exception type."""

    class DictHint:
        def __call__(self, pod, old, new):
            return QueueingHint.QUEUE if new.get("metadata") else QueueingHint.SKIP

    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD, DictHint())]}, initial_backoff=0.0)
    for name in ("p", "r"):
        q.add(_pod(name))
        q.requeue_failed(q.pop(), Status.unschedulable("no"), {"F"})
    caplog.set_level(logging.DEBUG, logger="kubesched")
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, object()) == 2
    for name in ("p", "r"):
        qpi = q.pop()
        assert qpi is not None and qpi.pod.name == name
        q.requeue_failed(qpi, Status.unschedulable("no"), {"F"})
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, object()) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        'queueing hint of plugin "F" failed on event NodeAdd: AttributeError: '
        "'object' object has no attribute 'get'; the pod is queued (logged once per plugin and exception type)"
    ]
    (tb,) = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info]
    assert tb.getMessage() == 'queueing hint of plugin "F" failed'
    assert "new.get(\"metadata\")" in caplog.handler.formatter.format(tb)


def test_gating_plugins_hint_that_raises_is_logged_once(caplog):
    def hint(pod, old, new):
        raise KeyError("spec")

    gated = {"on": True}
    q, clock = _queue(
        {"Gate": [ClusterEventWithHint(NODE_ADD, hint)]},
        pre_enqueue=lambda p: Status(Code.UNSCHEDULABLE, "gated", plugin="Gate") if gated["on"] else Status(),
    )
    q.add(_pod("p"))
    caplog.set_level(logging.ERROR, logger="kubesched")
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0  # the hint queues; the gate still holds
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0
    assert [r.getMessage() for r in caplog.records] == [
        'queueing hint of plugin "Gate" failed on event NodeAdd: KeyError: \'spec\'; the pod is queued (logged once per plugin and exception type)'
    ]


# backoffQ of v1.36 (backend/queue/backoff_queue_test.go, scheduling_queue_test.go) ----------------


class _Clock:
    """A clock the test sets (backwards too), to place pods' timestamps as Go's tables do."""

    def __init__(self, now: float) -> None:
        self.t = now

    def now(self) -> float:
        return self.t


T0 = 1_700_000_000.0  # a whole second: the clock is aligned with the ordering window


def _in_backoff(q: SchedulingQueue, clock: _Clock, name: str, *, at: float, priority: int = 0, error: bool = False) -> None:
    """Put pod ``name`` in backoff after one failed attempt that ended at ``at`` (rejected by
    plugin F, or an error)."""
    now = clock.t
    clock.t = at
    q.add(_pod(name, priority))
    qpi = q.pop()
    assert qpi is not None and qpi.pod.name == name
    if error:
        q.requeue_failed(qpi, Status.failed("boom"))
    else:
        q.requeue_failed(qpi, Status.unschedulable("no"), {"F"})
        assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    clock.t = now
    assert q.pending()["active"] == 0


def _backoff_queue(**kw: Any) -> tuple[SchedulingQueue, _Clock]:
    clock = _Clock(T0)
    q = SchedulingQueue(PrioritySort().queue_sort_less, clock, events={"test": {"F": None}}, error_to_backoff=True, **kw)
    return q, clock


@pytest.mark.parametrize(
    ("name", "in_backoff", "want"),
    [
        ("Both queues empty, no pods moved to activeQ", [], []),
        ("Pods only in backoffQ, some pods moved to activeQ", ["pod0", "pod1"], ["pod0"]),
        ("Pods only in errorBackoffQ, some pods moved to activeQ", ["pod2", "pod3"], ["pod2"]),
        ("Pods in both queues, some pods moved to activeQ", ["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
        ("Pods in both queues, all pods moved to activeQ", ["pod0", "pod2"], ["pod0", "pod2"]),
        ("Pods in both queues, no pods moved to activeQ", ["pod1", "pod3"], []),
    ],
)
def test_backoff_queue_pop_all_backoff_completed(name, in_backoff, want):
    """TestBackoffQueue_popAllBackoffCompleted: pod0/pod2 failed 2 s ago, pod1/pod3 fail 1 s
    from now; pod0/pod1 were rejected by a plugin, pod2/pod3 failed with an error."""
    pods = {"pod0": (-2.0, False), "pod1": (1.0, False), "pod2": (-2.0, True), "pod3": (1.0, True)}
    q, clock = _backoff_queue()
    for p in in_backoff:
        offset, error = pods[p]
        _in_backoff(q, clock, p, at=T0 + offset, error=error)
    assert q.flush_backoff_completed() == len(want)
    popped = []
    while q.pending()["active"]:
        popped.append(q.pop().pod.name)
    assert popped == want
    assert q.pending()["backoff"] == len(in_backoff) - len(want)


def test_backoff_queue_ordering_by_window_then_priority():
    """TestBackoffQueueOrdering (PopFromBackoffQ on): expiries are truncated to 1 s windows and
    pods of one window come out by priority (then time), the earlier window first."""
    q, clock = _backoff_queue()
    for name, prio, at in [
        ("pod0", 1, T0),
        ("pod1", 1, T0 - 1),
        ("pod2", 2, T0 - 2 + 0.001),
        ("pod3", 1, T0 - 2),
        ("pod4", 2, T0 - 2),
        ("pod5", 1, T0 - 3),
    ]:
        _in_backoff(q, clock, name, at=at, priority=prio)
    # popped straight from backoffQ (activeQ is empty): its own order
    assert [q.pop().pod.name for _ in range(6)] == ["pod5", "pod4", "pod2", "pod3", "pod1", "pod0"]
    assert q.pop() is None
    # the flush moves the four whose window is past (pod0 and pod1 are still backing off)
    q2, clock2 = _backoff_queue()
    for name, at in [("pod0", T0), ("pod1", T0 - 1), ("pod3", T0 - 2), ("pod5", T0 - 3)]:
        _in_backoff(q2, clock2, name, at=at)
    assert q2.flush_backoff_completed() == 2
    assert q2.pending()["backoff"] == 2


@pytest.mark.parametrize(
    ("initial", "maximum", "unschedulable", "errors", "want"),
    [
        (1.0, 32.0, 0, 0, 0.0),  # no backoff
        (1.0, 32.0, 16, 0, T0 + 32),  # by UnschedulableCount
        (1.0, 32.0, 5, 16, T0 + 32),  # ConsecutiveErrorsCount wins
        (0.0, 0.0, 16, 0, 0.0),  # zero maxBackoffDuration means no backoff
    ],
)
def test_backoff_time(initial, maximum, unschedulable, errors, want):
    """TestBackoffQueue_getBackoffTime, through the queue: a pod with that history is backing
    off until the window after ``want`` (never, for 0)."""
    q, clock = _backoff_queue(initial_backoff=initial, max_backoff=maximum)
    q.add(_pod("p"))
    qpi = q.pop()
    q.requeue_failed(qpi, Status.unschedulable("no"), {"F"})
    qpi.unschedulable_count, qpi.consecutive_errors, qpi.backoff_expiration = unschedulable, errors, 0.0
    q.move_all_to_active_or_backoff(NODE_ADD)
    if not want:
        assert q.pending()["active"] == 1
        return
    assert q.pending()["backoff"] == 1
    assert q.next_backoff_expiry() == want + BACKOFF_ORDERING_WINDOW
    clock.t = want + BACKOFF_ORDERING_WINDOW - 0.001
    assert q.flush_backoff_completed() == 0
    clock.t = want + BACKOFF_ORDERING_WINDOW
    assert q.flush_backoff_completed() == 1


def test_pop_from_backoff_only_when_active_is_empty_and_never_an_error_pod():
    """TestPriorityQueue_Pop with SchedulerPopFromBackoffQ: activeQ first; then the backoffQ of
    rejected pods; a pod that failed with an error waits for its backoff."""
    q, clock = _backoff_queue()
    _in_backoff(q, clock, "rejected", at=T0)
    _in_backoff(q, clock, "errored", at=T0, error=True)
    q.add(_pod("new"))
    assert q.has_active()
    assert q.pop().pod.name == "new"
    assert q.pop().pod.name == "rejected"
    assert not q.has_active()
    assert q.pop() is None
    assert q.pending()["backoff"] == 1
    clock.t = T0 + 2
    assert q.flush_backoff_completed() == 1
    assert q.pop().pod.name == "errored"


def test_pre_enqueue_runs_on_entering_backoff_not_on_leaving_it():
    """moveToBackoffQ runs PreEnqueue (a pod there may be popped at once); the move from
    backoffQ to activeQ does not run it again."""
    calls: list[str] = []
    gated = {"on": False}

    def pre_enqueue(pod: Pod) -> Status:
        calls.append(pod.name)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated", plugin="Gate") if gated["on"] else Status()

    q, clock = _backoff_queue(pre_enqueue=pre_enqueue)
    _in_backoff(q, clock, "p", at=T0)
    assert calls == ["p", "p"]  # Add, then the move into backoffQ
    clock.t = T0 + 2
    assert q.flush_backoff_completed() == 1
    assert calls == ["p", "p"]
    q.requeue_failed(q.pop(), Status.unschedulable("no"), {"F"})
    gated["on"] = True
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0  # gated on the way into backoffQ
    assert q.pending() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert q.pop() is None


def test_moving_to_active_keeps_the_timestamp_queue_sort_reads():
    """QueuedPodInfo.Timestamp changes only when the pod is added or comes back from an
    attempt: a pod moved by an event keeps its place among pods of its priority."""
    q, clock = _backoff_queue(initial_backoff=0.0, max_backoff=0.0)
    q.add(_pod("early"))
    q.requeue_failed(q.pop(), Status.unschedulable("no"), {"F"})
    clock.t = T0 + 5
    q.add(_pod("late"))
    clock.t = T0 + 10
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 1
    assert [q.pop().pod.name, q.pop().pod.name] == ["early", "late"]


def test_rejected_without_plugins_is_retried_after_backoff_as_an_error():
    """AddUnschedulableIfNotPresent: no rejecting plugin (e.g. no nodes in the cluster) counts a
    consecutive error and goes to the error backoff queue, not the unschedulable pods."""
    q, clock = _backoff_queue()
    q.add(_pod("p"))
    qpi = q.pop()
    q.requeue_failed(qpi, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no nodes available to schedule pods"))
    assert (qpi.consecutive_errors, qpi.unschedulable_count) == (1, 0)
    assert q.pending() == {"active": 0, "backoff": 1, "unschedulable": 0, "gated": 0}
    assert q.pop() is None


# in-flight events (kube-scheduler's inFlightEvents, determineSchedulingHintForInFlightPod) -----------


def test_an_event_while_the_pod_was_in_flight_requeues_it_when_it_fails():
    """A node added while the pod was popped (e.g. held at Permit) is replayed when the pod
    fails: its rejector's registration matches, so it goes back to the queue, not to wait."""
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)]})
    q.add(_pod("p"))
    qpi = q.pop()
    assert qpi is not None
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0  # nothing unschedulable to move yet
    q.requeue_failed(qpi, Status.unschedulable("no"), {"F"})
    assert not q.unschedulable_pods()
    assert q.pop() is not None  # popped from the backoffQ (the active queue is empty)


@pytest.mark.parametrize("when", ["before the pop", "not matching"])
def test_events_before_the_pop_or_not_matching_do_not_requeue(when: str):
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)], "G": [ClusterEventWithHint(PV_ADD)]})
    q.add(_pod("p"))
    q.add(_pod("other"))
    first = q.pop()  # "other" or "p": keep one in flight all along
    assert first is not None
    if when == "before the pop":
        q.move_all_to_active_or_backoff(NODE_ADD)
    qpi = q.pop()
    assert qpi is not None
    if when == "not matching":
        q.move_all_to_active_or_backoff(PV_ADD)  # registered by G, which did not reject the pod
    q.requeue_failed(qpi, Status.unschedulable("no"), {"F"})
    assert [p.pod.name for p in q.unschedulable_pods()] == [qpi.pod.name]


def test_in_flight_events_are_dropped_once_no_pod_is_in_flight():
    q, clock = _queue({"F": [ClusterEventWithHint(NODE_ADD)]})
    q.add(_pod("p"))
    qpi = q.pop()
    assert qpi is not None
    q.move_all_to_active_or_backoff(NODE_ADD)
    q.done(qpi.pod.uid)
    assert q._in_flight_events == []


POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD.value, ActionType.DELETE)


def test_gated_pod_moves_on_its_gating_plugins_event_by_its_other_rejectors_hints():
    """movePodsToActiveOrBackoffQueue for a gated pod (v1.36, what asynchronous preemption
    relies on): an event the gating plugin registers is asked of all the pod's rejectors'
    hints (the gating plugin is one since runPreEnqueuePlugin): DefaultPreemption's Pod/Delete
    hint is Skip, NodeResourcesFit's Queue, so the pod moves and PreEnqueue runs again; an event
    the gating plugin does not register never moves it, whatever the other hints say."""
    holding = {"on": False}
    calls: list[str] = []

    def pre_enqueue(pod: Pod) -> Status:
        calls.append(pod.name)
        if holding["on"]:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished", plugin="DefaultPreemption")
        return Status()

    events = {
        "DefaultPreemption": [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), lambda p, o, n: QueueingHint.SKIP)],
        "NodeResourcesFit": [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), None), ClusterEventWithHint(NODE_ADD, None)],
    }
    q, clock = _queue(events, pre_enqueue=pre_enqueue, initial_backoff=0.0, max_backoff=0.0)
    q.add(_pod("preemptor"))
    qpi = q.pop()
    q.requeue_failed(qpi, Status.unschedulable("Insufficient cpu"), {"NodeResourcesFit"})
    holding["on"] = True
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0  # Fit queues it; PreEnqueue holds it
    assert qpi.gating_plugin == "DefaultPreemption"
    assert qpi.unschedulable_plugins == {"NodeResourcesFit", "DefaultPreemption"}
    assert q.pending() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    holding["on"] = False
    calls.clear()
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0  # not DefaultPreemption's event
    assert calls == []
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 1
    assert calls == ["preemptor"]
    assert q.pop().pod.name == "preemptor"


def test_gated_pod_whose_rejectors_all_skip_the_event_stays():
    """The gating plugin's event matches but every rejector's hint is Skip: no move, no
    PreEnqueue call."""
    calls: list[str] = []

    def pre_enqueue(pod: Pod) -> Status:
        calls.append(pod.name)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held", plugin="Gate")

    events = {"Gate": [ClusterEventWithHint(NODE_ADD, lambda p, o, n: QueueingHint.SKIP)]}
    q, _clock = _queue(events, pre_enqueue=pre_enqueue)
    q.add(_pod("p"))
    calls.clear()
    assert q.move_all_to_active_or_backoff(NODE_ADD) == 0
    assert calls == []
    assert q.pending()["gated"] == 1


def test_activate_gated_by_runs_pre_enqueue_again_only_for_that_plugins_pods():
    """handle.recheck_gated (DefaultPreemption once a preemptor's eviction is over): a pod that
    plugin gates runs PreEnqueue again and enters activeQ when it passes; a pod another plugin
    gates, or an unschedulable pod waiting for an event, stays where it is."""
    holding = {"DefaultPreemption": True, "Gate": True}

    def pre_enqueue(pod: Pod) -> Status:
        plugin = pod.annotations.get("gate", "")
        if plugin and holding[plugin]:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held", plugin=plugin)
        return Status()

    q, _clock = _queue({}, pre_enqueue=pre_enqueue)
    held = make_pod().name("held").uid("held").scheduler_name("test").annotation("gate", "DefaultPreemption").pod()
    other = make_pod().name("other").uid("other").scheduler_name("test").annotation("gate", "Gate").pod()
    q.add(held)
    q.add(other)
    q.add(_pod("waiting"))
    q.requeue_failed(q.pop(), Status.unschedulable("no"), {"F"})
    assert q.pending() == {"active": 0, "backoff": 0, "unschedulable": 1, "gated": 2}
    holding["DefaultPreemption"] = holding["Gate"] = False
    q.activate([held, other, _pod("waiting")], gated_by="DefaultPreemption")
    assert q.pending() == {"active": 1, "backoff": 0, "unschedulable": 1, "gated": 1}
    assert q.pop().pod.name == "held"


def test_gated_pod_its_gating_plugin_still_holds_is_left_without_asking_the_hints():
    """still_gated (the gating plugin's PreEnqueue alone, which Go's runPreEnqueuePlugins runs
    first): a pod it still holds ends where Go's path (hints, requeue, PreEnqueue) leaves it,
    gated, without the hints being asked; once it lets go, the hints decide as before."""
    holding = {"on": False}
    hints: list[str] = []

    def fit_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        hints.append(pod.name)
        return QueueingHint.QUEUE

    def pre_enqueue(pod: Pod) -> Status:
        if holding["on"]:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished", plugin="DefaultPreemption")
        return Status()

    events = {
        "DefaultPreemption": [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), lambda p, o, n: QueueingHint.SKIP)],
        "NodeResourcesFit": [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), fit_hint)],
    }
    q, _clock = _queue(events, pre_enqueue=pre_enqueue, still_gated=lambda pod, plugin: plugin == "DefaultPreemption" and holding["on"],
                       initial_backoff=0.0, max_backoff=0.0)
    q.add(_pod("preemptor"))
    qpi = q.pop()
    q.requeue_failed(qpi, Status.unschedulable("Insufficient cpu"), {"NodeResourcesFit"})
    holding["on"] = True
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0  # gated by PreEnqueue on the way
    assert hints == ["preemptor"] and qpi.gating_plugin == "DefaultPreemption"
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 0
    assert hints == ["preemptor"]  # held: the hints were not asked
    assert q.pending()["gated"] == 1
    holding["on"] = False
    assert q.move_all_to_active_or_backoff(POD_DELETE) == 1
    assert hints == ["preemptor", "preemptor"]
    assert q.pop().pod.name == "preemptor"


def test_recheck_of_a_gated_pod_moves_it_to_active_as_activate_does():
    """queue.activate(gated_by=...) moves the pod it lets go straight to activeQ (Go's Activate:
    moveToActiveQ, backoff or not), as kubesched measured fastest on the live bench."""
    holding = {"on": False}

    def pre_enqueue(pod: Pod) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "held", plugin="DefaultPreemption") if holding["on"] else Status()

    events = {"DefaultPreemption": [ClusterEventWithHint(ClusterEvent(EventResource.POD.value, ActionType.DELETE), None)]}
    q, clock = _queue(events, pre_enqueue=pre_enqueue)
    p = _pod("p")
    q.add(p)
    q.requeue_failed(q.pop(), Status.unschedulable("no"), {"DefaultPreemption"})
    holding["on"] = True
    q.move_all_to_active_or_backoff(POD_DELETE)
    assert q.pending()["gated"] == 1
    holding["on"] = False
    q.activate([p], gated_by="DefaultPreemption")
    assert q.pending() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}
