"""InterPodAffinity, ported from kube-scheduler (see :mod:`.plugin` for the Go sources followed)."""

from __future__ import annotations

from .filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from .plugin import InterPodAffinity, InterPodAffinityArgs

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
    "InterPodAffinityArgs",
]
