"""Fixtures of the dashboard's browser tests: the site served over ASGI (HTTP and websockets) by
a real server process with its embedded runners, and Debian's Chromium driven by Playwright.

The server is ``manage.py runserver`` (daphne's) in a subprocess with a SQLite file database of
its own in a temporary directory, so its runner threads and the pages share one database the way
an embedded deployment does; the tests talk to it only through the browser.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
SERVER_START_SECONDS = 30
SCREENSHOT_DIR_DEFAULT = ROOT / "var" / "test-screenshots"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _server_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        SCHEDVIZ_VAR_DIR=str(var_dir),
        SCHEDVIZ_START_RUNNERS="1",
        DJANGO_DEBUG="0",
        DJANGO_SETTINGS_MODULE="schedviz.settings",
    )
    return env


@pytest.fixture(scope="session")
def asgi_server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the live server's process (its own var directory and database)."""
    return _server_env(tmp_path_factory.mktemp("asgi-server"))


@pytest.fixture(scope="session")
def asgi_server(asgi_server_env: dict[str, str]) -> Iterator[str]:
    """The base URL of a live ASGI server with runners on."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"browser tests drive Debian's Chromium at {CHROMIUM}, which is not installed")
    env = asgi_server_env
    var_dir = Path(env["SCHEDVIZ_VAR_DIR"])
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    port = _free_port()
    log = (var_dir / "server.log").open("wb")
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(url + "/", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the test server did not start; see {var_dir / 'server.log'}"
                    ) from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="session")
def asgi_api_token(asgi_server: str, asgi_server_env: dict[str, str]) -> str:
    """A JSON API token (``Authorization: Token <key>``) of a user of the live server's database;
    the user sees the ownerless clusters the browser tests create."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "apitoken", "browser-tests"],
        cwd=ROOT,
        env=asgi_server_env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


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
