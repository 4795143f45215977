"""SDK helpers: typed cycle-state reads, the bind-conflict status, default_normalize_score, Plugin."""

from __future__ import annotations

import pytest

from kubesched.sdk import (
    BindConflict,
    Code,
    CycleState,
    NodeScore,
    ObjectConflict,
    Plugin,
    StateError,
    Status,
    default_normalize_score,
)


class _State:
    pass


def test_read_as_returns_the_typed_value() -> None:
    s = CycleState()
    v = _State()
    s.write("PreFilterX", v)
    assert s.read_as("PreFilterX", _State) is v


def test_read_as_names_the_key_and_types() -> None:
    s = CycleState()
    s.write("PreFilterX", 3)
    with pytest.raises(StateError, match=r"^reading 'PreFilterX' from cycle state: got int, expected _State$"):
        s.read_as("PreFilterX", _State)
    with pytest.raises(KeyError, match=r"reading 'Missing' from cycle state: not found"):
        s.read_as("Missing", _State)


def test_bind_conflict_is_an_error_that_says_so() -> None:
    e = ObjectConflict("pods x is already assigned")
    st = Status.bind_conflict("already bound", error=e)
    assert isinstance(st, BindConflict) and st.code is Code.ERROR and st.error is e
    assert st.is_bind_conflict() and not Status.failed("x").is_bind_conflict()


@pytest.mark.parametrize(
    ("raw", "reverse", "want"),
    [
        ([0, 0, 0], False, [0, 0, 0]),
        ([0, 0, 0], True, [100, 100, 100]),
        ([1, 2, 4], False, [25, 50, 100]),
        ([1, 2, 4], True, [75, 50, 0]),
        ([3, 7], False, [42, 100]),  # integer division, as Go
    ],
)
def test_default_normalize_score(raw: list[int], reverse: bool, want: list[int]) -> None:
    scores = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores) is None
    assert [s.score for s in scores] == want


def test_plugin_protocol_is_structural() -> None:
    class P:
        name = "P"
        args_kind = "PArgs"
        watches = ()

        def close(self) -> None:
            pass

    assert isinstance(P(), Plugin)
    assert not isinstance(object(), Plugin)
