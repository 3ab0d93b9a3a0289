"""load_manifests and load_files: documents, lists, syntax errors, hostile YAML, all-or-nothing."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from schedviz.kube import load
from schedviz.kube.errors import (
    AlreadyExistsError,
    DocumentError,
    InvalidObjectError,
    ManifestError,
)
from schedviz.kube.load import Limit, ObjectLimits, load_files, load_manifests
from schedviz.kube.objects import Namespace, Node, Pod, PriorityClass

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: web-1}
spec: {containers: [{name: web, image: nginx}]}
"""
SCHEDULER_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: [{schedulerName: default-scheduler}]
"""


def messages(text: str, source: str = "<input>") -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifests(text, source)
    return str(info.value).splitlines()


def test_it_loads_multi_document_yaml_in_order_and_skips_empty_documents() -> None:
    manifests = load_manifests("---\n" + NODE + "---\n---\n" + POD + "---\n" + SCHEDULER_CONFIG)
    assert [type(o) for o in manifests.objects] == [Node, Pod]
    assert manifests.scheduler_configs == [
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler"}],
        }
    ]


def test_it_expands_kubectl_lists_recursively() -> None:
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
                {
                    "apiVersion": "v1",
                    "kind": "PodList",
                    "items": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "metadata": {"name": "p", "namespace": "shop"},
                            "spec": {"containers": [{"name": "c", "image": "x"}]},
                        }
                    ],
                },
            ],
        }
    )
    objects = load_manifests(text).objects
    assert [type(o) for o in objects] == [Namespace, Pod]
    assert objects[1].key == "shop/p"


def test_it_loads_a_json_object_and_a_json_array() -> None:
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 10,
    }
    assert [type(o) for o in load_manifests(json.dumps(pc)).objects] == [PriorityClass]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    assert [type(o) for o in load_manifests(json.dumps([pc, node])).objects] == [
        PriorityClass,
        Node,
    ]


def test_flow_style_yaml_that_looks_like_json_is_read_as_yaml() -> None:
    text = "{apiVersion: v1, kind: Namespace, metadata: {name: a}}"
    assert [type(o) for o in load_manifests(text).objects] == [Namespace]
    listed = (
        "[{apiVersion: v1, kind: Namespace, metadata: {name: a}}, " + text.replace("a}", "b}") + "]"
    )
    assert [o.key for o in load_manifests(listed).objects] == ["a", "b"]


def test_an_empty_input_has_no_objects() -> None:
    manifests = load_manifests("")
    assert manifests.objects == [] and manifests.scheduler_configs == []


def test_every_invalid_document_is_reported_and_nothing_is_returned() -> None:
    text = (
        NODE
        + "---\n"
        + POD.replace("image: nginx", "image: ''")
        + "---\napiVersion: v2\nkind: Pod\n"
    )
    assert messages(text, "pods.yaml") == [
        'document 2 of pods.yaml: Pod "web-1" is invalid: spec.containers[0].image: Required value',
        'document 3 of pods.yaml: no matches for kind "Pod" in version "v2"',
    ]


def test_errors_in_list_items_name_the_item() -> None:
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ok"}},
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad!"}},
            ],
        }
    )
    with pytest.raises(ManifestError) as info:
        load_manifests(text, "cluster.json")
    (error,) = info.value.errors
    assert isinstance(error, InvalidObjectError)
    assert (error.source, error.document_index, error.item_path) == ("cluster.json", 1, "items[1]")
    prefix = 'document 1 of cluster.json, items[1]: Namespace "Bad!" is invalid: '
    assert str(error).startswith(prefix)


def test_a_wrong_scheduler_config_version_is_refused() -> None:
    text = SCHEDULER_CONFIG.replace("/v1", "/v1beta3")
    assert messages(text) == [
        'document 1 of <input>: no matches for kind "KubeSchedulerConfiguration" in version '
        '"kubescheduler.config.k8s.io/v1beta3"'
    ]


def test_the_same_object_twice_already_exists() -> None:
    assert messages(POD + "---\n" + POD, "a.yaml") == [
        'document 2 of a.yaml: pods "web-1" already exists'
    ]


def test_a_document_that_is_not_an_object_is_refused() -> None:
    assert messages("just text\n") == ["document 1 of <input>: expected an object, got string"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a: [b\n",
            "document 1 of x.yaml: yaml: line 2: did not find expected ',' or ']'",
        ),
        (
            NODE + "---\nkind: Pod\n  bad: indent\n",
            # Lines count from the top of the file, not of the document.
            "document 2 of x.yaml: yaml: line 8: mapping values are not allowed in this context",
        ),
        (
            '{"kind": "Pod",',
            "document 1 of x.yaml: json: line 1, column 16: "
            "Expecting property name enclosed in double quotes",
        ),
    ],
)
def test_syntax_errors_say_where(text: str, expected: str) -> None:
    assert messages(text, "x.yaml") == [expected]


def test_syntax_error_keeps_its_line() -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests("kind: Pod\n  bad: indent\n")
    (error,) = info.value.errors
    assert isinstance(error, DocumentError) and error.line == 2


def test_it_refuses_a_billion_laughs() -> None:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for name in "bcdefghi":
        text += f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]\n"
        previous = name
    assert messages(text) == ["document 1 of <input>: document contains excessive aliasing"]


def test_it_refuses_a_self_referencing_anchor() -> None:
    assert messages("a: &a [*a]\n") == [
        "document 1 of <input>: document refers to itself through an alias"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,
        "a: " + "[" * 5000 + "]" * 5000,
        "x:\n" + "".join(" " * i + "- \n" for i in range(1, 300)),
    ],
)
def test_it_refuses_deep_nesting_cleanly(text: str) -> None:
    (message,) = messages(text)
    assert message.endswith("exceeded max depth of 100")


def test_a_few_aliases_are_fine() -> None:
    text = (
        "apiVersion: v1\nkind: Namespace\n"
        "metadata:\n  name: a\n  labels: &l {team: x}\n  annotations: *l\n"
    )
    (ns,) = load_manifests(text).objects
    assert isinstance(ns, Namespace) and ns.labels["team"] == "x"


def test_load_files_names_the_file_and_judges_all_files_together(tmp_path: Path) -> None:
    good = tmp_path / "nodes.yaml"
    good.write_text(NODE)
    duplicate = tmp_path / "more.yaml"
    duplicate.write_text(NODE)
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ManifestError) as info:
        load_files([str(good), str(duplicate), str(missing)])
    first, second = info.value.errors
    assert isinstance(first, AlreadyExistsError)
    assert str(first) == f'document 1 of {duplicate}: nodes "n1" already exists'
    assert str(second) == f"open {missing}: No such file or directory"


def test_load_files_returns_objects_of_every_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(NODE)
    (tmp_path / "b.yaml").write_text(POD + "---\n" + SCHEDULER_CONFIG)
    manifests = load_files([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")])
    assert [type(o) for o in manifests.objects] == [Node, Pod]
    assert len(manifests.scheduler_configs) == 1


def test_load_files_reads_a_directorys_manifests_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "b-pods.yml").write_text(POD)
    (tmp_path / "a-nodes.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    )
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "c.yaml").write_text(NODE)
    assert [type(o) for o in load_files([str(tmp_path)]).objects] == [Node, Pod]


# ---------------------------------------------------------------------------------------------
# Limits, checked while reading


LIMITS = ObjectLimits(
    objects=Limit(10, "MAX_OBJECTS"), nodes=Limit(3, "MAX_NODES"), pods=Limit(4, "MAX_PODS")
)


def _pods(count: int) -> list[dict[str, object]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{i}"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
        for i in range(count)
    ]


def _refusal(text: str, limits: ObjectLimits = LIMITS) -> str:
    with pytest.raises(ManifestError) as refused:
        load_manifests(text, limits=limits)
    [error] = refused.value.errors
    return str(error)


def test_pods_past_the_limit_are_refused_at_the_first_one_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded: list[str] = []
    real_decode = load.decode_object

    def counting_decode(document: dict[str, Any], **options: Any) -> Any:
        decoded.append(document["metadata"]["name"])
        return real_decode(document, **options)

    monkeypatch.setattr(load, "decode_object", counting_decode)
    text = "\n---\n".join(json.dumps(pod) for pod in _pods(8))
    assert _refusal(text) == "<input>: the input holds more than 4 pods; the limit is 4 (MAX_PODS)"
    assert decoded == ["p-0", "p-1", "p-2", "p-3"]


def test_nodes_past_the_limit_are_refused_naming_it() -> None:
    text = "\n---\n".join(NODE.replace("n1", f"n{i}") for i in range(4))
    assert _refusal(text).endswith("more than 3 nodes; the limit is 3 (MAX_NODES)")


def test_yaml_documents_past_the_limit_are_refused_before_any_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(load, "_make_loader", lambda text: pytest.fail("parsed"))
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n"
    text = "---\n".join([namespace] * 11)
    assert _refusal(text).endswith("more than 10 objects; the limit is 10 (MAX_OBJECTS)")


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(_pods(11)),
        json.dumps({"apiVersion": "v1", "kind": "List", "items": _pods(11)}),
        "apiVersion: v1\nkind: PodList\nitems:\n"
        + "".join(f"- {json.dumps(pod)}\n" for pod in _pods(11)),
    ],
    ids=["json-array", "json-list", "yaml-list"],
)
def test_arrays_and_lists_past_the_object_limit_are_refused_before_any_item_is_decoded(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setattr(load, "decode_object", lambda document: pytest.fail("decoded"))
    limits = ObjectLimits(objects=Limit(10, "MAX_OBJECTS"))
    assert _refusal(text, limits).endswith("more than 10 objects; the limit is 10 (MAX_OBJECTS)")


def test_an_input_at_the_limits_exactly_loads() -> None:
    text = "\n---\n".join([*(json.dumps(pod) for pod in _pods(4)), NODE])
    assert len(load_manifests(text, limits=LIMITS).objects) == 5


def test_dashes_inside_a_block_scalar_are_not_counted_as_documents() -> None:
    text = (
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  annotations:\n"
        "    note: |\n      ---\n      --- more\n"
    )
    [namespace] = load_manifests(text, limits=ObjectLimits(objects=Limit(1))).objects
    assert isinstance(namespace, Namespace)


# ---------------------------------------------------------------------------------------------
# What real dumps hold


def test_items_of_a_typed_list_take_the_lists_kind_and_api_version() -> None:
    # What the API server returns for GET /api/v1/nodes: the items carry no kind.
    text = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "NodeList",
            "metadata": {"resourceVersion": "42"},
            "items": [{"metadata": {"name": "ip-10-0-0-1.ec2.internal"}}],
        }
    )
    (node,) = load_manifests(text).objects
    assert isinstance(node, Node) and node.name == "ip-10-0-0-1.ec2.internal"


def test_items_of_a_plain_list_still_need_their_kind() -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [{"metadata": {"name": "a"}}]})
    assert messages(text) == ["document 1 of <input>, items[0]: Object 'Kind' is missing"]


GENERATED = """
apiVersion: v1
kind: Pod
metadata: {generateName: web-}
spec: {containers: [{name: web, image: nginx}]}
"""


def test_generate_name_gets_five_characters_of_the_api_servers_alphabet() -> None:
    names = [o.name for o in load_manifests(GENERATED + "---\n" + GENERATED).objects]
    assert len(set(names)) == 2
    for name in names:
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", name)


def test_generated_names_repeat_with_the_seed_and_change_with_it() -> None:
    def names(seed: int) -> list[str]:
        return [o.name for o in load_manifests(GENERATED, seed=seed).objects]

    assert names(1) == names(1)
    assert names(1) != names(2)


def test_a_long_generate_name_is_cut_to_leave_room_for_the_suffix() -> None:
    (pod,) = load_manifests(GENERATED.replace("web-", "w" * 70)).objects
    assert pod.name.startswith("w" * 58) and len(pod.name) == 63


def test_an_invalid_generate_name_is_refused_in_the_api_servers_words() -> None:
    (message,) = messages(GENERATED.replace("web-", "Web_"))
    assert 'metadata.generateName: Invalid value: "Web_": a lowercase RFC 1123 subdomain' in message


def test_kinds_the_scheduler_does_not_read_are_skipped_with_one_notice() -> None:
    others = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: db}\n---\n"
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n---\n"
        "apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata: {generateName: w-}\n---\n"
    )
    manifests = load_manifests(others + POD)
    assert [o.key for o in manifests.objects] == ["default/web-1"]
    assert manifests.skipped_notice == (
        "skipped 4 objects of kinds the scheduler does not read: "
        "ConfigMap/app-config, Secret/db, Ingress/web, Widget/w-"
    )


def test_the_notice_names_one_object_and_at_most_twenty() -> None:
    one = load_manifests("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert (
        one.skipped_notice == "skipped 1 object of a kind the scheduler does not read: ConfigMap/c"
    )
    many = "---\n".join(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(25)
    )
    assert load_manifests(many).skipped_notice.endswith("ConfigMap/c19 and 5 more")


def test_a_kind_the_scheduler_reads_in_a_version_it_does_not_serve_is_refused() -> None:
    assert messages(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p}\n"
    ) == [
        'document 1 of <input>: no matches for kind "PodDisruptionBudget" '
        'in version "policy/v1beta1"'
    ]


UPSTREAM_FIXTURE_NAMES = """
apiVersion: v1
kind: Node
metadata: {name: nodeA}
---
apiVersion: v1
kind: Pod
metadata: {name: podWithTolerations}
spec:
  nodeName: nodeA
  containers: [{name: c, image: i}]
"""


def test_names_only_the_api_server_refuses_are_errors_by_default() -> None:
    with pytest.raises(ManifestError) as raised:
        load_manifests(UPSTREAM_FIXTURE_NAMES)
    message = str(raised.value)
    assert (
        'Node "nodeA" is invalid: metadata.name: Invalid value: "nodeA": a lowercase RFC 1123'
        in message
    )
    assert 'spec.nodeName: Invalid value: "nodeA"' in message


def test_lenient_names_load_upstreams_fixture_names_with_a_warning_each(tmp_path: Path) -> None:
    path = tmp_path / "fixtures.yaml"
    path.write_text(UPSTREAM_FIXTURE_NAMES)
    manifests = load_files([str(path)], lenient_names=True)
    assert [obj.name for obj in manifests.objects] == ["nodeA", "podWithTolerations"]
    assert len(manifests.name_warnings) == 2
    assert manifests.name_warnings[0].startswith(
        f'document 1 of {path}: Node "nodeA" is invalid: metadata.name: Invalid value: "nodeA"'
    )
    assert "spec.nodeName" in manifests.name_warnings[1]


@pytest.mark.parametrize("name", ["a/b", "50%", ".."])
def test_lenient_names_still_refuse_names_that_cannot_be_stored(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"apiVersion: v1\nkind: Node\nmetadata: {{name: {json.dumps(name)}}}\n")
    with pytest.raises(ManifestError, match=r"metadata\.name: Invalid value"):
        load_files([str(path)], lenient_names=True)


@pytest.mark.parametrize(
    ("document", "want"),
    [
        ({"a": [{"b": "ok"}, {"c": "x\x00y"}]}, ("a[1].c", load._UNSTORABLE_STRING)),
        ({"a": {"k\ud800": 1}}, ("a.k\ud800", load._UNSTORABLE_STRING)),
        ([1, "ok", ["\udfff"]], ("[2][0]", load._UNSTORABLE_STRING)),
        (
            {"n": [load.OversizedInt("9" * 5000)]},
            ("n[0]", load._oversized(load.OversizedInt("9" * 5000))),
        ),
        (
            {"m": {load.OversizedInt("9" * 5000): 1}},
            ("m.<key>", load._oversized(load.OversizedInt("9" * 5000))),
        ),
        ({"a": [{"b": "ok"}], "c": {"d": ["e", 1, 2.5, None, True]}}, None),
    ],
    ids=[
        "nul-in-a-list",
        "surrogate-key",
        "surrogate-top-list",
        "oversized-value",
        "oversized-key",
        "clean",
    ],
)
def test_unstorable_value_names_the_path_of_what_cannot_be_stored(
    document: Any, want: tuple[str, str] | None
) -> None:
    assert load.unstorable_value(document) == want
