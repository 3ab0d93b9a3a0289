"""VolumeBinding (pkg/scheduler/framework/plugins/volumebinding): see volume_binding.py."""

from schedviz.scheduler.framework.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)
from schedviz.scheduler.framework.plugins.volumebinding.volume_binding import (
    ERR_REASON_UNBOUND_IMMEDIATE,
    NAME,
    STATE_KEY,
    VolumeBinding,
    new,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "NAME",
    "STATE_KEY",
    "VolumeBinding",
    "new",
]
