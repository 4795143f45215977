"""The kept runs of Filter with nominated pods added (``Scheduling._nominated_verdicts``): a
node's run is given to a later pod with the same Filter signature and priority while the node's
NodeInfo generation and the nominated pods added there (the objects, in order) are the same.

Whole scheduler runs with the memo on and off must give the same placements, statuses, messages
and attempts pod by pod on the random clusters of ``test_columns_nominated`` (with result reuse
on, which the memo needs), the memo on running Filter with nominated pods added fewer times; and
a kept run whose node or nominated pods changed must not be given (a test forges the entry's
key to show the verdict it would give)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cluster.simulated import apply_defaults
from kubesched.runtime.scheduler import Scheduler
from kubesched.runtime.scheduling import Scheduling
from kubesched.sdk import Pod
from kubesched.testing import make_node, make_pod

from . import test_columns_nominated as columns_nominated
from .test_columns_nominated import HOST, _drive, _node, _result, _scheduler
from .test_columns_nominated import _pod as _random_pod


def _with_memo(monkeypatch: pytest.MonkeyPatch, memo: bool) -> None:
    """``_drive``'s schedulers with result reuse on and the memo on or off."""

    def scheduler(seed: int, columns: bool) -> tuple[Any, Any, Any]:
        sched, sim, fw = _scheduler(seed, columns)
        fw.reuse_results = True
        sched.algo._reuse_nominated = memo
        return sched, sim, fw

    monkeypatch.setattr(columns_nominated, "_scheduler", scheduler)


@pytest.mark.parametrize(("seed", "n_nodes"), [(1, 12), (2, 12), (3, 24), (4, 24)])
def test_kept_runs_never_change_a_decision(monkeypatch: pytest.MonkeyPatch, seed: int, n_nodes: int) -> None:
    steps = 220
    _with_memo(monkeypatch, True)
    kept, seen_kept = _drive(seed, True, n_nodes, steps)
    _with_memo(monkeypatch, False)
    full, seen_full = _drive(seed, True, n_nodes, steps)
    assert kept == full
    assert any("preemption:" in r[3] for r in full)  # some pod preempted (and was nominated)
    assert seen_full["added rejected"] > 0, seen_full
    # the same cycles ran, and some of them took a node's run from the memo (the runs counted
    # include the dry runs' of preemption, the same both ways)
    assert seen_kept["column cycles"] == seen_full["column cycles"] > 0
    assert 0 < seen_kept["added runs"] < seen_full["added runs"], (seen_kept, seen_full)


def _bursts(seed: int, memo: bool, n_nodes: int) -> tuple[list[tuple[Any, ...]], int]:
    """PreemptionBasic's shape on ``test_columns_nominated``'s random nodes and pods: nodes
    filled with pods of priority 0, then bursts of pods of one kind and one higher priority
    created together, so that many are nominated while the others are scheduled. Returns (per
    pod: name, node, status, message, attempts) and the number of runs with nominated pods
    added that the column path made."""
    rng = random.Random(seed)
    sched, sim, fw = _scheduler(seed, True)
    fw.reuse_results = True
    sched.algo._reuse_nominated = memo
    runs = [0, False]
    verdicts = Scheduling._nominated_verdicts
    added_run = fw.run_filter_with_nominated_pods_added

    def counting_verdicts(self: Scheduling, *args: Any) -> Any:
        runs[1] = True
        try:
            return verdicts(self, *args)
        finally:
            runs[1] = False

    def counting_added(*args: Any) -> Any:
        runs[0] += runs[1]
        return added_run(*args)

    sched.algo._nominated_verdicts = counting_verdicts.__get__(sched.algo)  # type: ignore[method-assign]
    fw.run_filter_with_nominated_pods_added = counting_added
    for i in range(n_nodes):
        sim.store.create(apply_defaults(_node(i, rng)))
    for k in range(3 * n_nodes):
        sim.store.create(apply_defaults(_random_pod(f"low{k}", rng.randrange(3), 0)))
    sched.run_until_idle()
    for b in range(6):
        kind, prio = rng.choice((0, 1, 2, 2, 3)), rng.choice((10, 100, 1000))
        for k in range(n_nodes // 2):
            sim.store.create(apply_defaults(_random_pod(f"b{b}-{k}", kind, prio)))
        sched.run_until_idle(advance_time=False)
        sched.clock.advance_to(sched.clock.now() + 0.05)
    sched.run_until_idle()
    return sorted((r.name, r.node, r.status, r.message, r.attempts) for r in sched.results.values()), runs[0]


@pytest.mark.parametrize(("seed", "n_nodes"), [(1, 40), (2, 60), (3, 120)])
def test_kept_runs_in_bursts_of_preemptors(seed: int, n_nodes: int) -> None:
    kept, kept_runs = _bursts(seed, True, n_nodes)
    full, full_runs = _bursts(seed, False, n_nodes)
    assert kept == full
    assert any("preemption:" in r[3] for r in full)
    assert sum(r[2] == "Scheduled" for r in full) > n_nodes
    assert 0 < kept_runs < full_runs / 2, (kept_runs, full_runs)


def _pod(name: str, priority: int, cpu: str | None, node: str | None = None, uid: str | None = None) -> dict[str, Any]:
    b = make_pod().name(name).priority(priority)
    if cpu is not None:
        b = b.req(cpu=cpu)
    if node is not None:
        b = b.node(node)
    if uid is not None:
        b = b.uid(uid)
    return apply_defaults({"apiVersion": "v1", "kind": "Pod", **b.obj()})


REJECTED = (
    "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


def _case(memo: bool) -> tuple[Scheduler, Any, Any, Pod]:
    """n0 (1 CPU) holds ``low`` (500m, priority 50) and has ``waiting`` (500m, priority 100)
    nominated to it; n1 (1 CPU) is full. Pod ``a`` (500m, priority 10, which cannot preempt)
    passes n0 without the nominated pod and fails with it: its run is kept for n0."""
    sched, sim, fw = _scheduler(1, True)
    fw.reuse_results = True
    sched.algo._reuse_nominated = memo
    for i in range(2):
        sim.store.create(apply_defaults(make_node().name(f"n{i}").capacity(cpu="1", memory="8Gi").label(HOST, f"n{i}").obj()))
    sim.store.create(_pod("filler", 2000, "1", node="n1"))
    sim.store.create(_pod("low", 50, "500m", node="n0"))
    sched.run_until_idle()
    waiting = Pod(_pod("waiting", 100, "500m", uid="waiting-uid"))
    sched.queue.nominator.add(waiting, "n0")
    sim.store.create(_pod("a", 10, "500m"))
    sched.run_until_idle()
    r = _result(sched, "a")
    assert (r.node, r.status, r.message) == (None, "Unschedulable", REJECTED)
    return sched, sim, fw, waiting


def _kept(fw: Any) -> dict[str, Any]:
    """The memo's one table (the signature of ``a`` and ``b``, priority 10)."""
    (table,) = [t for _epoch, t in fw._reuse["nominated"].values()]
    return table  # type: ignore[no-any-return]


def _change(sched: Scheduler, sim: Any, waiting: Pod, what: str) -> None:
    """What makes n0 fit a 500m pod of priority 10 beside the nominated pods: ``low`` leaves
    n0 (its NodeInfo generation changes), or ``waiting`` is updated to request nothing (the
    same pod, uid and node: only the object differs)."""
    if what == "generation":
        sim.store.delete("v1", "Pod", "low", "default")
    else:
        sched.queue.nominator.add(Pod(_pod("waiting", 100, None, uid=waiting.uid)), "n0")


@pytest.mark.parametrize("what", ["generation", "nominated pods"])
@pytest.mark.parametrize("memo", [True, False])
def test_a_kept_run_is_not_given_after_its_node_or_nominated_pods_changed(memo: bool, what: str) -> None:
    sched, sim, fw, waiting = _case(memo)
    if memo:
        entry = _kept(fw)["n0"]
        assert entry[1] == (waiting,)
        assert entry[2].reasons == ["Insufficient cpu"]
    else:
        assert fw._reuse["nominated"] == {}
    _change(sched, sim, waiting, what)
    sim.store.create(_pod("b", 10, "500m"))
    sched.run_until_idle()
    b = _result(sched, "b")
    assert (b.node, b.status) == ("n0", "Scheduled")


@pytest.mark.parametrize("what", ["generation", "nominated pods"])
def test_a_forged_key_gives_the_stale_verdict(what: str) -> None:
    """The entry kept for ``a``, its key made to match the changed node (what a key without
    that part would see), rejects ``b`` where the run would pass: the memo is what the tests
    above rely on, and the key's part is what keeps it out."""
    sched, sim, fw, waiting = _case(True)
    _change(sched, sim, waiting, what)
    table = _kept(fw)
    kept_generation, kept_added, kept_status = table["n0"]
    memo_of = sched.algo._nominated_memo

    def forged_memo(fwk: Any, *rest: Any) -> Any:
        # at lookup time: n0's generation and nominated pods as the cycle sees them
        got = memo_of(fwk, *rest)
        if what == "generation":
            got["n0"] = (fwk.services.snapshot().get("n0").generation, kept_added, kept_status)
        else:
            got["n0"] = (kept_generation, tuple(fwk.services.nominated_pods_for_node("n0")), kept_status)
        return got

    sched.algo._nominated_memo = forged_memo  # type: ignore[method-assign]
    sim.store.create(_pod("b", 10, "500m"))
    sched.run_until_idle()
    b = _result(sched, "b")
    assert (b.node, b.status, b.message) == (None, "Unschedulable", REJECTED)
