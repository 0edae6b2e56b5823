"""The offline demo, as the README's main job: the whole pipeline, and nothing left running."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from pipeline.demo import run_demo
from pipeline.store import Store
from pipeline.validate import validate


def test_the_demo_publishes_cases_and_leaves_nothing_running(tmp_path: Path, prefect_api: None) -> None:
    threads_before = {t.name for t in threading.enumerate()}
    said: list[str] = []
    report = run_demo(tmp_path / "library", say=said.append)
    assert report.cases == ["IL-0001", "IL-0002", "IL-0003"]
    assert report.faults == 0
    store = Store(tmp_path / "library")
    assert validate(store).faults == []
    assert all((case.sources[0].archived or "").startswith("https://web.archive.org/web/") for case in store.cases())
    assert [name for name, _ in report.steps] == [
        "discover",
        "accept",
        "crawl",
        "archive",
        "review",
        "promote",
        "refresh",
        "validate",
    ]
    assert "1 re-archived" in dict(report.steps)["refresh"]
    assert any("MIT" in line for line in said), "the bundled pages' licences are shown"
    leftover = {t.name for t in threading.enumerate()} - threads_before
    assert not {n for n in leftover if n.startswith(("site-", "wayback"))}


@pytest.mark.parametrize("variable", ["INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "INCIDENTLIB_WAYBACK_URL"])
def test_the_demo_puts_the_environment_back(tmp_path: Path, prefect_api: None, variable: str, monkeypatch) -> None:
    import os

    monkeypatch.delenv(variable, raising=False)
    run_demo(tmp_path / "library", say=lambda _: None)
    assert variable not in os.environ


def test_the_demo_command_says_how_to_open_its_library_in_the_review_page(
    cli: Any, tmp_path: Path, prefect_api: None
) -> None:
    library = tmp_path / "library"
    result = cli("demo", "--keep", str(library))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"review page: incidentlib reviewer add NAME --root {library}, then incidentlib web --root {library} "
        "and open http://127.0.0.1:8000/"
    )
