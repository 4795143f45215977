"""DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1): defaults from v1/defaults.go,
validation from ValidateDefaultPreemptionArgs."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.sdk import ArgsError

__all__ = ["DefaultPreemptionArgs"]


@dataclass
class DefaultPreemptionArgs:
    """DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1); defaults from v1/defaults.go."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    def validate(self) -> None:
        """ValidateDefaultPreemptionArgs (field.ErrorList.ToAggregate())."""
        errs: list[tuple[str, str]] = []
        p = self.min_candidate_nodes_percentage
        a = self.min_candidate_nodes_absolute
        if p < 0 or p > 100:
            errs.append(("minCandidateNodesPercentage", f"Invalid value: {p}: not in valid range [0, 100]"))
        if a < 0:
            errs.append(("minCandidateNodesAbsolute", f"Invalid value: {a}: not in valid range [0, inf)"))
        if p == 0 and a == 0:
            errs.append(
                ("minCandidateNodesPercentage",
                 f"Invalid value: {p}: cannot be zero at the same time as minCandidateNodesAbsolute")
            )
            errs.append(
                ("minCandidateNodesAbsolute",
                 f"Invalid value: {a}: cannot be zero at the same time as minCandidateNodesPercentage")
            )
        if len(errs) == 1:
            raise ArgsError(*errs[0])
        if errs:
            raise ArgsError("", "[" + ", ".join(f"{f}: {m}" for f, m in errs) + "]")
