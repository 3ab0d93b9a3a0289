"""schedviz/env.py: settings read strictly from the environment, nonsense refused."""

from __future__ import annotations

import pytest

from schedviz.env import EnvironmentError_, envhostports, envorigins


@pytest.mark.parametrize(
    ("value", "entries"),
    [
        ("", frozenset()),
        ("127.0.0.1:8888", {"127.0.0.1:8888"}),
        (" LOCALHOST:80 , [::1]:8888,", {"localhost:80", "[::1]:8888"}),
        ("extender.internal:08443", {"extender.internal:8443"}),
    ],
)
def test_host_port_entries_are_read_and_normalized(
    monkeypatch: pytest.MonkeyPatch, value: str, entries: set[str]
) -> None:
    monkeypatch.setenv("HOSTS", value)
    assert envhostports("HOSTS") == entries


@pytest.mark.parametrize(
    "value", ["127.0.0.1", "localhost:", ":8888", "host:http", "host:0", "host:65536", "::1"]
)
def test_host_port_entries_without_a_port_or_with_a_bad_one_are_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("HOSTS", value)
    with pytest.raises(EnvironmentError_, match="expected host:port"):
        envhostports("HOSTS")


def test_origins_are_read_and_lowered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORIGINS", "https://Schedviz.Example.org, http://127.0.0.1:8000")
    assert envorigins("ORIGINS") == ["https://schedviz.example.org", "http://127.0.0.1:8000"]


@pytest.mark.parametrize(
    "value", ["schedviz.example.org", "ftp://example.org", "https://", "https://example.org/app"]
)
def test_anything_but_an_origin_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ORIGINS", value)
    with pytest.raises(EnvironmentError_, match="expected an origin"):
        envorigins("ORIGINS")
