"""Refused requests: the API server's errors, each a full message."""

from __future__ import annotations

from collections.abc import Sequence


class ServiceError(Exception):
    """A refused request: every reason, each a full API-server style message."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class ObjectNotFound(ServiceError):
    """``pods "web-1" not found`` (the API server's 404)."""


class Conflict(ServiceError):
    """A write that lost to another (the API server's 409)."""


class BindConflict(Conflict):
    """The pod is bound already: a pod is bound once, never twice."""
