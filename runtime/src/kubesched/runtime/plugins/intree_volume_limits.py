"""EBSLimits, GCEPDLimits, AzureDiskLimits: in the default plugin sets of
``kubescheduler.config.k8s.io/v1beta2`` and ``v1beta3`` files (kube-scheduler 1.27/1.28).
kube-scheduler removed them in 1.31 once CSI migration was complete: attach limits of those
volumes are counted by NodeVolumeLimits through their CSI drivers. They are kept as names so that
old configuration files still load; each skips itself at PreFilter and filters nothing."""

from __future__ import annotations

from kubesched.sdk import Status, hookimpl

from .helper import SKIP

__all__ = ["AzureDiskLimits", "EBSLimits", "GCEPDLimits"]


class _InTreeLimits:
    name = ""

    @hookimpl
    def pre_filter(self) -> Status:
        return SKIP

    @hookimpl
    def filter(self) -> None:
        return None

    @hookimpl
    def events_to_register(self) -> list:
        return []


class EBSLimits(_InTreeLimits):
    name = "EBSLimits"


class GCEPDLimits(_InTreeLimits):
    name = "GCEPDLimits"


class AzureDiskLimits(_InTreeLimits):
    name = "AzureDiskLimits"
