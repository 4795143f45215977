"""The workload controllers of the simulated cluster: Deployments, ReplicaSets, StatefulSets and
Jobs create their pods as kube-controller-manager would (docs/simulator.md, "Controllers").

* **ReplicaSet**: ``spec.replicas`` pods (default 1) named ``<name>-<5 characters>``; a pod that
  goes (deleted, evicted, preempted, completed) is replaced at once.
* **Deployment**: a ReplicaSet ``<name>-<pod-template-hash>`` (stored, so PodTopologySpread's
  default constraints see its selector), which does the above.
* **StatefulSet**: pods ``<name>-0`` ... ``<name>-<replicas-1>``; with the default
  ``podManagementPolicy: OrderedReady`` pod N+1 is created once pod N is bound (Running),
  with ``Parallel`` all at once; a pod that goes is recreated with the same name.
* **Job**: up to ``spec.parallelism`` pods (default 1) at once until ``spec.completions``
  (default: ``parallelism``) have completed; a pod completes after its template's
  ``sim.kubesched.io/run-for``; one that goes otherwise is replaced.

Pods of the file whose controller ``ownerReference`` names one of these objects are the
controller's own (adopted): they count towards its replicas and are not created again.
Names are deterministic: the same file gives the same pods in every run.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Controller", "check_controller", "controller_of", "make_controller"]

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.String alphabet


def _suffix(seed: str, n: int = 5) -> str:
    h = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHABET[b % len(_ALPHABET)] for b in h[:n])


def controller_of(pod: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a pod's controller ownerReference, or None."""
    md = pod.get("metadata") or {}
    for ref in md.get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return (str(ref.get("kind")), str(md.get("namespace") or "default"), str(ref.get("name")))
    return None


def _int(v: Any, default: int) -> int:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"must be a non-negative integer, got {v!r}")
    return v


class Controller:
    """One workload object and the pods it keeps. ``create_pod(obj, owner)`` creates a pod in
    the cluster (it returns False when the cluster refused it); the replay calls
    :meth:`reconcile` when the controller arrives and after each change of its pods."""

    def __init__(self, obj: Mapping[str, Any], create_pod: Callable[[dict[str, Any], Controller], bool], run_for: float | None) -> None:
        self.obj = obj
        self.kind = str(obj.get("kind"))
        md = obj.get("metadata") or {}
        self.namespace = str(md.get("namespace") or "default")
        self.name = str(md.get("name"))
        self.uid = str(md.get("uid") or f"uid-{self.kind.lower()}-{self.namespace}-{self.name}")
        spec = obj.get("spec") or {}
        self.template: Mapping[str, Any] = spec.get("template") or {}
        self.selector = spec.get("selector")
        self.run_for = run_for
        self._create = create_pod
        #: pod names alive (created, not gone), and those bound
        self.alive: dict[str, None] = {}
        self.bound: set[str] = set()
        #: file pods owned by this controller that have not arrived yet
        self.declared: set[str] = set()
        self.succeeded = 0
        self.created = 0
        self.deleted = False
        self.owner_kind, self.owner_name = self.kind, self.name
        self.extra_labels: dict[str, str] = {}
        if self.kind == "Deployment":
            h = _suffix(repr(sorted(_flat(self.template))), 10)
            self.owner_kind, self.owner_name = "ReplicaSet", f"{self.name}-{h}"
            self.extra_labels = {"pod-template-hash": h}
        if self.kind == "StatefulSet":
            self.ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        if self.kind == "Job":
            self.parallelism = _int(spec.get("parallelism"), 1)
            self.completions = _int(spec.get("completions"), self.parallelism)
        else:
            self.replicas = _int(spec.get("replicas"), 1)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.owner_kind, self.namespace, self.owner_name)

    def replica_set(self) -> dict[str, Any] | None:
        """The ReplicaSet a Deployment owns (stored in the cluster), or None."""
        if self.kind != "Deployment":
            return None
        spec = dict(self.obj.get("spec") or {})
        sel = copy.deepcopy(spec.get("selector") or {})
        sel.setdefault("matchLabels", {})["pod-template-hash"] = self.extra_labels["pod-template-hash"]
        md = self.obj.get("metadata") or {}
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": self.owner_name,
                "namespace": self.namespace,
                "labels": {**(md.get("labels") or {}), **self.extra_labels},
                "uid": f"{self.uid}-rs",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": self.name, "uid": self.uid, "controller": True}],
            },
            "spec": {"replicas": spec.get("replicas", 1), "selector": sel, "template": self.template},
        }

    # events from the replay -------------------------------------------------------------------
    def pod_arrived(self, name: str) -> None:
        self.declared.discard(name)
        self.alive[name] = None

    def pod_bound(self, name: str) -> None:
        if name in self.alive:
            self.bound.add(name)

    def pod_gone(self, name: str, completed: bool) -> None:
        self.alive.pop(name, None)
        self.bound.discard(name)
        if completed and self.kind == "Job":
            self.succeeded += 1

    # what the controller wants ----------------------------------------------------------------
    def reconcile(self) -> None:
        if self.deleted:
            return
        if self.kind == "Job":
            while len(self.alive) + len(self.declared) < min(self.parallelism, self.completions - self.succeeded):
                if not self._new(f"{self.name}-{_suffix(f'{self.uid}/{self.created}')}"):
                    return
            return
        if self.kind == "StatefulSet":
            have = set(self.alive) | self.declared
            for i in range(self.replicas):
                name = f"{self.name}-{i}"
                if name in have:
                    continue
                if self.ordered and any(f"{self.name}-{j}" not in self.bound for j in range(i)):
                    return
                if not self._new(name, ordinal=i):
                    return
                have.add(name)
            return
        while len(self.alive) + len(self.declared) < self.replicas:
            if not self._new(f"{self.owner_name}-{_suffix(f'{self.uid}/{self.created}')}"):
                return

    def _new(self, name: str, ordinal: int | None = None) -> bool:
        """Create one pod; False when the cluster refused it (the controller stops trying)."""
        self.created += 1
        tmpl_md = self.template.get("metadata") or {}
        labels = {**(tmpl_md.get("labels") or {}), **self.extra_labels}
        if self.kind == "StatefulSet":
            labels["statefulset.kubernetes.io/pod-name"] = name
            labels["apps.kubernetes.io/pod-index"] = str(ordinal)
        if self.kind == "Job":
            labels.setdefault("batch.kubernetes.io/job-name", self.name)
            labels.setdefault("job-name", self.name)
        spec = copy.deepcopy(dict(self.template.get("spec") or {}))
        if self.kind == "StatefulSet":
            spec.setdefault("hostname", name)
        api = "batch/v1" if self.kind == "Job" else "apps/v1"
        owner_uid = self.uid if self.kind != "Deployment" else f"{self.uid}-rs"
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": self.namespace,
                "labels": labels,
                "ownerReferences": [{"apiVersion": api, "kind": self.owner_kind, "name": self.owner_name, "uid": owner_uid, "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": spec,
        }
        ann = {k: v for k, v in (tmpl_md.get("annotations") or {}).items()}
        if ann:
            pod["metadata"]["annotations"] = ann
        if not self._create(pod, self):
            return False
        self.alive[name] = None
        return True


def _flat(obj: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(obj, Mapping):
        return [kv for k, v in obj.items() for kv in _flat(v, f"{prefix}.{k}")]
    if isinstance(obj, list):
        return [kv for i, v in enumerate(obj) for kv in _flat(v, f"{prefix}[{i}]")]
    return [(prefix, repr(obj))]


def check_controller(obj: Mapping[str, Any], where: str) -> bool:
    """Check a workload object before the run: its counts are non-negative integers and its pod
    template makes a pod the cluster accepts (ManifestError naming ``where`` and the field
    otherwise). False when it has no ``spec.template`` (it is only stored, as in a plain file)."""
    from ..cluster.manifests import ManifestError, pod_problem

    spec = obj.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise ManifestError(f"{where}: spec: must be a map")
    for f in ("replicas", "parallelism", "completions"):
        v = (spec or {}).get(f)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ManifestError(f"{where}: spec.{f}: must be a non-negative integer, got {v!r}")
    tmpl = (spec or {}).get("template")
    if tmpl is None:
        return False
    if not isinstance(tmpl, Mapping) or not isinstance(tmpl.get("spec"), Mapping):
        raise ManifestError(f"{where}: spec.template.spec: required: the pod template its pods are made from")
    md = tmpl.get("metadata")
    if md is not None and not isinstance(md, Mapping):
        raise ManifestError(f"{where}: spec.template.metadata: must be a map")
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template", **{k: v for k, v in (md or {}).items() if k in ("labels", "annotations")}}, "spec": tmpl["spec"]}
    problem = pod_problem(pod)
    if problem is not None:
        raise ManifestError(f"{where}: spec.template.{problem}")
    return True


def make_controller(obj: Mapping[str, Any], create_pod: Callable[[dict[str, Any], Controller], bool], run_for: float | None, where: str) -> Controller | None:
    """A Controller for a workload object (None without ``spec.template``: such an object is
    only stored, as in a plain file); ManifestError as :func:`check_controller` says."""
    if not check_controller(obj, where):
        return None
    return Controller(obj, create_pod, run_for)
