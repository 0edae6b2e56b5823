"""Fixtures shared by the suite: a temporary data root, factories for records, the CLI.

Helpers that are not fixtures (settings for the stand-ins, documents to serve) live in
helpers.py and documents.py, which the tests import.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import CASE_FIXTURE, ArchiveCommands, ArchiveRoot
from playwright.sync_api import Browser, sync_playwright
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.draft import new_draft
from pipeline.models import Case, Draft, SourceEntry
from pipeline.standins.sitefarm import SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules marked `runs_long(seconds)` first, the longest first; the rest in their own order.

    The workers take whole modules (`--dist loadfile`, so that a module's fixtures are made once), the
    next one as each runs low. Left in name order, the longest modules came last and on one worker: it
    ran 533 s of tests while the other two ran 368 s and 364 s. Started first, they end long before the
    short modules that fill in around them."""
    weight = {}
    for item in items:
        marker = item.get_closest_marker("runs_long")
        weight[item] = -float(marker.args[0]) if marker else 0.0
    items.sort(key=weight.__getitem__)  # stable: a module's tests stay in their order


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator's own INCIDENTLIB_* variables must not leak into the tests."""
    for name in list(os.environ):
        if name.startswith("INCIDENTLIB_") and name != "INCIDENTLIB_SHARED":
            monkeypatch.delenv(name)
    # Tests never reach beyond loopback: a test that forgets the stand-in meets a closed port.
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_URL", "http://127.0.0.1:9")
    # Nor does the assist's client: it must never find a key, a base URL or a proxy of the operator's.
    for name in list(os.environ):
        if name.startswith("OPENAI_") or name.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name)


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this run shares: under xdist the parent of each worker's; alone, the
    worker's own (the folder above that is every run's, other runs' and other checkouts' included)."""
    run = tmp_path_factory.getbasetemp()
    return run.parent if os.environ.get("PYTEST_XDIST_WORKER") else run


@pytest.fixture(scope="session")
def migrated_prefect_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Prefect database with every migration applied, made once for the whole run (all the workers
    share it), for tests whose commands start Prefect servers of their own (helpers.seed_prefect_db)."""
    from filelock import FileLock
    from helpers import make_prefect_db

    run = _run_folder(tmp_path_factory)
    made = run / "migrated-prefect.db"
    with FileLock(run / "migrated-prefect.db.lock"):
        if not made.exists():
            make_prefect_db(tmp_path_factory.mktemp("prefect-db"), run / "migrated-prefect.db.part")
            (run / "migrated-prefect.db.part").rename(made)
    return made


@pytest.fixture(scope="session")
def stems_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's file of Korean stems analysed so far, which the page tests' builds share
    (helpers.shared_stems); every worker's, like `migrated_prefect_db`."""
    return _run_folder(tmp_path_factory) / "search-stems.json"


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory, migrated_prefect_db: Path) -> Iterator[str]:
    """One Prefect server (SQLite, the API alone) for the whole session: flows run for real against it.

    Started once because it costs seconds, as a command starts its own (pipeline.server, which also
    sees that it never outlives the worker), on a database whose migrations are made already (they
    cost seconds more, in each worker); the flow heartbeat is off because it costs a second per flow
    run and nothing here watches for dead runs.
    """
    from helpers import seed_prefect_db

    from pipeline import server as prefect_server
    from pipeline.settings import Settings

    home = tmp_path_factory.mktemp("prefect-home")
    patch = pytest.MonkeyPatch()
    for name, value in {
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }.items():
        patch.setenv(name, value)
    root = tmp_path_factory.mktemp("prefect-server")
    for folder in ("sources", "drafts", "cases"):
        (root / folder).mkdir()
    seed_prefect_db(root, migrated_prefect_db)
    server, process = prefect_server._start(Store(root), Settings(root=root, _env_file=None), full=False, port=0)
    try:
        from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

        with temporary_settings(updates={PREFECT_API_URL: server.api_url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield server.api_url
    finally:
        prefect_server._stop(process)
        patch.undo()


@pytest.fixture
def prefect_api(prefect_harness: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's Prefect server, also named in the environment as an operator names it, so that
    the commands run in-process use it instead of starting a server of their own."""
    monkeypatch.setenv("PREFECT_API_URL", prefect_harness)


@pytest.fixture
def case_json() -> dict[str, Any]:
    """The suite's own published case (tests/fixtures/case.json), every field filled, without its
    links to other cases (`related`, `recurrence_of`) so that it stands alone in a data root."""
    data: dict[str, Any] = json.loads(CASE_FIXTURE.read_text(encoding="utf-8"))
    return {**data, "related": [], "recurrence_of": None}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty data root with the three folders."""
    data = tmp_path / "data"
    for folder in ("sources", "drafts", "cases"):
        (data / folder).mkdir(parents=True)
    return data


@pytest.fixture
def store(root: Path) -> Store:
    return Store(root)


@pytest.fixture
def make_draft() -> Callable[..., Draft]:
    def make(url: str = "https://example.org/postmortems/2024-01-01-outage", **fields: object) -> Draft:
        draft = new_draft(SourceEntry(url=url))
        return draft.model_copy(update=fields) if fields else draft

    return make


@pytest.fixture
def make_case(case_json: dict[str, Any]) -> Callable[..., Case]:
    """A valid published case: the suite's own, with the given fields replaced."""

    def make(case_id: str = "IL-0428", **fields: object) -> Case:
        return Case.model_validate({**case_json, "id": case_id, **fields})

    return make


@pytest.fixture
def farm() -> Iterator[SiteFarm]:
    """A farm of local websites on 127.0.0.1; add sites and pages in the test."""
    with SiteFarm() as farm:
        yield farm


@pytest.fixture
def wayback() -> Iterator[WaybackStandIn]:
    """The Wayback Machine stand-in on 127.0.0.1, with limits far above what a test reaches."""
    with WaybackStandIn(
        WaybackRules(access_key="test-access", secret_key="test-secret", captures_per_minute=6000, cdx_per_minute=6000)
    ) as stand_in:
        yield stand_in


@pytest.fixture
def archive_root(root: Path, store: Store, wayback: WaybackStandIn) -> ArchiveRoot:
    """The data root, its store and the Wayback stand-in, together."""
    return ArchiveRoot(root, store, wayback)


@pytest.fixture
def archive_commands(
    archive_root: ArchiveRoot, cli: Callable[..., Any], prefect_api: None, monkeypatch: pytest.MonkeyPatch
) -> ArchiveCommands:
    """The archive root with `incidentlib` run in-process on it against the session's Prefect server."""
    return ArchiveCommands(archive_root.root, archive_root.store, archive_root.wayback, cli, monkeypatch)


@pytest.fixture
def crawl_env(monkeypatch: pytest.MonkeyPatch, wayback: WaybackStandIn) -> None:
    """The settings a crawl by `incidentlib crawl` needs against the site farm and the Wayback stand-in."""
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    monkeypatch.setenv("INCIDENTLIB_PER_HOST_DELAY_S", "0")
    monkeypatch.setenv("INCIDENTLIB_MAX_RETRIES", "0")
    # The crawl looks up its new drafts' captures (no keys here: lookups only), in the stand-in.
    monkeypatch.setenv("INCIDENTLIB_WAYBACK_URL", wayback.url)
    monkeypatch.setenv("INCIDENTLIB_CDX_PER_MINUTE", "6000")


@pytest.fixture
def cli() -> Callable[..., object]:
    """Run `incidentlib ARGS...` in-process, as a person would type it, with `input` on its standard
    input (none when left out); returns click's Result."""
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None, input: str | None = None):
        return runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)

    return run


CHROMIUM_MISSING = (
    "chromium is not installed: the browser tests need Debian's (`apt-get install chromium`, as root; "
    "scripts/test does it)"
)


# The reader site's browser tests share one Chromium per module (test_web_browser keeps its own, launched
# without the GPU and networking flags these pass).
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail(CHROMIUM_MISSING, pytrace=False)
    with sync_playwright() as playwright:
        args = ["--disable-gpu", "--disable-background-networking"]
        args += ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = playwright.chromium.launch(executable_path=executable, args=args)
        yield launched
        launched.close()
