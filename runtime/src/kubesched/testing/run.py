"""Run plugins through a real framework cycle on the simulated cluster, and look at the result.

    from kubesched.testing import make_node, make_pod, run_profile

    result = run_profile(
        {"PriorityLabel": PriorityLabel},            # in-process plugins (or installed names)
        nodes=[make_node().name("a").label("priority", "5").obj(), make_node().name("b").obj()],
        pods=[make_pod().name("p").obj()],
        args={"PriorityLabel": {"label": "priority"}},
    )
    assert result.node("p") == "a"
    assert result.filter_reasons("p") == {"b": ["node(s) didn't have label priority"]}
    assert result.scores("p")["a"]["PriorityLabel"].normalized == 100
    assert ("Filter", "PriorityLabel", "default/p", "b") in result.calls()

An exception raised in a hook becomes an Error for that pod (as in ``kubesched run``) and is kept
with its traceback: ``result.errors("p")`` lists each one (extension point, plugin, node, the
exception and the traceback text, starting at the plugin's own frame), ``result.tracebacks("p")``
the texts alone.

By default the profile is the given plugins enabled through ``multiPoint`` on top of
PrioritySort and DefaultBinder only (``defaults=False``); ``defaults=True`` adds them on top of
kube-scheduler's default profile instead. ``points`` enables plugins at given extension points
only (``{"filter": ["A", "B"], "score": [("A", 2)]}``); ``config`` takes a whole
KubeSchedulerConfiguration (YAML text or dict) instead.
"""

from __future__ import annotations

import os
import threading
import traceback
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import kubesched.runtime
from kubesched.runtime.observe.trace import Tracer
from kubesched.sdk import Pod, Status

__all__ = ["PluginError", "PodOutcome", "RunResult", "run_profile"]

PROFILE = "kubesched-test"

#: frames in these directories (the framework, this kit) are left out of a plugin's traceback
_OWN_DIRS = tuple(os.path.dirname(d) + os.sep for d in (kubesched.runtime.__file__, __file__))


@dataclass(frozen=True)
class PluginError:
    """An exception a plugin's hook raised; the framework made it an Error for the pod."""

    #: the extension point's label, e.g. ``"Filter"``
    point: str
    plugin: str
    #: the node the call was about, ``"-"`` when it is not about one node
    node: str
    exception: BaseException
    #: the formatted traceback, from the plugin's own frame down to the ``raise``
    traceback: str

    def __str__(self) -> str:
        where = f" on node {self.node}" if self.node != "-" else ""
        return f"{self.point} plugin {self.plugin}{where} raised:\n{self.traceback}"


def _plugin_traceback(e: BaseException) -> str:
    tb: types.TracebackType | None = e.__traceback__
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(_OWN_DIRS):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(e), e, tb))


class _KitTracer(Tracer):
    """Keeps every call (``RunResult.calls``) and every exception a hook raised, per pod."""

    def __init__(self) -> None:
        super().__init__(stream=None, keep=True)
        self.errors: dict[str, list[PluginError]] = {}
        self._errors_lock = threading.Lock()

    def wrap(self, profile: str, point: str, hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        where = self.where

        def kept(*args: Any) -> Any:
            try:
                return fn(*args)
            except Exception as e:
                label, pod, node = where(hook, args)
                err = PluginError(label, plugin, node, e, _plugin_traceback(e))
                with self._errors_lock:
                    self.errors.setdefault(pod, []).append(err)
                raise

        return super().wrap(profile, point, hook, plugin, kept)


@dataclass
class PodOutcome:
    """What happened to one pod: its last attempt's placement, status and diagnostics."""

    namespace: str
    name: str
    node: str | None
    status: str  # Scheduled | Unschedulable | Error | Pending
    message: str
    attempts: int
    #: node -> Status of the Filter plugin that rejected it (last attempt that filtered)
    filter_statuses: dict[str, Status] = field(default_factory=dict)
    #: node -> plugin -> PluginScore(raw, normalized, weighted), for the last scored attempt
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    #: exceptions raised in the pod's hook calls, every attempt's, in order, with tracebacks
    errors: list[PluginError] = field(default_factory=list)


class RunResult:
    def __init__(self, scheduler: Any, cluster: Any, tracer: Any) -> None:
        self.scheduler = scheduler
        self.cluster = cluster
        self.tracer = tracer
        self._by_name: dict[str, PodOutcome] = {}
        errors: dict[str, list[PluginError]] = getattr(tracer, "errors", {})
        for uid, res in scheduler.results.items():
            diag = scheduler.diagnostics.get(uid, {})
            key = f"{res.namespace}/{res.name}"
            self._by_name[key] = PodOutcome(
                res.namespace,
                res.name,
                res.node,
                res.status,
                res.message,
                res.attempts,
                dict(diag.get("filter", {})),
                {n: dict(v) for n, v in diag.get("scores", {}).items()},
                dict(diag.get("totals", {})),
                list(errors.get(key, ())),
            )

    def _key(self, pod: str) -> str:
        return pod if "/" in pod else f"default/{pod}"

    def outcome(self, pod: str) -> PodOutcome:
        """``pod`` is ``name`` (namespace default) or ``namespace/name``."""
        try:
            return self._by_name[self._key(pod)]
        except KeyError:
            raise KeyError(f"pod {pod} was not scheduled by the test profile; known: {sorted(self._by_name)}") from None

    def node(self, pod: str) -> str | None:
        return self.outcome(pod).node

    def status(self, pod: str) -> str:
        return self.outcome(pod).status

    def message(self, pod: str) -> str:
        return self.outcome(pod).message

    def errors(self, pod: str) -> list[PluginError]:
        """Exceptions raised in ``pod``'s hook calls (each an Error for the pod), in order."""
        return list(self.outcome(pod).errors)

    def tracebacks(self, pod: str) -> list[str]:
        """The traceback text of each exception of :meth:`errors`."""
        return [e.traceback for e in self.outcome(pod).errors]

    def placements(self) -> dict[str, str | None]:
        return {k: v.node for k, v in self._by_name.items()}

    def filter_reasons(self, pod: str) -> dict[str, list[str]]:
        return {n: list(st.reasons) for n, st in self.outcome(pod).filter_statuses.items()}

    def filter_codes(self, pod: str) -> dict[str, str]:
        return {n: st.code.label for n, st in self.outcome(pod).filter_statuses.items()}

    def scores(self, pod: str) -> dict[str, dict[str, Any]]:
        """node -> plugin -> PluginScore (``raw``, ``normalized``, ``weighted``)."""
        return self.outcome(pod).scores

    def totals(self, pod: str) -> dict[str, int]:
        return self.outcome(pod).totals

    def calls(self, pod: str | None = None, point: str | None = None) -> list[tuple[str, str, str, str]]:
        """Hook calls in order, as (extension point, plugin, pod, node); node is "-" when the
        call is not about one node. Filter by ``pod`` and/or ``point``."""
        out = []
        key = self._key(pod) if pod else None
        for r in self.tracer.records:
            if key is not None and r.pod != key:
                continue
            if point is not None and r.point != point:
                continue
            out.append((r.point, r.plugin, r.pod, r.node))
        return out

    def call_results(self, pod: str | None = None) -> list[tuple[str, str, str, str, str]]:
        """Like :meth:`calls`, with each call's result (``Success``, ``score 5``, ...)."""
        key = self._key(pod) if pod else None
        return [tuple(r) for r in self.tracer.records if key is None or r.pod == key]  # type: ignore[misc]

    def rerun(self) -> RunResult:
        """Run the scheduler again until idle (after changing objects through
        :meth:`objects`, e.g. adding a node) and return the new result."""
        self.scheduler.run_until_idle()
        return RunResult(self.scheduler, self.cluster, self.tracer)

    def events(self) -> list[Any]:
        return list(self.cluster.events)

    def close(self) -> None:
        """End the run as ``kubesched`` does at shutdown: waiting pods are rejected and every
        plugin's ``close()`` is called once. :meth:`rerun` is not possible afterwards."""
        self.scheduler.shutdown()

    def objects(self) -> Any:
        return self.cluster.store


def _refs(items: Iterable[Any]) -> list[dict[str, Any]]:
    out = []
    for it in items:
        if isinstance(it, tuple):
            out.append({"name": it[0], "weight": it[1]})
        else:
            out.append({"name": it})
    return out


def profile_config(
    plugins: Iterable[str],
    *,
    points: Mapping[str, Sequence[Any]] | None = None,
    args: Mapping[str, Mapping[str, Any]] | None = None,
    defaults: bool = False,
    weights: Mapping[str, int] | None = None,
    percentage_of_nodes_to_score: int | None = 100,
) -> dict[str, Any]:
    plugs: dict[str, Any] = {}
    if not defaults:
        plugs["multiPoint"] = {"disabled": [{"name": "*"}]}
        plugs["queueSort"] = {"enabled": [{"name": "PrioritySort"}]}
        plugs["bind"] = {"enabled": [{"name": "DefaultBinder"}]}
    if points is None:
        enabled = [{"name": n, **({"weight": weights[n]} if weights and n in weights else {})} for n in plugins]
        mp = plugs.setdefault("multiPoint", {})
        mp["enabled"] = enabled
    else:
        for point, names in points.items():
            ps = plugs.setdefault(point, {})
            ps.setdefault("enabled", []).extend(_refs(names))
    profile: dict[str, Any] = {"schedulerName": PROFILE, "plugins": plugs}
    if percentage_of_nodes_to_score is not None:
        profile["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    if args:
        profile["pluginConfig"] = [{"name": n, "args": dict(a)} for n, a in args.items()]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def run_profile(
    plugins: Mapping[str, Any] | Iterable[str],
    *,
    nodes: Iterable[Mapping[str, Any]] = (),
    pods: Iterable[Mapping[str, Any] | Pod] = (),
    objects: Iterable[Mapping[str, Any]] = (),
    args: Mapping[str, Mapping[str, Any]] | None = None,
    points: Mapping[str, Sequence[Any]] | None = None,
    weights: Mapping[str, int] | None = None,
    defaults: bool = False,
    config: str | Mapping[str, Any] | None = None,
    seed: int = 1,
    reuse_results: bool = False,
) -> RunResult:
    """Schedule ``pods`` on ``nodes`` (+ ``objects``) with a profile of ``plugins``.

    ``plugins``: a mapping of config name -> plugin class/factory (registered in-process, no
    packaging needed) or names of installed plugins. Pods without ``schedulerName`` get the
    test profile's. Pods are created in order, each seeing the placements before it.
    ``reuse_results=True`` runs the framework as ``kubesched run`` does: Filter/Score results
    reused between pods with equal signatures (``sign_pod``) and the batch and column forms
    (``filter_batch``/``score_batch``, ``filter_columns``; Score's column forms run only
    without recorded diagnostics, as in ``kubesched run``) used; off by default here so that
    ``calls`` lists every per-node call. A plugin should give the same placements either way.
    """
    from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
    from kubesched.runtime.config import load_config_data
    from kubesched.runtime.registry import Registry
    from kubesched.runtime.scheduler import Scheduler

    reg = Registry.discover()
    if isinstance(plugins, Mapping):
        for name, factory in plugins.items():
            reg.register(name, factory)
        names = list(plugins)
    else:
        names = list(plugins)
    if config is None:
        cfg_data: Any = profile_config(names, points=points, args=args, defaults=defaults, weights=weights)
        profile_name = PROFILE
    else:
        cfg_data = config
        profile_name = ""
    cfg = load_config_data(
        cfg_data, source="<run_profile>", installed_plugins=reg.names(), unknown_plugin_hints=reg.unknown_plugin_hints()
    )
    if not profile_name:
        profile_name = cfg.profiles[0].scheduler_name
    manifests: list[dict[str, Any]] = []
    for n in nodes:
        manifests.append(apply_defaults({"apiVersion": "v1", "kind": "Node", **dict(n)}))
    for o in objects:
        manifests.append(apply_defaults(dict(o)))
    for p in pods:
        raw = dict(p.raw) if isinstance(p, Pod) else dict(p)
        raw.setdefault("apiVersion", "v1")
        raw.setdefault("kind", "Pod")
        spec = dict(raw.get("spec") or {})
        spec.setdefault("schedulerName", profile_name)
        raw["spec"] = spec
        manifests.append(raw)
    sim = SimulatedCluster(manifests, source="<run_profile>")
    tracer = _KitTracer()
    sched = Scheduler(cfg, reg, sim, seed=seed, tracer=tracer, simulated=True, record_diagnostics=True)
    for fw in sched.frameworks.values():
        fw.reuse_results = reuse_results
        fw.use_batch = reuse_results
        fw.use_columns = reuse_results
    sim.run(sched)
    return RunResult(sched, sim, tracer)
