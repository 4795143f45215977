"""SignPod, the result-reuse tables and the batch forms (kube-scheduler's ``signature.go`` and
``batch.go``).

Pods with equal signatures (every plugin of the point signs them, ``sign_pod``) get the same
Filter statuses and raw Scores on a node whose NodeInfo has not changed: the tables keep them
per node and generation. ``filter_batch``/``score_batch`` run one plugin over many nodes in one
call, beside the per-node hooks they must agree with.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.sdk import Code, CycleState, NodeInfo, Pod, Status
from kubesched.sdk.points import hook_info

from .contract import SUCCESS, contract_error, filter_verdict, plugin_error
from .interface import Entry

__all__ = ["ReuseAndBatch", "same_pods"]

log = logging.getLogger("kubesched.framework")

_UNSIGNED = object()


class _Raised:
    """A per-node Filter call that raised, in a batch run (its status is not wrapped again)."""

    __slots__ = ("code", "status")

    def __init__(self, status: Status) -> None:
        self.status = status
        self.code = status.code


class ReuseAndBatch:
    """The framework's signatures, reuse tables and batch runs (a part of ``FrameworkImpl``)."""

    #: signatures kept per kind of table
    REUSE_TABLES = 8

    signers: dict[str, Callable[..., Any]]
    filter_batch: dict[str, Callable[..., Any]]
    score_batch: dict[str, Callable[..., Any]]
    use_batch: bool
    _reuse: dict[str, dict[Any, tuple[int, dict[Any, Any]]]]
    _signed_pod: Pod | None
    _signed: dict[str, Any]

    if TYPE_CHECKING:

        def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo, entries: list[Entry] | None = None) -> Status: ...

    # signatures and tables --------------------------------------------------------------------
    def sign(self, names: Sequence[str], pod: Pod) -> tuple[Any, ...] | Status | None:
        """The pod's signature for the plugins ``names`` (SignPod), or None when one of them
        does not sign it (no sign_pod hook, or it returned None). An exception is an Error."""
        signers = self.signers
        if self._signed_pod is not pod:  # Filter and Score of one cycle ask for the same pod
            self._signed_pod = pod
            self._signed = {}
        memo = self._signed
        out = []
        for name in names:
            frag = memo.get(name, _UNSIGNED)
            if frag is _UNSIGNED:
                fn = signers.get(name)
                if fn is None:
                    return None
                try:
                    frag = fn(pod)
                    hash(frag)
                except TypeError as e:
                    if "unhashable" not in str(e):
                        return Status(Code.ERROR, f'running SignPod plugin "{name}": {type(e).__name__}: {e}', plugin=name, error=e)
                    return Status(Code.ERROR, f'running SignPod plugin "{name}": sign_pod returned an unhashable {type(frag).__name__} (see kubesched.sdk.freeze)', plugin=name)
                except Exception as e:
                    return Status(Code.ERROR, f'running SignPod plugin "{name}": {type(e).__name__}: {e}', plugin=name, error=e)
                memo[name] = frag
            if frag is None:
                return None
            out.append((name, frag))
        return tuple(out)

    def reuse_table(self, kind: str, signature: tuple[Any, ...], epoch: int) -> dict[Any, Any]:
        """NodeInfo -> (its generation, result) for pods with this signature; emptied
        when ``epoch`` (the snapshot's node set and images) changes. The last
        ``REUSE_TABLES`` signatures per kind are kept."""
        tables = self._reuse[kind]
        t = tables.pop(signature, None)
        if t is None or t[0] != epoch:
            t = (epoch, {})
            if len(tables) >= self.REUSE_TABLES:
                del tables[next(iter(tables))]
        tables[signature] = t
        return t[1]

    # filter_batch -----------------------------------------------------------------------------
    def batch_filters(self, state: CycleState, entries: list[Entry]) -> bool:
        """Whether this cycle's Filter runs node chunks through :meth:`run_filter_plugins_batch`
        (some active plugin has filter_batch; not in cycles that time each plugin call)."""
        if not self.use_batch or not self.filter_batch or state.record_plugin_metrics:
            return False
        fb = self.filter_batch
        return any(name in fb for name, _ in entries)

    def run_filter_plugins_batch(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], entries: list[Entry], use_batch: bool = True
    ) -> list[Status] | Status:
        """:meth:`run_filter_plugins` for each node of ``nodes``: one status per node. Plugins
        run in order, each on the nodes that passed the ones before it, through filter_batch
        when they have it (and ``use_batch``). A failing filter_batch call is an Error for the
        cycle (returned alone)."""
        batch = self.filter_batch if use_batch else {}
        if not batch or not any(name in batch for name, _ in entries):
            # node by node, every plugin on a node before the next node (as kube-scheduler);
            # an Error stops the cycle at that node
            run = self.run_filter_plugins
            out = []
            for ni in nodes:
                st = run(state, pod, ni, entries)
                if st.code is Code.ERROR:
                    return st
                out.append(st)
            return out
        results: list[Status] = [SUCCESS] * len(nodes)
        alive = list(range(len(nodes)))
        success = Code.SUCCESS
        for name, fn in entries:
            if not alive:
                break
            sub = [nodes[i] for i in alive]
            bfn = batch.get(name)
            outs = None
            if bfn is not None:
                try:
                    outs = list(bfn(state, pod, sub))
                    if len(outs) != len(sub):
                        raise ValueError(f"{len(outs)} results for {len(sub)} nodes")
                except Exception as e:
                    # The chunk may reach past the nodes kube-scheduler would look at: let the
                    # per-node form decide node by node (an error counts only where the
                    # ordered walk gets to it).
                    log.warning('filter_batch of plugin "%s" failed (%s: %s); using its filter for these nodes', name, type(e).__name__, e)
                    outs = None
            batched = outs is not None
            if outs is None:
                outs = []
                for ni in sub:
                    try:
                        outs.append(fn(state, pod, ni))
                    except Exception as e:
                        outs.append(_Raised(plugin_error("Filter", name, e)))
            nxt = []
            for i, st in zip(alive, outs):
                if st is None:
                    nxt.append(i)
                    continue
                try:
                    if st.code is success:
                        nxt.append(i)
                        continue
                except AttributeError:
                    pass
                # as run_filter_plugins: an exception's status as it is
                if type(st) is _Raised:
                    results[i] = st.status
                else:
                    results[i] = filter_verdict(name, st, batch_node=nodes[i].name if batched else None)
            alive = nxt
        return results

    # score_batch ------------------------------------------------------------------------------
    def _batch_scores(self, name: str, bfn: Callable[..., Any], state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int] | Status:
        """One plugin's raw scores through its score_batch, or the Error for the cycle."""
        try:
            out = bfn(state, pod, nodes)
            if isinstance(out, Status):
                return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {out.message}', plugin=name)
            got = list(out)
        except Exception as e:
            return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {type(e).__name__}: {e}', plugin=name, error=e)
        if len(got) != len(nodes):
            return Status(
                Code.ERROR,
                f'plugin "{name}" hook score_batch returned {len(got)} results for {len(nodes)} nodes; '
                f"expected {hook_info('score_batch').returns}",
                plugin=name,
            )
        for v in got:
            if type(v) is not int:
                k = next(k for k, x in enumerate(got) if type(x) is not int)
                return contract_error(name, "score_batch", got[k], node=nodes[k].name)
        return got


def same_pods(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same pod objects in the same order (an updated pod is a new object): the nominated
    pods part of a kept per-node result's key (Filter with nominated pods added, the dry run)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))
