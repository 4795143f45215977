"""Taints and tolerations (v1.Taint, v1.Toleration) and their matching."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}" if self.value else f"{{{self.key}: }}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """v1.Toleration.ToleratesTaint with TaintTolerationComparisonOperators off (its
        default in v1.36): ``Gt``/``Lt`` tolerate nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator == "Exists":
            return True
        return False


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration], effects: Iterable[str] | None = None
) -> Taint | None:
    """The first taint (with one of ``effects``, if given) that no toleration tolerates."""
    tols = list(tolerations)
    eff = set(effects) if effects is not None else None
    for t in taints:
        if eff is not None and t.effect not in eff:
            continue
        if not any(tol.tolerates(t) for tol in tols):
            return t
    return None
