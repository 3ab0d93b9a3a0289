"""The internal (defaulted) KubeSchedulerConfiguration.

Mirrors pkg/scheduler/apis/config/types.go at Kubernetes v1.34. What differs:
- the process-level settings (leaderElection, clientConnection, profiling, delayCacheUntilActive)
  have no meaning in the simulator: ``v1`` accepts them and drops them;
- ``KubeSchedulerProfile.plugins`` is never ``None`` (upstream's ``*Plugins`` is always set after
  defaulting anyway);
- durations (metav1.Duration) are float seconds;
- ``DynamicResourcesArgs`` lives here because the shared ``types_pluginargs.py`` does not have it
  yet (upstream: types_pluginargs.go).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from schedviz.scheduler.apis.config.types_pluginargs import PluginArgs

GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{GROUP}/v1"

# A value of 0 means adaptive: the scheduler works out how many nodes to score
# (numFeasibleNodesToFind, 5% to 50% depending on the cluster size).
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0

# The highest score a UtilizationShapePoint may have (MaxCustomPriorityScore).
MAX_CUSTOM_PRIORITY_SCORE = 10

# Default DynamicResources filter timeout (DynamicResourcesFilterTimeoutDefault).
DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT_SECONDS = 10.0


@dataclass(slots=True)
class DynamicResourcesArgs:
    """DynamicResourcesArgs; ``None`` means unset (the timeout is then off)."""

    filter_timeout_seconds: float | None = DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT_SECONDS
    binding_timeout_seconds: float | None = None


# In-tree args are typed; an out-of-tree plugin's args stay the raw mapping (runtime.Unknown).
Args = PluginArgs | DynamicResourcesArgs | dict[str, Any]


@dataclass(slots=True)
class Plugin:
    """A plugin name and its weight; the weight only matters at Score, 0 means unset."""

    name: str
    weight: int = 0


@dataclass(slots=True)
class PluginSet:
    enabled: list[Plugin] = field(default_factory=list)
    disabled: list[Plugin] = field(default_factory=list)


@dataclass(slots=True)
class Plugins:
    pre_enqueue: PluginSet = field(default_factory=PluginSet)
    queue_sort: PluginSet = field(default_factory=PluginSet)
    pre_filter: PluginSet = field(default_factory=PluginSet)
    filter: PluginSet = field(default_factory=PluginSet)
    post_filter: PluginSet = field(default_factory=PluginSet)
    pre_score: PluginSet = field(default_factory=PluginSet)
    score: PluginSet = field(default_factory=PluginSet)
    reserve: PluginSet = field(default_factory=PluginSet)
    permit: PluginSet = field(default_factory=PluginSet)
    pre_bind: PluginSet = field(default_factory=PluginSet)
    bind: PluginSet = field(default_factory=PluginSet)
    post_bind: PluginSet = field(default_factory=PluginSet)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def get(self, extension_point: str) -> PluginSet:
        """The set of an extension point named as in the YAML ("preFilter")."""
        value: PluginSet = getattr(self, EXTENSION_POINTS[extension_point])
        return value

    def names(self) -> list[str]:
        """Plugins.Names: the sorted names enabled at any extension point (multiPoint included)."""
        return sorted({p.name for name in EXTENSION_POINTS for p in self.get(name).enabled})


# The v1 name of each extension point and its attribute, in the order of the v1 Plugins struct.
EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "multiPoint": "multi_point",
}


@dataclass(slots=True)
class PluginConfig:
    name: str
    args: Args | None = None


@dataclass(slots=True)
class KubeSchedulerProfile:
    scheduler_name: str = ""
    # None: use the configuration's value; 0: adaptive.
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins = field(default_factory=Plugins)
    plugin_config: list[PluginConfig] = field(default_factory=list)

    def args_for(self, plugin_name: str) -> Args | None:
        """The args configured for a plugin, as the framework hands them to its factory."""
        for config in self.plugin_config:
            if config.name == plugin_name:
                return config.args
        return None


@dataclass(slots=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(slots=True)
class ExtenderTLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = ""


@dataclass(slots=True)
class Extender:
    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    # 0 means the extender client's default (DefaultExtenderTimeout).
    http_timeout_seconds: float = 0.0
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = field(default_factory=list)
    ignorable: bool = False


@dataclass(slots=True)
class KubeSchedulerConfiguration:
    parallelism: int = 16
    # None: unset; v1 defaulting sets DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE (adaptive).
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    profiles: list[KubeSchedulerProfile] = field(default_factory=list)
    extenders: list[Extender] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# metav1.Duration: Go durations (time.ParseDuration, time.Duration.String) as float seconds.

_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """time.ParseDuration, in seconds; None when the text is not a Go duration."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        return None
    nanos = 0.0
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            return None
        nanos += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    seconds = nanos / 1e9
    return -seconds if text.startswith("-") else seconds


def _fraction(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_duration(seconds: float) -> str:
    """time.Duration.String, e.g. "10s", "1m30s", "500ms"."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000:
        return f"{sign}{nanos}ns"
    if nanos < 1_000_000:
        return f"{sign}{_fraction(nanos, 1_000)}µs"
    if nanos < 1_000_000_000:
        return f"{sign}{_fraction(nanos, 1_000_000)}ms"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = f"{hours}h" if hours else ""
    if hours or minutes:
        text += f"{minutes}m"
    return f"{sign}{text}{_fraction(rest, 1_000_000_000)}s"
