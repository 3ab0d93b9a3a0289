"""Plugin registries, ported from upstream's pkg/scheduler/framework/runtime/registry_test.go."""

from __future__ import annotations

import pytest

from schedviz.scheduler.framework.runtime.registry import PluginFactory, Registry


class NoopPlugin:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


def factory(name: str) -> PluginFactory:
    return lambda args, handle: NoopPlugin(name)


M1 = factory("m1")
M2 = factory("m2")


def built(registry: Registry) -> dict[str, str]:
    """Which plugin each name builds (upstream's isRegistryEqual compares by Name())."""
    return {name: make(None, None).name() for name, make in registry.items()}


def test_it_registers_a_new_plugin() -> None:
    registry = Registry()
    registry.register("pluginFactory1", M1)
    assert built(registry) == {"pluginFactory1": "m1"}


def test_it_refuses_to_register_a_name_twice() -> None:
    registry = Registry({"pluginFactory1": M1})
    with pytest.raises(ValueError, match=r"^a plugin named pluginFactory1 already exists$"):
        registry.register("pluginFactory1", M2)
    assert built(registry) == {"pluginFactory1": "m1"}


def test_it_unregisters_an_existing_plugin() -> None:
    registry = Registry({"pluginFactory1": M1, "pluginFactory2": M2})
    registry.unregister("pluginFactory1")
    assert built(registry) == {"pluginFactory2": "m2"}


def test_it_refuses_to_unregister_a_missing_plugin() -> None:
    registry = Registry()
    with pytest.raises(ValueError, match=r"^no plugin named pluginFactory1 exists$"):
        registry.unregister("pluginFactory1")
    assert built(registry) == {}


def test_it_merges_registries_with_distinct_names() -> None:
    merged = Registry({"pluginFactory1": M1}).merge(Registry({"pluginFactory2": M2}))
    assert built(merged) == {"pluginFactory1": "m1", "pluginFactory2": "m2"}


def test_it_refuses_to_merge_a_duplicate_name_and_keeps_the_original() -> None:
    primary = Registry({"pluginFactory1": M1})
    with pytest.raises(ValueError, match="already exists"):
        primary.merge(Registry({"pluginFactory1": M2}))
    assert built(primary) == {"pluginFactory1": "m1"}


def test_it_maps_names_to_factories() -> None:
    registry = Registry({"a": M1})
    assert len(registry) == 1
    assert "a" in registry and "b" not in registry
