"""Forms of the web UI. They parse what a person types into Kubernetes manifests; whether the
manifests are valid is for the services to say (their messages are mapped back to the fields
they name, see ``add_service_errors``).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from django import forms
from django.conf import settings

from schedviz.cluster import validation
from schedviz.cluster.models import Cluster

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
MAX_COUNT = 500

# ---------------------------------------------------------------------------------------------
# Mapping the services' messages to fields

_INVALID = re.compile(r"^(?P<head>.*? is invalid): (?P<body>.*)$", re.S)
# Where one field error of a bracketed list ends: ", " followed by the next field path.
_NEXT_FIELD = re.compile(r", (?=[a-zA-Z][\w.\[\]/-]*: )")
_FIELD_PATH = re.compile(r"^(?:document \d+(?: of [^:]+)?: )?(?P<path>[a-zA-Z][\w.\[\]/-]*): ")
# The loader's location of an error in text given without a file name (the services' default
# source), and the lines that start a YAML document.
_INPUT_DOCUMENT = re.compile(r"\bdocument (?P<index>\d+) of <input>(?P<sep>: |, )")
_DOCUMENT_START = re.compile(r"^---", re.M)


def document_count(text: str) -> int:
    """How many YAML documents ``text`` holds (blank and comment-only ones not counted; JSON is
    one), to say where an error is the way the person typed it."""
    if text.lstrip()[:1] in ("{", "["):
        return 1
    chunks = _DOCUMENT_START.split(text)
    return sum(
        1
        for chunk in chunks
        if any(line.strip() and not line.lstrip().startswith("#") for line in chunk.splitlines())
    )


def input_messages(messages: list[str], text: str) -> list[str]:
    """The services' messages about text typed into a form, located as the person reads it:
    ``document 1 of <input>: ...`` loses its location when the text is one document (a list
    item keeps its path) and reads ``document 3: ...`` when there are several."""
    single = document_count(text) <= 1

    def located(match: re.Match[str]) -> str:
        if single:
            return ""
        return f"document {match['index']}{match['sep']}"

    return [_INPUT_DOCUMENT.sub(located, message) for message in messages]


def split_service_message(message: str) -> list[tuple[str, str]]:
    """An API-server message as (field path, text) pairs; path "" when it names no field.

    ``Pod "a" is invalid: [spec.x: ..., spec.y: ...]`` gives one pair per field error.
    """
    match = _INVALID.match(message)
    if match is None:
        path = _FIELD_PATH.match(message)
        return [(path["path"] if path else "", message)]
    body = match["body"]
    listed = body.startswith("[") and body.endswith("]")
    parts = _NEXT_FIELD.split(body[1:-1]) if listed else [body]
    pairs = []
    for part in parts:
        path = _FIELD_PATH.match(part)
        pairs.append((path["path"] if path else "", f"{match['head']}: {part}"))
    return pairs


def add_service_errors(
    form: forms.Form, errors: list[str], routes: list[tuple[str, str]], default: str | None
) -> None:
    """Each message (or each field error in it) goes to the first field whose route fragment
    its path (or, for messages without a path, its text) contains; otherwise to ``default``
    (None: the form's own errors)."""
    for message in errors:
        for path, text in split_service_message(message):
            target = default
            for fragment, field_name in routes:
                if fragment in (path or text):
                    target = field_name
                    break
            form.add_error(target, text)


# ---------------------------------------------------------------------------------------------
# Small line-based syntaxes, as kubectl writes them


def _entries(text: str) -> list[str]:
    """Non-empty entries, one a line (commas separate entries too)."""
    return [e.strip() for line in text.splitlines() for e in line.split(",") if e.strip()]


def parse_labels(text: str) -> dict[str, str]:
    """``key=value`` entries."""
    labels = {}
    for entry in _entries(text):
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise forms.ValidationError(f"{entry!r}: expected key=value")
        labels[key.strip()] = value.strip()
    return labels


def parse_taints(text: str) -> list[dict[str, Any]]:
    """``key[=value]:Effect`` entries (kubectl taint's syntax)."""
    taints = []
    for entry in _entries(text):
        head, sep, effect = entry.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise forms.ValidationError(
                f"{entry!r}: expected key[=value]:Effect, Effect one of {', '.join(TAINT_EFFECTS)}"
            )
        key, _, value = head.partition("=")
        taint: dict[str, Any] = {"key": key.strip(), "effect": effect}
        if value.strip():
            taint["value"] = value.strip()
        taints.append(taint)
    return taints


def parse_tolerations(text: str) -> list[dict[str, Any]]:
    """``key[=value][:Effect]`` entries: without a value the operator is Exists; ``*`` alone
    tolerates every taint."""
    tolerations = []
    for line in text.splitlines():
        entry = line.strip()
        if not entry:
            continue
        if entry == "*":
            tolerations.append({"operator": "Exists"})
            continue
        head, sep, effect = entry.rpartition(":")
        if not sep:
            head, effect = entry, ""
        elif effect not in TAINT_EFFECTS:
            raise forms.ValidationError(
                f"{entry!r}: expected key[=value][:Effect], Effect one of "
                f"{', '.join(TAINT_EFFECTS)}"
            )
        key, eq, value = head.partition("=")
        toleration: dict[str, Any] = {"key": key.strip()}
        if eq:
            toleration.update(operator="Equal", value=value.strip())
        else:
            toleration["operator"] = "Exists"
        if effect:
            toleration["effect"] = effect
        tolerations.append(toleration)
    return tolerations


def parse_node_affinity(text: str) -> list[dict[str, Any]]:
    """``key Operator [v1,v2]`` lines, all required (one nodeSelectorTerm)."""
    expressions = []
    for line in text.splitlines():
        words = line.split(None, 2)
        if not words:
            continue
        if len(words) < 2 or words[1] not in NODE_SELECTOR_OPERATORS:
            raise forms.ValidationError(
                f"{line.strip()!r}: expected key Operator [values], Operator one of "
                f"{', '.join(NODE_SELECTOR_OPERATORS)}"
            )
        expression: dict[str, Any] = {"key": words[0], "operator": words[1]}
        if len(words) == 3:
            expression["values"] = [v.strip() for v in words[2].split(",") if v.strip()]
        expressions.append(expression)
    return expressions


def parse_topology_spread(text: str, app: str) -> list[dict[str, Any]]:
    """``topologyKey [maxSkew] [DoNotSchedule|ScheduleAnyway]`` lines, over the pods of this
    form (label ``app``)."""
    constraints = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        skew, when = "1", "DoNotSchedule"
        for word in words[1:]:
            if word in WHEN_UNSATISFIABLE:
                when = word
            else:
                skew = word
        try:
            max_skew = int(skew)
        except ValueError:
            raise forms.ValidationError(
                f"{line.strip()!r}: expected topologyKey [maxSkew] [{'|'.join(WHEN_UNSATISFIABLE)}]"
            ) from None
        constraints.append(
            {
                "maxSkew": max_skew,
                "topologyKey": words[0],
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": {"app": app}},
            }
        )
    return constraints


def numbered_names(name: str, count: int) -> list[str]:
    return [name] if count == 1 else [f"{name}-{i}" for i in range(1, count + 1)]


class _PrefixedIds(forms.Form):
    """Several forms share the dashboard: each kind's element ids start with its own prefix.
    Labels go without a suffix."""

    id_prefix = "id"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"{self.id_prefix}_%s")
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class _AlikeObjects(_PrefixedIds):
    """A form for ``count`` objects alike but for their names (``name`` alone, or name-1, ...)."""

    def names(self) -> list[str]:
        return numbered_names(self.cleaned_data["name"], self.cleaned_data["count"])

    def manifests(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def manifests_text(self) -> str:
        return yaml.safe_dump_all(self.manifests(), sort_keys=False)


def _text_area(rows: int, placeholder: str) -> forms.Textarea:
    return forms.Textarea(attrs={"rows": rows, "placeholder": placeholder, "spellcheck": "false"})


# ---------------------------------------------------------------------------------------------
# Clusters


def too_large(size: int) -> str:
    """The YAML forms take what the JSON API takes: SCHEDVIZ_MAX_UPLOAD_BYTES."""
    limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
    return f"The manifests are {size} bytes: at most {limit} bytes (SCHEDVIZ_MAX_UPLOAD_BYTES)."


CLOCK_HELP = (
    "Live: backoffs and timeouts take their real seconds (times the speed), to watch pods move "
    "through the queue. Virtual: the scheduler's clock jumps to the next event, so a run "
    "finishes at once; for large clusters and experiments."
)


class ClusterCreateForm(_PrefixedIds):
    SOURCES = [
        ("empty", "Empty"),
        ("demo", "The built-in demo cluster"),
        ("manifests", "Manifests (pasted or uploaded)"),
    ]

    name = forms.CharField(max_length=100, strip=False)
    clock_mode = forms.ChoiceField(
        label="Clock",
        choices=Cluster.ClockMode.choices,
        initial=Cluster.ClockMode.LIVE,
        help_text=CLOCK_HELP,
    )
    source = forms.ChoiceField(
        label="Start with", choices=SOURCES, initial="empty", widget=forms.RadioSelect
    )
    manifests = forms.CharField(
        required=False,
        strip=False,
        widget=_text_area(10, "kubectl get nodes,pods -o yaml output, or any Kubernetes YAML"),
        help_text="Nodes, Pods, PriorityClasses, ... and a KubeSchedulerConfiguration.",
    )
    upload = forms.FileField(required=False, label="or upload a file")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("source") != "manifests":
            return data
        upload = data.get("upload")
        if upload is not None:
            if upload.size > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
                self.add_error("upload", too_large(upload.size))
                return data
            try:
                data["manifests"] = upload.read().decode()
            except UnicodeDecodeError:
                self.add_error("upload", "The file is not UTF-8 text.")
                return data
        size = len((data.get("manifests") or "").encode())
        if size > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
            self.add_error("manifests", too_large(size))
        elif not (data.get("manifests") or "").strip():
            self.add_error("manifests", "Paste or upload the manifests to start with.")
        return data


class TraceImportForm(_PrefixedIds):
    """A trace file to review: the JSON lines of an export, or a kube-scheduler-simulator List."""

    id_prefix = "import"

    trace = forms.FileField(
        label="Trace file",
        help_text="A schedviz JSON-lines export (.jsonl) or a kube-scheduler-simulator pod "
        "List (.json). It becomes a new cluster, paused, with its cycles to read.",
    )
    name = forms.CharField(
        max_length=100,
        required=False,
        strip=False,
        help_text="Leave empty to take the exported cluster's name.",
    )

    def clean_trace(self) -> str:
        upload = self.cleaned_data["trace"]
        if upload.size > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
            limit = settings.SCHEDVIZ_MAX_UPLOAD_BYTES
            raise forms.ValidationError(
                f"The file is {upload.size} bytes: at most {limit} bytes "
                "(SCHEDVIZ_MAX_UPLOAD_BYTES)."
            )
        try:
            return str(upload.read().decode())
        except UnicodeDecodeError:
            raise forms.ValidationError("The file is not UTF-8 text.") from None


CLUSTER_ROUTES = [("name:", "name"), ("clusters ", "name"), ("clockMode", "clock_mode")]


# ---------------------------------------------------------------------------------------------
# Pods


class PodForm(_AlikeObjects):
    id_prefix = "pod"

    name = forms.CharField(max_length=253, help_text="With a count above 1: name-1, name-2, ...")
    namespace = forms.CharField(max_length=253, initial="default")
    count = forms.IntegerField(min_value=1, max_value=MAX_COUNT, initial=1)
    cpu = forms.CharField(label="CPU request", required=False, initial="100m")
    memory = forms.CharField(label="Memory request", required=False, initial="128Mi")
    priority_class = forms.CharField(label="Priority class", required=False)
    scheduler_name = forms.CharField(label="Scheduler name", required=False)
    node_selector = forms.CharField(
        label="Node selector", required=False, widget=_text_area(2, "disktype=ssd")
    )
    tolerations = forms.CharField(required=False, widget=_text_area(2, "dedicated=gpu:NoSchedule"))
    node_affinity = forms.CharField(
        label="Required node affinity",
        required=False,
        widget=_text_area(2, "topology.kubernetes.io/zone In zone-1,zone-2"),
    )
    topology_spread = forms.CharField(
        label="Topology spread",
        required=False,
        widget=_text_area(2, "topology.kubernetes.io/zone 1 DoNotSchedule"),
        help_text="Spreads the pods of this form (label app=<name>).",
    )

    def clean_node_selector(self) -> dict[str, str]:
        return parse_labels(self.cleaned_data["node_selector"])

    def clean_tolerations(self) -> list[dict[str, Any]]:
        return parse_tolerations(self.cleaned_data["tolerations"])

    def clean_node_affinity(self) -> list[dict[str, Any]]:
        return parse_node_affinity(self.cleaned_data["node_affinity"])

    def clean_topology_spread(self) -> str:
        text: str = self.cleaned_data["topology_spread"]
        parse_topology_spread(text, "x")
        return text

    def manifests(self) -> list[dict[str, Any]]:
        data = self.cleaned_data
        requests = {k: data[k] for k in ("cpu", "memory") if data[k]}
        spec: dict[str, Any] = {
            "containers": [
                {"name": "app", "image": PAUSE_IMAGE, "resources": {"requests": requests}}
            ]
        }
        if data["scheduler_name"]:
            spec["schedulerName"] = data["scheduler_name"]
        if data["priority_class"]:
            spec["priorityClassName"] = data["priority_class"]
        if data["node_selector"]:
            spec["nodeSelector"] = data["node_selector"]
        if data["tolerations"]:
            spec["tolerations"] = data["tolerations"]
        if data["node_affinity"]:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": data["node_affinity"]}]
                    }
                }
            }
        if data["topology_spread"]:
            spec["topologySpreadConstraints"] = parse_topology_spread(
                data["topology_spread"], data["name"]
            )
        return [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": data["namespace"],
                    "labels": {"app": data["name"]},
                },
                "spec": spec,
            }
            for name in self.names()
        ]


POD_ROUTES = [
    ("metadata.name", "name"),
    ("already exists", "name"),
    ("metadata.namespace", "namespace"),
    ("requests[cpu]", "cpu"),
    ("requests[memory]", "memory"),
    ("priorityClassName", "priority_class"),
    ("PriorityClass", "priority_class"),
    ("schedulerName", "scheduler_name"),
    ("nodeSelector", "node_selector"),
    ("tolerations", "tolerations"),
    ("affinity", "node_affinity"),
    ("topologySpreadConstraints", "topology_spread"),
]


# ---------------------------------------------------------------------------------------------
# Nodes


class NodeForm(_AlikeObjects):
    id_prefix = "node"

    name = forms.CharField(max_length=253, help_text="With a count above 1: name-1, name-2, ...")
    count = forms.IntegerField(
        min_value=1, max_value=MAX_COUNT, initial=1, label="Add this many nodes like this"
    )
    cpu = forms.CharField(label="CPU", initial="4")
    memory = forms.CharField(label="Memory", initial="8Gi")
    pods = forms.CharField(label="Max pods", initial="110")
    labels = forms.CharField(
        required=False, widget=_text_area(2, "topology.kubernetes.io/zone=zone-1")
    )
    taints = forms.CharField(required=False, widget=_text_area(2, "dedicated=gpu:NoSchedule"))

    def clean_labels(self) -> dict[str, str]:
        return parse_labels(self.cleaned_data["labels"])

    def clean_taints(self) -> list[dict[str, Any]]:
        return parse_taints(self.cleaned_data["taints"])

    def manifests(self) -> list[dict[str, Any]]:
        data = self.cleaned_data
        allocatable = {"cpu": data["cpu"], "memory": data["memory"], "pods": data["pods"]}
        documents = []
        for name in self.names():
            labels = {"kubernetes.io/hostname": name, **data["labels"]}
            node: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "status": {"capacity": dict(allocatable), "allocatable": dict(allocatable)},
            }
            if data["taints"]:
                node["spec"] = {"taints": data["taints"]}
            documents.append(node)
        return documents


NODE_ROUTES = [
    ("metadata.name", "name"),
    ("metadata.labels", "labels"),
    ("taints", "taints"),
    ("cpu", "cpu"),
    ("memory", "memory"),
    ("pods", "pods"),
]


class NodeEditForm(_PrefixedIds):
    labels = forms.CharField(required=False, widget=_text_area(4, "key=value, one a line"))
    taints = forms.CharField(required=False, widget=_text_area(3, "key[=value]:Effect, one a line"))
    cordoned = forms.BooleanField(required=False, label="Cordoned (unschedulable)")

    @staticmethod
    def initial_for(
        labels: dict[str, str], taints: list[dict[str, Any]], cordoned: bool
    ) -> dict[str, Any]:
        return {
            "labels": "\n".join(f"{k}={v}" for k, v in labels.items()),
            "taints": "\n".join(
                f"{t['key']}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}"
                for t in taints
            ),
            "cordoned": cordoned,
        }

    def clean_labels(self) -> dict[str, str]:
        return parse_labels(self.cleaned_data["labels"])

    def clean_taints(self) -> list[dict[str, Any]]:
        return parse_taints(self.cleaned_data["taints"])


NODE_EDIT_ROUTES = [("metadata.labels", "labels"), ("taints", "taints")]


# ---------------------------------------------------------------------------------------------
# YAML and controls


class ManifestsForm(_PrefixedIds):
    id_prefix = "yaml"

    manifests = forms.CharField(
        label="YAML or JSON manifests",
        strip=False,
        widget=_text_area(16, "apiVersion: v1\nkind: Pod\n..."),
    )

    def clean_manifests(self) -> str:
        text: str = self.cleaned_data["manifests"]
        size = len(text.encode())
        if size > settings.SCHEDVIZ_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(too_large(size))
        return text


def _validate_speed(value: float) -> None:
    """schedviz.cluster.validation's rule, the one the JSON API applies."""
    errors = validation.speed_errors(value)
    if errors:
        raise forms.ValidationError(errors[0].removeprefix("speed: "))


class SpeedForm(forms.Form):
    speed = forms.FloatField(validators=[_validate_speed])


class ClockModeForm(forms.Form):
    clock_mode = forms.ChoiceField(choices=Cluster.ClockMode.choices)
