"""InterPodAffinity's PreFilterState built from the pod index holds tables and makes its count
dicts on first read: a clone updated by pre_filter_add_pod/remove_pod (preemption's dry run)
leaves the original's tables and verdicts untouched, and both equal the scan's states."""

from __future__ import annotations

import random

import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.interpodaffinity import InterPodAffinity
from kubesched.runtime.plugins.interpodaffinity.filtering import PRE_FILTER_STATE_KEY
from kubesched.sdk import CycleState, Node, Pod
from kubesched.testing import build_plugin, make_handle

from .test_interpodaffinity_columns import NAMESPACES, rand_node, rand_pod, st


def verdicts(pl: InterPodAffinity, cs: CycleState, pod: Pod, infos: list) -> list:
    return [st(pl.filter(cs, pod, ni)) for ni in infos]


def column_verdicts(pl: InterPodAffinity, cs: CycleState, pod: Pod, cols: object) -> list:
    codes, statuses = pl.filter_columns(cs, pod, cols)
    return [None if c == 0 else st(statuses[c]) for c in codes.tolist()]


@pytest.mark.parametrize("seed", range(6))
def test_clone_and_update_of_a_table_state(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [rand_node(rng, i) for i in range(rng.randint(3, 20))]
    handle = make_handle(nodes, [], NAMESPACES)
    cache = Cache()
    for n in nodes:
        cache.add_node(Node(n))
    for k in range(rng.randint(5, 30)):
        cache.add_pod(Pod(rand_pod(rng, f"e{k}", rng.choice(nodes)["metadata"]["name"], 0.4)))
    snap = handle._snapshot = cache.update_snapshot()
    cols, infos = snap.columns, list(snap.list())
    ref = build_plugin(InterPodAffinity, None, handle)
    ref.use_index = False
    col = build_plugin(InterPodAffinity, None, handle)
    checked = 0
    for k in range(20):
        pod = Pod(rand_pod(rng, f"in{k}", None, 0.6))
        cs_ref, cs_col = CycleState(), CycleState()
        a, b = ref.pre_filter(cs_ref, pod, snap.list()), col.pre_filter(cs_col, pod, snap.list())
        assert st(a) == st(b)
        if a is not None:
            continue
        s = cs_col.read(PRE_FILTER_STATE_KEY)
        assert s.tables is not None
        c_ref, c_col = cs_ref.clone(), cs_col.clone()
        ni = infos[rng.randrange(len(infos))]
        other = Pod(rand_pod(rng, f"add{k}", ni.name, 0.6))
        assert ref.pre_filter_add_pod(c_ref, pod, other, ni) is None
        assert col.pre_filter_add_pod(c_col, pod, other, ni) is None
        assert c_col.read(PRE_FILTER_STATE_KEY).tables is None
        # the original keeps its tables (no dicts made) and its verdicts
        assert s.tables is not None and not s._has_dicts()
        assert column_verdicts(col, cs_col, pod, cols) == verdicts(ref, cs_ref, pod, infos)
        assert column_verdicts(col, c_col, pod, cols) == verdicts(ref, c_ref, pod, infos)
        assert verdicts(col, c_col, pod, infos) == verdicts(ref, c_ref, pod, infos)
        sr, sc = c_ref.read(PRE_FILTER_STATE_KEY), c_col.read(PRE_FILTER_STATE_KEY)
        assert sc.existing_anti_affinity_counts == sr.existing_anti_affinity_counts
        assert sc.affinity_counts == sr.affinity_counts
        assert sc.anti_affinity_counts == sr.anti_affinity_counts
        # and the original's dicts, made now, are the scan's
        assert verdicts(col, cs_col, pod, infos) == verdicts(ref, cs_ref, pod, infos)
        assert s.existing_anti_affinity_counts == cs_ref.read(PRE_FILTER_STATE_KEY).existing_anti_affinity_counts
        checked += 1
    assert checked > 3
