"""Plugin registries: a name maps to a factory ``new(args, handle)``.

Mirrors pkg/scheduler/framework/runtime/registry.go. In-tree and out-of-tree plugins register
the same way; registering a name twice is refused, as upstream's ``Registry.Register`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

PluginFactory = Callable[[Any, Any], Any]


class Registry(Mapping[str, PluginFactory]):
    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._factories:
            raise ValueError(f"a plugin named {name} already exists")
        self._factories[name] = factory

    def unregister(self, name: str) -> None:
        if name not in self._factories:
            raise ValueError(f"no plugin named {name} exists")
        del self._factories[name]

    def merge(self, other: Mapping[str, PluginFactory]) -> Registry:
        merged = Registry(self._factories)
        for name, factory in other.items():
            merged.register(name, factory)
        return merged

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)
