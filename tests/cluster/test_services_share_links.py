"""Share links as services and selectors: made and revoked by the owner alone, the key kept
hashed, a revoked link opens nothing and grants nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from schedviz.cluster import selectors, services
from schedviz.cluster.services import ObjectNotFound, ServiceError

pytestmark = pytest.mark.django_db


def test_the_owner_makes_a_link_whose_key_opens_the_cluster(alice: User) -> None:
    cluster = services.cluster_create(name="c", owner=alice)
    link, key = services.share_link_create(cluster=cluster, user=alice)
    assert link.key_hash == services.api_token_hash(key) and key not in link.key_hash
    assert selectors.share_link_cluster(key=key) == cluster
    assert selectors.share_link_cluster(key=key + "x") is None
    assert list(selectors.share_link_list(cluster=cluster)) == [link]


def test_a_link_grants_reads_until_it_is_revoked(alice: User) -> None:
    cluster = services.cluster_create(name="c", owner=alice)
    other = services.cluster_create(name="d", owner=alice)
    link, key = services.share_link_create(cluster=cluster, user=alice)
    nobody = AnonymousUser()
    with pytest.raises(ObjectNotFound):
        selectors.cluster_get(cluster_id=cluster.pk, user=nobody)
    got = selectors.cluster_get(cluster_id=cluster.pk, user=nobody, share_link_ids=[link.pk])
    assert got == cluster
    with pytest.raises(ObjectNotFound):
        selectors.cluster_get(cluster_id=other.pk, user=nobody, share_link_ids=[link.pk])
    mallory = User.objects.create_user("mallory")
    with pytest.raises(ServiceError):
        services.share_link_revoke(link=link, user=mallory)
    services.share_link_revoke(link=link, user=alice)
    assert selectors.share_link_cluster(key=key) is None
    assert list(selectors.share_link_list(cluster=cluster)) == []
    with pytest.raises(ObjectNotFound):
        selectors.cluster_get(cluster_id=cluster.pk, user=nobody, share_link_ids=[link.pk])


def test_nobody_but_the_owner_makes_a_link(alice: User) -> None:
    cluster = services.cluster_create(name="c", owner=alice)
    for user in (User.objects.create_user("mallory"), AnonymousUser(), None):
        with pytest.raises(ServiceError):
            services.share_link_create(cluster=cluster, user=user)
    with pytest.raises(ServiceError, match="no owner"):
        services.share_link_create(cluster=services.cluster_create(name="open"), user=alice)
