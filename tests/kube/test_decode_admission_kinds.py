"""LimitRange, ResourceQuota and RuntimeClass decoded, defaulted and validated in the API
server's words (schedviz/kube/decode/admission.py: SetDefaults_LimitRangeItem,
ValidateLimitRange, ValidateResourceQuota, ValidateRuntimeClass)."""

from __future__ import annotations

from typing import Any

import pytest

from schedviz.kube.decode import decode_object
from schedviz.kube.errors import InvalidObjectError
from schedviz.kube.objects import LimitRange, ResourceQuota


def limit_range(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "lr"},
        "spec": {"limits": list(items)},
    }


def test_a_container_item_defaults_its_limit_from_max_and_its_request_from_min() -> None:
    decoded = decode_object(limit_range({"type": "Container", "max": {"cpu": "2"}}))
    assert isinstance(decoded, LimitRange)
    item = decoded.limits[0]
    assert str(item.default["cpu"]) == "2" and str(item.default_request["cpu"]) == "2"
    decoded = decode_object(limit_range({"type": "Container", "min": {"memory": "1Mi"}}))
    assert isinstance(decoded, LimitRange)
    assert str(decoded.limits[0].default_request["memory"]) == "1Mi"
    assert decoded.limits[0].default == {}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (
            limit_range({"type": "Pod", "default": {"cpu": "1"}}),
            "spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'",
        ),
        (
            limit_range({"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}),
            "spec.limits[0].min[cpu]: Invalid value: 2: min value 2 is greater than max value 1",
        ),
        (
            limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}),
            "spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: 500m: ratio 500m is less "
            "than 1",
        ),
        (
            limit_range({"type": "Container"}, {"type": "Container"}),
            'spec.limits[1].type: Duplicate value: "Container"',
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "q"},
                "spec": {"hard": {"pods": "-1"}},
            },
            'spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": {"name": "q"},
                "spec": {"hard": {"pods": "1"}, "scopes": ["Sometimes"]},
            },
            'spec.scopes: Invalid value: "Sometimes": unsupported scope',
        ),
    ],
    ids=[
        "pod item default",
        "min over max",
        "ratio under one",
        "duplicate type",
        "negative quota",
        "unknown scope",
    ],
)
def test_invalid_admission_objects_are_refused_in_the_api_servers_words(
    doc: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidObjectError) as info:
        decode_object(doc)
    assert expected in [str(e) for e in info.value.errors]


def test_a_quota_keeps_its_hard_limits_and_scopes() -> None:
    decoded = decode_object(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "team"},
            "spec": {"hard": {"pods": "10", "requests.cpu": "4"}, "scopes": ["NotBestEffort"]},
        }
    )
    assert isinstance(decoded, ResourceQuota)
    assert decoded.key == "team/q" and decoded.scopes == ("NotBestEffort",)
    assert {k: str(v) for k, v in decoded.hard.items()} == {"pods": "10", "requests.cpu": "4"}
