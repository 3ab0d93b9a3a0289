"""Decoding a manifest into a typed object, validating and defaulting it as the API server does.

Mirrors, for the kinds the scheduler reads:
- pkg/apis/core/v1/defaults.go and pkg/apis/{scheduling,storage}/v1/defaults.go (defaulting,
  including SetDefaults_ResourceList's rounding of every quantity up to milli precision);
- pkg/apis/core/validation/validation.go (ValidatePodCreate, ValidateNode, ValidateNamespace,
  ValidatePersistentVolume, ValidatePersistentVolumeClaim), pkg/apis/scheduling/validation,
  pkg/apis/policy/validation, pkg/apis/storage/validation (CSINode and StorageClass, in part);
- k8s.io/apimachinery/pkg/api/validation/objectmeta.go, .../apis/meta/v1/validation and
  .../util/validation (names, labels, selectors) with their exact messages;
- pkg/registry/core/pod/strategy.go, PrepareForCreate: matchLabelKeys/mismatchLabelKeys merged
  into pod affinity selectors and topology spread selectors (MatchLabelKeysInPodAffinity,
  MatchLabelKeysInPodTopologySpreadSelectorMerge, both on), the SchedulingGated condition.
- kubernetes-sigs/scheduler-plugins manifests/coscheduling/crd.yaml: the PodGroup custom
  resource's structural schema.

Deliberately different:
- Every error is collected, including wrong types (a string where a map is expected), which the
  API server reports as a decoding failure before validation; here they are ``FieldError``s in
  the wording it uses for custom resources (``... in body must be of type object: "string"``).
  A quantity that does not parse is reported at its field, e.g.
  ``spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.3": quantities must ...``.
- Pod status (phase, nominatedNodeName, conditions) is kept, where the API server resets it on
  create: manifests here are often ``kubectl get -o yaml`` output of a running cluster.
- Errors come in manifest order; upstream iterates Go maps, so its order varies between runs.
- Only fields the scheduler reads are validated in depth (no probes, env, security contexts,
  volume source details); unknown fields are ignored rather than refused.
- A missing uid is filled with a deterministic one (uuid5 of kind, namespace and name).
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from schedviz.kube import errors as fe
from schedviz.kube.crds import (
    POD_GROUP_API_VERSION,
    POD_GROUP_KIND,
    SCHEDULING_GROUP,
    PodGroup,
)
from schedviz.kube.errors import DocumentError, FieldError, InvalidObjectError, Raw
from schedviz.kube.objects import (
    DEFAULT_SCHEDULER_NAME,
    POD_PENDING,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    CSINode,
    CSINodeDriver,
    KubeObject,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeCondition,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodDisruptionBudget,
    PreferredSchedulingTerm,
    PriorityClass,
    ResourceList,
    StorageClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from schedviz.kube.quantity import Quantity, QuantityError

# ---------------------------------------------------------------------------------------------
# k8s.io/apimachinery/pkg/util/validation: names, label keys and values.

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)

IS_NEGATIVE_ERROR = "must be greater than or equal to 0"
IS_NOT_POSITIVE_ERROR = "must be greater than zero"
IS_NOT_INTEGER_ERROR = "must be an integer"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, double space and all."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    message += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            message += " or "
        message += f"'{example}', "
    return message + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


def _byte_len(value: str) -> int:
    # A lone surrogate (JSON allows "\ud800") counts as the 3 bytes of the U+FFFD Go reads.
    return len(value.encode("utf-8", "surrogatepass"))


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """content.IsLabelKey (formerly IsQualifiedName)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + msg for msg in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = []
    if _byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    errs = []
    if len(port) > 15:
        errs.append(max_len_error(15))
    if not _PORT_NAME_CHARSET_RE.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


NameFn = Callable[[str, bool], list[str]]


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """What any stored object's name must be (path.IsValidPathSegmentName), and 253 at most.

    Deliberately looser than the API server for Pods and Nodes: their names are not held to
    DNS-1123 (no upper case), because upstream's own scheduler tests, and so the cases that
    check schedviz against them, use names like "nodeA". A name that could not be stored at all
    is still refused.
    """
    del prefix
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    errors = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
    if len(name) > 253:
        errors.append("must be no more than 253 characters")
    return errors


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


# ---------------------------------------------------------------------------------------------
# Quantities: upstream prints them in canonical form (Quantity.String()).

_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
_DECIMAL_SUFFIXES[18] = "E"
_BINARY_SUFFIXES = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_EXPONENT_SUFFIX = re.compile(r"[eE][+-]?\d+$")


def _ceil_away(value: Fraction) -> int:
    if value >= 0:
        return -((-value.numerator) // value.denominator)
    return value.numerator // value.denominator


def _round_up_to_milli(quantity: Quantity) -> Quantity:
    """SetDefaults_ResourceList: every value is rounded up (away from zero) to milli precision."""
    milli = quantity.amount * 1000
    if milli.denominator == 1:
        return quantity
    return Quantity(Fraction(_ceil_away(milli), 1000))


def canonical_quantity(quantity: Quantity) -> str:
    """resource.Quantity.String(): "1.5" is "1500m", "1024Mi" is "1Gi", "2000" is "2k"."""
    text = str(quantity)
    amount = Fraction(_ceil_away(quantity.amount * 10**9), 10**9)  # upstream keeps nano precision
    if text[-2:] in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        style = "binary" if not -1024 < amount < 1024 and amount.denominator == 1 else "decimal"
    else:
        style = "exponent" if _EXPONENT_SUFFIX.search(text) else "decimal"
    if style == "binary":
        value, power = int(amount), 0
        while value % 1024 == 0 and power < 6:
            value //= 1024
            power += 1
        return f"{value}{_BINARY_SUFFIXES[power]}"
    mantissa, exponent = int(amount * 10**9), -9
    if mantissa == 0:
        return "0"
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    if exponent % 3 == 1:
        mantissa, exponent = mantissa * 10, exponent - 1
    elif exponent % 3 == 2:
        mantissa, exponent = mantissa * 100, exponent - 2
    if style == "exponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent in _DECIMAL_SUFFIXES:
        return f"{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
    return f"{mantissa}e{exponent}"


# pkg/apis/core/helper: which resource names are native, integer, overcommittable.
_STANDARD_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
_INTEGER_RESOURCES = {
    "pods",
    "services",
    "replicationcontrollers",
    "resourcequotas",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
}
HUGEPAGES_PREFIX = "hugepages-"


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_hugepage_resource(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def _is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepage_resource(name)


# ---------------------------------------------------------------------------------------------
# Paths: field.Path's Child (``a.b``), Index (``a[0]``) and Key (``a[key]``).


def child(path: str, *names: str) -> str:
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


_GO_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float):
        return "number"
    return _GO_TYPES.get(type(value), type(value).__name__)


class _Reader:
    """Typed access to a manifest that records a FieldError for every value of the wrong type."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, error: FieldError) -> None:
        self.errors.append(error)

    def extend(self, errors: Iterable[FieldError]) -> None:
        self.errors.extend(errors)

    def _wrong(self, path: str, value: Any, expected: str) -> None:
        # The structural-schema wording the API server uses for custom resources, e.g.
        # spec.replicas: Invalid value: "string": spec.replicas in body must be of type
        # integer: "string"
        actual = _type_name(value)
        detail = f"{path} in body must be of type {expected}: {fe.go_quote(actual)}"
        self.add(fe.type_invalid(path, actual, detail))

    def obj(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, Any]:
        value = obj.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._wrong(child(path, name), value, "object")
            return {}
        return value

    def optional_map(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, Any] | None:
        value = obj.get(name)
        if value is None:
            return None
        if not isinstance(value, dict):
            self._wrong(child(path, name), value, "object")
            return None
        return value

    def array(self, obj: Mapping[str, Any], name: str, path: str) -> list[Any]:
        value = obj.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            self._wrong(child(path, name), value, "array")
            return []
        return value

    def maps(
        self, obj: Mapping[str, Any], name: str, path: str
    ) -> list[tuple[str, dict[str, Any]]]:
        """A list of objects, each with its path; items of the wrong type are reported."""
        items = []
        for i, item in enumerate(self.array(obj, name, path)):
            item_path = index(child(path, name), i)
            if not isinstance(item, dict):
                self._wrong(item_path, item, "object")
                continue
            items.append((item_path, item))
        return items

    def string(self, obj: Mapping[str, Any], name: str, path: str, default: str = "") -> str:
        value = obj.get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            self._wrong(child(path, name), value, "string")
            return default
        return value

    def optional_str(self, obj: Mapping[str, Any], name: str, path: str) -> str | None:
        if obj.get(name) is None:
            return None
        return self.string(obj, name, path)

    def integer(self, obj: Mapping[str, Any], name: str, path: str) -> int | None:
        value = obj.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self._wrong(child(path, name), value, "integer")
            return None
        return value

    def int32(self, obj: Mapping[str, Any], name: str, path: str) -> int | None:
        value = self.integer(obj, name, path)
        if value is not None and not INT32_MIN <= value <= INT32_MAX:
            self.add(
                fe.invalid(child(path, name), value, inclusive_range_error(INT32_MIN, INT32_MAX))
            )
            return None
        return value

    def boolean(self, obj: Mapping[str, Any], name: str, path: str) -> bool:
        value = obj.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            self._wrong(child(path, name), value, "boolean")
            return False
        return value

    def str_map(self, obj: Mapping[str, Any], name: str, path: str) -> dict[str, str]:
        result = {}
        for k, v in self.obj(obj, name, path).items():
            if not isinstance(v, str):
                self._wrong(key(child(path, name), str(k)), v, "string")
                continue
            result[str(k)] = v
        return result

    def str_list(self, obj: Mapping[str, Any], name: str, path: str) -> list[str]:
        result = []
        for i, item in enumerate(self.array(obj, name, path)):
            if not isinstance(item, str):
                self._wrong(index(child(path, name), i), item, "string")
                continue
            result.append(item)
        return result

    def resources(
        self, obj: Mapping[str, Any], name: str, path: str, *, dotted: bool = False
    ) -> ResourceList:
        """A ResourceList; ``dotted`` names entries ``status.capacity.cpu`` as ValidateNode does."""
        result: ResourceList = {}
        list_path = child(path, name)
        for resource, raw in self.obj(obj, name, path).items():
            entry_path = (
                child(list_path, str(resource)) if dotted else key(list_path, str(resource))
            )
            if isinstance(raw, bool) or not isinstance(raw, str | int | float):
                self._wrong(entry_path, raw, "string")
                continue
            text = raw if isinstance(raw, str) else repr(raw)
            try:
                result[str(resource)] = _round_up_to_milli(Quantity.parse(text))
            except QuantityError as error:
                self.add(fe.invalid(entry_path, text, str(error)))
        return result


# ---------------------------------------------------------------------------------------------
# Shared validation: metadata, labels, selectors.


def validate_label_name(name: str, path: str) -> list[FieldError]:
    return [fe.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for k, v in labels.items():
        errs.extend(validate_label_name(k, path))
        errs.extend(fe.invalid(path, v, msg) for msg in is_valid_label_value(v))
    return errs


def validate_annotations(annotations: Mapping[str, str], path: str) -> list[FieldError]:
    errs = [fe.invalid(path, k, msg) for k in annotations for msg in is_qualified_name(k.lower())]
    size = sum(_byte_len(k) + _byte_len(v) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(fe.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


@dataclass
class _Meta:
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: str = ""
    deletion_timestamp: str | None = None


def _read_meta(r: _Reader, doc: Mapping[str, Any], *, namespaced: bool, name_fn: NameFn) -> _Meta:
    """ObjectMeta, defaulted and validated as ValidateObjectMeta does on create."""
    path = "metadata"
    meta_doc = r.obj(doc, "metadata", "")
    meta = _Meta(
        name=r.string(meta_doc, "name", path),
        uid=r.string(meta_doc, "uid", path),
        labels=r.str_map(meta_doc, "labels", path),
        annotations=r.str_map(meta_doc, "annotations", path),
        creation_timestamp=r.string(meta_doc, "creationTimestamp", path),
        deletion_timestamp=r.optional_str(meta_doc, "deletionTimestamp", path),
    )
    generate_name = r.string(meta_doc, "generateName", path)
    if generate_name:
        r.extend(
            fe.invalid(child(path, "generateName"), generate_name, msg)
            for msg in name_fn(generate_name, True)
        )
    if not meta.name:
        r.add(fe.required(child(path, "name"), "name or generateName is required"))
    else:
        r.extend(
            fe.invalid(child(path, "name"), meta.name, msg) for msg in name_fn(meta.name, False)
        )
    if namespaced:
        # The request's namespace: "default" when the manifest names none.
        meta.namespace = r.string(meta_doc, "namespace", path) or "default"
        r.extend(
            fe.invalid(child(path, "namespace"), meta.namespace, msg)
            for msg in name_is_dns_label(meta.namespace, False)
        )
    r.extend(validate_labels(meta.labels, child(path, "labels")))
    r.extend(validate_annotations(meta.annotations, child(path, "annotations")))
    meta.owner_references = _read_owner_references(r, meta_doc, path)
    return meta


def _read_owner_references(
    r: _Reader, meta_doc: Mapping[str, Any], path: str
) -> tuple[OwnerReference, ...]:
    refs = []
    refs_path = child(path, "ownerReferences")
    first_controller = ""
    for _, ref in r.maps(meta_doc, "ownerReferences", path):
        api_version = r.string(ref, "apiVersion", refs_path)
        owner = OwnerReference(
            kind=r.string(ref, "kind", refs_path),
            name=r.string(ref, "name", refs_path),
            uid=r.string(ref, "uid", refs_path),
            controller=r.boolean(ref, "controller", refs_path),
        )
        if not api_version.rpartition("/")[2]:
            r.add(
                fe.invalid(child(refs_path, "apiVersion"), api_version, "version must not be empty")
            )
        for name, value in (("kind", owner.kind), ("name", owner.name), ("uid", owner.uid)):
            if not value:
                r.add(fe.invalid(child(refs_path, name), value, "must not be empty"))
        if owner.controller:
            current = f"{owner.kind}/{owner.name}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {first_controller} and {current}"
                )
                r.add(fe.invalid(refs_path, Raw("[]v1.OwnerReference{...}"), detail))
            else:
                first_controller = current
        refs.append(owner)
    return tuple(refs)


def _deterministic_uid(kind: str, namespace: str, name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedviz:{kind}/{namespace}/{name}"))


def _read_label_selector(
    r: _Reader, obj: Mapping[str, Any], name: str, path: str
) -> LabelSelector | None:
    raw = r.optional_map(obj, name, path)
    if raw is None:
        return None
    sel_path = child(path, name)
    requirements = []
    for expr_path, expr in r.maps(raw, "matchExpressions", sel_path):
        requirements.append(
            LabelSelectorRequirement(
                key=r.string(expr, "key", expr_path),
                operator=r.string(expr, "operator", expr_path),
                values=tuple(r.str_list(expr, "values", expr_path)),
            )
        )
    return LabelSelector(
        match_labels=r.str_map(raw, "matchLabels", sel_path), match_expressions=tuple(requirements)
    )


def validate_label_selector(selector: LabelSelector | None, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelSelector, label values checked (the create-time default)."""
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, child(path, "matchLabels"))
    for i, req in enumerate(selector.match_expressions):
        req_path = index(child(path, "matchExpressions"), i)
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    fe.required(
                        child(req_path, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    fe.forbidden(
                        child(req_path, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        errs.extend(validate_label_name(req.key, child(req_path, "key")))
        for j, value in enumerate(req.values):
            value_path = index(child(req_path, "values"), j)
            errs.extend(fe.invalid(value_path, value, msg) for msg in is_valid_label_value(value))
    return errs


def _read_node_selector_term(r: _Reader, term: Mapping[str, Any], path: str) -> NodeSelectorTerm:
    def requirements(name: str) -> tuple[NodeSelectorRequirement, ...]:
        return tuple(
            NodeSelectorRequirement(
                key=r.string(req, "key", req_path),
                operator=r.string(req, "operator", req_path),
                values=tuple(r.str_list(req, "values", req_path)),
            )
            for req_path, req in r.maps(term, name, path)
        )

    return NodeSelectorTerm(
        match_expressions=requirements("matchExpressions"), match_fields=requirements("matchFields")
    )


def validate_node_selector_term(
    term: NodeSelectorTerm, path: str, *, allow_invalid_values: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        req_path = index(child(path, "matchExpressions"), j)
        values_path = child(req_path, "values")
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    fe.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    fe.forbidden(
                        values_path,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        elif req.operator in ("Gt", "Lt"):
            if len(req.values) != 1:
                errs.append(
                    fe.required(
                        values_path,
                        "must be specified single value when `operator` is 'Lt' or 'Gt'",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        errs.extend(validate_label_name(req.key, child(req_path, "key")))
        if not allow_invalid_values:
            for k, value in enumerate(req.values):
                errs.extend(
                    fe.invalid(index(values_path, k), value, msg)
                    for msg in is_valid_label_value(value)
                )
    for j, req in enumerate(term.match_fields):
        req_path = index(child(path, "matchFields"), j)
        if req.operator in ("In", "NotIn"):
            if len(req.values) != 1:
                errs.append(
                    fe.required(
                        child(req_path, "values"),
                        "must be only one value when `operator` is 'In' or 'NotIn' "
                        "for node field selector",
                    )
                )
        else:
            errs.append(
                fe.invalid(
                    child(req_path, "operator"), req.operator, "not a valid selector operator"
                )
            )
        if req.key != "metadata.name":
            errs.append(
                fe.invalid(child(req_path, "key"), req.key, "not a valid field selector key")
            )
        else:
            for k, value in enumerate(req.values):
                errs.extend(
                    fe.invalid(index(child(req_path, "values"), k), value, msg)
                    for msg in name_is_dns_subdomain(value, False)
                )
    return errs


def _read_node_selector(r: _Reader, raw: Mapping[str, Any], path: str) -> NodeSelector:
    terms = tuple(
        _read_node_selector_term(r, term, term_path)
        for term_path, term in r.maps(raw, "nodeSelectorTerms", path)
    )
    return NodeSelector(node_selector_terms=terms)


def validate_node_selector(selector: NodeSelector, path: str) -> list[FieldError]:
    terms_path = child(path, "nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [fe.required(terms_path, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        errs.extend(
            validate_node_selector_term(term, index(terms_path, i), allow_invalid_values=False)
        )
    return errs


# ---------------------------------------------------------------------------------------------
# Resources, taints, tolerations.


def _validate_resource_quantity(name: str, value: Quantity, path: str) -> list[FieldError]:
    """ValidateResourceQuantityValue."""
    errs = []
    if value.amount < 0:
        errs.append(fe.invalid(path, canonical_quantity(value), IS_NEGATIVE_ERROR))
    if _is_integer_resource(name) and value.milli_value() % 1000 != 0:
        errs.append(fe.invalid(path, Raw(canonical_quantity(value)), IS_NOT_INTEGER_ERROR))
    return errs


def _validate_container_resource_name(name: str, path: str) -> list[FieldError]:
    errs = [fe.invalid(path, name, msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not is_hugepage_resource(name):
            return [fe.invalid(path, name, "must be a standard resource for containers")]
    elif not is_native_resource(name) and not is_extended_resource(name):
        return [fe.invalid(path, name, "doesn't follow extended resource name standard")]
    return []


def validate_resource_requirements(
    requests: ResourceList, limits: ResourceList, path: str
) -> list[FieldError]:
    """ValidateContainerResourceRequirements (resource claims aside)."""
    errs: list[FieldError] = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    cpu_or_memory = hugepages = False
    for name, quantity in limits.items():
        errs.extend(_validate_container_resource_name(name, key(lim_path, name)))
        errs.extend(_validate_resource_quantity(name, quantity, key(lim_path, name)))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name, quantity in requests.items():
        errs.extend(_validate_container_resource_name(name, key(req_path, name)))
        errs.extend(_validate_resource_quantity(name, quantity, key(req_path, name)))
        limit = limits.get(name)
        shown = canonical_quantity(quantity)
        if limit is not None:
            if quantity != limit and not _is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {canonical_quantity(limit)}"
                errs.append(fe.invalid(req_path, shown, detail))
            elif quantity > limit:
                detail = (
                    f"must be less than or equal to {name} limit of {canonical_quantity(limit)}"
                )
                errs.append(fe.invalid(req_path, shown, detail))
        elif not _is_overcommit_allowed(name):
            errs.append(fe.required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages = hugepages or is_hugepage_resource(name)
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(fe.forbidden(path, "HugePages require cpu or memory"))
    return errs


_TAINT_EFFECTS = (
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
)


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> list[FieldError]:
    if not allow_empty and not effect:
        return [fe.required(path)]
    if effect not in _TAINT_EFFECTS:
        return [fe.not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def _read_taints(r: _Reader, spec: Mapping[str, Any], path: str) -> tuple[Taint, ...]:
    taints = []
    for taint_path, raw in r.maps(spec, "taints", path):
        taints.append(
            Taint(
                key=r.string(raw, "key", taint_path),
                value=r.string(raw, "value", taint_path),
                effect=r.string(raw, "effect", taint_path),
            )
        )
    return tuple(taints)


def validate_node_taints(taints: tuple[Taint, ...], path: str) -> list[FieldError]:
    """validateNodeTaints. Upstream reports node taints under ``metadata.taints``, kept here."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        taint_path = index(path, i)
        errs.extend(validate_label_name(taint.key, child(taint_path, "key")))
        value_errs = is_valid_label_value(taint.value)
        if value_errs:
            errs.append(fe.invalid(child(taint_path, "value"), taint.value, ";".join(value_errs)))
        errs.extend(_validate_taint_effect(taint.effect, False, child(taint_path, "effect")))
        if (taint.key, taint.effect) in seen:
            shown = Raw(
                f"core.Taint{{Key:{fe.go_quote(taint.key)}, Value:{fe.go_quote(taint.value)}, "
                f"Effect:{fe.go_quote(taint.effect)}, TimeAdded:(*v1.Time)(nil)}}"
            )
            errs.append(
                FieldError(
                    fe.ErrorType.DUPLICATE,
                    taint_path,
                    shown,
                    "taints must be unique by key and effect pair",
                )
            )
            continue
        seen.add((taint.key, taint.effect))
    return errs


def _read_tolerations(r: _Reader, spec: Mapping[str, Any], path: str) -> tuple[Toleration, ...]:
    tolerations = []
    for tol_path, raw in r.maps(spec, "tolerations", path):
        toleration = Toleration(
            key=r.string(raw, "key", tol_path),
            operator=r.string(raw, "operator", tol_path),
            value=r.string(raw, "value", tol_path),
            effect=r.string(raw, "effect", tol_path),
            toleration_seconds=r.integer(raw, "tolerationSeconds", tol_path),
        )
        tolerations.append(toleration)
    return tuple(tolerations)


def validate_tolerations(tolerations: tuple[Toleration, ...], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        errs.extend(_validate_toleration(toleration, index(path, i)))
    return errs


def _validate_toleration(toleration: Toleration, path: str) -> list[FieldError]:
    """One toleration of ValidateTolerations."""
    errs: list[FieldError] = []
    if toleration.key:
        errs.extend(validate_label_name(toleration.key, child(path, "key")))
    if not toleration.key and toleration.operator != TOLERATION_OP_EXISTS:
        errs.append(
            fe.invalid(
                child(path, "operator"),
                toleration.operator,
                "operator must be Exists when `key` is empty, "
                'which means "match all values and all keys"',
            )
        )
    if toleration.toleration_seconds is not None and toleration.effect != TAINT_EFFECT_NO_EXECUTE:
        errs.append(
            fe.invalid(
                child(path, "effect"),
                toleration.effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        )
    if toleration.operator in (TOLERATION_OP_EQUAL, ""):
        value_errs = is_valid_label_value(toleration.value)
        if value_errs:
            errs.append(fe.invalid(child(path, "operator"), toleration.value, ";".join(value_errs)))
    elif toleration.operator == TOLERATION_OP_EXISTS:
        if toleration.value:
            errs.append(
                fe.invalid(
                    child(path, "operator"),
                    toleration.value,
                    "value must be empty when `operator` is 'Exists'",
                )
            )
    else:
        errs.append(
            fe.not_supported(
                child(path, "operator"),
                toleration.operator,
                (TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS),
            )
        )
    if toleration.effect:
        errs.extend(_validate_taint_effect(toleration.effect, True, child(path, "effect")))
    return errs


# ---------------------------------------------------------------------------------------------
# Pod affinity, topology spread.


def _read_pod_affinity_term(r: _Reader, raw: Mapping[str, Any], path: str) -> PodAffinityTerm:
    return PodAffinityTerm(
        topology_key=r.string(raw, "topologyKey", path),
        label_selector=_read_label_selector(r, raw, "labelSelector", path),
        namespaces=tuple(r.str_list(raw, "namespaces", path)),
        namespace_selector=_read_label_selector(r, raw, "namespaceSelector", path),
        match_label_keys=tuple(r.str_list(raw, "matchLabelKeys", path)),
        mismatch_label_keys=tuple(r.str_list(raw, "mismatchLabelKeys", path)),
    )


def _read_pod_affinity(r: _Reader, raw: Mapping[str, Any], path: str) -> PodAffinity:
    required_terms = tuple(
        _read_pod_affinity_term(r, term, term_path)
        for term_path, term in r.maps(raw, "requiredDuringSchedulingIgnoredDuringExecution", path)
    )
    preferred = []
    for term_path, term in r.maps(raw, "preferredDuringSchedulingIgnoredDuringExecution", path):
        inner = r.obj(term, "podAffinityTerm", term_path)
        preferred.append(
            WeightedPodAffinityTerm(
                weight=r.int32(term, "weight", term_path) or 0,
                pod_affinity_term=_read_pod_affinity_term(
                    r, inner, child(term_path, "podAffinityTerm")
                ),
            )
        )
    return PodAffinity(required=required_terms, preferred=tuple(preferred))


def _read_affinity(r: _Reader, spec: Mapping[str, Any], path: str) -> Affinity | None:
    raw = r.optional_map(spec, "affinity", path)
    if raw is None:
        return None
    aff_path = child(path, "affinity")
    node_affinity = None
    node_raw = r.optional_map(raw, "nodeAffinity", aff_path)
    if node_raw is not None:
        na_path = child(aff_path, "nodeAffinity")
        required_raw = r.optional_map(
            node_raw, "requiredDuringSchedulingIgnoredDuringExecution", na_path
        )
        required_selector = None
        if required_raw is not None:
            required_path = child(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
            required_selector = _read_node_selector(r, required_raw, required_path)
        preferred = []
        for term_path, term in r.maps(
            node_raw, "preferredDuringSchedulingIgnoredDuringExecution", na_path
        ):
            preference = r.obj(term, "preference", term_path)
            preferred.append(
                PreferredSchedulingTerm(
                    weight=r.int32(term, "weight", term_path) or 0,
                    preference=_read_node_selector_term(
                        r, preference, child(term_path, "preference")
                    ),
                )
            )
        node_affinity = NodeAffinity(required=required_selector, preferred=tuple(preferred))
    pod_affinity = pod_anti_affinity = None
    if (raw_pa := r.optional_map(raw, "podAffinity", aff_path)) is not None:
        pod_affinity = _read_pod_affinity(r, raw_pa, child(aff_path, "podAffinity"))
    if (raw_paa := r.optional_map(raw, "podAntiAffinity", aff_path)) is not None:
        pod_anti_affinity = _read_pod_affinity(r, raw_paa, child(aff_path, "podAntiAffinity"))
    return Affinity(
        node_affinity=node_affinity, pod_affinity=pod_affinity, pod_anti_affinity=pod_anti_affinity
    )


def _merge_label_keys(
    selector: LabelSelector,
    keys_and_operators: tuple[tuple[tuple[str, ...], str], ...],
    labels: Mapping[str, str],
) -> LabelSelector:
    """applyLabelKeysToLabelSelector: ``key <operator> (pod's value)`` for each key it has."""
    added = tuple(
        LabelSelectorRequirement(k, operator, (labels[k],))
        for keys, operator in keys_and_operators
        for k in keys
        if k in labels
    )
    return LabelSelector(
        match_labels=dict(selector.match_labels),
        match_expressions=selector.match_expressions + added,
    )


def apply_match_label_keys(term: PodAffinityTerm, labels: Mapping[str, str]) -> PodAffinityTerm:
    """strategy.go applyMatchLabelKeysAndMismatchLabelKeys: ``key In (v)`` / ``key NotIn (v)``.

    Keys the pod has no label for are skipped; a term without a selector is left alone (a nil
    selector matches nothing).
    """
    if (not term.match_label_keys and not term.mismatch_label_keys) or term.label_selector is None:
        return term
    selector = _merge_label_keys(
        term.label_selector,
        ((term.match_label_keys, "In"), (term.mismatch_label_keys, "NotIn")),
        labels,
    )
    return dataclasses.replace(term, label_selector=selector)


def _merge_match_label_keys(
    affinity: Affinity | None, labels: Mapping[str, str]
) -> Affinity | None:
    """mutatePodAffinity: merges label keys into both podAffinity and podAntiAffinity terms."""
    if affinity is None:
        return None

    def merged(pa: PodAffinity | None) -> PodAffinity | None:
        if pa is None:
            return None
        return PodAffinity(
            required=tuple(apply_match_label_keys(t, labels) for t in pa.required),
            preferred=tuple(
                WeightedPodAffinityTerm(
                    w.weight, apply_match_label_keys(w.pod_affinity_term, labels)
                )
                for w in pa.preferred
            ),
        )

    return Affinity(
        affinity.node_affinity, merged(affinity.pod_affinity), merged(affinity.pod_anti_affinity)
    )


def _keys_also_in_selector(
    keys: tuple[str, ...], selector: LabelSelector, path: str
) -> list[FieldError]:
    """A matchLabelKeys key the selector constrains besides the requirement merged from it.

    The merged requirement comes after the user's own, so a key seen earlier in matchLabels or
    matchExpressions is reported (validateMatchLabelKeysAndMismatchLabelKeys, step 2).
    """
    errs: list[FieldError] = []
    positions = {k: i for i, k in enumerate(keys)}
    seen = set(selector.match_labels)
    for expr in selector.match_expressions:
        if expr.key in positions and expr.key in seen:
            detail = "exists in both matchLabelKeys and labelSelector"
            errs.append(fe.invalid(index(path, positions[expr.key]), expr.key, detail))
        seen.add(expr.key)
    return errs


def _validate_label_keys(
    path: str, keys: tuple[str, ...], selector: LabelSelector | None
) -> list[FieldError]:
    if not keys:
        return []
    if selector is None:
        return [fe.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(keys):
        errs.extend(validate_label_name(k, index(path, i)))
    return errs


def _validate_match_label_keys_and_mismatch_label_keys(
    term: PodAffinityTerm, path: str
) -> list[FieldError]:
    errs = _validate_label_keys(
        child(path, "matchLabelKeys"), term.match_label_keys, term.label_selector
    )
    errs += _validate_label_keys(
        child(path, "mismatchLabelKeys"), term.mismatch_label_keys, term.label_selector
    )
    if term.label_selector is not None:
        # Upstream indexes the term's own path here, not matchLabelKeys.
        errs += _keys_also_in_selector(term.match_label_keys, term.label_selector, path)
    mismatch = set(term.mismatch_label_keys)
    for i, k in enumerate(term.match_label_keys):
        if k in mismatch:
            errs.append(
                fe.invalid(
                    index(child(path, "matchLabelKeys"), i),
                    k,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


def _validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> list[FieldError]:
    errs = validate_label_selector(term.label_selector, child(path, "labelSelector"))
    errs += validate_label_selector(term.namespace_selector, child(path, "namespaceSelector"))
    for name in term.namespaces:
        errs.extend(
            fe.invalid(child(path, "namespace"), name, msg)
            for msg in name_is_dns_label(name, False)
        )
    errs += _validate_match_label_keys_and_mismatch_label_keys(term, path)
    if not term.topology_key:
        errs.append(fe.required(child(path, "topologyKey"), "can not be empty"))
    return errs + validate_label_name(term.topology_key, child(path, "topologyKey"))


def _validate_pod_affinity(affinity: PodAffinity, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(affinity.required):
        errs += _validate_pod_affinity_term(term, index(required_path, i))
    preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, weighted in enumerate(affinity.preferred):
        term_path = index(preferred_path, i)
        if not 0 < weighted.weight <= 100:
            errs.append(
                fe.invalid(
                    child(term_path, "weight"), weighted.weight, "must be in the range 1-100"
                )
            )
        errs += _validate_pod_affinity_term(
            weighted.pod_affinity_term, child(term_path, "podAffinityTerm")
        )
    return errs


def validate_affinity(affinity: Affinity | None, path: str) -> list[FieldError]:
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if (na := affinity.node_affinity) is not None:
        na_path = child(path, "nodeAffinity")
        if na.required is not None:
            errs += validate_node_selector(
                na.required, child(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        preferred_path = child(na_path, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(na.preferred):
            if not 0 < term.weight <= 100:
                errs.append(
                    fe.invalid(
                        child(index(preferred_path, i), "weight"),
                        term.weight,
                        "must be in the range 1-100",
                    )
                )
            # Upstream always allows invalid label values in preferred terms.
            errs += validate_node_selector_term(
                term.preference,
                child(index(preferred_path, i), "preference"),
                allow_invalid_values=True,
            )
    if affinity.pod_affinity is not None:
        errs += _validate_pod_affinity(affinity.pod_affinity, child(path, "podAffinity"))
    if affinity.pod_anti_affinity is not None:
        errs += _validate_pod_affinity(affinity.pod_anti_affinity, child(path, "podAntiAffinity"))
    return errs


_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


def _read_topology_spread_constraints(
    r: _Reader, spec: Mapping[str, Any], path: str
) -> tuple[TopologySpreadConstraint, ...]:
    constraints = []
    for c_path, raw in r.maps(spec, "topologySpreadConstraints", path):
        constraints.append(
            TopologySpreadConstraint(
                max_skew=r.int32(raw, "maxSkew", c_path) or 0,
                topology_key=r.string(raw, "topologyKey", c_path),
                when_unsatisfiable=r.string(raw, "whenUnsatisfiable", c_path),
                label_selector=_read_label_selector(r, raw, "labelSelector", c_path),
                min_domains=r.int32(raw, "minDomains", c_path),
                node_affinity_policy=r.optional_str(raw, "nodeAffinityPolicy", c_path),
                node_taints_policy=r.optional_str(raw, "nodeTaintsPolicy", c_path),
                match_label_keys=tuple(r.str_list(raw, "matchLabelKeys", c_path)),
            )
        )
    return tuple(constraints)


def validate_topology_spread_constraints(
    constraints: tuple[TopologySpreadConstraint, ...], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(constraints):
        c_path = index(path, i)
        if c.max_skew <= 0:
            errs.append(fe.invalid(child(c_path, "maxSkew"), c.max_skew, IS_NOT_POSITIVE_ERROR))
        if not c.topology_key:
            errs.append(fe.required(child(c_path, "topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
            errs.append(
                fe.not_supported(
                    child(c_path, "whenUnsatisfiable"), c.when_unsatisfiable, _WHEN_UNSATISFIABLE
                )
            )
        for rest in constraints[i + 1 :]:
            if (rest.topology_key, rest.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(
                    fe.duplicate(
                        child(c_path, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                )
                break
        if c.min_domains is not None:
            if c.min_domains <= 0:
                errs.append(
                    fe.invalid(child(c_path, "minDomains"), c.min_domains, IS_NOT_POSITIVE_ERROR)
                )
            if c.when_unsatisfiable != "DoNotSchedule":
                detail = (
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                    f"not {c.when_unsatisfiable}"
                )
                errs.append(fe.invalid(child(c_path, "minDomains"), c.min_domains, detail))
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errs.append(fe.not_supported(child(c_path, name), policy, _NODE_INCLUSION_POLICIES))
        errs += _validate_match_label_keys_in_topology_spread(c, child(c_path, "matchLabelKeys"))
        errs += validate_label_selector(c.label_selector, child(c_path, "labelSelector"))
    return errs


def _validate_match_label_keys_in_topology_spread(
    c: TopologySpreadConstraint, path: str
) -> list[FieldError]:
    """matchLabelKeys of a constraint whose selector already has them merged in.

    With MatchLabelKeysInPodTopologySpreadSelectorMerge (on by default since 1.34) a key is
    refused when the selector constrains it besides the merged requirement, the rule
    validateMatchLabelKeysAndMismatchLabelKeys applies to pod affinity.
    """
    if not c.match_label_keys:
        return []
    if c.label_selector is None:
        return [fe.forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, k in enumerate(c.match_label_keys):
        errs += validate_label_name(k, index(path, i))
    return errs + _keys_also_in_selector(c.match_label_keys, c.label_selector, path)


def _merge_spread_match_label_keys(
    constraints: tuple[TopologySpreadConstraint, ...], labels: Mapping[str, str]
) -> tuple[TopologySpreadConstraint, ...]:
    """strategy.go mutateTopologySpreadConstraints: ``key In (pod's value)`` per matchLabelKey."""
    merged = []
    for c in constraints:
        if c.match_label_keys and c.label_selector is not None:
            selector = _merge_label_keys(c.label_selector, ((c.match_label_keys, "In"),), labels)
            c = dataclasses.replace(c, label_selector=selector)
        merged.append(c)
    return tuple(merged)


# ---------------------------------------------------------------------------------------------
# Containers and volumes.

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_INIT_ONLY_FIELDS = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


@dataclass
class _ContainerSpec:
    """A container as read, with the fields validation needs beyond the scheduler's view."""

    container: Container
    port_names: list[str]
    pull_policy: str
    termination_message_policy: str
    lifecycle_fields: list[str]


def _read_container(r: _Reader, raw: Mapping[str, Any], path: str) -> _ContainerSpec:
    resources = r.obj(raw, "resources", path)
    res_path = child(path, "resources")
    ports = []
    port_names = []
    for port_path, port in r.maps(raw, "ports", path):
        ports.append(
            ContainerPort(
                container_port=r.int32(port, "containerPort", port_path) or 0,
                host_port=r.int32(port, "hostPort", port_path) or 0,
                protocol=r.string(port, "protocol", port_path)
                or "TCP",  # SetDefaults_ContainerPort
                host_ip=r.string(port, "hostIP", port_path),
            )
        )
        port_names.append(r.string(port, "name", port_path))
    container = Container(
        name=r.string(raw, "name", path),
        image=r.string(raw, "image", path),
        requests=r.resources(resources, "requests", res_path),
        limits=r.resources(resources, "limits", res_path),
        ports=tuple(ports),
        restart_policy=r.optional_str(raw, "restartPolicy", path),
    )
    # SetDefaults_Pod: requests default to limits for every resource that has only a limit.
    for name, limit in container.limits.items():
        container.requests.setdefault(name, limit)
    return _ContainerSpec(
        container=container,
        port_names=port_names,
        # Both are defaulted upstream when empty, so only a value given is checked.
        pull_policy=r.string(raw, "imagePullPolicy", path),
        termination_message_policy=r.string(raw, "terminationMessagePolicy", path),
        lifecycle_fields=[f for f in _INIT_ONLY_FIELDS if raw.get(f) is not None],
    )


def _validate_container_ports(spec: _ContainerSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, (port, name) in enumerate(zip(spec.container.ports, spec.port_names, strict=True)):
        port_path = index(path, i)
        if name:
            msgs = is_valid_port_name(name)
            if msgs:
                errs.extend(fe.invalid(child(port_path, "name"), name, msg) for msg in msgs)
            elif name in names:
                errs.append(fe.duplicate(child(port_path, "name"), name))
            else:
                names.add(name)
        if port.container_port == 0:
            errs.append(fe.required(child(port_path, "containerPort")))
        else:
            errs.extend(
                fe.invalid(child(port_path, "containerPort"), port.container_port, msg)
                for msg in is_valid_port_num(port.container_port)
            )
        if port.host_port != 0:
            errs.extend(
                fe.invalid(child(port_path, "hostPort"), port.host_port, msg)
                for msg in is_valid_port_num(port.host_port)
            )
        if port.protocol not in _PROTOCOLS:
            errs.append(fe.not_supported(child(port_path, "protocol"), port.protocol, _PROTOCOLS))
    return errs


def _validate_container_common(spec: _ContainerSpec, path: str) -> list[FieldError]:
    c = spec.container
    errs: list[FieldError] = []
    if not c.name:
        errs.append(fe.required(child(path, "name")))
    else:
        errs.extend(
            fe.invalid(child(path, "name"), c.name, msg) for msg in is_dns1123_label(c.name)
        )
    if not c.image:
        errs.append(fe.required(child(path, "image")))
    policy = spec.termination_message_policy
    if policy and policy not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(
            fe.not_supported(
                child(path, "terminationMessagePolicy"),
                spec.termination_message_policy,
                _TERMINATION_MESSAGE_POLICIES,
            )
        )
    errs += _validate_container_ports(spec, child(path, "ports"))
    if spec.pull_policy and spec.pull_policy not in _PULL_POLICIES:
        errs.append(
            fe.not_supported(child(path, "imagePullPolicy"), spec.pull_policy, _PULL_POLICIES)
        )
    errs += validate_resource_requirements(c.requests, c.limits, child(path, "resources"))
    return errs


def _host_port_conflicts(containers: list[_ContainerSpec], path: str) -> list[FieldError]:
    """AccumulateUniqueHostPorts over the given containers."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for ci, spec in enumerate(containers):
        for pi, port in enumerate(spec.container.ports):
            if port.host_port == 0:
                continue
            entry = f"{port.protocol}/{port.host_ip}/{port.host_port}"
            if entry in seen:
                errs.append(
                    fe.duplicate(
                        child(index(child(index(path, ci), "ports"), pi), "hostPort"), entry
                    )
                )
            else:
                seen.add(entry)
    return errs


def validate_containers(containers: list[_ContainerSpec], path: str) -> list[FieldError]:
    if not containers:
        return [fe.required(path)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, spec in enumerate(containers):
        c_path = index(path, i)
        errs += _validate_container_common(spec, c_path)
        if spec.container.name in names:
            errs.append(fe.duplicate(child(c_path, "name"), spec.container.name))
        else:
            names.add(spec.container.name)
        if spec.container.restart_policy is not None:
            errs.append(
                fe.forbidden(
                    child(c_path, "restartPolicy"), "may not be set for non-init containers"
                )
            )
    return errs + _host_port_conflicts(containers, path)


def validate_init_containers(
    init_containers: list[_ContainerSpec], containers: list[_ContainerSpec], path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    names = {spec.container.name for spec in containers}
    for i, spec in enumerate(init_containers):
        c_path = index(path, i)
        errs += _validate_container_common(spec, c_path)
        policy = spec.container.restart_policy
        if policy is not None and policy != "Always":
            errs.append(fe.not_supported(child(c_path, "restartPolicy"), policy, ("Always",)))
        if spec.container.name in names:
            errs.append(fe.duplicate(child(c_path, "name"), spec.container.name))
        elif spec.container.name:
            names.add(spec.container.name)
        # Upstream checks each init container alone, as a list of one: its index is always 0.
        errs += _host_port_conflicts([spec], path)
        if policy != "Always":
            errs.extend(
                fe.forbidden(
                    child(c_path, name),
                    "may not be set for init containers without restartPolicy=Always",
                )
                for name in spec.lifecycle_fields
            )
    return errs


def _read_volumes(
    r: _Reader, spec: Mapping[str, Any], path: str
) -> tuple[list[Volume], list[FieldError]]:
    """The pod's volumes and what ValidateVolumes finds wrong with them."""
    volumes: list[Volume] = []
    errs: list[FieldError] = []
    names: set[str] = set()
    for vol_path, raw in r.maps(spec, "volumes", path):
        name = r.string(raw, "name", vol_path)
        sources = [k for k, v in raw.items() if k != "name" and v is not None]
        volume_errs: list[FieldError] = []
        for extra in sources[1:]:
            volume_errs.append(
                fe.forbidden(child(vol_path, extra), "may not specify more than 1 volume type")
            )
        if not sources:
            volume_errs.append(fe.required(vol_path, "must specify a volume type"))
        source_kind = sources[0] if sources else ""
        source = raw.get(source_kind) if source_kind else {}
        if not isinstance(source, dict):
            r._wrong(child(vol_path, source_kind), source, "object")
            source = {}
        claim_name = None
        read_only = False
        if source_kind == "persistentVolumeClaim":
            claim_path = child(vol_path, source_kind)
            claim_name = r.string(source, "claimName", claim_path)
            read_only = r.boolean(source, "readOnly", claim_path)
            if not claim_name:
                volume_errs.append(fe.required(child(claim_path, "claimName")))
        if not name:
            volume_errs.append(fe.required(child(vol_path, "name")))
        else:
            volume_errs.extend(
                fe.invalid(child(vol_path, "name"), name, msg) for msg in is_dns1123_label(name)
            )
        if name in names:
            volume_errs.append(fe.duplicate(child(vol_path, "name"), name))
        if not volume_errs:
            names.add(name)
        errs += volume_errs
        volumes.append(
            Volume(
                name=name,
                pvc_claim_name=claim_name,
                pvc_read_only=read_only,
                source_kind=source_kind,
                source=dict(source),
            )
        )
    return volumes, errs


# ---------------------------------------------------------------------------------------------
# Pod.

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
SCHEDULING_GATED_CONDITION = PodCondition(
    type="PodScheduled",
    status="False",
    reason="SchedulingGated",
    message="Scheduling is blocked due to non-empty scheduling gates",
)
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER)
_POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def _validate_preemption_policy(policy: str | None, path: str) -> list[FieldError]:
    if policy is None or policy in _PREEMPTION_POLICIES:
        return []
    if not policy:
        return [fe.required(path)]
    return [fe.not_supported(path, policy, _PREEMPTION_POLICIES)]


def _validate_scheduling_gates(gates: list[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        errs.extend(fe.invalid(index(path, i), gate, msg) for msg in is_qualified_name(gate))
        if gate in seen:
            errs.append(fe.duplicate(index(path, i), gate))
        seen.add(gate)
    return errs


def _default_host_network_ports(containers: list[_ContainerSpec]) -> None:
    """SetDefaults_PodSpec: with hostNetwork, an unset hostPort is the containerPort."""
    for spec in containers:
        spec.container.ports = tuple(
            ContainerPort(p.container_port, p.host_port or p.container_port, p.protocol, p.host_ip)
            for p in spec.container.ports
        )


def _validate_host_network_ports(containers: list[_ContainerSpec], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, spec in enumerate(containers):
        for j, port in enumerate(spec.container.ports):
            if port.host_port != port.container_port:
                port_path = index(child(index(path, i), "ports"), j)
                errs.append(
                    fe.invalid(
                        child(port_path, "hostPort"),
                        port.host_port,
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errs


def _read_pod_status(
    r: _Reader, doc: Mapping[str, Any]
) -> tuple[str, str, tuple[PodCondition, ...]]:
    status = r.obj(doc, "status", "")
    phase = r.string(status, "phase", "status") or POD_PENDING
    if phase not in _POD_PHASES:
        r.add(fe.not_supported("status.phase", phase, _POD_PHASES))
    nominated = r.string(status, "nominatedNodeName", "status")
    if nominated:
        r.extend(
            fe.invalid("status.nominatedNodeName", nominated, msg)
            for msg in name_is_path_segment(nominated, False)
        )
    conditions = tuple(
        PodCondition(
            type=r.string(c, "type", c_path),
            status=r.string(c, "status", c_path),
            reason=r.string(c, "reason", c_path),
            message=r.string(c, "message", c_path),
        )
        for c_path, c in r.maps(status, "conditions", "status")
    )
    return phase, nominated, conditions


def _decode_pod(r: _Reader, doc: Mapping[str, Any]) -> Pod:
    """Defaulting (SetDefaults_Pod, SetDefaults_PodSpec), PrepareForCreate, ValidatePodCreate."""
    meta = _read_meta(r, doc, namespaced=True, name_fn=name_is_path_segment)
    spec = r.obj(doc, "spec", "")
    sp = "spec"
    volumes, volume_errs = _read_volumes(r, spec, sp)
    containers = [_read_container(r, c, p) for p, c in r.maps(spec, "containers", sp)]
    init_containers = [_read_container(r, c, p) for p, c in r.maps(spec, "initContainers", sp)]
    host_network = r.boolean(spec, "hostNetwork", sp)
    if host_network:
        _default_host_network_ports(containers)
        _default_host_network_ports(init_containers)
    restart_policy = r.string(spec, "restartPolicy", sp) or "Always"
    dns_policy = r.string(spec, "dnsPolicy", sp) or "ClusterFirst"
    node_selector = r.str_map(spec, "nodeSelector", sp)
    affinity = _merge_match_label_keys(_read_affinity(r, spec, sp), meta.labels)
    gates = [r.string(g, "name", p) for p, g in r.maps(spec, "schedulingGates", sp)]
    spread = _merge_spread_match_label_keys(
        _read_topology_spread_constraints(r, spec, sp), meta.labels
    )
    node_name = r.string(spec, "nodeName", sp)
    tolerations = _read_tolerations(r, spec, sp)
    priority_class_name = r.string(spec, "priorityClassName", sp)
    priority = r.int32(spec, "priority", sp)
    preemption_policy = r.optional_str(spec, "preemptionPolicy", sp)
    overhead = r.resources(spec, "overhead", sp)
    phase, nominated, conditions = _read_pod_status(r, doc)
    if gates and not any(c.type == "PodScheduled" for c in conditions):
        conditions += (SCHEDULING_GATED_CONDITION,)  # applySchedulingGatedCondition

    r.extend(volume_errs)
    r.extend(validate_containers(containers, child(sp, "containers")))
    r.extend(validate_init_containers(init_containers, containers, child(sp, "initContainers")))
    if host_network:
        r.extend(_validate_host_network_ports(containers, child(sp, "containers")))
    if restart_policy not in _RESTART_POLICIES:
        r.add(fe.not_supported(child(sp, "restartPolicy"), restart_policy, _RESTART_POLICIES))
    if dns_policy not in _DNS_POLICIES:
        r.add(fe.not_supported(child(sp, "dnsPolicy"), dns_policy, _DNS_POLICIES))
    r.extend(validate_labels(node_selector, child(sp, "nodeSelector")))
    r.extend(validate_affinity(affinity, child(sp, "affinity")))
    r.extend(_validate_scheduling_gates(gates, child(sp, "schedulingGates")))
    r.extend(validate_topology_spread_constraints(spread, child(sp, "topologySpreadConstraints")))
    if node_name:
        r.extend(
            fe.invalid(child(sp, "nodeName"), node_name, msg)
            for msg in name_is_path_segment(node_name, False)
        )
    r.extend(validate_tolerations(tolerations, child(sp, "tolerations")))
    if priority_class_name:
        r.extend(
            fe.invalid(child(sp, "priorityClassName"), priority_class_name, msg)
            for msg in name_is_dns_subdomain(priority_class_name, False)
        )
    r.extend(_validate_preemption_policy(preemption_policy, child(sp, "preemptionPolicy")))
    if overhead:
        r.extend(validate_resource_requirements({}, overhead, child(sp, "overhead")))
    for list_name, specs in (("containers", containers), ("initContainers", init_containers)):
        for i, c in enumerate(specs):
            if c.container.image != c.container.image.strip():
                r.add(
                    fe.invalid(
                        child(index(child(sp, list_name), i), "image"),
                        c.container.image,
                        "must not have leading or trailing whitespace",
                    )
                )
    if spec.get("ephemeralContainers"):
        r.add(fe.forbidden(child(sp, "ephemeralContainers"), "cannot be set on create"))
    if node_name and gates:
        r.add(
            fe.forbidden(
                child(sp, "nodeName"), "cannot be set until all schedulingGates have been cleared"
            )
        )

    return Pod(
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid or _deterministic_uid("Pod", meta.namespace, meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        owner_references=meta.owner_references,
        creation_timestamp=meta.creation_timestamp,
        deletion_timestamp=meta.deletion_timestamp,
        node_name=node_name,
        scheduler_name=r.string(spec, "schedulerName", sp) or DEFAULT_SCHEDULER_NAME,
        priority=priority,
        priority_class_name=priority_class_name,
        preemption_policy=preemption_policy,
        node_selector=node_selector,
        affinity=affinity,
        tolerations=tuple(
            Toleration(
                t.key, t.operator or TOLERATION_OP_EQUAL, t.value, t.effect, t.toleration_seconds
            )
            for t in tolerations
        ),
        topology_spread_constraints=spread,
        scheduling_gates=tuple(gates),
        containers=tuple(c.container for c in containers),
        init_containers=tuple(c.container for c in init_containers),
        overhead=overhead,
        volumes=tuple(volumes),
        host_network=host_network,
        phase=phase,
        nominated_node_name=nominated,
        conditions=conditions,
        manifest=dict(doc),
    )


# ---------------------------------------------------------------------------------------------
# Node, Namespace.


def _decode_node(r: _Reader, doc: Mapping[str, Any]) -> Node:
    """SetDefaults_NodeStatus and ValidateNode."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_path_segment)
    spec = r.obj(doc, "spec", "")
    status = r.obj(doc, "status", "")
    taints = _read_taints(r, spec, "spec")
    capacity = r.resources(status, "capacity", "status", dotted=True)
    raw_allocatable = r.optional_map(status, "allocatable", "status")
    allocatable = r.resources(status, "allocatable", "status", dotted=True)
    images = tuple(
        ContainerImage(
            names=tuple(r.str_list(img, "names", p)), size_bytes=r.integer(img, "sizeBytes", p) or 0
        )
        for p, img in r.maps(status, "images", "status")
    )
    conditions = tuple(
        NodeCondition(type=r.string(c, "type", p), status=r.string(c, "status", p))
        for p, c in r.maps(status, "conditions", "status")
    )
    if taints:
        r.extend(validate_node_taints(taints, "metadata.taints"))
    for name, quantity in capacity.items():
        r.extend(_validate_resource_quantity(name, quantity, child("status", "capacity", name)))
    for name, quantity in allocatable.items():
        r.extend(_validate_resource_quantity(name, quantity, child("status", "allocatable", name)))
    if raw_allocatable is None:
        allocatable = dict(capacity)  # SetDefaults_NodeStatus
    return Node(
        name=meta.name,
        uid=meta.uid or _deterministic_uid("Node", "", meta.name),
        labels=meta.labels,
        annotations=meta.annotations,
        unschedulable=r.boolean(spec, "unschedulable", "spec"),
        taints=taints,
        capacity=capacity,
        allocatable=allocatable,
        images=images,
        conditions=conditions,
        creation_timestamp=meta.creation_timestamp,
        manifest=dict(doc),
    )


def _decode_namespace(r: _Reader, doc: Mapping[str, Any]) -> Namespace:
    """SetDefaults_Namespace (the kubernetes.io/metadata.name label) and ValidateNamespace."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_dns_label)
    labels = dict(meta.labels)
    if meta.name:
        labels[NAMESPACE_NAME_LABEL] = meta.name
    return Namespace(name=meta.name, labels=labels, manifest=dict(doc))


# ---------------------------------------------------------------------------------------------
# PriorityClass (scheduling.k8s.io/v1), PodDisruptionBudget (policy/v1).


def _known_system_priority_class(name: str, value: int, global_default: bool) -> str:
    """schedulingapiv1.IsKnownSystemPriorityClass: "" when known, else why not."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if SYSTEM_PRIORITY_CLASSES[name] != value:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def _decode_priority_class(r: _Reader, doc: Mapping[str, Any]) -> PriorityClass:
    """SetDefaults_PriorityClass and ValidatePriorityClass."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    value = r.int32(doc, "value", "") or 0
    global_default = r.boolean(doc, "globalDefault", "")
    preemption_policy = r.optional_str(doc, "preemptionPolicy", "")
    if meta.name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        problem = _known_system_priority_class(meta.name, value, global_default)
        if problem:
            r.add(
                fe.forbidden(
                    "metadata.name",
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {problem}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.add(
            fe.forbidden(
                "value",
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    r.extend(_validate_preemption_policy(preemption_policy, "preemptionPolicy"))
    return PriorityClass(
        name=meta.name,
        value=value,
        global_default=global_default,
        preemption_policy=preemption_policy or PREEMPT_LOWER_PRIORITY,
        description=r.string(doc, "description", ""),
        manifest=dict(doc),
    )


def _read_int_or_percent(
    r: _Reader, spec: Mapping[str, Any], name: str, path: str
) -> int | str | None:
    value = spec.get(name)
    if value is None:
        return None
    field_path = child(path, name)
    if isinstance(value, bool) or not isinstance(value, int | str):
        r._wrong(field_path, value, "integer or string")
        return None
    if isinstance(value, int):
        if value < 0:
            r.add(fe.invalid(field_path, value, IS_NEGATIVE_ERROR))
        return value
    if not _PERCENT_RE.fullmatch(value):
        r.add(
            fe.invalid(
                field_path,
                Raw(value),
                regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    _PERCENT_FMT,
                    "1%",
                    "93%",
                ),
            )
        )
    elif int(value[:-1]) > 100:
        r.add(fe.invalid(field_path, value, "must not be greater than 100%"))
    return value


def _decode_pod_disruption_budget(r: _Reader, doc: Mapping[str, Any]) -> PodDisruptionBudget:
    """ValidatePodDisruptionBudget (policy/v1)."""
    meta = _read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        shown = Raw(
            f"policy.PodDisruptionBudgetSpec{{MinAvailable:{min_available}, "
            f"MaxUnavailable:{max_unavailable}}}"
        )
        r.add(fe.invalid("spec", shown, "minAvailable and maxUnavailable cannot be both set"))
    min_value = _read_int_or_percent(r, spec, "minAvailable", "spec")
    max_value = _read_int_or_percent(r, spec, "maxUnavailable", "spec")
    selector = _read_label_selector(r, spec, "selector", "spec")
    r.extend(validate_label_selector(selector, "spec.selector"))
    policy = r.optional_str(spec, "unhealthyPodEvictionPolicy", "spec")
    if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
        r.add(
            fe.not_supported(
                "spec.unhealthyPodEvictionPolicy", policy, ("AlwaysAllow", "IfHealthyBudget")
            )
        )
    status = r.obj(doc, "status", "")
    return PodDisruptionBudget(
        name=meta.name,
        namespace=meta.namespace,
        selector=selector,
        min_available=min_value,
        max_unavailable=max_value,
        disruptions_allowed=r.int32(status, "disruptionsAllowed", "status") or 0,
        manifest=dict(doc),
    )


# ---------------------------------------------------------------------------------------------
# PersistentVolume, PersistentVolumeClaim (v1), StorageClass, CSINode (storage.k8s.io/v1).

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_PV_SOURCES = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
    "iscsi",
)


def _validate_access_modes(modes: list[str], path: str, required_detail: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not modes:
        errs.append(fe.required(path, required_detail))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(fe.not_supported(path, mode, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(
        m != "ReadWriteOncePod" and m in _ACCESS_MODES for m in modes
    ):
        errs.append(fe.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _validate_storage_class_name(name: str | None, path: str) -> list[FieldError]:
    if not name:
        return []
    return [fe.invalid(path, name, msg) for msg in name_is_dns_subdomain(name, False)]


def _decode_persistent_volume(r: _Reader, doc: Mapping[str, Any]) -> PersistentVolume:
    """SetDefaults_PersistentVolume and ValidatePersistentVolume."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    modes = r.str_list(spec, "accessModes", "spec")
    capacity = r.resources(spec, "capacity", "spec")
    storage_class = r.string(spec, "storageClassName", "spec")
    node_affinity = None
    affinity_raw = r.optional_map(spec, "nodeAffinity", "spec")
    if affinity_raw is not None:
        required_raw = r.optional_map(affinity_raw, "required", "spec.nodeAffinity")
        if required_raw is None:
            r.add(
                fe.required("spec.nodeAffinity.required", "must specify required node constraints")
            )
        else:
            node_affinity = _read_node_selector(r, required_raw, "spec.nodeAffinity.required")
            r.extend(validate_node_selector(node_affinity, "spec.nodeAffinity.required"))
    claim = r.optional_map(spec, "claimRef", "spec")
    claim_ref = None
    if claim is not None:
        claim_namespace = r.string(claim, "namespace", "spec.claimRef")
        claim_ref = f"{claim_namespace}/{r.string(claim, 'name', 'spec.claimRef')}"
    csi = r.obj(spec, "csi", "spec")

    r.extend(_validate_access_modes(modes, "spec.accessModes", ""))
    if not capacity and not spec.get("capacity"):
        r.add(fe.required("spec.capacity"))
    if set(capacity) != {"storage"}:
        r.add(
            fe.not_supported(
                "spec.capacity",
                Raw(f"core.ResourceList{{{', '.join(map(fe.go_quote, capacity))}}}"),
                ("storage",),
            )
        )
    for name, quantity in capacity.items():
        if quantity.amount <= 0:
            r.add(
                fe.invalid(
                    key("spec.capacity", name), canonical_quantity(quantity), IS_NOT_POSITIVE_ERROR
                )
            )
    r.extend(_validate_storage_class_name(storage_class, "spec.storageClassName"))
    sources = [s for s in _PV_SOURCES if spec.get(s) is not None]
    for extra in sources[1:]:
        r.add(fe.forbidden(child("spec", extra), "may not specify more than 1 volume type"))
    if not sources:
        r.add(fe.required("spec", "must specify a volume type"))
    status = r.obj(doc, "status", "")
    return PersistentVolume(
        name=meta.name,
        capacity=capacity,
        access_modes=tuple(modes),
        storage_class_name=storage_class,
        node_affinity=node_affinity,
        claim_ref=claim_ref,
        phase=r.string(status, "phase", "status") or "Pending",
        csi_driver=r.string(csi, "driver", "spec.csi"),
        labels=meta.labels,
        manifest=dict(doc),
    )


def _decode_persistent_volume_claim(r: _Reader, doc: Mapping[str, Any]) -> PersistentVolumeClaim:
    """SetDefaults_PersistentVolumeClaim and ValidatePersistentVolumeClaim."""
    meta = _read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    modes = r.str_list(spec, "accessModes", "spec")
    resources = r.obj(spec, "resources", "spec")
    requests = r.resources(resources, "requests", "spec.resources")
    storage_class = r.optional_str(spec, "storageClassName", "spec")
    r.extend(
        _validate_access_modes(modes, "spec.accessModes", "at least 1 access mode is required")
    )
    r.extend(
        validate_label_selector(_read_label_selector(r, spec, "selector", "spec"), "spec.selector")
    )
    storage = requests.get("storage")
    storage_path = key("spec.resources", "storage")
    if storage is None:
        r.add(fe.required(storage_path))
    elif storage.amount <= 0:
        r.add(fe.invalid(storage_path, canonical_quantity(storage), IS_NOT_POSITIVE_ERROR))
    r.extend(_validate_storage_class_name(storage_class, "spec.storageClassName"))
    status = r.obj(doc, "status", "")
    return PersistentVolumeClaim(
        name=meta.name,
        namespace=meta.namespace,
        storage_class_name=storage_class,
        access_modes=tuple(modes),
        requests=requests,
        volume_name=r.string(spec, "volumeName", "spec"),
        phase=r.string(status, "phase", "status") or "Pending",
        annotations=meta.annotations,
        manifest=dict(doc),
    )


_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_RECLAIM_POLICIES = ("Delete", "Retain")


def _decode_storage_class(r: _Reader, doc: Mapping[str, Any]) -> StorageClass:
    """SetDefaults_StorageClass and ValidateStorageClass (storage.k8s.io/v1)."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    provisioner = r.string(doc, "provisioner", "")
    if not provisioner:
        r.add(fe.required("provisioner", provisioner))
    else:
        r.extend(
            fe.invalid("provisioner", provisioner.lower(), msg)
            for msg in is_qualified_name(provisioner.lower())
        )
    reclaim = r.string(doc, "reclaimPolicy", "") or "Delete"
    if reclaim not in _RECLAIM_POLICIES:
        r.add(fe.not_supported("reclaimPolicy", reclaim, _RECLAIM_POLICIES))
    mode = r.string(doc, "volumeBindingMode", "") or "Immediate"
    if mode not in _BINDING_MODES:
        r.add(fe.not_supported("volumeBindingMode", mode, _BINDING_MODES))
    terms = []
    for term_path, term in r.maps(doc, "allowedTopologies", ""):
        requirements = []
        seen_keys: set[str] = set()
        for expr_path, expr in r.maps(term, "matchLabelExpressions", term_path):
            label_key = r.string(expr, "key", expr_path)
            values = r.str_list(expr, "values", expr_path)
            if not values:
                r.add(fe.required(child(expr_path, "values")))
            r.extend(validate_label_name(label_key, child(expr_path, "key")))
            if label_key in seen_keys:
                r.add(fe.duplicate(child(expr_path, "key"), label_key))
            seen_keys.add(label_key)
            requirements.append(NodeSelectorRequirement(label_key, "In", tuple(values)))
        terms.append(NodeSelectorTerm(match_expressions=tuple(requirements)))
    return StorageClass(
        name=meta.name,
        provisioner=provisioner,
        volume_binding_mode=mode,
        allowed_topologies=tuple(terms),
        manifest=dict(doc),
    )


def _decode_csi_node(r: _Reader, doc: Mapping[str, Any]) -> CSINode:
    """ValidateCSINode, in part: driver names, node ids, allocatable counts."""
    meta = _read_meta(r, doc, namespaced=False, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    drivers = []
    names: set[str] = set()
    for driver_path, raw in r.maps(spec, "drivers", "spec"):
        name = r.string(raw, "name", driver_path)
        node_id = r.string(raw, "nodeID", driver_path)
        allocatable = r.optional_map(raw, "allocatable", driver_path)
        count = (
            r.int32(allocatable, "count", child(driver_path, "allocatable"))
            if allocatable
            else None
        )
        if not name:
            r.add(fe.required(child(driver_path, "name")))
        elif name in names:
            r.add(fe.duplicate(child(driver_path, "name"), name))
        names.add(name)
        if not node_id:
            r.add(fe.required(child(driver_path, "nodeID")))
        if count is not None and count < 0:
            r.add(fe.invalid(child(driver_path, "allocatable", "count"), count, IS_NEGATIVE_ERROR))
        drivers.append(CSINodeDriver(name=name, node_id=node_id, allocatable_count=count))
    return CSINode(name=meta.name, drivers=tuple(drivers), manifest=dict(doc))


# ---------------------------------------------------------------------------------------------
# PodGroup (scheduling.x-k8s.io/v1alpha1): the custom resource of the out-of-tree Coscheduling
# plugin, checked as its CRD's structural schema (scheduler-plugins manifests/coscheduling/crd.yaml)
# would check it.


def _decode_pod_group(r: _Reader, doc: Mapping[str, Any]) -> PodGroup:
    """spec.minMember (int32, minimum 1 when given), minResources, scheduleTimeoutSeconds."""
    meta = _read_meta(r, doc, namespaced=True, name_fn=name_is_dns_subdomain)
    spec = r.obj(doc, "spec", "")
    min_member = r.int32(spec, "minMember", "spec")
    if min_member is not None and min_member < 1:
        path = child("spec", "minMember")
        r.add(fe.invalid(path, min_member, f"{path} in body should be greater than or equal to 1"))
    min_resources = None
    if r.optional_map(spec, "minResources", "spec") is not None:
        min_resources = r.resources(spec, "minResources", "spec")
    return PodGroup(
        name=meta.name,
        namespace=meta.namespace,
        min_member=min_member or 0,
        min_resources=min_resources,
        schedule_timeout_seconds=r.int32(spec, "scheduleTimeoutSeconds", "spec"),
        creation_timestamp=meta.creation_timestamp,
        manifest=dict(doc),
    )


# ---------------------------------------------------------------------------------------------
# Entry point.


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What the API server knows of a kind: its group (for messages) and REST resource name."""

    group: str
    resource: str
    decode: Callable[[_Reader, Mapping[str, Any]], KubeObject]

    @property
    def qualified_resource(self) -> str:
        """schema.GroupResource.String(): ``pods``, ``priorityclasses.scheduling.k8s.io``."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


KINDS: dict[tuple[str, str], KindInfo] = {
    ("v1", "Pod"): KindInfo("", "pods", _decode_pod),
    ("v1", "Node"): KindInfo("", "nodes", _decode_node),
    ("v1", "Namespace"): KindInfo("", "namespaces", _decode_namespace),
    ("v1", "PersistentVolume"): KindInfo("", "persistentvolumes", _decode_persistent_volume),
    ("v1", "PersistentVolumeClaim"): KindInfo(
        "", "persistentvolumeclaims", _decode_persistent_volume_claim
    ),
    ("scheduling.k8s.io/v1", "PriorityClass"): KindInfo(
        "scheduling.k8s.io", "priorityclasses", _decode_priority_class
    ),
    ("policy/v1", "PodDisruptionBudget"): KindInfo(
        "policy", "poddisruptionbudgets", _decode_pod_disruption_budget
    ),
    ("storage.k8s.io/v1", "StorageClass"): KindInfo(
        "storage.k8s.io", "storageclasses", _decode_storage_class
    ),
    ("storage.k8s.io/v1", "CSINode"): KindInfo("storage.k8s.io", "csinodes", _decode_csi_node),
    # Custom resources.
    (POD_GROUP_API_VERSION, POD_GROUP_KIND): KindInfo(
        SCHEDULING_GROUP, "podgroups", _decode_pod_group
    ),
}


def kind_info(api_version: str, kind: str) -> KindInfo:
    """The kind's description, or DocumentError in the API server's words."""
    if not kind:
        raise DocumentError("Object 'Kind' is missing")
    if not api_version:
        raise DocumentError("Object 'apiVersion' is missing")
    info = KINDS.get((api_version, kind))
    if info is None:
        raise DocumentError(
            f"no matches for kind {fe.go_quote(kind)} in version {fe.go_quote(api_version)}"
        )
    return info


def decode_object(doc: dict[str, Any], path_prefix: str = "") -> KubeObject:
    """Decodes, defaults and validates one manifest.

    Raises DocumentError for an unknown kind or apiVersion and InvalidObjectError listing every
    invalid field otherwise; ``path_prefix`` (e.g. ``"items[2]."``) is put before each field path.
    """
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    info = kind_info(
        api_version if isinstance(api_version, str) else "", kind if isinstance(kind, str) else ""
    )
    reader = _Reader()
    obj = info.decode(reader, doc)
    if reader.errors:
        errs = [e.with_prefix(path_prefix) for e in reader.errors]
        raise InvalidObjectError(str(kind), obj.name, errs, group=info.group)
    return obj
