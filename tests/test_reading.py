"""Commands that read records never lie or crash on them: broken files, every field, text as it stands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.models import Draft
from pipeline.store import Store


def test_queue_prints_page_text_literally(cli: Callable, store: Store, root: Path, make_draft: Callable) -> None:
    store.write_draft(make_draft(title={"en": "[kind] [/etc/ssl]"}, org="[Acme]"))
    table = cli("queue", "--root", str(root))
    assert table.exit_code == 0, table.output
    assert "[kind] [/etc/ssl]" in table.stdout and "[Acme]" in table.stdout


def test_status_prints_run_errors_literally(cli: Callable, store: Store, root: Path) -> None:
    store.record_run("crawl", {"started_at": "2026-11-29T10:00:00+00:00", "state": "failed", "error": "[/etc/ssl]"})
    shown = cli("status", "--root", str(root), env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "failed: [/etc/ssl]" in shown.stdout


@pytest.fixture
def broken(store: Store, root: Path, make_draft: Callable) -> Draft:
    """A good draft beside two broken files: invalid JSON, and a name that is no draft id."""
    good = make_draft()
    store.write_draft(good)
    (root / "drafts" / "half-written-0000.json").write_text('{"id": ')
    (root / "drafts" / "Copy of it.json").write_text(good.model_dump_json())
    return good


def test_queue_lists_a_broken_draft_as_unreadable_and_goes_on(cli: Callable, root: Path, broken: Draft) -> None:
    listed = cli("queue", "--sort", "id", "--json", "--root", str(root))
    assert listed.exit_code == 0, listed.output
    entries = {e["id"]: e for e in json.loads(listed.stdout)}
    assert entries[broken.id]["state"] == "extracted"
    assert entries["half-written-0000"]["state"] == "unreadable"
    assert entries["half-written-0000"]["problem"].startswith("drafts/half-written-0000.json: -: not valid JSON: ")
    assert entries["Copy of it"]["problem"] == (
        "drafts/Copy of it.json: invalid draft id 'Copy of it': expected lower-case letters, digits and single dashes"
    )
    table = cli("queue", "--root", str(root)).stdout
    assert "unreadable" in table and "drafts/half-written-0000.json: -: not valid JSON" in table


def test_the_queue_filters_unreadable_drafts_by_state(cli: Callable, root: Path, broken: Draft) -> None:
    def states(*args: str) -> list[str]:
        return [e["state"] for e in json.loads(cli("queue", *args, "--json", "--root", str(root)).stdout)]

    assert states("--state", "extracted") == ["extracted"]
    assert states("--state", "unreadable") == ["unreadable", "unreadable"]
    assert states("--sort", "state") == ["unreadable", "unreadable", "extracted"]


def test_status_lists_a_broken_draft_with_its_reason(cli: Callable, root: Path, broken: Draft) -> None:
    report = json.loads(cli("status", "--json", "--root", str(root)).stdout)
    assert report["drafts"] == {"extracted": 1}
    assert [(u["path"], u["problem"][:19]) for u in report["unreadable"]] == [
        ("drafts/Copy of it.json", "invalid draft id 'C"),
        ("drafts/half-written-0000.json", "-: not valid JSON: "),
    ]
    text = cli("status", "--root", str(root))
    assert text.exit_code == 0
    assert "unreadable drafts/half-written-0000.json: -: not valid JSON: " in text.stdout
