"""PodTopologySpread (pkg/scheduler/framework/plugins/podtopologyspread)."""

from schedviz.scheduler.framework.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.plugin import (
    NAME,
    PodTopologySpread,
    new,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "new",
]
