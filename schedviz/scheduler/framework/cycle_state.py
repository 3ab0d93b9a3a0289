"""Data shared between the plugins of one scheduling cycle.

Mirrors staging/src/k8s.io/kube-scheduler/framework/cycle_state.go. Plugins write under keys like
``"PreFilter" + NAME`` and read them back at later points; every value can ``clone()`` so that
preemption can dry-run on a copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from schedviz.kube.objects import Pod


class StateData(Protocol):
    def clone(self) -> StateData: ...


T = TypeVar("T")


# The reserved key of the pods a plugin wants moved to activeQ (upstream PodsToActivateKey).
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"


class PodsToActivate:
    """Pods, by ``namespace/name``, that the scheduler moves to activeQ at the end of a
    successful scheduling cycle and of a successful binding cycle (upstream ``PodsToActivate``).
    Cloning shares it, as upstream's ``Clone`` returns the same object."""

    __slots__ = ("map",)

    def __init__(self) -> None:
        self.map: dict[str, Pod] = {}

    def clone(self) -> PodsToActivate:
        return self


# The text of upstream's fwk.ErrNotFound, what a missing state key reads as in a status.
ERR_NOT_FOUND = "not found"


class StateNotFoundError(KeyError):
    """Upstream's ErrNotFound: "not found"."""


class CycleState:
    __slots__ = ("_storage", "skip_filter_plugins", "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._storage: dict[str, StateData] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()

    def read(self, key: str) -> StateData:
        try:
            return self._storage[key]
        except KeyError:
            raise StateNotFoundError(key) from None

    def read_as(self, key: str, kind: type[T]) -> T:
        """Reads ``key`` and checks its type, the way plugins' ``getXState`` helpers do."""
        # read() written out: filters call this once per node.
        try:
            value = self._storage[key]
        except KeyError:
            raise StateNotFoundError(key) from None
        if not isinstance(value, kind):
            raise TypeError(f"{value!r} convert to {kind.__name__} error")
        return value

    def write(self, key: str, value: StateData) -> None:
        self._storage[key] = value

    def delete(self, key: str) -> None:
        self._storage.pop(key, None)

    def keys(self) -> list[str]:
        return list(self._storage)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._storage = {key: value.clone() for key, value in self._storage.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        return copy
