"""kube-scheduler's ``pkg/scheduler/framework/plugins/helper/shape_score.go``: a broken linear
function over utilization, built from shape points (int64 arithmetic, Go's truncating division)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["FunctionShapePoint", "build_broken_linear_function"]


@dataclass(frozen=True, slots=True)
class FunctionShapePoint:
    #: the function's argument
    utilization: int
    #: the function's value
    score: int


def _go_div(a: int, b: int) -> int:
    """int64 division, truncating toward zero as Go does (Python's ``//`` floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def build_broken_linear_function(shape: Sequence[FunctionShapePoint]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction.

    f(p) is ``shape[0].score`` for p below the first point, ``shape[n-1].score`` above the last,
    and linear between neighbouring points.
    """
    pts = tuple((p.utilization, p.score) for p in shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return pts[0][1]
                pu, ps = pts[i - 1]
                return ps + _go_div((s - ps) * (p - pu), u - pu)
        return pts[-1][1]

    return f
