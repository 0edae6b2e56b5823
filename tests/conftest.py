"""Fixtures shared by the suite: a temporary data root, factories for records, the CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.draft import new_draft
from pipeline.models import Case, Draft, SourceEntry
from pipeline.settings import Settings
from pipeline.standins.sitefarm import SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store

REPO = Path(__file__).resolve().parents[1]
# The read-only reference material lies beside the checkout (../shared), in CI too.
SHARED = Path(os.environ.get("INCIDENTLIB_SHARED", REPO.parent / "shared"))
EXAMPLE_CASE = SHARED / "reference" / "example-case.json"


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator's own INCIDENTLIB_* variables must not leak into the tests."""
    for name in list(os.environ):
        if name.startswith("INCIDENTLIB_") and name != "INCIDENTLIB_SHARED":
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One temporary Prefect server (SQLite) for the whole session: flows run for real against it.

    Started once because it costs seconds; the flow heartbeat is off because it costs a
    second per flow run and nothing here watches for dead runs.
    """
    home = tmp_path_factory.mktemp("prefect-home")
    patch = pytest.MonkeyPatch()
    for name, value in {
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    }.items():
        patch.setenv(name, value)
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=90):
        with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield
    patch.undo()


@pytest.fixture
def example_json() -> dict:
    assert EXAMPLE_CASE.is_file(), f"{EXAMPLE_CASE}: the reference example is missing (set INCIDENTLIB_SHARED)"
    return json.loads(EXAMPLE_CASE.read_text(encoding="utf-8"))


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
def make_case(example_json: dict) -> Callable[..., Case]:
    """A valid published case, the reference example with the given fields replaced."""

    def make(case_id: str = "IL-0428", **fields: object) -> Case:
        return Case.model_validate({**example_json, "id": case_id, **fields})

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
        access_key="test-access", secret_key="test-secret", captures_per_minute=6000, cdx_per_minute=6000
    ) as stand_in:
        yield stand_in


def archive_settings(root: Path, wayback: WaybackStandIn, **changes: object) -> Settings:
    """Settings pointing at the stand-in, fast: tests wait on nothing real."""
    base: dict[str, object] = {
        "root": root,
        "allow_private_hosts": True,
        "per_host_delay_s": 0.0,
        "wayback_url": wayback.url,
        "wayback_access_key": "test-access",
        "wayback_secret_key": "test-secret",
        "captures_per_minute": 6000,
        "cdx_per_minute": 6000,
        "poll_interval_s": 0.01,
        "poll_timeout_s": 2.0,
        "breaker_backoff_s": 0.05,
        "reuse_capture_within_s": 0,
    }
    return Settings(**{**base, **changes})


def settings_env(settings: Settings) -> dict[str, str]:
    """The same settings as INCIDENTLIB_* variables, for a process of its own."""
    env = {}
    for name, value in settings.model_dump(mode="json").items():
        if name == "root":
            continue
        secret = getattr(settings, name)
        if hasattr(secret, "get_secret_value"):
            value = secret.get_secret_value()
        if value is not None:
            env[f"INCIDENTLIB_{name.upper()}"] = json.dumps(value) if isinstance(value, list) else str(value)
    return env


@pytest.fixture
def cli() -> Callable[..., object]:
    """Run `incidentlib ARGS...` in-process, as a person would type it; returns click's Result."""
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None):
        return runner.invoke(app, list(args), env=env, catch_exceptions=False)

    return run
