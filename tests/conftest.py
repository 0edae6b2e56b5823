"""Fixtures shared by the suite: a temporary data root, factories for records, the CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.draft import new_draft
from pipeline.models import Case, Draft, SourceEntry
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
def cli() -> Callable[..., object]:
    """Run `incidentlib ARGS...` in-process, as a person would type it; returns click's Result."""
    runner = CliRunner()

    def run(*args: str, env: dict[str, str] | None = None):
        return runner.invoke(app, list(args), env=env, catch_exceptions=False)

    return run
