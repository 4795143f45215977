"""Hook specifications: one per kube-scheduler extension point.

A plugin is a class whose methods are marked with :data:`kubesched.sdk.hookimpl` and named after
these hooks. A method may declare fewer arguments than the spec (as with pytest hooks): it gets
only those it names. The docstring of each spec is the contract.

The runtime calls hooks only for the extension points where the profile enables the plugin
(``plugins.<point>.enabled`` or ``multiPoint``). ``None`` returned from a hook means Success.
An exception raised from a hook, or a return value the hook's contract does not allow, becomes a
Status with code Error for that pod: the pod is requeued with backoff, a ``FailedScheduling``
event reports it and the scheduler keeps going.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from .points import EXTENSION_POINTS
from .points import OTHER_HOOKS as _OTHER_HOOKS

if TYPE_CHECKING:
    from .columns import NodeColumns
    from .cycle_state import CycleState
    from .events import ClusterEvent, ClusterEventWithHint
    from .objects import NodeInfo, Pod, QueuedPodInfo
    from .status import NodeScore, Status

hookspec = pluggy.HookspecMarker("kubesched")

# Derived from the one table in :mod:`kubesched.sdk.points`.
#: Config extension point (camelCase, as in KubeSchedulerConfiguration) -> the hooks it runs.
EXTENSION_POINT_HOOKS: dict[str, tuple[str, ...]] = {p.name: p.hook_names for p in EXTENSION_POINTS}

#: Hooks whose presence means a plugin implements the extension point.
PRIMARY_HOOKS: dict[str, tuple[str, ...]] = {p.name: p.primary_hooks for p in EXTENSION_POINTS}

#: Hooks outside the extension point table: any plugin may implement ``events_to_register``;
#: ``sign_pod`` is asked of the plugins enabled at filter and score.
OTHER_HOOKS: tuple[str, ...] = tuple(h.name for h in _OTHER_HOOKS)


@hookspec
def pre_enqueue(pod: Pod) -> Status | None:
    """PreEnqueue: may the pod enter the active queue?

    Called when a pod is added or updated, before it is queued. Return Success (or ``None``) to
    let it in. Any other status (usually Unschedulable) keeps it out of the queue as *gated*; it
    is checked again when an event this plugin registered (:func:`events_to_register`) occurs.
    Keep it cheap: it runs for every pod event.

    :param pod: the pending pod.
    """


@hookspec
def queue_sort_less(pod_info_1: QueuedPodInfo, pod_info_2: QueuedPodInfo) -> bool:
    """QueueSort: order of the active queue.

    Return True when ``pod_info_1`` should be scheduled before ``pod_info_2``. Exactly one
    QueueSort plugin is enabled per scheduler; all profiles must use the same one.

    :param pod_info_1: a queued pod (``.pod``, ``.timestamp``, ``.attempts``).
    :param pod_info_2: another queued pod.
    """


@hookspec
def events_to_register() -> Sequence[ClusterEventWithHint | ClusterEvent]:
    """EnqueueExtensions: which cluster events may make a pod this plugin rejected schedulable.

    Called once when the profile is built. When a pod was rejected (Unschedulable at PreFilter,
    Filter, Reserve or Permit) by this plugin, only these events move it back to the queue. A pod
    gated at PreEnqueue moves only on an event its gating plugin registers; whether it moves is
    then asked of the hints of all the plugins that rejected it, the gating one included
    (kube-scheduler v1.36's rule), and PreEnqueue runs again. A
    :class:`~kubesched.sdk.ClusterEventWithHint` may carry a queueing hint
    ``hint(pod, old_obj, new_obj) -> QueueingHint`` that returns ``QueueingHint.SKIP`` for events
    that cannot help. A plugin that does not implement this hook is requeued by any event.
    """


@hookspec
def pre_filter(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Any:
    """PreFilter: check the pod and precompute state for Filter, once per cycle.

    Return ``None``, a :class:`~kubesched.sdk.Status`, a
    :class:`~kubesched.sdk.PreFilterResult` or a tuple ``(PreFilterResult | None, Status | None)``.

    * Success: go on. A PreFilterResult with ``node_names`` restricts Filter to those nodes; the
      results of all PreFilter plugins are intersected, and an empty intersection makes the pod
      UnschedulableAndUnresolvable.
    * Skip: this plugin has nothing to do for this pod; its Filter is not called this cycle.
    * Unschedulable / UnschedulableAndUnresolvable: the cycle stops, the pod is unschedulable on
      every node with these reasons; PostFilter runs.
    * Error: the cycle stops with an error.

    :param state: the cycle's state; write what Filter will need.
    :param pod: the pod being scheduled.
    :param nodes: every node of the snapshot.
    """


@hookspec
def pre_filter_add_pod(state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status | None:
    """PreFilter extension: update the state precomputed by :func:`pre_filter` as if
    ``pod_to_add`` ran on ``node_info``'s node. Used by preemption and for nominated pods.
    Called only for plugins enabled at preFilter. Return Success or Error.
    """


@hookspec
def pre_filter_remove_pod(
    state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
) -> Status | None:
    """PreFilter extension: update the precomputed state as if ``pod_to_remove`` was gone from
    ``node_info``'s node. Used by preemption to evaluate victims. Return Success or Error.
    """


@hookspec
def filter(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
    """Filter: can the pod run on this node?

    Called for each candidate node, plugins in configured order; the first plugin that does not
    return Success decides for that node and the later ones are not called for it.

    * Success: the node passes this plugin.
    * Unschedulable: the node does not fit now; preemption may help.
    * UnschedulableAndUnresolvable: the node does not fit and preemption cannot help.
    * Error: an internal problem; the whole cycle fails with an error.

    The reasons of a rejection are counted across nodes in the event message
    (``0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint ...``).
    Do not modify ``node_info``.

    :param state: the cycle's state, as PreFilter left it.
    :param pod: the pod being scheduled.
    :param node_info: the node with its pods and running totals.
    """


@hookspec
def filter_batch(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[Status | None]:
    """Filter for many nodes in one call: one result per node of ``nodes``, in order, each
    what :func:`filter` would return for that node. Optional, and only beside ``filter``
    (which stays the reference: preemption, nominated pods and ``kubesched explain`` call it):
    a plugin implements it when one loop over the nodes is cheaper than a call per node.

    The framework calls it on chunks of the candidate nodes, in the scheduling order, with only
    the nodes that passed the plugins before this one; it keeps kube-scheduler's semantics
    (the first plugin that does not succeed decides for a node; the search stops once enough
    feasible nodes are found, and results for nodes past that point are discarded). If it
    raises or returns a list of the wrong length, a warning is logged and the plugin's
    ``filter`` decides for those nodes, node by node.
    """


@hookspec
def filter_columns(state: CycleState, pod: Pod, columns: NodeColumns) -> Any:
    """Filter for every node at once, over the snapshot's columns (numpy arrays, one row per
    node: :class:`~kubesched.sdk.columns.NodeColumns`). Optional, and only beside ``filter``
    (the reference: preemption, nominated pods, ``kubesched explain`` and traced cycles call it).

    Return ``(codes, statuses)``: ``codes`` an integer array of ``len(columns)`` entries, 0 where
    the node passes, ``c > 0`` where ``filter`` would return ``statuses[c]`` for it (a Status;
    ``statuses[0]`` is not read). Return ``None`` to let ``filter`` decide node by node for this
    pod (e.g. a case the column form does not cover).

    When every Filter plugin active for a pod (not skipped by PreFilter) has this form, the
    framework runs them all over every node and keeps kube-scheduler's semantics exactly: a
    node's status is the first plugin's in configured order that rejects it, the feasible nodes
    are taken in the rotating node order and the search stops after the same number of nodes.
    Otherwise ``filter_batch``/``filter`` run. A wrong shape or an exception is an Error.
    """


@hookspec
def score_columns(state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
    """Score for many nodes at once: ``rows`` (an integer array) are the feasible nodes' rows
    in ``columns``; return an int64 array of their raw scores, in order, equal to what
    ``score`` returns for each, or a Status with code Error, or ``None`` to let ``score`` run
    node by node for this pod. Optional, and only beside ``score``. A plugin with
    ``normalize_score`` gives ``normalize_score_columns`` too, or its normalization runs on
    NodeScore lists. A wrong shape or an exception is an Error.
    """


@hookspec
def normalize_score_columns(state: CycleState, pod: Pod, scores: Any) -> Any:
    """NormalizeScore on a column: ``scores`` is an int64 array of this plugin's raw scores (one
    per feasible node, in order); return the normalized array (a new one), or a Status. Must
    agree with ``normalize_score``. ``kubesched.sdk.columns.default_normalize_columns`` is
    :func:`~kubesched.sdk.default_normalize_score` for columns.
    """


@hookspec
def post_filter(state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]) -> Any:
    """PostFilter: called only when no node passed Filter (e.g. to preempt other pods).

    Return ``None``, a Status, a :class:`~kubesched.sdk.PostFilterResult` or a tuple
    ``(PostFilterResult | None, Status | None)``. Success (with a nominated node) stops the other
    PostFilter plugins; Unschedulable lets the next one try; UnschedulableAndUnresolvable or Error
    stops them. The pod goes back to the queue either way; a nominated node is recorded in
    ``status.nominatedNodeName``. A message in the status is appended to the event message.

    :param filtered_node_status: node name -> the status that rejected it.
    """


@hookspec
def sign_pod(pod: Pod) -> Hashable | None:
    """SignPod: what this plugin's Filter and Score read of the pod, as a hashable value
    (kube-scheduler 1.35's SignPlugin). Optional; not an extension point of its own: it is
    asked of the plugins enabled at filter and score.

    Return a value (e.g. ``freeze(pod.spec.get("tolerations") or [])``) only if this promise holds:
    for two pods whose signatures are equal, this plugin's Filter status and raw Score on a node
    are the same as long as that node's NodeInfo is unchanged (same ``generation``) and no node
    was added, removed or changed its images. State written by this plugin's PreFilter/PreScore
    must then depend on the signed fields and the plugin's args only, and its NormalizeScore on
    the raw score values only, in order (not on which nodes they belong to). Return ``None``
    when this does not hold for this pod (e.g. the result depends on other pods or objects).

    When every plugin that runs Filter (not skipped by its PreFilter) signs the pod, the
    framework reuses each node's Filter result from an earlier pod with the same signatures;
    likewise for Score (not skipped by PreScore) with the raw scores, and NormalizeScore's
    result for a column of raw scores it has seen. PreFilter, PreScore, the weights and the
    host selection still run for every pod, so decisions are the same as without reuse. A
    plugin without this hook never has its results reused.
    """


@hookspec
def pre_score(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
    """PreScore: precompute state for Score, once per cycle, over the nodes that passed Filter.

    Skip means this plugin's Score is not called this cycle. Any status other than Success or
    Skip fails the cycle with an error.
    """


@hookspec
def score(state: CycleState, pod: Pod, node_info: NodeInfo) -> Any:
    """Score: rank a feasible node.

    Return an ``int`` (or ``(int, Status)``). Without :func:`normalize_score` the score must be
    in ``0..100``; the framework multiplies it by the plugin's weight and sums over plugins. The
    node with the highest total wins; ties are broken at random. A Status other than Success
    fails the cycle with an error.
    """


@hookspec
def score_batch(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Sequence[int] | Status:
    """Score for many nodes in one call: one ``int`` per node of ``nodes``, in order, equal to
    what :func:`score` returns for that node, or a Status with code Error. Optional, and only
    beside ``score`` (the reference, which ``kubesched explain`` and cycles that time each
    plugin call use). A result of the wrong length or with a non-int, or an exception, is an
    Error for the cycle.
    """


@hookspec
def normalize_score(state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
    """NormalizeScore: rewrite the raw scores of this plugin, in place, so they end in
    ``0..100`` (e.g. scale by the maximum, or reverse). Called once per cycle after all nodes
    are scored. A score outside ``0..100`` afterwards fails the cycle with an error.

    :param scores: one :class:`~kubesched.sdk.NodeScore` (``name``, ``score``) per feasible node.
    """


@hookspec
def reserve(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Reserve: the node is chosen and the pod is assumed on it; reserve what the plugin tracks.

    Any status other than Success (Unschedulable with a reason, or Error) aborts: every Reserve
    plugin gets :func:`unreserve` in reverse order and the pod is requeued.
    """


@hookspec
def unreserve(state: CycleState, pod: Pod, node_name: str) -> None:
    """Unreserve: undo :func:`reserve`. Called in reverse plugin order when a later step
    (Reserve, Permit, PreBind, Bind) fails or the pod is rejected while waiting. Must be
    idempotent and must not fail."""


@hookspec
def permit(state: CycleState, pod: Pod, node_name: str) -> Any:
    """Permit: the last gate before binding.

    Return ``None``/Success to allow, a rejection (Unschedulable) to deny, or Wait to hold the
    pod. Wait is given as ``(Status.wait(), timeout_seconds)``: the timeout must be a number
    above 0 (as kube-scheduler's Permit returns a duration with every Wait), and is capped at
    15 minutes. A Wait without one (a bare ``Status.wait()``, or a timeout of ``None``, 0 or
    less) is an Error for the pod: ``plugin "P" hook permit returned Wait without a timeout;
    a Wait needs a timeout above 0 seconds, as (Status.wait(), seconds) (capped at 15m0s)``.
    A waiting pod is allowed or rejected through ``handle.get_waiting_pod(uid)``; when the
    timeout expires it becomes Unschedulable (``rejected due to timeout after waiting ...``)
    and Unreserve runs. Waiting happens in the binding cycle: other pods keep being scheduled.
    """


@hookspec
def pre_bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """PreBind: work before the bind (e.g. provision volumes). Runs in the binding cycle.
    Any failure runs Unreserve and requeues the pod."""


@hookspec
def pre_bind_pre_flight(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """PreBindPreFlight: will :func:`pre_bind` have work to do for this pod on this node?
    Called once per binding cycle, before Permit's wait and PreBind, for the plugins enabled at
    preBind. Keep it cheap and do nothing in it (create no volume): look at what the earlier
    hooks stored in ``state``.

    Return ``None``/Success when PreBind will work for the pod, ``Status.skip()`` when it has
    nothing to do (its :func:`pre_bind` is then not called this cycle), or an Error, which fails
    the binding cycle: ``running PreBindPreFlight "P": <message>`` (Unreserve runs, the pod is
    retried with backoff). Any other code is an Error too: ``PreBindPreFlight P returned
    "Unschedulable", which is unsupported. It is supposed to return Success, Skip, or Error
    status``. A PreBind plugin without this hook counts as Success.

    When any PreBind plugin answers Success, or the pod waits at Permit, the scheduler sets the
    pod's ``status.nominatedNodeName`` to the node before PreBind (kube-scheduler's
    NominatedNodeNameForExpectation, on since 1.35), telling other components (e.g. the cluster
    autoscaler) that the pod is about to be bound there; the bind clears it again.
    """


@hookspec
def bind(state: CycleState, pod: Pod, node_name: str) -> Status | None:
    """Bind: bind the pod to the node. Bind plugins run in order; return Skip to leave the pod
    to the next one. The first one that does not skip decides; an error runs Unreserve and
    requeues the pod. Return ``Status.bind_conflict(reason)`` when the pod is already bound or
    gone: Unreserve runs and the pod is not retried (never bound twice); an ``ObjectConflict``
    or ``ObjectNotFound`` escaping from ``handle.bind_pod`` counts as one. DefaultBinder binds
    through the cluster."""


@hookspec
def post_bind(state: CycleState, pod: Pod, node_name: str) -> None:
    """PostBind: informational, after a successful bind (e.g. remember the node, clean up)."""
