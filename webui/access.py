"""Who may see a cluster's pages and who may change it, decided in one place.

Reads (GET and HEAD) take the owner, an ownerless cluster, or a read-only share link the visitor
opened (``/share/<key>/``: its id is kept in the session, and checked against the links not
revoked at every request). Every other method is a write, and takes the owner (or an ownerless
cluster) alone: a share link never lets its visitor change anything.

Wiping (Reset and Delete of a whole cluster) takes more for an ownerless cluster, which every
visitor shares (the demo ``manage.py serve`` loads): a signed-in user, or the session that made
it (``remember_made``). A visitor signed out can play with the demo, never wipe it for the others.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest

from schedviz.cluster import selectors
from schedviz.cluster.models import Cluster, ShareLink
from schedviz.cluster.services import ObjectNotFound

SESSION_KEY = "shared_links"
MADE_KEY = "made_clusters"
MADE_KEPT = 200
READ_METHODS = frozenset({"GET", "HEAD"})


def shared_link_ids(session: Any) -> list[int]:
    """The ids of the share links the session opened (revoked ones included)."""
    if session is None:
        return []
    ids = session.get(SESSION_KEY) or []
    return [i for i in ids if isinstance(i, int)]


def grant(session: Any, link: ShareLink) -> None:
    """Remembers in the session that its visitor opened the link."""
    ids = shared_link_ids(session)
    if link.pk not in ids:
        session[SESSION_KEY] = [*ids, link.pk]


def cluster_for(request: HttpRequest, cluster_id: int) -> Cluster:
    """The cluster of a page, if the request may read it (GET, HEAD) or write it (the rest);
    404 otherwise, as for a cluster that does not exist."""
    reading = request.method in READ_METHODS
    try:
        return selectors.cluster_get(
            cluster_id=cluster_id,
            user=request.user,
            share_link_ids=shared_link_ids(request.session) if reading else (),
        )
    except ObjectNotFound as error:
        raise Http404(error.errors[0]) from None


def remember_made(session: Any, cluster: Cluster) -> None:
    """Remembers in the session that its visitor made the cluster (its newest ``MADE_KEPT``)."""
    if session is None:
        return
    made = [i for i in session.get(MADE_KEY) or [] if isinstance(i, int)]
    if cluster.pk not in made:
        session[MADE_KEY] = [*made, cluster.pk][-MADE_KEPT:]


def may_wipe(request: HttpRequest, cluster: Cluster) -> bool:
    """Whether the request may reset or delete the whole cluster (it may already write it):
    its owner; for an ownerless one, a signed-in user or the session that made it."""
    if cluster.owner_id is not None or request.user.is_authenticated:
        return True
    made = getattr(request, "session", None)
    return made is not None and cluster.pk in (made.get(MADE_KEY) or [])
