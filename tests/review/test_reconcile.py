"""schedviz.review: the replay agrees where the state agrees, and says why where it does not.

The logs are genuine kube-scheduler v1.34.1 output (the oracle replaying ``manage.py
simulate``'s trace of ``cluster.yaml`` at -v 10 and -v 2); the dumps are the cluster as it was,
one that drifted (node-a's disk label changed from ssd to hdd) and one taken afterwards (the
pods bound, the preempted batch-1 gone).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schedviz.kube.load import load_files
from schedviz.outoftree.registry import new_registry
from schedviz.review.reconcile import reason_counts
from schedviz.review.review import CONFIG_GIVEN, CONFIG_PLUGINS, Review, review

DATA = Path(__file__).parent / "data"


def _review(log: str, cluster: str, config: dict[str, object] | None = None) -> Review:
    return review(
        logs=[(log, (DATA / log).read_text())],
        events=[],
        manifests=load_files([str(DATA / cluster)], lenient_names=True),
        registry=new_registry(),
        config_doc=config,
    )


def _verdicts(result: Review) -> list[tuple[str, int, str]]:
    return [(r.step.attempt.pod, r.step.attempt.number, r.verdict.kind) for r in result.attempts]


@pytest.mark.parametrize("log", ["scheduler-v10.log", "scheduler-v2.log"])
def test_the_replay_agrees_on_the_cluster_as_it_was(log: str) -> None:
    result = _review(log, "cluster.yaml")
    assert all(r.verdict.agree for r in result.attempts), [r.verdict.why for r in result.attempts]
    # web-2: node-a and node-b tie at 474; the real scheduler picked node-b.
    web2 = next(r for r in result.attempts if r.step.attempt.pod == "default/web-2")
    assert web2.verdict.tie
    assert "node-b is in the replay's tie set" in web2.verdict.why
    assert result.config_source == CONFIG_PLUGINS


def test_a_drifted_label_is_flagged_naming_the_node_and_what_changed() -> None:
    result = _review("scheduler-v10.log", "cluster-drifted.yaml")
    kinds = dict(((pod, n), kind) for pod, n, kind in _verdicts(result))
    assert kinds[("default/fast-1", 1)] == "drift"
    fast = next(r for r in result.attempts if r.step.attempt.pod == "default/fast-1")
    assert "node-a fails NodeAffinity in the replay" in fast.verdict.why
    assert "the pod needs disk=ssd, the dump's node-a has disk=hdd" in fast.verdict.why
    assert kinds[("default/web-1", 1)] == "agree"


def test_a_dump_taken_afterwards_names_the_missing_victim() -> None:
    result = _review("scheduler-v10.log", "cluster-after.yaml")
    assert result.unbound_from_dump == 4
    first = result.attempts[0]
    assert first.step.attempt.pod == "prod/urgent-1"
    assert first.verdict.kind == "missing-object"
    assert "the dump lacks default/batch-1, which the real scheduler preempted on node-b" in (
        first.verdict.why
    )
    # Every later attempt runs on the state the log's decisions made, and agrees.
    assert all(r.verdict.agree for r in result.attempts[1:])


def test_weights_that_differ_are_inferred_from_v10_scores() -> None:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "score": {
                        "enabled": [{"name": "TaintToleration", "weight": 1}],
                        "disabled": [{"name": "TaintToleration"}],
                    }
                },
            }
        ],
    }
    result = _review("scheduler-v10.log", "cluster.yaml", config)
    assert result.config_source == CONFIG_GIVEN
    web1 = next(r for r in result.attempts if r.step.attempt.pod == "default/web-1")
    assert web1.verdict.kind == "configuration"
    assert web1.verdict.inferred_weights == {"TaintToleration": 3}
    assert "TaintToleration weight 3 (the replay's configuration has 1)" in web1.verdict.why


def test_the_json_contract_holds() -> None:
    document = _review("scheduler-v2.log", "cluster.yaml").to_json()
    first = document["attempts"][0]
    assert set(first) >= {"pod", "time", "log", "replay", "agree", "why"}
    assert set(first["log"]) >= {"result", "node", "message", "victims", "scores"}
    assert set(first["replay"]) >= {"result", "node", "message", "cycle"}
    assert first["time"].endswith("Z")
    assert document["summary"]["attempts"] == 6


def test_reason_counts_reads_a_fit_error() -> None:
    message = (
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 "
        "Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful."
    )
    assert reason_counts(message) == {
        "node(s) had untolerated taint {dedicated: gpu}": 1,
        "Insufficient cpu": 2,
    }


CONFIG_DUMP_LINE = (
    '2026-11-28T13:29:16.200000Z I1128 13:29:16.200000   28704 configfile.go:94] "Using '
    'component config" config=<\n'
    "2026-11-28T13:29:16.200000Z \tapiVersion: kubescheduler.config.k8s.io/v1\n"
    "2026-11-28T13:29:16.200000Z \tkind: KubeSchedulerConfiguration\n"
    "2026-11-28T13:29:16.200000Z \tprofiles:\n"
    "2026-11-28T13:29:16.200000Z \t- schedulerName: default-scheduler\n"
    "2026-11-28T13:29:16.200000Z \t  pluginConfig:\n"
    "2026-11-28T13:29:16.200000Z \t  - name: NodeResourcesFit\n"
    "2026-11-28T13:29:16.200000Z \t    args:\n"
    "2026-11-28T13:29:16.200000Z \t      scoringStrategy:\n"
    "2026-11-28T13:29:16.200000Z \t        type: MostAllocated\n"
    "2026-11-28T13:29:16.200000Z  >\n"
)


def test_the_configuration_a_startup_log_dumped_is_the_one_replayed() -> None:
    # The real scheduler's log (-v 10) with a startup dump of another scoring strategy: the
    # replay runs it, so NodeResourcesFit's scores no longer agree, and the review says so.
    log = CONFIG_DUMP_LINE + (DATA / "scheduler-v10.log").read_text()
    result = review(
        logs=[("kube-scheduler.log", log)],
        events=[],
        manifests=load_files([str(DATA / "cluster.yaml")], lenient_names=True),
        registry=new_registry(),
    )
    assert result.config_source == "startup log (Using component config)"
    web1 = next(r for r in result.attempts if r.step.attempt.pod == "default/web-1")
    assert not web1.verdict.agree
    assert "NodeResourcesFit on node-a: 90 in the log" in " ".join(web1.verdict.differences)


def test_a_drifted_taint_is_flagged_naming_the_node_and_the_taint() -> None:
    result = _review("scheduler-v10.log", "cluster-tainted.yaml")
    by_attempt = {(r.step.attempt.pod, r.step.attempt.number): r.verdict for r in result.attempts}
    web2 = by_attempt[("default/web-2", 1)]
    assert web2.kind == "drift"
    assert "node-b fails TaintToleration in the replay" in web2.why
    assert "the dump's node-b has taints maintenance=true:NoSchedule" in web2.why
    # web-1 went to node-a either way, but the real scheduler scored node-b: it was feasible.
    web1 = by_attempt[("default/web-1", 1)]
    assert "yet the real scheduler found it feasible (it scored it)" in web1.why
    urgent = by_attempt[("prod/urgent-1", 1)]
    assert 'fail "node(s) had untolerated taint {maintenance: true}"' in urgent.why
