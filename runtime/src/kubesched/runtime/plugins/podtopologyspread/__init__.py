"""PodTopologySpread, ported from kube-scheduler.

Followed: kubernetes/kubernetes ``pkg/scheduler/framework/plugins/podtopologyspread/`` as stored
from master after v1.34 (tests: filtering_test.go at 01c2588bf4a3eb6bb3524b1e2bd60efb38a4b577,
scoring_test.go at 008b3652959ca58af8be3fb5b6ecfe9ae7638282) and checked against v1.36.3, ported
with v1.36 semantics (plugin.go with queueing hints and ``fwk`` types; filtering.go with the two-element
``criticalPaths`` and per-constraint ``TpValueToMatchNum``; scoring.go with
``TopologyValueToPodCounts``/``TopologyNormalizingWeight``; common.go), plus
``framework/plugins/helper/spread.go`` (DefaultSelector) and the PodTopologySpreadArgs defaults
(``apis/config/v1/defaults.go``) and validation (``apis/config/validation/validation_pluginargs.go``).
v1.36 changed one behaviour here: a pod nominated to a node (``status.nominatedNodeName``) is
involved in the spreading like an assigned one in the pod hint (``involvedInTopologySpreading``).
Not ported: v1.36's ``SignPod`` (opportunistic batching; kubesched's ``sign_pod`` reuse does not
sign this plugin, which changes no decision) and the alpha ``TaintTolerationComparisonOperators``
gate (off at v1.36.3). Changes after v1.36.3 on master are not ported either (the
exact-minimum ``DomainsAtCount`` rewrite of the critical paths, the resize-deferred skip, the
scoring memo/cache, counting pods for an empty ``labelSelector: {}``, kubernetes#141339).
"""

from .args import PodTopologySpreadArgs
from .plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    PodTopologySpread,
    PreFilterState,
    PreScoreState,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "PreFilterState",
    "PreScoreState",
]
