"""``manage.py apitoken`` and ``manage.py apply``."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from schedviz.cluster import selectors
from schedviz.cluster.models import Change, Cluster, Node, Pod

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_runners(settings: Any) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
    "spec: {containers: [{name: c, image: nginx}]}\n"
)


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_apitoken_creates_the_user_and_prints_a_working_token(capsys: Any) -> None:
    out, _ = run("apitoken", "dave")
    key = out.strip()
    assert "user dave created" in capsys.readouterr().err
    assert selectors.api_token_user(key=key) == User.objects.get(username="dave")
    response = Client().get("/api/clusters", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200
    second, _ = run("apitoken", "dave")
    assert second.strip() != key
    assert User.objects.filter(username="dave").count() == 1


def test_apply_creates_the_cluster_and_prints_kubectl_lines(tmp_path: Path) -> None:
    (tmp_path / "node.yaml").write_text(NODE)
    (tmp_path / "pod.yaml").write_text(POD)
    out, _ = run(
        "apply",
        "-f",
        str(tmp_path / "node.yaml"),
        "-f",
        str(tmp_path / "pod.yaml"),
        "--cluster",
        "lab",
    )
    assert out.splitlines() == ["node/n1 created", "pod/web created"]
    cluster = Cluster.objects.get(name="lab")
    assert cluster.owner is None
    assert Pod.objects.filter(cluster=cluster).count() == 1
    again, _ = run("apply", "-f", str(tmp_path), "--cluster", "lab")
    assert again.splitlines() == ["node/n1 unchanged", "pod/web unchanged"]
    assert Cluster.objects.count() == 1


def test_apply_of_bad_input_exits_2_with_every_error_and_saves_nothing(
    tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "bad.yaml").write_text(NODE.replace("n1", "n/1") + "---\n" + POD + "---\nkind: X\n")
    with pytest.raises(SystemExit) as exited:
        run("apply", "-f", str(tmp_path / "bad.yaml"), "--cluster", "lab")
    assert exited.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[0].startswith(f'error: document 1 of {tmp_path / "bad.yaml"}: Node "n/1" is invalid')
    assert "Object 'apiVersion' is missing" in err[1]
    assert not Cluster.objects.exists()
    assert not Node.objects.exists() and not Change.objects.exists()


def test_apply_of_a_missing_file(tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit):
        run("apply", "-f", str(tmp_path / "none.yaml"), "--cluster", "lab")
    assert "no such file" in capsys.readouterr().err.lower()


def test_admin_pages_render(admin_client: Client) -> None:
    run(
        "apply",
        "-f",
        str(Path(__file__).resolve().parents[2] / "schedviz/demo/demo-cluster.yaml"),
        "--cluster",
        "demo",
    )
    for page in ("cluster", "node", "pod", "change", "cycle", "event", "apitoken", "profile"):
        response = admin_client.get(f"/admin/cluster/{page}/")
        assert response.status_code == 200, page
    node = Node.objects.first()
    assert node is not None
    assert admin_client.get(f"/admin/cluster/node/{node.id}/change/").status_code == 200
