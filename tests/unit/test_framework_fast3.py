"""The column Filter runner's paths (issue 14, session 3): the first plugin that rejects a node
is mapped with one gather of its codes (bincount-counted), later ones only on the nodes still
passing; negative, uint64 and large codes and a mapping of statuses give the same verdicts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.runtime.framework.columns import ColumnRunners
from kubesched.sdk import Code, CycleState, Status


class _Cols:
    def __init__(self, n: int) -> None:
        self.n = n


def _run(*plugins: tuple[str, Any, Any]) -> Any:
    n = len(plugins[0][1])
    centries = [(name, (lambda c, s: lambda state, pod, columns: (c, s))(codes, statuses)) for name, codes, statuses in plugins]
    return ColumnRunners.run_filter_columns(None, CycleState(), None, _Cols(n), centries)  # type: ignore[arg-type]


def _verdicts(got: Any) -> list[tuple[int, str, str]]:
    first, table = got
    return [(i, table[c].plugin, table[c].message) for i, c in enumerate(first.tolist()) if c]


A = Status(Code.UNSCHEDULABLE, "a")
B = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "b")


@pytest.mark.parametrize(
    ("codes", "statuses"),
    [
        (np.array([0, 2, 1, 2, 0], np.int64), [None, A, B]),
        (np.array([0, 2, 1, 2, 0], np.uint8), {1: A, 2: B}),
        (np.array([0, -2, -1, -2, 0], np.int64), {-1: A, -2: B}),
        (np.array([0, 2**63, 1, 2**63, 0], np.uint64), {1: A, 2**63: B}),
        (np.array([0, 70000, 1, 70000, 0], np.int64), {1: A, 70000: B}),
    ],
)
def test_first_rejecting_plugin_maps_every_kind_of_code(codes: Any, statuses: Any) -> None:
    got = _run(("P", codes, statuses))
    assert _verdicts(got) == [(1, "P", "b"), (2, "P", "a"), (3, "P", "b")]
    assert got[0].dtype == np.int32


def test_a_code_that_passes_keeps_the_node_for_the_next_plugin() -> None:
    got = _run(
        ("P", np.array([1, 2, 0, 2], np.int8), [None, None, A]),
        ("Q", np.array([3, 3, 3, 0], np.int8), {3: Status(Code.SUCCESS), 4: B}),
        ("R", np.array([5, 5, 5, 5], np.int8), {5: B}),
    )
    assert _verdicts(got) == [(0, "R", "b"), (1, "P", "a"), (2, "R", "b"), (3, "P", "a")]


def test_a_code_without_a_status_in_the_first_rejecting_plugin_is_a_contract_error() -> None:
    codes = np.array([0, 3, 1], np.int64)
    got = _run(("P", codes, [None, None]))
    assert isinstance(got, Status) and got.code is Code.ERROR
    assert got.message == (
        'plugin "P" hook filter_columns returned tuple (array([0, 3, 1]), [None, None]); '
        "expected None or a (codes array, statuses) tuple"
    )
