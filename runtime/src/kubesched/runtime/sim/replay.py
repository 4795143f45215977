"""Replay a workload over virtual time on the simulated cluster (docs/simulator.md).

The objects of the file are applied as ``SimulatedCluster.run`` always has (objects at once, plain
pods in file order 10 ms apart, each seeing the placements before it); the time annotations
(:mod:`.workload`) and the controllers (:mod:`.controllers`) add *actions* at virtual times: create
an object, delete it, cordon or drain a node, complete a pod that ran for its run time. The clock
jumps from one action to the next; in between the scheduler runs until it is idle, its own timers
(backoff, Permit waits) moving the clock only up to the next action.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.sdk import ObjectConflict, ObjectNotFound

from ..cluster.manifests import pod_problem
from ..timefmt import go_duration, rfc3339
from .controllers import Controller, check_controller, controller_of, make_controller
from .resourceclaims import ResourceClaimController, uses_claims
from .workload import (
    ARRIVE_AT,
    CONTROLLER_KINDS,
    CORDON_AT,
    DELETE_AT,
    DRAIN_AT,
    RUN_FOR,
    parse_time,
    template_run_for,
    times_of,
)

__all__ = ["Replay"]

_INF = float("inf")


class Replay:
    """One run of a workload: ``Replay(sim, scheduler).run()``.

    ``recorder``: the run's :class:`~.measure.Recorder` (told which deletions are completions).
    ``progress(t, done, total)``: called after each batch of actions (``t`` virtual seconds
    since the start; ``done`` of ``total`` actions known so far). A KeyboardInterrupt stops the
    run: :attr:`interrupted` is set and ``run`` returns (what happened so far stands)."""

    def __init__(self, sim: Any, scheduler: Any, *, recorder: Any = None, progress: Callable[[float, int, int], None] | None = None) -> None:
        self.sim = sim
        self.recorder = recorder
        self.sched = scheduler
        self.store = sim.store
        self.clock = scheduler.clock
        self.start = self.clock.now()
        self.progress = progress
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self.controllers: dict[tuple[str, str, str], Controller] = {}
        #: pods a controller created, in order (the report lists them after the file's pods)
        self.generated: list[dict[str, Any]] = []
        #: uid -> (status, why) of a pod that left the cluster: ("Completed", "ran ..."), or
        #: ("Deleted", "deleted at ..." / "evicted: ...")
        self.departures: dict[str, tuple[str, str]] = {}
        #: id() of each Pod of the file -> the uid of the pod created from it
        self.uids: dict[int, str] = {}
        self._owned: dict[tuple[str, str, str], list[str]] = {}
        #: (namespace, name) of file pods whose deletion came before they were created -> why
        self._doomed: dict[tuple[str, str], str] = {}
        #: uid -> seconds the pod runs once bound
        self._run_for: dict[str, float] = {}
        self._completing: set[str] = set()
        self.done = 0
        self.total = 0
        self.interrupted = False
        #: virtual seconds since the start when the last action was applied (the workload's end)
        self.end = 0.0
        #: the resourceclaim controller, when the file uses dynamic resource allocation
        self.claims: ResourceClaimController | None = None

    # scheduling actions ------------------------------------------------------------------------
    def at(self, offset: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` at virtual ``offset`` seconds since the start (at once if that has passed)."""
        self.total += 1
        heapq.heappush(self._heap, (self.start + offset, next(self._seq), fn))

    def _next(self) -> float:
        return self._heap[0][0] if self._heap else _INF

    def _apply_due(self) -> bool:
        now = self.clock.now()
        heap = self._heap
        did = False
        while heap and heap[0][0] <= now:
            _, _, fn = heapq.heappop(heap)
            fn()
            self.done += 1
            did = True
        return did

    def _offset(self) -> float:
        return round(self.clock.now() - self.start, 6)

    # the run --------------------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._run()
        except KeyboardInterrupt:
            self.interrupted = True

    def _run(self) -> None:
        sim, sched = self.sim, self.sched
        manifests = sim.manifests
        where = sim.where
        # every object is checked before anything runs: a bad time or controller stops the
        # run at once, not when its time comes
        times = [times_of(o, where) if isinstance(o, Mapping) else {} for o in manifests]
        for obj in manifests:
            if obj.get("kind") in CONTROLLER_KINDS:
                check_controller(obj, where(obj))
                template_run_for(obj, where)
        # the file's pods each controller owns (adopted: not created again)
        owned = self._owned
        for obj in manifests:
            if obj.get("kind") == "Pod":
                ref = controller_of(obj)
                if ref is not None:
                    owned.setdefault(ref, []).append(str((obj.get("metadata") or {}).get("name")))
        sim.start(sched.on_cluster_event)
        self.store.subscribe(self._on_event)
        if uses_claims(manifests):
            self.claims = ResourceClaimController(self.store, now=lambda: rfc3339(self.clock.now()), event=sim.event)
            self.store.subscribe(self.claims.on_event)
        later: list[dict[str, Any]] = []
        untimed: list[Controller] = []
        for obj, t in zip(manifests, times, strict=True):
            kind = obj.get("kind")
            if kind == "Pod":
                problem = pod_problem(obj)
                if problem is not None:
                    sim.rejected[_key(obj)] = f"{where(obj)}: {problem}"
                    continue
            if ARRIVE_AT in t:
                self.at(t[ARRIVE_AT], _bind_create(self._create, obj))
                self._timed(obj, t)  # after the arrival: a deletion at the same time comes second
                continue
            self._timed(obj, t)
            if kind in CONTROLLER_KINDS:
                c = self._controller(obj)
                if c is not None:
                    untimed.append(c)
                continue
            if kind == "Pod" and not (obj.get("spec") or {}).get("nodeName") and not obj["metadata"].get("creationTimestamp"):
                later.append(obj)
                continue
            self._created(sim._create(obj, self.clock.now()), obj)
        # controllers of the file make their pods at the start, before the file's plain pods
        for c in untimed:
            c.reconcile()
        sched.run_until_idle(until=self._next)
        for obj in later:
            self._apply_due()
            o = dict(obj)
            md = dict(o.get("metadata") or {})
            md["creationTimestamp"] = rfc3339(self.clock.now())
            o["metadata"] = md
            self._created(sim._create(o), obj)
            # like `kubectl apply` of a file: the next pod arrives a few milliseconds later,
            # so timers (backoff, Permit waits) do not expire between two pods of the file
            sched.run_until_idle(advance_time=False)
            self.clock.advance_to(self.clock.now() + 0.01)
        self.end = self._offset()
        while True:
            sched.run_until_idle(until=self._next)
            if not self._heap:
                break
            self.clock.advance_to(self._heap[0][0])
            self._apply_due()
            self.end = self._offset()
            if self.progress is not None:
                self.progress(self._offset(), self.done, self.total)
        if self.progress is not None:
            self.progress(self._offset(), self.done, self.total)

    def _created(self, stored: Mapping[str, Any] | None, obj: Mapping[str, Any]) -> None:
        """A Pod of the file is in the cluster: remember its uid (its row in the report), and
        delete it at once when its deletion came due before it could be created."""
        if stored is None or obj.get("kind") != "Pod":
            return
        md = stored["metadata"]
        self.uids[id(obj)] = md["uid"]
        key = (md.get("namespace") or "default", md["name"])
        why = self._doomed.pop(key, None)
        if why is not None:
            self._delete_pod(key[0], key[1], why)

    def _timed(self, obj: Mapping[str, Any], t: Mapping[str, float]) -> None:
        """Schedule an object's deletion, cordon and drain."""
        if DELETE_AT in t:
            self.at(t[DELETE_AT], lambda: self._delete(obj, f"deleted at {go_duration(t[DELETE_AT])} ({DELETE_AT})"))
        if CORDON_AT in t:
            self.at(t[CORDON_AT], lambda: self._cordon(obj))
        if DRAIN_AT in t:
            self.at(t[DRAIN_AT], lambda: self._drain(obj, t[DRAIN_AT]))

    # actions ----------------------------------------------------------------------------------------
    def _create(self, obj: Mapping[str, Any]) -> None:
        kind = obj.get("kind")
        if kind in CONTROLLER_KINDS:
            c = self._controller(obj)
            if c is not None:
                c.reconcile()
            return
        o = dict(obj)
        md = dict(o.get("metadata") or {})
        md["creationTimestamp"] = rfc3339(self.clock.now())
        o["metadata"] = md
        try:
            stored = self.store.create(o)
        except ObjectConflict as e:
            if kind == "Pod":
                self.sim.rejected[_key(obj)] = f"{self.sim.where(obj)}: {e}"
            return
        self._created(stored, obj)

    def _controller(self, obj: Mapping[str, Any]) -> Controller | None:
        stored = self.store.create(obj)
        run_for = template_run_for(obj, self.sim.where)
        c = make_controller(stored, self._create_owned, run_for, self.sim.where(obj))
        if c is None:
            return None
        rs = c.replica_set()
        if rs is not None:
            self.store.create(rs)
        # the file's pods it owns: those in the cluster already are its own, the others will be
        for name in self._owned.get(c.key, ()):
            cur = self.store.peek("v1", "Pod", name, c.namespace)
            if cur is not None and controller_of(cur) == c.key:
                c.pod_arrived(name)
                if (cur.get("spec") or {}).get("nodeName"):
                    c.pod_bound(name)
            else:
                c.declared.add(name)
        self.controllers[c.key] = c
        return c

    def _create_owned(self, pod: dict[str, Any], c: Controller) -> bool:
        problem = pod_problem(pod)
        if problem is not None:
            self.sim.rejected[_key(pod)] = f"{self.sim.where(c.obj)}: its pod {pod['metadata']['name']}: {problem}"
            return False
        pod["metadata"]["creationTimestamp"] = rfc3339(self.clock.now())
        try:
            stored = self.store.create(pod)
        except ObjectConflict:
            return False
        self.generated.append(stored)
        if c.run_for is not None:
            self._run_for[stored["metadata"]["uid"]] = c.run_for
        return True

    def _delete(self, obj: Mapping[str, Any], why: str) -> None:
        kind = str(obj.get("kind"))
        md = obj.get("metadata") or {}
        name, ns = str(md.get("name")), md.get("namespace") or "default"
        if kind in CONTROLLER_KINDS:
            c = next((c for c in self.controllers.values() if c.kind == kind and c.name == name and c.namespace == ns), None)
            if c is not None:
                c.deleted = True
                for pod_name in list(c.alive):
                    self._delete_pod(c.namespace, pod_name, f"deleted with its {kind} ({why})")
                if c.kind == "Deployment":
                    self._try_delete("apps/v1", "ReplicaSet", c.owner_name, ns)
            self._try_delete(str(obj.get("apiVersion") or "v1"), kind, name, ns)
            return
        if kind == "Pod":
            self._delete_pod(ns, name, why, not_yet=True)
            return
        if kind == "Node":
            self._try_delete("v1", "Node", name, None)
            for pod in self._pods_on(name):
                pmd = pod["metadata"]
                self._delete_pod(pmd.get("namespace") or "default", pmd["name"], f"its node {name} was removed at {go_duration(self._offset())}")
            return
        api_version = str(obj.get("apiVersion") or "v1")
        cur = self.store.peek(api_version, kind, name, ns)
        if kind == "ResourceClaim" and cur is not None and (cur.get("metadata") or {}).get("finalizers"):
            # the API server only marks an object with finalizers: it goes when the last is removed
            # (the simulated resourceclaim controller removes the claim's; nothing would remove
            # another kind's, so other kinds are deleted as before)
            if not cur["metadata"].get("deletionTimestamp"):
                self.store.apply_patch(api_version, kind, name, {"metadata": {"deletionTimestamp": rfc3339(self.clock.now())}}, ns)
            return
        self._try_delete(api_version, kind, name, ns)

    def _delete_pod(self, ns: str, name: str, why: str, *, not_yet: bool = False) -> None:
        """Delete a pod; ``not_yet``: a pod of the file not created yet is deleted as soon as
        it is (its deletion time came before its place in the file)."""
        cur = self.store.peek("v1", "Pod", name, ns)
        if cur is None:
            if not_yet:
                self._doomed[(ns, name)] = why
            return
        self.departures[cur["metadata"]["uid"]] = ("Deleted", why)
        self._try_delete("v1", "Pod", name, ns)

    def _try_delete(self, api_version: str, kind: str, name: str, ns: str | None) -> None:
        try:
            self.store.delete(api_version, kind, name, ns)
        except ObjectNotFound:
            pass

    def _pods_on(self, node: str) -> list[dict[str, Any]]:
        return [p for p in self.store.peek_all("v1", "Pod") if (p.get("spec") or {}).get("nodeName") == node]

    def _cordon(self, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name"))
        if self.store.peek("v1", "Node", name, None) is not None:
            self.store.apply_patch("v1", "Node", name, {"spec": {"unschedulable": True}})

    def _drain(self, obj: Mapping[str, Any], t: float) -> None:
        self._cordon(obj)
        name = str((obj.get("metadata") or {}).get("name"))
        for pod in self._pods_on(name):
            pmd = pod["metadata"]
            self._delete_pod(pmd.get("namespace") or "default", pmd["name"], f"evicted: node {name} drained at {go_duration(t)} ({DRAIN_AT})")

    def _complete(self, uid: str, ns: str, name: str, ran: float, node: str) -> None:
        cur = self.store.peek("v1", "Pod", name, ns)
        if cur is None or cur["metadata"].get("uid") != uid:
            return
        self._completing.add(uid)
        if self.recorder is not None:
            self.recorder.completing.add(uid)
        self.departures[uid] = ("Completed", f"ran {go_duration(ran)} on node {node} ({RUN_FOR})")
        self._try_delete("v1", "Pod", name, ns)

    # the store's events ------------------------------------------------------------------------------
    def _on_event(self, etype: str, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> None:
        if kind != "Pod":
            return
        obj = new if new is not None else old
        assert obj is not None
        md = obj.get("metadata") or {}
        ref = controller_of(obj) if md.get("ownerReferences") else None
        c = self.controllers.get(ref) if ref is not None else None
        name = str(md.get("name"))
        if etype == "DELETED":
            uid = str(md.get("uid"))
            completed = uid in self._completing
            self._completing.discard(uid)
            self._run_for.pop(uid, None)
            if c is not None:
                c.pod_gone(name, completed)
                self.at(self._offset(), c.reconcile)
            return
        node = (obj.get("spec") or {}).get("nodeName")
        if etype == "ADDED":
            if c is not None:
                c.pod_arrived(name)
            if node:
                self._bound(obj, c, str(node))
            return
        if node and not ((old or {}).get("spec") or {}).get("nodeName"):
            self._bound(obj, c, str(node))

    def _bound(self, obj: Mapping[str, Any], c: Controller | None, node: str) -> None:
        md = obj["metadata"]
        uid = md.get("uid")
        run_for = self._run_for.get(uid)
        if run_for is None:
            ann = md.get("annotations")
            if ann and RUN_FOR in ann:
                try:
                    run_for = parse_time(ann[RUN_FOR])
                except ValueError:
                    run_for = None
        if run_for is not None:
            ns, name = md.get("namespace") or "default", md["name"]
            self.at(self._offset() + run_for, lambda: self._complete(uid, ns, name, run_for, node))
        if c is not None:
            c.pod_bound(str(md.get("name")))
            if c.kind == "StatefulSet":
                self.at(self._offset(), c.reconcile)


def _bind_create(create: Callable[[Mapping[str, Any]], None], obj: Mapping[str, Any]) -> Callable[[], None]:
    return lambda: create(obj)


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    md = obj.get("metadata")
    md = md if isinstance(md, Mapping) else {}
    return (str(md.get("namespace") or "default"), str(md.get("name")))
