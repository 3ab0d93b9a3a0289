"""kubescheduler.config.k8s.io/v1: strict decoding, defaulting and encoding.

Mirrors staging/src/k8s.io/kube-scheduler/config/v1/types.go and types_pluginargs.go (the wire
format), pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_*) and the strict decoding that
kube-scheduler's loadConfig gets from the scheme, at Kubernetes v1.34 with its default feature
gates (alpha off: VolumeBindingArgs.shape stays empty, DynamicResourcesArgs.bindingTimeout unset).

What differs:
- the v1 document is a dict (parsed YAML/JSON), decoded straight into the internal types; a field
  that is absent or null gets its v1 default on the way, as upstream's pointer fields do;
- errors are collected and raised together as ``ConfigError``; wrong types are worded like Go's
  encoding/json, unknown fields like sigs.k8s.io/json's strict mode;
- leaderElection, clientConnection, enableProfiling, enableContentionProfiling and
  delayCacheUntilActive are accepted and dropped (no meaning in a simulator);
- VolumeBindingArgs.shape: an empty list counts as unset;
- a pluginConfig entry of an in-tree plugin without args gets that plugin's default args;
- keys repeated in one YAML mapping cannot be seen once parsed (upstream refuses them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from schedviz.kube.objects import (
    DEFAULT_SCHEDULER_NAME,
    LabelSelector,
    LabelSelectorRequirement,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.default_plugins import get_default_plugins, merge_plugins
from schedviz.scheduler.apis.config.types import (
    API_VERSION,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT_SECONDS,
    EXTENSION_POINTS,
    GROUP,
    Args,
    DynamicResourcesArgs,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    format_duration,
    parse_duration,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    LEAST_ALLOCATED,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from schedviz.scheduler.apis.config.validation import ConfigError, validate
from schedviz.scheduler.framework.plugins import names

KIND = "KubeSchedulerConfiguration"

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


# ---------------------------------------------------------------------------------------------
# Strict reading of JSON objects into Go-shaped structs.


class _Decoder:
    def __init__(self) -> None:
        self.errors: list[str] = []  # type errors: upstream stops at the first one
        self.strict: list[str] = []  # unknown fields: upstream collects them all


@dataclass(frozen=True, slots=True)
class _Path:
    shown: str = ""  # "profiles[0].plugins", as in strict errors
    go: str = ""  # "profiles.plugins", as in encoding/json type errors

    def child(self, key: str) -> _Path:
        return _Path(
            f"{self.shown}.{key}" if self.shown else key, f"{self.go}.{key}" if self.go else key
        )

    def index(self, i: int) -> _Path:
        return _Path(f"{self.shown}[{i}]", self.go)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


class _Obj:
    """A JSON object being read into the Go struct ``struct``; unknown keys are strict errors."""

    def __init__(
        self,
        decoder: _Decoder,
        data: Mapping[str, Any],
        path: _Path,
        struct: str,
        known: Collection[str],
    ) -> None:
        self.decoder = decoder
        self.data = data
        self.path = path
        self.struct = struct
        for key in data:
            if key not in known:
                decoder.strict.append(f'unknown field "{path.child(str(key)).shown}"')

    def type_error(self, key: str, value: Any, go_type: str) -> None:
        self.decoder.errors.append(
            f"json: cannot unmarshal {_json_type(value)} into Go struct field "
            f"{self.struct}.{self.path.child(key).go} of type {go_type}"
        )

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str) -> Any:
        return self.data.get(key)

    def integer(self, key: str, go_type: str = "int32") -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        low, high = _INT_RANGES[go_type]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.type_error(key, value, go_type)
            return None
        if (isinstance(value, float) and not value.is_integer()) or not low <= value <= high:
            self.type_error(key, value, go_type)
            return None
        return int(value)

    def string(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.type_error(key, value, "string")
            return None
        return value

    def boolean(self, key: str) -> bool:
        value = self.data.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.type_error(key, value, "bool")
            return False
        return value

    def duration(self, key: str) -> float | None:
        """A metav1.Duration: a Go duration string such as "10s" or "1m30s"."""
        text = self.string(key)
        if text is None:
            return None
        seconds = parse_duration(text)
        if seconds is None:
            self.decoder.errors.append(f'time: invalid duration "{text}"')
        return seconds

    def strings(self, key: str) -> list[str]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.type_error(key, value, "[]string")
            return []
        out: list[str] = []
        for item in value:
            if isinstance(item, str):
                out.append(item)
            else:
                self.type_error(key, item, "string")
        return out

    def string_map(self, key: str) -> dict[str, str]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.type_error(key, value, "map[string]string")
            return {}
        out: dict[str, str] = {}
        for k, v in value.items():
            if isinstance(v, str):
                out[str(k)] = v
            else:
                self.type_error(key, v, "string")
        return out

    def obj(self, key: str, struct: str, known: Collection[str]) -> _Obj | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.type_error(key, value, f"v1.{struct}")
            return None
        return _Obj(self.decoder, value, self.path.child(key), struct, known)

    def objs(self, key: str, struct: str, known: Collection[str]) -> list[_Obj]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.type_error(key, value, f"[]v1.{struct}")
            return []
        path = self.path.child(key)
        out: list[_Obj] = []
        for i, item in enumerate(value):
            if isinstance(item, Mapping):
                out.append(_Obj(self.decoder, item, path.index(i), struct, known))
            else:
                self.type_error(key, item, f"v1.{struct}")
        return out


# ---------------------------------------------------------------------------------------------
# core/v1 and meta/v1 structures used by plugin args.


def _label_selector(o: _Obj) -> LabelSelector:
    requirements = tuple(
        LabelSelectorRequirement(
            key=r.string("key") or "",
            operator=r.string("operator") or "",
            values=tuple(r.strings("values")),
        )
        for r in o.objs(
            "matchExpressions", "LabelSelectorRequirement", ("key", "operator", "values")
        )
    )
    return LabelSelector(match_labels=o.string_map("matchLabels"), match_expressions=requirements)


def _node_selector_requirements(o: _Obj, key: str) -> tuple[NodeSelectorRequirement, ...]:
    return tuple(
        NodeSelectorRequirement(
            key=r.string("key") or "",
            operator=r.string("operator") or "",
            values=tuple(r.strings("values")),
        )
        for r in o.objs(key, "NodeSelectorRequirement", ("key", "operator", "values"))
    )


def _node_selector_term(o: _Obj | None) -> NodeSelectorTerm:
    if o is None:
        return NodeSelectorTerm()
    return NodeSelectorTerm(
        match_expressions=_node_selector_requirements(o, "matchExpressions"),
        match_fields=_node_selector_requirements(o, "matchFields"),
    )


_TERM_FIELDS = ("matchExpressions", "matchFields")


def _node_affinity(o: _Obj) -> NodeAffinity:
    required = None
    selector = o.obj(
        "requiredDuringSchedulingIgnoredDuringExecution", "NodeSelector", ("nodeSelectorTerms",)
    )
    if selector is not None:
        terms = selector.objs("nodeSelectorTerms", "NodeSelectorTerm", _TERM_FIELDS)
        required = NodeSelector(node_selector_terms=tuple(_node_selector_term(t) for t in terms))
    preferred = tuple(
        PreferredSchedulingTerm(
            weight=p.integer("weight") or 0,
            preference=_node_selector_term(p.obj("preference", "NodeSelectorTerm", _TERM_FIELDS)),
        )
        for p in o.objs(
            "preferredDuringSchedulingIgnoredDuringExecution",
            "PreferredSchedulingTerm",
            ("weight", "preference"),
        )
    )
    return NodeAffinity(required=required, preferred=preferred)


_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


def _topology_spread_constraint(o: _Obj) -> TopologySpreadConstraint:
    selector = o.obj("labelSelector", "LabelSelector", ("matchLabels", "matchExpressions"))
    return TopologySpreadConstraint(
        max_skew=o.integer("maxSkew") or 0,
        topology_key=o.string("topologyKey") or "",
        when_unsatisfiable=o.string("whenUnsatisfiable") or "",
        label_selector=None if selector is None else _label_selector(selector),
        min_domains=o.integer("minDomains"),
        node_affinity_policy=o.string("nodeAffinityPolicy"),
        node_taints_policy=o.string("nodeTaintsPolicy"),
        match_label_keys=tuple(o.strings("matchLabelKeys")),
    )


# ---------------------------------------------------------------------------------------------
# Plugin args: decoding applies the SetDefaults_*Args functions.


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


def _resources(o: _Obj, key: str) -> list[ResourceSpec]:
    """ResourceSpecs; an unset or zero weight becomes 1, an empty list the cpu/memory default."""
    specs = [
        ResourceSpec(name=r.string("name") or "", weight=r.integer("weight", "int64") or 1)
        for r in o.objs(key, "ResourceSpec", ("name", "weight"))
    ]
    return specs or _default_resources()


def _shape(o: _Obj) -> list[UtilizationShapePoint]:
    return [
        UtilizationShapePoint(
            utilization=p.integer("utilization") or 0, score=p.integer("score") or 0
        )
        for p in o.objs("shape", "UtilizationShapePoint", ("utilization", "score"))
    ]


_TYPE_META = ("apiVersion", "kind")


def _fit_args(o: _Obj) -> NodeResourcesFitArgs:
    strategy = o.obj(
        "scoringStrategy", "ScoringStrategy", ("type", "resources", "requestedToCapacityRatio")
    )
    if strategy is None:
        scoring = ScoringStrategy(type=LEAST_ALLOCATED, resources=_default_resources())
    else:
        ratio = strategy.obj(
            "requestedToCapacityRatio", "RequestedToCapacityRatioParam", ("shape",)
        )
        scoring = ScoringStrategy(
            type=strategy.string("type") or "",
            resources=_resources(strategy, "resources"),
            requested_to_capacity_ratio=None
            if ratio is None
            else RequestedToCapacityRatioParam(shape=_shape(ratio)),
        )
    return NodeResourcesFitArgs(
        ignored_resources=o.strings("ignoredResources"),
        ignored_resource_groups=o.strings("ignoredResourceGroups"),
        scoring_strategy=scoring,
    )


def _balanced_allocation_args(o: _Obj) -> NodeResourcesBalancedAllocationArgs:
    return NodeResourcesBalancedAllocationArgs(resources=_resources(o, "resources"))


def _inter_pod_affinity_args(o: _Obj) -> InterPodAffinityArgs:
    weight = o.integer("hardPodAffinityWeight")
    return InterPodAffinityArgs(
        hard_pod_affinity_weight=1 if weight is None else weight,
        ignore_preferred_terms_of_existing_pods=o.boolean("ignorePreferredTermsOfExistingPods"),
    )


def _node_affinity_args(o: _Obj) -> NodeAffinityArgs:
    added = o.obj(
        "addedAffinity",
        "NodeAffinity",
        (
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ),
    )
    return NodeAffinityArgs(added_affinity=None if added is None else _node_affinity(added))


def _pod_topology_spread_args(o: _Obj) -> PodTopologySpreadArgs:
    constraints = o.objs("defaultConstraints", "TopologySpreadConstraint", _CONSTRAINT_FIELDS)
    return PodTopologySpreadArgs(
        default_constraints=[_topology_spread_constraint(c) for c in constraints],
        defaulting_type=o.string("defaultingType") or SYSTEM_DEFAULTING,
    )


def _default_preemption_args(o: _Obj) -> DefaultPreemptionArgs:
    percentage = o.integer("minCandidateNodesPercentage")
    absolute = o.integer("minCandidateNodesAbsolute")
    return DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10 if percentage is None else percentage,
        min_candidate_nodes_absolute=100 if absolute is None else absolute,
    )


def _volume_binding_args(o: _Obj) -> VolumeBindingArgs:
    timeout = o.integer("bindTimeoutSeconds", "int64")
    return VolumeBindingArgs(
        bind_timeout_seconds=600 if timeout is None else timeout, shape=_shape(o)
    )


def _dynamic_resources_args(o: _Obj) -> DynamicResourcesArgs:
    timeout = o.duration("filterTimeout")
    return DynamicResourcesArgs(
        filter_timeout_seconds=DYNAMIC_RESOURCES_FILTER_TIMEOUT_DEFAULT_SECONDS
        if timeout is None
        else timeout,
        binding_timeout_seconds=o.duration("bindingTimeout"),
    )


@dataclass(frozen=True, slots=True)
class _ArgsType:
    fields: tuple[str, ...]
    decode: Callable[[_Obj], Args]


# The in-tree plugins whose args the v1 scheme knows (kind "<name>Args").
_ARGS_TYPES: dict[str, _ArgsType] = {
    names.DEFAULT_PREEMPTION: _ArgsType(
        ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"), _default_preemption_args
    ),
    names.DYNAMIC_RESOURCES: _ArgsType(
        ("filterTimeout", "bindingTimeout"), _dynamic_resources_args
    ),
    names.INTER_POD_AFFINITY: _ArgsType(
        ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"), _inter_pod_affinity_args
    ),
    names.NODE_AFFINITY: _ArgsType(("addedAffinity",), _node_affinity_args),
    names.NODE_RESOURCES_BALANCED_ALLOCATION: _ArgsType(("resources",), _balanced_allocation_args),
    names.NODE_RESOURCES_FIT: _ArgsType(
        ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), _fit_args
    ),
    names.POD_TOPOLOGY_SPREAD: _ArgsType(
        ("defaultConstraints", "defaultingType"), _pod_topology_spread_args
    ),
    names.VOLUME_BINDING: _ArgsType(("bindTimeoutSeconds", "shape"), _volume_binding_args),
}


def default_args(plugin_name: str) -> Args | None:
    """The defaulted args of an in-tree plugin, None for a plugin without an args type."""
    args_type = _ARGS_TYPES.get(plugin_name)
    if args_type is None:
        return None
    return args_type.decode(_Obj(_Decoder(), {}, _Path(), f"{plugin_name}Args", ()))


def _plugin_args(decoder: _Decoder, name: str, raw: Any, where: str) -> Args | None:
    """PluginConfig.decodeNestedObjects: typed args for in-tree plugins, raw ones otherwise."""
    args_type = _ARGS_TYPES.get(name)
    if args_type is None:
        return dict(raw) if isinstance(raw, Mapping) else None
    kind = f"{name}Args"
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        decoder.errors.append(
            f"{where}: decoding args for plugin {name}: json: cannot unmarshal "
            f"{_json_type(raw)} into Go value of type v1.{kind}"
        )
        return None
    given_kind = raw.get("kind")
    given_version = raw.get("apiVersion")
    if (given_kind is not None and given_kind != kind) or given_version not in (None, API_VERSION):
        group = str(given_version).split("/")[0] if given_version else ""
        decoder.errors.append(
            f"{where}: args for plugin {name} were not of type {kind}.{GROUP}, "
            f"got {given_kind or kind}.{group}"
        )
        return None
    inner = _Decoder()
    args = args_type.decode(_Obj(inner, raw, _Path(), kind, (*args_type.fields, *_TYPE_META)))
    prefix = f"{where}: decoding args for plugin {name}: "
    decoder.errors.extend(prefix + error for error in inner.errors)
    decoder.strict.extend(prefix + "strict decoding error: " + error for error in inner.strict)
    return args


# ---------------------------------------------------------------------------------------------
# The configuration.

_CONFIG_FIELDS = (
    *_TYPE_META,
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
)
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_EXTENDER_FIELDS = (
    "urlPrefix",
    "filterVerb",
    "preemptVerb",
    "prioritizeVerb",
    "weight",
    "bindVerb",
    "enableHTTPS",
    "tlsConfig",
    "httpTimeout",
    "nodeCacheCapable",
    "managedResources",
    "ignorable",
)
_TLS_FIELDS = (
    "insecure",
    "serverName",
    "certFile",
    "keyFile",
    "caFile",
    "certData",
    "keyData",
    "caData",
)


@dataclass(slots=True)
class _V1Profile:
    """A profile as read, before SetDefaults_KubeSchedulerProfile: None means unset."""

    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = field(default_factory=list)


def _plugin_set(o: _Obj | None) -> PluginSet:
    if o is None:
        return PluginSet()

    def plugins(key: str) -> list[Plugin]:
        return [
            Plugin(name=p.string("name") or "", weight=p.integer("weight") or 0)
            for p in o.objs(key, "Plugin", ("name", "weight"))
        ]

    return PluginSet(enabled=plugins("enabled"), disabled=plugins("disabled"))


def _plugins(o: _Obj) -> Plugins:
    sets = {
        attribute: _plugin_set(o.obj(name, "PluginSet", ("enabled", "disabled")))
        for name, attribute in EXTENSION_POINTS.items()
    }
    return Plugins(**sets)


def _profile(decoder: _Decoder, o: _Obj, index: int) -> _V1Profile:
    plugins = o.obj("plugins", "Plugins", tuple(EXTENSION_POINTS))
    configs: list[PluginConfig] = []
    for j, c in enumerate(o.objs("pluginConfig", "PluginConfig", ("name", "args"))):
        name = c.string("name") or ""
        where = f"decoding .profiles[{index}].pluginConfig[{j}]"
        configs.append(PluginConfig(name, _plugin_args(decoder, name, c.raw("args"), where)))
    return _V1Profile(
        scheduler_name=o.string("schedulerName"),
        percentage_of_nodes_to_score=o.integer("percentageOfNodesToScore"),
        plugins=None if plugins is None else _plugins(plugins),
        plugin_config=configs,
    )


def _extender(o: _Obj) -> Extender:
    tls = o.obj("tlsConfig", "ExtenderTLSConfig", _TLS_FIELDS)
    timeout = o.duration("httpTimeout")
    return Extender(
        url_prefix=o.string("urlPrefix") or "",
        filter_verb=o.string("filterVerb") or "",
        preempt_verb=o.string("preemptVerb") or "",
        prioritize_verb=o.string("prioritizeVerb") or "",
        weight=o.integer("weight", "int64") or 0,
        bind_verb=o.string("bindVerb") or "",
        enable_https=o.boolean("enableHTTPS"),
        tls_config=None
        if tls is None
        else ExtenderTLSConfig(
            insecure=tls.boolean("insecure"),
            server_name=tls.string("serverName") or "",
            cert_file=tls.string("certFile") or "",
            key_file=tls.string("keyFile") or "",
            ca_file=tls.string("caFile") or "",
            cert_data=tls.string("certData") or "",
            key_data=tls.string("keyData") or "",
            ca_data=tls.string("caData") or "",
        ),
        http_timeout_seconds=timeout or 0.0,
        node_cache_capable=o.boolean("nodeCacheCapable"),
        managed_resources=[
            ExtenderManagedResource(
                name=r.string("name") or "", ignored_by_scheduler=r.boolean("ignoredByScheduler")
            )
            for r in o.objs(
                "managedResources", "ExtenderManagedResource", ("name", "ignoredByScheduler")
            )
        ],
        ignorable=o.boolean("ignorable"),
    )


def _set_defaults_profile(profile: _V1Profile, scheduler_name: str) -> KubeSchedulerProfile:
    """setDefaults_KubeSchedulerProfile: merge the default plugins, add missing default args."""
    plugins = merge_plugins(get_default_plugins(), profile.plugins)
    configs = list(profile.plugin_config)
    configured = {c.name for c in configs}
    for name in plugins.names():
        if name in configured:
            continue
        args = default_args(name)
        if args is not None:
            configs.append(PluginConfig(name, args))
    return KubeSchedulerProfile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
        plugins=plugins,
        plugin_config=configs,
    )


def _set_defaults(
    o: _Obj, profiles: list[_V1Profile], extenders: list[Extender]
) -> KubeSchedulerConfiguration:
    """SetDefaults_KubeSchedulerConfiguration."""
    parallelism = o.integer("parallelism")
    percentage = o.integer("percentageOfNodesToScore")
    initial = o.integer("podInitialBackoffSeconds", "int64")
    maximum = o.integer("podMaxBackoffSeconds", "int64")
    if not profiles:
        profiles = [_V1Profile()]
    # Only a single profile gets the default name; validation requires the others to have one.
    if len(profiles) == 1 and profiles[0].scheduler_name is None:
        profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    return KubeSchedulerConfiguration(
        parallelism=16 if parallelism is None else parallelism,
        percentage_of_nodes_to_score=DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
        if percentage is None
        else percentage,
        pod_initial_backoff_seconds=1 if initial is None else initial,
        pod_max_backoff_seconds=10 if maximum is None else maximum,
        profiles=[_set_defaults_profile(p, p.scheduler_name or "") for p in profiles],
        extenders=extenders,
    )


def _check_type_meta(doc: Mapping[str, Any]) -> list[str]:
    kind = doc.get("kind")
    version = doc.get("apiVersion")
    if not kind:
        return ["Object 'Kind' is missing"]
    if not version:
        return ["Object 'apiVersion' is missing"]
    if version != API_VERSION or kind != KIND:
        return [f'no kind "{kind}" is registered for version "{version}"']
    return []


def decode_configuration(
    doc: Mapping[str, Any], known_plugins: Collection[str] | None = None
) -> KubeSchedulerConfiguration:
    """Decode, default and validate a v1 KubeSchedulerConfiguration document.

    Raises ConfigError with every problem found: decoding problems first (as kube-scheduler's
    loadConfig), then validation (ValidateKubeSchedulerConfiguration, plus unknown plugin names
    when ``known_plugins`` is given).
    """
    if not isinstance(doc, Mapping):
        raise ConfigError(
            [
                f"json: cannot unmarshal {_json_type(doc)} into Go value of type "
                "v1.KubeSchedulerConfiguration"
            ]
        )
    type_errors = _check_type_meta(doc)
    if type_errors:
        raise ConfigError(type_errors)
    decoder = _Decoder()
    config = _decode(decoder, doc)
    if decoder.errors:
        raise ConfigError(decoder.errors)
    if decoder.strict:
        raise ConfigError(["strict decoding error: " + error for error in decoder.strict])
    errors = validate(config, known_plugins)
    if errors:
        raise ConfigError(errors)
    return config


def _decode(decoder: _Decoder, doc: Mapping[str, Any]) -> KubeSchedulerConfiguration:
    o = _Obj(decoder, doc, _Path(), "KubeSchedulerConfiguration", _CONFIG_FIELDS)
    profiles = [
        _profile(decoder, p, i)
        for i, p in enumerate(o.objs("profiles", "KubeSchedulerProfile", _PROFILE_FIELDS))
    ]
    extenders = [_extender(e) for e in o.objs("extenders", "Extender", _EXTENDER_FIELDS)]
    return _set_defaults(o, profiles, extenders)


def default_configuration() -> KubeSchedulerConfiguration:
    """The configuration kube-scheduler runs with when given none (an empty v1 document)."""
    return _decode(_Decoder(), {"apiVersion": API_VERSION, "kind": KIND})


# ---------------------------------------------------------------------------------------------
# Encoding back to v1.


def _encode_plugin_set(plugin_set: PluginSet) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if plugin_set.enabled:
        out["enabled"] = [
            {"name": p.name, "weight": p.weight} if p.weight else {"name": p.name}
            for p in plugin_set.enabled
        ]
    if plugin_set.disabled:
        out["disabled"] = [{"name": p.name} for p in plugin_set.disabled]
    return out


def _encode_plugins(plugins: Plugins) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in EXTENSION_POINTS:
        encoded = _encode_plugin_set(plugins.get(name))
        if encoded:
            out[name] = encoded
    return out


def _encode_resources(resources: list[ResourceSpec]) -> list[dict[str, Any]]:
    return [{"name": r.name, "weight": r.weight} for r in resources]


def _encode_shape(shape: list[UtilizationShapePoint]) -> list[dict[str, Any]]:
    return [{"utilization": p.utilization, "score": p.score} for p in shape]


def _encode_requirements(
    requirements: tuple[NodeSelectorRequirement, ...] | tuple[LabelSelectorRequirement, ...],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in requirements:
        item: dict[str, Any] = {"key": r.key, "operator": r.operator}
        if r.values:
            item["values"] = list(r.values)
        out.append(item)
    return out


def _encode_term(term: NodeSelectorTerm) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if term.match_expressions:
        out["matchExpressions"] = _encode_requirements(term.match_expressions)
    if term.match_fields:
        out["matchFields"] = _encode_requirements(term.match_fields)
    return out


def encode_node_affinity(affinity: NodeAffinity) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if affinity.required is not None:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [_encode_term(t) for t in affinity.required.node_selector_terms]
        }
    if affinity.preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": p.weight, "preference": _encode_term(p.preference)}
            for p in affinity.preferred
        ]
    return out


def encode_label_selector(selector: LabelSelector) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        out["matchExpressions"] = _encode_requirements(selector.match_expressions)
    return out


def encode_topology_spread_constraint(c: TopologySpreadConstraint) -> dict[str, Any]:
    out: dict[str, Any] = {
        "maxSkew": c.max_skew,
        "topologyKey": c.topology_key,
        "whenUnsatisfiable": c.when_unsatisfiable,
    }
    if c.label_selector is not None:
        out["labelSelector"] = encode_label_selector(c.label_selector)
    if c.min_domains is not None:
        out["minDomains"] = c.min_domains
    if c.node_affinity_policy is not None:
        out["nodeAffinityPolicy"] = c.node_affinity_policy
    if c.node_taints_policy is not None:
        out["nodeTaintsPolicy"] = c.node_taints_policy
    if c.match_label_keys:
        out["matchLabelKeys"] = list(c.match_label_keys)
    return out


def _encode_fit_args(args: NodeResourcesFitArgs) -> dict[str, Any]:
    strategy = args.scoring_strategy
    encoded: dict[str, Any] = {
        "type": strategy.type,
        "resources": _encode_resources(strategy.resources),
    }
    if strategy.requested_to_capacity_ratio is not None:
        encoded["requestedToCapacityRatio"] = {
            "shape": _encode_shape(strategy.requested_to_capacity_ratio.shape)
        }
    out: dict[str, Any] = {"scoringStrategy": encoded}
    if args.ignored_resources:
        out["ignoredResources"] = list(args.ignored_resources)
    if args.ignored_resource_groups:
        out["ignoredResourceGroups"] = list(args.ignored_resource_groups)
    return out


def _encode_args_fields(args: Args) -> dict[str, Any]:
    if isinstance(args, dict):
        return dict(args)
    if isinstance(args, NodeResourcesFitArgs):
        return _encode_fit_args(args)
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return {"resources": _encode_resources(args.resources)}
    if isinstance(args, InterPodAffinityArgs):
        out: dict[str, Any] = {"hardPodAffinityWeight": args.hard_pod_affinity_weight}
        if args.ignore_preferred_terms_of_existing_pods:
            out["ignorePreferredTermsOfExistingPods"] = True
        return out
    if isinstance(args, NodeAffinityArgs):
        if args.added_affinity is None:
            return {}
        return {"addedAffinity": encode_node_affinity(args.added_affinity)}
    if isinstance(args, PodTopologySpreadArgs):
        out = {"defaultingType": args.defaulting_type}
        if args.default_constraints:
            out["defaultConstraints"] = [
                encode_topology_spread_constraint(c) for c in args.default_constraints
            ]
        return out
    if isinstance(args, DefaultPreemptionArgs):
        return {
            "minCandidateNodesPercentage": args.min_candidate_nodes_percentage,
            "minCandidateNodesAbsolute": args.min_candidate_nodes_absolute,
        }
    if isinstance(args, VolumeBindingArgs):
        out = {"bindTimeoutSeconds": args.bind_timeout_seconds}
        if args.shape:
            out["shape"] = _encode_shape(args.shape)
        return out
    out = {}
    if args.filter_timeout_seconds is not None:
        out["filterTimeout"] = format_duration(args.filter_timeout_seconds)
    if args.binding_timeout_seconds is not None:
        out["bindingTimeout"] = format_duration(args.binding_timeout_seconds)
    return out


def _encode_plugin_config(config: PluginConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"name": config.name}
    if config.args is None:
        return out
    fields = _encode_args_fields(config.args)
    if isinstance(config.args, dict):
        out["args"] = fields
    else:
        out["args"] = {"apiVersion": API_VERSION, "kind": f"{config.name}Args", **fields}
    return out


def _encode_extender(e: Extender) -> dict[str, Any]:
    out: dict[str, Any] = {"urlPrefix": e.url_prefix}
    optional: dict[str, Any] = {
        "filterVerb": e.filter_verb,
        "preemptVerb": e.preempt_verb,
        "prioritizeVerb": e.prioritize_verb,
        "weight": e.weight,
        "bindVerb": e.bind_verb,
        "enableHTTPS": e.enable_https,
        "nodeCacheCapable": e.node_cache_capable,
        "ignorable": e.ignorable,
    }
    out.update({k: v for k, v in optional.items() if v})
    if e.tls_config is not None:
        tls = e.tls_config
        out["tlsConfig"] = {
            k: v
            for k, v in {
                "insecure": tls.insecure,
                "serverName": tls.server_name,
                "certFile": tls.cert_file,
                "keyFile": tls.key_file,
                "caFile": tls.ca_file,
                "certData": tls.cert_data,
                "keyData": tls.key_data,
                "caData": tls.ca_data,
            }.items()
            if v
        }
    if e.http_timeout_seconds:
        out["httpTimeout"] = format_duration(e.http_timeout_seconds)
    if e.managed_resources:
        out["managedResources"] = [
            {"name": r.name, "ignoredByScheduler": True}
            if r.ignored_by_scheduler
            else {"name": r.name}
            for r in e.managed_resources
        ]
    return out


def to_v1_dict(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """Encode a configuration as a v1 document (YAML/JSON-ready); decoding it gives it back."""
    out: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "parallelism": config.parallelism,
    }
    if config.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = config.percentage_of_nodes_to_score
    out["podInitialBackoffSeconds"] = config.pod_initial_backoff_seconds
    out["podMaxBackoffSeconds"] = config.pod_max_backoff_seconds
    profiles: list[dict[str, Any]] = []
    for profile in config.profiles:
        encoded: dict[str, Any] = {"schedulerName": profile.scheduler_name}
        if profile.percentage_of_nodes_to_score is not None:
            encoded["percentageOfNodesToScore"] = profile.percentage_of_nodes_to_score
        encoded["plugins"] = _encode_plugins(profile.plugins)
        if profile.plugin_config:
            encoded["pluginConfig"] = [_encode_plugin_config(c) for c in profile.plugin_config]
        profiles.append(encoded)
    out["profiles"] = profiles
    if config.extenders:
        out["extenders"] = [_encode_extender(e) for e in config.extenders]
    return out


__all__ = [
    "API_VERSION",
    "KIND",
    "ConfigError",
    "decode_configuration",
    "default_args",
    "default_configuration",
    "to_v1_dict",
]
