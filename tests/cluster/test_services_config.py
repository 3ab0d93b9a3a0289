"""A KubeSchedulerConfiguration is refused at apply when the scheduler could not be built."""

from __future__ import annotations

import pytest

from schedviz.cluster import services
from schedviz.cluster.models import Profile

pytestmark = pytest.mark.django_db

NODE_NAME_AT_SCORE = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeName
"""


def test_a_plugin_enabled_at_a_point_it_does_not_implement_is_refused_and_nothing_saved(
    settings: object,
) -> None:
    settings.SCHEDVIZ_START_RUNNERS = False  # type: ignore[attr-defined]
    cluster = services.cluster_create(name="c")
    with pytest.raises(services.ServiceError) as error:
        services.manifests_apply(cluster=cluster, text=NODE_NAME_AT_SCORE)
    assert error.value.errors == [
        'KubeSchedulerConfiguration: plugin "NodeName" does not extend ScorePlugin plugin'
    ]
    assert not Profile.objects.filter(cluster=cluster).exists()
