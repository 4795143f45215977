"""Zone F of issue 14: the framework's per-pod shortcuts decide exactly as the plain paths.

- column Filter counts a plugin's codes with bincount (any integer dtype, statuses as a list or a
  dict, codes past the list: the contract error);
- the feasible NodeInfos and the rejected names are picked through object arrays made once per
  column set (a new node set makes new ones);
- Status skips the enum call for a Code;
- the active Score entries are kept while the skipped set and the entries stay the same;
- PreFilter's usual answer (None) takes a short path with the same result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.runtime.cluster.simulated import SimulatedCluster, apply_defaults
from kubesched.runtime.config import load_config_data
from kubesched.runtime.diagnosis import Diagnosis
from kubesched.runtime.framework.runners import FrameworkImpl
from kubesched.runtime.registry import Registry
from kubesched.runtime.scheduler import Scheduler
from kubesched.runtime.scheduling import Scheduling
from kubesched.sdk import Code, CycleState, NodeColumns, Pod, PreFilterResult, Status, hookimpl
from kubesched.testing import make_node, make_pod
from kubesched.testing.run import profile_config

_DTYPES = ["int8", "uint8", "int32", "int64", "uint64"]
_TOO_BIG = Status(Code.UNSCHEDULABLE, "node(s) too big")
_WRONG = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) of another kind")


def _kind_plugin(dtype: str, as_dict: bool) -> type:
    """Filter on the node's "kind" label against the pod's "want" label (code 3) and on the
    node's "size" label (code 1), in column form with codes of ``dtype`` and statuses as a list
    or a dict; the per-node form says the same."""

    class KindColumns:
        name = "KindColumns"

        def __init__(self, args: Any = None, handle: Any = None) -> None:
            pass

        @hookimpl
        def filter(self, state: Any, pod: Pod, node_info: Any) -> Status | None:
            labels = node_info.node.labels
            if labels.get("kind") != pod.labels.get("want"):
                return Status(_WRONG.code, *_WRONG.reasons)
            if labels.get("size") == "big":
                return Status(_TOO_BIG.code, *_TOO_BIG.reasons)
            return None

        @hookimpl
        def filter_columns(self, pod: Pod, columns: NodeColumns) -> Any:
            kind, kinds = columns.label("kind")
            size, sizes = columns.label("size")
            want = pod.labels.get("want")
            wrong = kind != (kinds.index(want) if want in kinds else -2)
            big = size == (sizes.index("big") if "big" in sizes else -2)
            codes = np.where(wrong, 3, np.where(big, 1, 0)).astype(dtype)
            statuses: Any = [None, _TOO_BIG, None, _WRONG]
            if as_dict:
                statuses = {1: _TOO_BIG, 3: _WRONG}
            return codes, statuses

    return KindColumns


def _run(plugin: type, columns: bool, n: int = 130) -> list[tuple[Any, ...]]:
    reg = Registry.discover()
    reg.register("KindColumns", plugin)
    cfg = load_config_data(profile_config(["KindColumns"]), source="<test>", installed_plugins=reg.names())
    manifests = [
        apply_defaults({"apiVersion": "v1", "kind": "Node", **make_node().name(f"n{i:03d}").capacity(cpu="4", memory="8Gi")
                        .label("kind", "ab"[i % 2]).label("size", "big" if i % 2 == 0 else "small").obj()})
        for i in range(n)
    ]
    for i in range(12):
        p = make_pod().name(f"p{i}").label("want", "abc"[i % 3]).obj()
        p["spec"] = {**p["spec"], "schedulerName": cfg.profiles[0].scheduler_name}
        manifests.append({"apiVersion": "v1", "kind": "Pod", **p})
    sim = SimulatedCluster(manifests, source="<test>")
    sched = Scheduler(cfg, reg, sim, seed=5, simulated=True)
    for fw in sched.frameworks.values():
        fw.use_columns = columns
    sim.run(sched)
    return sorted((r.name, r.node, r.status, r.message) for r in sched.results.values())


@pytest.mark.parametrize("as_dict", [False, True])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_column_filter_codes_of_any_integer_dtype_decide_as_the_per_node_form(dtype: str, as_dict: bool) -> None:
    on = _run(_kind_plugin(dtype, as_dict), True)
    assert on == _run(_kind_plugin(dtype, as_dict), False)
    # every "a" node is big: "a" pods fail on both codes, "c" pods on code 3, "b" pods fit
    assert {r[0]: r[3] for r in on if r[2] != "Scheduled"} == {
        **{f"p{i}": "0/130 nodes are available: 65 node(s) of another kind, 65 node(s) too big." for i in (0, 3, 6, 9)},
        **{f"p{i}": "0/130 nodes are available: 130 node(s) of another kind." for i in (2, 5, 8, 11)},
    }


class _PastTheList:
    name = "KindColumns"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        pass

    @hookimpl
    def filter(self, node_info: Any) -> None:
        return None

    @hookimpl
    def filter_columns(self, columns: NodeColumns) -> Any:
        codes = np.zeros(columns.n, np.int8)
        codes[1] = 2
        return codes, [None, Status(Code.UNSCHEDULABLE, "node(s) too big")]


def test_a_code_past_the_statuses_is_the_contract_error() -> None:
    (r, *_) = _run(_PastTheList, True, n=4)
    assert r[2] == "Error"
    assert r[3] == (
        'plugin "KindColumns" hook filter_columns returned tuple (array([0, 2, 0, 0], dtype=int8), '
        "[None, Status(Code.UNSCHEDULABLE, 'node(s) too big')]); expected None or a (codes array, statuses) tuple"
    )


def test_diagnosis_from_an_object_array_of_names_equals_from_the_list() -> None:
    names = ["n0", "n1", "n2", "n3"]
    table = [Status(), _WRONG, _TOO_BIG]
    rows, codes = np.array([3, 0, 2]), np.array([2, 1, 1], np.int32)
    a, b = Diagnosis(), Diagnosis()
    a.rejected_columns(names, rows, codes, table)
    arr = np.empty(4, object)
    arr[:] = names
    b.rejected_columns(arr, rows, codes, table)
    assert list(a.node_to_status.items()) == list(b.node_to_status.items()) == [("n3", _TOO_BIG), ("n0", _WRONG), ("n2", _WRONG)]
    assert all(type(k) is str for k in b.node_to_status)
    assert b.node_to_status["n0"] is _WRONG


class _Cols:
    def __init__(self, names: list[str]) -> None:
        self.names = names


def test_object_arrays_follow_the_columns_lists() -> None:
    algo = Scheduling()
    first = _Cols(["a", "b"])
    got = algo._objects(first, "names")
    assert got.tolist() == ["a", "b"] and algo._objects(first, "names") is got  # made once
    second = _Cols(["a", "b", "c"])  # a new node set: new columns, new lists
    assert algo._objects(second, "names").tolist() == ["a", "b", "c"]
    third = _Cols(["x", "y", "z"])  # same length, another list
    assert algo._objects(third, "names").tolist() == ["x", "y", "z"]


def test_status_keeps_its_code_from_an_int_or_a_code() -> None:
    assert Status(2).code is Code.UNSCHEDULABLE
    assert Status(Code.SKIP).code is Code.SKIP
    assert Status(Code.ERROR, "", "x").reasons == ["x"]
    assert Status().reasons == []
    with pytest.raises(ValueError, match="9 is not a valid Code"):
        Status(9)  # type: ignore[arg-type]


def _entry(name: str) -> tuple[str, Any]:
    return name, lambda *a: None


def test_active_scores_follow_the_skipped_set_and_the_entries() -> None:
    fw = FrameworkImpl("p")
    fw.entries["score"] = [_entry("A"), _entry("B"), _entry("C")]
    state = CycleState()
    assert [n for n, _ in fw.active_scores(state)] == ["A", "B", "C"]
    state.skip_score_plugins.update({"A"})
    first = fw.active_scores(state)
    assert [n for n, _ in first] == ["B", "C"]
    assert fw.active_scores(state) is first  # kept while nothing changed
    state.skip_score_plugins.clear()
    state.skip_score_plugins.add("B")
    assert [n for n, _ in fw.active_scores(state)] == ["A", "C"]
    fw.entries["score"].append(_entry("D"))  # the entries changed in place
    assert [n for n, _ in fw.active_scores(state)] == ["A", "C", "D"]


def test_pre_filter_of_plugins_returning_none_keeps_every_node() -> None:
    fw = FrameworkImpl("p")
    fw.entries["pre_filter"] = [_entry("A"), ("B", lambda *a: Status(Code.SKIP)), _entry("C")]
    state = CycleState()
    result, st, narrowed = fw.run_pre_filter(state, Pod(make_pod().name("p").obj()), [])
    assert result == PreFilterResult(None) and st.is_success() and narrowed == set()
    assert state.skip_filter_plugins == {"B"}
    fw.entries["pre_filter"] = [("B", lambda *a: Status(Code.SKIP))]
    result, st, _ = fw.run_pre_filter(state, Pod(make_pod().name("p").obj()), [])
    assert result is None and st.is_success()
