"""DefaultPreemption: the PostFilter plugin that preempts lower-priority pods.

Port of kube-scheduler v1.36.3's ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``,
the generic evaluator ``pkg/scheduler/framework/preemption/preemption.go`` and the victims'
eviction in ``pkg/scheduler/framework/preemption/executor.go`` (``Executor``, new in 1.36), with
v1.36's default feature gates: the pod-group paths (``WorkloadAwarePreemption``,
``TopologyAwareWorkloadScheduling``, ``podgrouppreemption.go``, ``types.go``) are alpha and off,
so a pod with ``spec.schedulingGroup`` preempts like any other pod.

What is ported:

* ``PodEligibleToPreemptOthers``: ``preemptionPolicy: Never`` is not eligible; a pod whose
  nominated node still has a lower-priority pod terminating because of scheduler preemption is
  not eligible, unless the nominated node is UnschedulableAndUnresolvable.
* ``findCandidates``/``DryRunPreemption``: only nodes whose filter status is Unschedulable are
  tried, starting at an offset, until ``calculateNumCandidates`` candidates (and at least one that
  violates no PDB) are found. Nodes are tried one after another here (Go runs them in parallel
  and cancels); the candidates found are the same as Go's when Go's workers finish in order.
* ``SelectVictimsOnNode`` on a cloned NodeInfo and a cloned CycleState: remove all lower-priority
  pods (collected first, then removed, as v1.36 does), check the pod fits
  (``RunFilterPluginsWithNominatedPods``), reprieve PDB-violating victims first and then the
  others, from the most important down (``util.MoreImportantPod``). A node with no pod of lower
  priority than the preemptor (its lowest pod priority is cached per NodeInfo generation) gets
  v1.36's status for it, UnschedulableAndUnresolvable ``No preemption victims found for incoming
  pod``, without a copy: Go copies it, finds no victim and returns that status with the state
  untouched, so the nodes tried, their order from the offset, the statuses, the messages'
  counts and the candidates are the same. Only nodes with such a pod pay for the copies and the
  Filter runs (a subclass that overrides ``is_preemption_allowed`` or ``select_victims_on_node``
  takes Go's path for every node).
* The dry run keeps a node's result (its victims and PDB violations, or its failure status) and
  gives it to a later preemptor instead of computing it again when every input is the same:
  the Filter signature (``sign_pod`` of every Filter plugin the cycle runs, covering every
  AddPod/RemovePod extension that runs), the priority, the node's NodeInfo generation, the
  nominated pods Filter adds there, the PDBs, the snapshot's generation, and the start times
  the victims' order reads (:mod:`.reuse`). The nodes tried, their order from the offset and
  the stop are Go's; pods without a signature (affinity, spread, volumes) are computed in full.
* ``pickOneNodeForPreemption`` with Go's criteria and order.
* ``Executor.PreemptPod``: a victim waiting at Permit is *preempted* in memory
  (``waitingPod.Preempt``: its binding cycle ends with an Error, so it goes back to the queue
  through backoff rather than as unschedulable) and not deleted; its ``Preempted`` event says
  ``(in kube-scheduler memory).``. A victim that was no longer waiting, and any other victim, gets
  the ``DisruptionTarget`` condition and is deleted (a victim already gone is skipped without an
  event). A ``Preempted`` event is recorded on each victim.
* Asynchronous preemption (``SchedulerAsyncPreemption``, beta and on by default since 1.33):
  PostFilter returns the nomination at once and ``prepareCandidateAsync``'s work runs on
  ``handle.run_async`` (the binding workers on a real cluster; at once, in the caller, on the
  simulated cluster, which keeps simulations reproducible): lower-priority pods nominated to the
  node have their nomination cleared, every victim but the last is evicted (stopping at the first
  error), then the last one while it is registered as pending; nothing is done when every victim
  is already being deleted. Meanwhile PreEnqueue holds the preemptor (``waiting for the
  preemption for this pod to be finished``, ``IsPodRunningPreemption``: not once its last victim
  is gone or being deleted); EventsToRegister is Pod/Delete with a Skip hint, so the pod's other
  rejectors' hints decide when it moves (the queue's gated-pod rule of v1.36). A failed eviction
  is logged and the preemptor is activated. The synchronous ``prepareCandidate`` (the gate off:
  victims first, then the nominations; a failure is PostFilter's Error) is kept behind the
  private switch ``_async_preemption``, for Go's test tables, and is the path taken when the
  profile does not run this plugin's PreEnqueue (a ``v1beta2`` file's defaults list it at
  PostFilter only): nothing would hold the preemptor while its victims are evicted.

Differences, and why:

* The random offset of ``GetOffsetAndNumCandidates`` (``rand.Int31n``) comes from a plugin-local
  ``random.Random`` seeded with 0 (the Handle has no RNG), so simulations are reproducible; tests
  may replace :attr:`DefaultPreemption.get_offset_rand` as Go's tests replace ``getOffsetRand``.
* The hold at PreEnqueue lasts until the last victim is out of the informer's cache, not only
  until its delete call returned (a preemptor let in before the watch caught up still sees the
  victim, fails and preempts again); and a preemptor held while its eviction ran is looked at
  again when the eviction ends with the victim gone (Go waits for the next pod deletion, which
  may never come: victims another preemptor had already evicted).
* The lower-priority pods nominated to the node are read when the eviction is handed over, on
  the scheduling loop (the queue's nominator belongs to it); Go's goroutine reads them as its
  first step. Victims of one preemptor are evicted one after another (Go: in parallel).
* A victim in its PreBind phase is deleted through the API: v1.36 cancels such a victim's binding
  cycle in memory (``GetPodInPreBind``), which needs a cancellable binding cycle kubesched's
  scheduler does not have.
* Scheduler extenders do not exist in kubesched, so ``callExtenders`` is the identity.
* ``IsEligiblePod``/``MoreImportantPod`` are overridable attributes, as in Go.

Modules: :mod:`.plugin` (the plugin and the evaluator), :mod:`.victims` (candidates, the
victims' order, PDBs, the choice of a node), :mod:`.reuse` (the dry run's kept results),
:mod:`.executor` (the eviction, the PreEnqueue hold), :mod:`.args`.
"""

from __future__ import annotations

from .args import DefaultPreemptionArgs
from .plugin import NAME, DefaultPreemption
from .victims import (
    DISRUPTION_TARGET,
    NO_VICTIMS_MSG,
    NOT_HELPFUL_MSG,
    POD_REASON_PREEMPTION_BY_SCHEDULER,
    Candidate,
    filter_pods_with_pdb_violation,
    more_important_pod,
    pick_one_node_for_preemption,
    pod_start_time,
    pod_terminating_by_preemption,
)

__all__ = [
    "DISRUPTION_TARGET",
    "NAME",
    "NOT_HELPFUL_MSG",
    "NO_VICTIMS_MSG",
    "POD_REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "filter_pods_with_pdb_violation",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pod_start_time",
    "pod_terminating_by_preemption",
]
