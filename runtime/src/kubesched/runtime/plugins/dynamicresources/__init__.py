"""DynamicResources (kube-scheduler v1.36.3's DRA plugin): the plugin (``plugin.py``), its events
and queueing hints (``hints.py``), the allocator calls (``allocation.py``), Score (``scoring.py``),
its cycle state (``claims.py``), the shared claim tracker (``manager.py``, ``allocateddevices.py``),
PreBind's and Unreserve's claim writes (``binding.py``), DRAExtendedResource's special claim
(``extended.py``), the ``resourceclaim`` helpers and the feature gates it reads."""

from .args import DynamicResourcesArgs
from .common import NAME, STATE_KEY
from .features import DEFAULT_FEATURES, SchedulerFeatures
from .plugin import NO_NEW_CLAIMS_MSG, STATE_NOT_FOUND_MSG, DynamicResources
from .scoring import compute_score, device_unfit_reason

__all__ = [
    "DEFAULT_FEATURES",
    "NAME",
    "NO_NEW_CLAIMS_MSG",
    "STATE_KEY",
    "STATE_NOT_FOUND_MSG",
    "DynamicResources",
    "DynamicResourcesArgs",
    "SchedulerFeatures",
    "compute_score",
    "device_unfit_reason",
]
