"""Fuzzing the loaders with hostile documents: arbitrary JSON-like values, mutated valid
manifests, arbitrary text. Whatever comes in, the loaders answer with their own error types
(ManifestError, the decoder's LocatedError subclasses, ConfigError) whose messages say what is
wrong and where, and they answer quickly: each example runs under an alarm, so a hang fails
the test instead of stalling the suite."""

from __future__ import annotations

import copy
import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedviz.kube.decode import KINDS, decode_object
from schedviz.kube.errors import InvalidObjectError, LocatedError, ManifestError
from schedviz.kube.load import load_manifests
from schedviz.scheduler.apis.config.v1 import ConfigError, decode_configuration
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry

SECONDS_PER_EXAMPLE = 5
FUZZ = settings(
    max_examples=150,
    deadline=None,  # the alarm bounds each example; timing jitter on CI must not fail it
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@contextmanager
def time_bound(seconds: int = SECONDS_PER_EXAMPLE) -> Iterator[None]:
    """Fails an example that takes longer than ``seconds`` (a hang, or something quadratic)."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"example took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    # Surrogates too: JSON can carry a lone one ("\ud800").
    | st.text(st.characters(exclude_categories=()), max_size=8)
    | st.sampled_from(
        ["", "0", "-1", "1e999999999", "99999999999999999999999Ei", "NaN", "🚀", "\x00", "\ud800"]
    )
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(st.characters(exclude_categories=()), max_size=12), children, max_size=4
        )
    ),
    max_leaves=25,
)
kinds = st.sampled_from(sorted(KINDS))
# Field names the decoders look at, so that arbitrary values reach their type checks.
known_keys = st.sampled_from(
    [
        "metadata",
        "spec",
        "status",
        "name",
        "namespace",
        "labels",
        "annotations",
        "containers",
        "resources",
        "requests",
        "limits",
        "affinity",
        "tolerations",
        "nodeSelector",
        "allocatable",
        "capacity",
        "taints",
        "value",
        "items",
        "profiles",
        "plugins",
        "pluginConfig",
        "args",
    ]
)
shaped_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(known_keys | st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)


any_text = st.text(st.characters(exclude_categories=()), max_size=12)
metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": any_text | st.sampled_from(["a", "n1", "a/b", "..", "x" * 300]),
        "namespace": any_text,
        "labels": st.dictionaries(any_text, any_text | scalars, max_size=3),
        "annotations": st.dictionaries(any_text, any_text | scalars, max_size=3),
    },
)


@st.composite
def kube_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A document of a known kind, with arbitrary metadata, the rest arbitrary."""
    api_version, kind = draw(kinds)
    document = draw(st.dictionaries(known_keys, shaped_values, max_size=4))
    if draw(st.booleans()):
        document["metadata"] = draw(metadata)
    return {"apiVersion": api_version, "kind": kind, **document}


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        "priorityClassName": "high",
        "containers": [
            {
                "name": "c",
                "image": "nginx",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
    },
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}
PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
}
VALID_MANIFESTS = [POD, NODE, PRIORITY_CLASS, PDB]
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 50,
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}],
                        }
                    },
                },
                {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
            ],
        }
    ],
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


@st.composite
def mutated(draw: st.DrawFn, originals: list[dict[str, Any]]) -> dict[str, Any]:
    """A valid document with one to three of its values replaced, or keys deleted."""
    document = copy.deepcopy(draw(st.sampled_from(originals)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(document) if p]
        if not paths:
            break
        *parents, last = draw(st.sampled_from(paths))
        container = document
        for step in parents:
            container = container[step]
        if draw(st.booleans()) and isinstance(container, dict):
            del container[last]
        else:
            container[last] = draw(shaped_values)
    return document


def assert_located(error: LocatedError) -> None:
    assert str(error).strip()
    if isinstance(error, InvalidObjectError):
        assert error.errors
        # Every complaint about an object names the field it is about.
        assert all(field_error.field for field_error in error.errors), str(error)


def decode_or_refuse(document: dict[str, Any]) -> None:
    with time_bound():
        try:
            decode_object(document)
        except LocatedError as error:
            assert_located(error)


def load_or_refuse(text: str) -> None:
    with time_bound():
        try:
            load_manifests(text)
        except ManifestError as error:
            assert error.errors
            for located in error.errors:
                assert_located(located)


def configure_or_refuse(document: Any) -> None:
    with time_bound():
        try:
            decode_configuration(document, known_plugins=set(new_in_tree_registry()))
        except ConfigError as error:
            assert error.errors and all(isinstance(m, str) and m.strip() for m in error.errors)


@FUZZ
@given(json_values)
def test_decode_object_refuses_arbitrary_values_cleanly(value: Any) -> None:
    if isinstance(value, dict):
        decode_or_refuse(value)
    load_or_refuse(yaml.safe_dump(value))
    load_or_refuse(json.dumps(value))


@FUZZ
@given(kube_documents())
def test_decode_object_refuses_arbitrary_documents_of_known_kinds_cleanly(
    document: dict[str, Any],
) -> None:
    decode_or_refuse(document)


@FUZZ
@given(mutated(VALID_MANIFESTS))
def test_decode_object_refuses_mutated_manifests_cleanly(document: dict[str, Any]) -> None:
    decode_or_refuse(document)


@FUZZ
@given(st.lists(mutated(VALID_MANIFESTS) | kube_documents(), min_size=1, max_size=4))
def test_load_manifests_refuses_mutated_lists_cleanly(documents: list[dict[str, Any]]) -> None:
    load_or_refuse(yaml.safe_dump_all(documents))
    load_or_refuse(json.dumps(documents))
    load_or_refuse(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": documents}))


@FUZZ
@given(json_values)
def test_decode_configuration_refuses_arbitrary_values_cleanly(value: Any) -> None:
    configure_or_refuse(value)
    if isinstance(value, dict):
        configure_or_refuse({**value, "apiVersion": CONFIG["apiVersion"], "kind": CONFIG["kind"]})


@FUZZ
@given(mutated([CONFIG]))
def test_decode_configuration_refuses_mutated_configurations_cleanly(
    document: dict[str, Any],
) -> None:
    configure_or_refuse(document)
    load_or_refuse(yaml.safe_dump(document))


YAML_ALPHABET = st.sampled_from([*"{}[]:,-?&*!|>'\"#%@`\\ \t\n\r", "a", "1", ".", "e", "~"])


@FUZZ
@given(
    st.text()
    | st.binary().map(lambda raw: raw.decode("latin-1"))
    | st.binary().map(lambda raw: raw.decode("utf-8", errors="replace"))
    | st.text(YAML_ALPHABET, max_size=200)
)
def test_load_manifests_refuses_arbitrary_text_cleanly(text: str) -> None:
    load_or_refuse(text)


def test_the_valid_originals_are_valid() -> None:
    """The mutations start from documents the loaders accept."""
    for document in VALID_MANIFESTS:
        decode_object(document)
    decode_configuration(CONFIG, known_plugins=set(new_in_tree_registry()))
