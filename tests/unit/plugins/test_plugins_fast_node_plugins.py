"""Shortcuts of the node plugins' column forms (issue 14, zone C), compared with the per-node
hooks: ImageLocality when no node has the pod's images (every node scores the minimum; where an
image is is remembered per image column, so columns of other nodes are looked at again), and
TaintToleration when no node has taints."""

from __future__ import annotations

import numpy as np

from kubesched.runtime.plugins.imagelocality import ImageLocality
from kubesched.runtime.plugins.tainttoleration import TaintToleration
from kubesched.sdk import Code, CycleState, Pod
from kubesched.testing import build_plugin, make_handle

MB = 1024 * 1024


def _node(name: str, *images: tuple[str, int]) -> dict:
    return {
        "metadata": {"name": name},
        "status": {"images": [{"names": [n], "sizeBytes": size} for n, size in images]},
    }


def _pod(*images: str) -> Pod:
    return Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"image": i} for i in images]}})


def test_columns_of_images_no_node_has_and_then_one_has() -> None:
    bare = make_handle([_node("a"), _node("b", ("other:1", 300 * MB))])
    with_image = make_handle([_node("a"), _node("b", ("gcr.io/250:latest", 250 * MB)), _node("c")])
    plugin = build_plugin(ImageLocality, None, with_image)
    pod = _pod("gcr.io/250", "gcr.io/40")

    cols = bare.snapshot().columns
    got = plugin.score_columns(CycleState(), pod, cols, np.arange(2, dtype=np.intp))
    assert got.dtype == np.int64 and got.tolist() == [0, 0]
    assert got.tolist() == [plugin.score(CycleState(), pod, ni) for ni in bare.snapshot().list()]

    # the same plugin on columns where node b has one of the images: looked up again
    snap = with_image.snapshot()
    got = plugin.score_columns(CycleState(), pod, snap.columns, np.array([0, 1, 2], np.intp))
    want = [plugin.score(CycleState(), pod, ni) for ni in snap.list()]
    assert got.tolist() == want
    assert want[1] > 0 and want[0] == want[2] == 0
    # and once more on the first columns: still nothing
    assert plugin.score_columns(CycleState(), pod, cols, np.array([1], np.intp)).tolist() == [0]


def test_taint_toleration_columns_without_taints_and_with_one() -> None:
    plugin = build_plugin(TaintToleration, None, make_handle([_node("a")]))
    pod = _pod("img")
    bare = make_handle([_node("a"), _node("b")]).snapshot()
    codes, table = plugin.filter_columns(pod=pod, columns=bare.columns)
    assert codes.tolist() == [0, 0] and table == [None]
    assert not codes.flags.writeable  # shared by the cycles: nobody may write it
    state = CycleState()
    assert plugin.pre_score(state, pod, bare.list()) is None
    rows = np.array([1, 0], np.intp)
    assert plugin.score_columns(state=state, columns=bare.columns, rows=rows).tolist() == [0, 0]

    tainted = _node("b")
    tainted["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "p", "effect": "PreferNoSchedule"}]}
    snap = make_handle([_node("a"), tainted, _node("c")]).snapshot()
    codes, table = plugin.filter_columns(pod=pod, columns=snap.columns)
    st = table[int(codes[1])]
    assert codes.tolist()[0::2] == [0, 0]
    assert (st.code, st.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["node(s) had untolerated taint(s)"])
    assert plugin.filter(CycleState(), pod, snap.get("b")).reasons == st.reasons
    got = plugin.score_columns(state=state, columns=snap.columns, rows=np.array([0, 1, 2], np.intp))
    assert got.tolist() == [plugin.score(state, pod, ni) for ni in snap.list()] == [0, 1, 0]
