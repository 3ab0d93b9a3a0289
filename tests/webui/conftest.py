"""Fixtures of the dashboard's browser tests: the site served over ASGI (HTTP and websockets) by
a real server process with its embedded runners (live_server.py), and Debian's Chromium driven by
Playwright. The tests talk to the server only through the browser.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import ROOT, api_token, serve, server_env

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT_DIR_DEFAULT = ROOT / "var" / "test-screenshots"


@pytest.fixture(scope="session")
def asgi_server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the live server's process (its own var directory and database)."""
    return server_env(tmp_path_factory.mktemp("asgi-server"))


@pytest.fixture(scope="session")
def asgi_server(asgi_server_env: dict[str, str]) -> Iterator[str]:
    """The base URL of a live ASGI server with runners on."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests drive Debian's Chromium at {CHROMIUM}, which is not installed")
    with serve(asgi_server_env) as server:
        yield server.url


@pytest.fixture(scope="session")
def asgi_api_token(asgi_server: str, asgi_server_env: dict[str, str]) -> str:
    """A JSON API token (``Authorization: Token <key>``) of a user of the live server's database;
    the user sees the ownerless clusters the browser tests create."""
    return api_token(asgi_server_env, "browser-tests")


# Module scope: one Playwright (and its event loop) at a time, closed before other modules run.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests drive Debian's Chromium at {CHROMIUM}, which is not installed")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in the test's thread for as long as it
    # is open; ORM calls tests make between browser steps (database setup and teardown too) are
    # plain synchronous ones, which Django refuses beside a running loop unless told.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()


@pytest.fixture
def dashboard_page(chromium: Any, asgi_server: str) -> Iterator[Any]:
    """A fresh browser page at 1280 px that fails the test on any page error."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, base_url=asgi_server)
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors


# ---------------------------------------------------------------------------------------------
# Screenshots of a failing browser test: every page still open in the test's browser (and any
# page fixture it holds), full page, into $SCHEDVIZ_SCREENSHOT_DIR or var/test-screenshots/.


def screenshot_dir() -> Path:
    return Path(os.environ.get("SCHEDVIZ_SCREENSHOT_DIR") or SCREENSHOT_DIR_DEFAULT)


# The widths every page is looked at: a desktop and a phone.
SCREENSHOT_VIEWPORTS = ((1440, 900), (390, 844))


def screenshot_widths(page: Any, name: str) -> list[Path]:
    """Full-page PNGs of the page at desktop and phone widths, named ``<name>-<width>.png``, into
    the git-ignored screenshot folder; the viewport is put back as it was."""
    directory = screenshot_dir()
    directory.mkdir(parents=True, exist_ok=True)
    was = page.viewport_size
    saved = []
    for width, height in SCREENSHOT_VIEWPORTS:
        page.set_viewport_size({"width": width, "height": height})
        path = directory / f"{name}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        saved.append(path)
    if was:
        page.set_viewport_size(was)
    return saved


def open_pages(values: Iterator[Any] | list[Any]) -> list[Any]:
    """The Playwright pages among fixture values: Page objects themselves, and every page of
    every context of a Browser (the ``chromium`` fixture), each once, in opening order."""
    pages: list[Any] = []
    for value in values:
        found: list[Any] = []
        if hasattr(value, "contexts") and hasattr(value, "new_context"):  # a Browser
            found = [p for context in value.contexts for p in context.pages]
        elif hasattr(value, "screenshot") and hasattr(value, "context"):  # a Page
            found = [value]
        pages += [p for p in found if all(p is not seen for seen in pages)]
    return pages


def save_page_screenshots(pages: list[Any], directory: Path, test_id: str) -> list[Path]:
    """A full-page PNG of each open page, named after the test; the paths saved. A page that
    cannot be shot (closed, crashed) is skipped: the test's own failure is what matters."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", test_id).strip("-")[:150]
    saved: list[Path] = []
    for number, page in enumerate(pages, start=1):
        if page.is_closed():
            continue
        path = directory / f"{stem}-page{number}.png"
        try:
            page.screenshot(path=str(path), full_page=True, timeout=10_000)
        except Exception:  # best effort: never masks the test's own failure
            continue
        saved.append(path)
    return saved


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if (
        report.when == "call"
        and report.failed
        and item.get_closest_marker("browser") is not None
        and isinstance(item, pytest.Function)
    ):
        pages = open_pages(list(item.funcargs.values()))
        saved = save_page_screenshots(pages, screenshot_dir(), item.nodeid)
        if saved:
            listing = "\n".join(str(path) for path in saved)
            report.sections.append(("screenshots of the open pages", listing))
            print(f"\nscreenshots of {item.nodeid}:\n{listing}", file=sys.stderr)
    return report


# ---------------------------------------------------------------------------------------------
# Steps several browser tests take through the pages.


def new_cluster(page: Any, name: str) -> None:
    """A new empty cluster made through the clusters page; the page is left on its dashboard."""
    page.goto("/")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Empty").check()
    page.get_by_role("button", name="Create cluster").click()
    page.wait_for_url("**/clusters/*/")


def apply_yaml(page: Any, text: str) -> None:
    """``text`` applied through the dashboard's Apply YAML form, its success awaited and the
    form folded again."""
    page.locator("#add-yaml summary").click()
    page.locator("#manifests-form textarea").fill(text)
    page.locator("#manifests-form").get_by_role("button", name="Apply").click()
    page.locator("#manifests-form .message.success").wait_for()
    page.locator("#add-yaml summary").click()
