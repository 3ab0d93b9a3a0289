"""Error formatting, after apimachinery util/validation/field/errors_test.go and api/errors."""

import pytest

from schedviz.kube import errors as fe
from schedviz.kube.errors import (
    DocumentError,
    FieldError,
    ForbiddenError,
    InvalidObjectError,
    ManifestError,
    Raw,
)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            fe.invalid(
                "spec.containers[0].resources.requests[cpu]",
                "1.5.3",
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
            'spec.containers[0].resources.requests[cpu]: Invalid value: "1.5.3": quantities must '
            "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            fe.required("metadata.name", "name or generateName is required"),
            "metadata.name: Required value: name or generateName is required",
        ),
        (fe.required("spec.containers"), "spec.containers: Required value"),
        (
            fe.not_supported(
                "spec.taints[0].effect", "Foo", ("NoExecute", "NoSchedule", "PreferNoSchedule")
            ),
            'spec.taints[0].effect: Unsupported value: "Foo": supported values: "NoExecute", '
            '"NoSchedule", "PreferNoSchedule"',
        ),
        (fe.not_supported("f", "x", ()), 'f: Unsupported value: "x"'),
        (
            fe.duplicate("spec.containers[1].name", "web"),
            'spec.containers[1].name: Duplicate value: "web"',
        ),
        (fe.forbidden("spec.nodeName", "cannot be set"), "spec.nodeName: Forbidden: cannot be set"),
        (
            fe.too_long("metadata.annotations", 262144),
            "metadata.annotations: Too long: must have at most 262144 bytes",
        ),
        (fe.too_many("spec.x", 5, 3), "spec.x: Too many: 5: must have at most 3 items"),
        (fe.too_many("spec.x", -1, -1), "spec.x: Too many: has too many items"),
        (fe.not_found("spec.volumes[0].name", "data"), 'spec.volumes[0].name: Not found: "data"'),
        (
            fe.invalid("spec.maxSkew", 0, "must be greater than zero"),
            "spec.maxSkew: Invalid value: 0: must be greater than zero",
        ),
        (fe.invalid("f", True, "d"), "f: Invalid value: true: d"),
        (fe.invalid("f", None, "d"), "f: Invalid value: null: d"),
        (fe.invalid("f", 1.5, "d"), "f: Invalid value: 1.5: d"),
        (
            fe.invalid("f", Raw("1500m"), "must be an integer"),
            "f: Invalid value: 1500m: must be an integer",
        ),
        (fe.invalid("f", ["a", "b"], "d"), 'f: Invalid value: []string{"a", "b"}: d'),
        (fe.invalid("f", "", ""), 'f: Invalid value: ""'),
        (
            fe.type_invalid("f", "x", "must be of type object"),
            'f: Invalid value: "x": must be of type object',
        ),
    ],
)
def test_field_error_formats_like_the_api_server(error: FieldError, expected: str) -> None:
    assert str(error) == expected


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("tab\tnew\nline", '"tab\\tnew\\nline"'),
        ("\x00\x7f", '"\\x00\\x7f"'),
        ("héllo", '"héllo"'),
        ("\u200b", '"\\u200b"'),
    ],
)
def test_go_quote_matches_strconv_quote(text: str, quoted: str) -> None:
    assert fe.go_quote(text) == quoted


def test_invalid_object_with_one_error_has_no_brackets() -> None:
    error = InvalidObjectError("Pod", "web-1", [fe.required("spec.containers")])
    assert str(error) == 'Pod "web-1" is invalid: spec.containers: Required value'


def test_invalid_object_with_several_errors_lists_them_once_in_brackets() -> None:
    errs = [fe.required("a"), fe.required("b"), fe.required("a")]
    error = InvalidObjectError("Pod", "web-1", errs, 3, "pods.yaml")
    assert str(error) == (
        'document 3 of pods.yaml: Pod "web-1" is invalid: [a: Required value, b: Required value]'
    )


def test_invalid_object_names_the_group_of_non_core_kinds() -> None:
    error = InvalidObjectError(
        "PriorityClass", "high", [fe.required("value")], group="scheduling.k8s.io"
    )
    assert str(error) == 'PriorityClass.scheduling.k8s.io "high" is invalid: value: Required value'


def test_errors_say_which_list_item_they_come_from() -> None:
    error = DocumentError('no matches for kind "Foo" in version "v1"')
    error.locate("list.yaml", 1, "items[4]")
    assert (
        str(error) == 'document 1 of list.yaml, items[4]: no matches for kind "Foo" in version "v1"'
    )


def test_forbidden_error_is_admission_wording() -> None:
    error = ForbiddenError("pods", "web-1", "no PriorityClass with name high was found")
    assert str(error) == 'pods "web-1" is forbidden: no PriorityClass with name high was found'


def test_manifest_error_lists_every_error_on_its_own_line() -> None:
    first = DocumentError("yaml: line 2: did not find expected key", 1, "a.yaml", line=2)
    second = InvalidObjectError("Node", "n1", [fe.required("metadata.name")], 2, "b.yaml")
    error = ManifestError([first, second])
    assert str(error).splitlines() == [
        "document 1 of a.yaml: yaml: line 2: did not find expected key",
        'document 2 of b.yaml: Node "n1" is invalid: metadata.name: Required value',
    ]
    assert error.errors == [first, second]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1.5, "1.5"),
        (100.0, "100"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (1.5e-5, "1.5e-05"),
        (-2.5, "-2.5"),
        (0.0, "0"),
    ],
)
def test_floats_print_as_go_prints_them(value: float, shown: str) -> None:
    assert str(fe.invalid("f", value, "d")) == f"f: Invalid value: {shown}: d"
