"""API tokens and read-only share links."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from schedviz.cluster.models import (
    ApiToken,
    Cluster,
    ShareLink,
)
from schedviz.cluster.services.errors import ServiceError


def api_token_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class NewApiToken:
    key: str  # shown once; only its hash is stored
    user: Any
    user_created: bool


def api_token_create(*, username: str) -> NewApiToken:
    """A new API token for the user, who is created (without a password) if there is none."""
    if not username.strip():
        raise ServiceError(["username: Required value"])
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
        created = user is None
        if user is None:
            user = user_model(**{user_model.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
        key = secrets.token_urlsafe(32)
        ApiToken.objects.create(user=user, key_hash=api_token_hash(key))
    return NewApiToken(key=key, user=user, user_created=created)


# ---------------------------------------------------------------------------------------------
# Read-only share links


def _require_owner(cluster: Cluster, user: Any) -> None:
    if cluster.owner_id is None:
        raise ServiceError(["this cluster has no owner: everyone can see it already"])
    if user is None or not user.is_authenticated or user.pk != cluster.owner_id:
        raise ServiceError(["only the cluster's owner may share it"])


def share_link_create(*, cluster: Cluster, user: Any) -> tuple[ShareLink, str]:
    """A new read-only link to the cluster, and its key (shown once; only its hash is kept)."""
    _require_owner(cluster, user)
    key = secrets.token_urlsafe(32)
    link = ShareLink.objects.create(cluster=cluster, key_hash=api_token_hash(key), created_by=user)
    return link, key


def share_link_revoke(*, link: ShareLink, user: Any) -> None:
    """Stops the link granting reads, from the next request of anyone who opened it."""
    _require_owner(link.cluster, user)
    if link.revoked_at is None:
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
