"""``manage.py simulate``: the JSON of docs/trace-format.md, the table, and bad input."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

DOCS = Path(__file__).resolve().parents[2] / "docs" / "trace-format.md"
RESULTS = {"Scheduled", "Unschedulable", "Error", "Waiting"}

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "10"}
  capacity: {cpu: "1", memory: 1Gi, pods: "10"}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: default}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: 600m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: default}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "2"}}}]
"""


def documented_cycle_fields() -> list[str]:
    """The first column of the table under "## A cycle"."""
    section = DOCS.read_text().split("## A cycle", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)


def simulate(tmp_path: Path, manifests: str, *args: str) -> str:
    path = tmp_path / "cluster.yaml"
    path.write_text(manifests)
    out = io.StringIO()
    call_command("simulate", str(path), *args, stdout=out)
    return out.getvalue()


def cycles_of(output: str) -> list[dict[str, Any]]:
    document = json.loads(output)
    assert document["schemaVersion"] == 1
    cycles: list[dict[str, Any]] = document["cycles"]
    return cycles


def test_json_cycles_carry_every_documented_field(tmp_path: Path) -> None:
    fields = documented_cycle_fields()
    assert "cycle" in fields and "events" in fields and len(fields) > 20
    cycles = cycles_of(simulate(tmp_path, CLUSTER))
    assert [c["cycle"] for c in cycles] == list(range(1, len(cycles) + 1))
    for cycle in cycles:
        assert sorted(cycle) == sorted(fields)
        assert cycle["result"] in RESULTS
        assert cycle["profile"] == "default-scheduler"
        assert cycle["totalNodes"] == 2
        assert cycle["feasibleNodes"] <= cycle["evaluatedNodes"] <= cycle["totalNodes"]
        assert set(cycle["queue"]) >= {"activeQ", "backoffQ", "unschedulablePods"}
        for point in cycle["points"]:
            assert {"point", "plugin", "code", "durationMs"} <= set(point)


def test_json_reports_upstreams_messages_and_events(tmp_path: Path) -> None:
    cycles = {c["pod"]: c for c in cycles_of(simulate(tmp_path, CLUSTER))}
    small, big = cycles["default/small"], cycles["default/big"]
    assert small["result"] == "Scheduled"
    assert small["message"] == f"Successfully assigned default/small to {small['node']}"
    assert small["events"] == [
        {
            "type": "Normal",
            "reason": "Scheduled",
            "object": "default/small",
            "message": small["message"],
        }
    ]
    assert small["selected"]["node"] == small["node"]
    assert small["node"] in small["selected"]["tieSet"]
    assert big["result"] == "Unschedulable"
    assert big["node"] is None
    assert big["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        # Asking for more than a node's whole allocatable is unresolvable, so preemption
        # has no node to try.
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert [(e["type"], e["reason"], e["message"]) for e in big["events"]] == [
        ("Warning", "FailedScheduling", big["message"])
    ]
    verdicts = {n: entries[-1] for n, entries in big["filter"].items()}
    assert verdicts == {
        n: {
            "plugin": "NodeResourcesFit",
            "code": "UnschedulableAndUnresolvable",
            "reasons": ["Insufficient cpu"],
        }
        for n in ("node-a", "node-b")
    }


def test_same_seed_prints_the_same_placements(tmp_path: Path) -> None:
    runs = [cycles_of(simulate(tmp_path, CLUSTER, "--seed", "7")) for _ in range(2)]
    assert [(c["pod"], c["node"]) for c in runs[0]] == [(c["pod"], c["node"]) for c in runs[1]]


def test_max_cycles_stops_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(cycles_of(simulate(tmp_path, CLUSTER, "--max-cycles", "1"))) == 1
    assert capsys.readouterr().err == (
        "stopped at the cycle cap: 1 pod still pending, more cycles might place some\n"
    )


def test_a_pod_only_file_ends_after_one_cycle_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: nginx}\n"
        "spec: {containers: [{name: nginx, image: nginx:1.14.2}]}\n"
    )
    cycles = cycles_of(simulate(tmp_path, pods))
    assert [(c["pod"], c["message"]) for c in cycles] == [
        ("default/nginx", "no nodes available to schedule pods")
    ]
    assert capsys.readouterr().err == "stopped: 1 pod unschedulable, no event can change that\n"


def test_a_run_that_places_every_pod_says_so_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    simulate(tmp_path, CLUSTER.split("---\napiVersion: v1\nkind: Pod\nmetadata: {name: big")[0])
    assert capsys.readouterr().err == "stopped: every pod placed\n"


NODE_4CPU = """apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "10"}
"""


def _pods(count: int, container: str = "{name: app, image: x}", spec: str = "") -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\n"
        f"spec:\n{spec}  containers: [{container}]\n"
        for i in range(count)
    )


def _placed(output: str) -> list[str]:
    return [c["pod"] for c in cycles_of(output) if c["result"] == "Scheduled"]


def test_a_limit_range_default_request_is_what_is_scheduled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limit_range = (
        "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: default-limits}\n"
        'spec:\n  limits:\n  - type: Container\n    defaultRequest: {cpu: "1"}\n'
    )
    output = simulate(tmp_path, NODE_4CPU + limit_range + _pods(5))
    assert len(_placed(output)) == 4
    assert capsys.readouterr().err == "stopped: 1 pod unschedulable, no event can change that\n"


def test_a_runtime_class_overhead_counts_in_every_pod_that_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime_class = (
        "---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\n"
        'handler: kata\noverhead: {podFixed: {cpu: "1"}}\n'
    )
    pods = _pods(
        2,
        "{name: app, image: x, resources: {requests: {cpu: 1500m}}}",
        "  runtimeClassName: kata\n",
    )
    output = simulate(tmp_path, NODE_4CPU + runtime_class + pods)
    assert len(_placed(output)) == 1


def test_a_dumped_pod_whose_runtime_class_is_missing_keeps_its_overhead_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A dump's pods carry the overhead their RuntimeClass set; the class itself (cluster-scoped)
    # is often not dumped. The API server would refuse the create; storage holds the pod.
    pods = _pods(
        2,
        "{name: app, image: x, resources: {requests: {cpu: 1500m}}}",
        '  runtimeClassName: kata\n  overhead: {cpu: "1"}\n',
    )
    output = simulate(tmp_path, NODE_4CPU + pods)
    assert len(_placed(output)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        f'warning: pods "p{n}" is forbidden: pod rejected: RuntimeClass "kata" not found '
        "(a v1.34 API server refuses this create; simulated as stored)"
        for n in (0, 1)
    ]


def test_a_pod_past_the_quota_refuses_the_input_at_its_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quota = (
        '---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: "1"}}\n'
    )
    with pytest.raises(SystemExit) as exited:
        simulate(tmp_path, NODE_4CPU + quota + _pods(2))
    assert exited.value.code == 2
    path = tmp_path / "cluster.yaml"
    assert capsys.readouterr().err == (
        f'document 4 of {path}: pods "p1" is forbidden: exceeded quota: q, requested: pods=1, '
        "used: pods=1, limited: pods=1\n"
    )


def test_a_controllers_pod_past_the_quota_is_a_failed_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quota = (
        '---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: "2"}}\n'
    )
    job = (
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\n"
        "spec:\n  parallelism: 3\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers: [{name: c, image: x}]\n"
    )
    output = simulate(tmp_path, NODE_4CPU + quota + job)
    assert len(_placed(output)) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith('Warning FailedCreate job/batch: Error creating: pods "batch-')
    assert err[0].endswith(
        "is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
    )
    assert err[1] == "stopped: every pod placed"


def test_an_unknown_priority_class_is_refused_at_its_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        simulate(tmp_path, NODE_4CPU + _pods(1, spec="  priorityClassName: nope\n"))
    assert exited.value.code == 2
    path = tmp_path / "cluster.yaml"
    assert capsys.readouterr().err == (
        f'document 2 of {path}: pods "p0" is forbidden: no PriorityClass with name nope was found\n'
    )


def test_table_output_lists_cycles_messages_and_pods(tmp_path: Path) -> None:
    table = simulate(tmp_path, CLUSTER, "--output", "table")
    assert table.startswith("Cycles")
    assert "default/small" in table and "Scheduled" in table
    assert "Unschedulable" in table
    assert "0/2 nodes are available: 2 Insufficient cpu." in table
    assert "<pending>" in table
    with pytest.raises(json.JSONDecodeError):
        json.loads(table)


@pytest.mark.parametrize(
    ("manifests", "message"),
    [
        ("kind: [\n", "yaml: line 2: did not find expected node content"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            "  containers: [{name: c, image: x, resources: {requests: {cpu: abc}}}]\n",
            'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "abc"',
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{schedulerName: s, plugins: {score: {enabled: [{name: NoSuchPlugin}]}}}]\n",
            "NoSuchPlugin",
        ),
    ],
    ids=["invalid YAML", "invalid quantity", "unknown plugin"],
)
def test_bad_input_exits_2_with_the_loaders_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifests: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        simulate(tmp_path, manifests)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(SystemExit) as exited:
        call_command("simulate", str(missing), stdout=io.StringIO())
    assert exited.value.code == 2
    assert f"open {missing}: No such file or directory" in capsys.readouterr().err


def test_it_simulates_upstreams_fixture_names_and_warns_that_the_api_server_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: nodeA}\n"
        "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: pod1}\n"
        "spec: {containers: [{name: c, image: i}]}\n"
    )
    cycles = cycles_of(simulate(tmp_path, cluster))
    assert [(c["pod"], c["node"]) for c in cycles] == [("default/pod1", "nodeA")]
    err = capsys.readouterr().err
    assert err.startswith("warning: document 1 of ")
    assert err.endswith("(a v1.34 API server refuses this name)\nstopped: every pod placed\n")
    assert 'Node "nodeA" is invalid: metadata.name: Invalid value: "nodeA"' in err


CONTROLLED = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: named}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /named}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: spare}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  hostPath: {path: /spare}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: named}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: nginx}]}
  volumeClaimTemplates:
  - metadata: {name: disk}
    spec:
      storageClassName: local
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


def test_json_says_what_the_controllers_did_and_after_which_cycle(tmp_path: Path) -> None:
    document = json.loads(simulate(tmp_path, CONTROLLED, "--seed", "1"))
    # Created at load: the StatefulSet's first pod and its claim.
    assert sorted((o["kind"], o["metadata"]["name"]) for o in document["objects"]) == [
        ("PersistentVolumeClaim", "disk-db-0"),
        ("Pod", "db-0"),
    ]
    changes = [(c["after"], c["type"], c["kind"], c["key"]) for c in document["changes"]]
    # Before the first cycle the PV controller binds the claim that names its volume and makes
    # the unused volume Available; PreBind binds db-0's claim in cycle 1, which lets the
    # StatefulSet controller create db-1 (and its claim, which cannot bind: no volume left).
    assert changes[:3] == [
        (0, "MODIFIED", "PersistentVolume", "named"),
        (0, "MODIFIED", "PersistentVolumeClaim", "default/data"),
        (0, "MODIFIED", "PersistentVolume", "spare"),
    ]
    assert (1, "ADDED", "Pod", "default/db-1") in changes
    assert (1, "ADDED", "PersistentVolumeClaim", "default/disk-db-1") in changes
    spare = [c["object"] for c in document["changes"] if c["key"] == "spare"]
    assert spare[0]["status"]["phase"] == "Available"
    assert spare[-1]["spec"]["claimRef"]["name"] == "disk-db-0"
    assert spare[-1]["status"]["phase"] == "Bound"
    data = next(c["object"] for c in document["changes"] if c["key"] == "default/data")
    assert data["spec"]["volumeName"] == "named" and data["status"]["phase"] == "Bound"
    assert data["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes"}
    db1 = next(c["object"] for c in document["changes"] if c["key"] == "default/db-1")
    assert db1["spec"]["priority"] == 0 and "nodeName" not in db1["spec"]
    assert db1["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    # Pod bindings are the trace's.
    assert not any(c["kind"] == "Pod" and c["type"] != "ADDED" for c in document["changes"])
    assert [c["pod"] for c in document["cycles"]][:2] == ["default/db-0", "default/db-1"]


def test_a_run_without_controllers_work_has_empty_objects_and_changes(tmp_path: Path) -> None:
    document = json.loads(simulate(tmp_path, CLUSTER))
    assert document["objects"] == [] and document["changes"] == []
