"""NodeVolumeLimits (pkg/scheduler/framework/plugins/nodevolumelimits): see csi.py."""

from schedviz.scheduler.framework.plugins.nodevolumelimits.csi import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NAME,
    CSILimits,
    new,
)

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "CSILimits", "new"]
