"""Files of the data root that cannot be read (not UTF-8, not YAML or JSON, a key written twice): one line
naming the file, and the line where it is known, from every command that reads them; never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_discover import serve_atom, write_feeds

from pipeline.models import Draft
from pipeline.standins.sitefarm import SiteFarm
from pipeline.store import Store

LATIN1_REGISTRY = "- url: https://example.org/ok\n- url: https://example.org/café\n  org: Café\n".encode("latin-1")


def _one_line(output: str, start: str) -> None:
    assert "Traceback" not in output, output
    assert any(line.startswith(start) for line in output.splitlines()), output


def test_a_registry_file_not_utf8_is_one_line_from_every_command_that_reads_it(cli: Callable, root: Path) -> None:
    registry = root / "sources" / "latin.yaml"
    registry.write_bytes(LATIN1_REGISTRY)
    (root / "sources" / "good.yaml").write_text("- url: https://example.org/good\n")
    fault = "sources/latin.yaml:2: -: not UTF-8: byte 0xe9 at offset"

    validated = cli("validate", "--root", str(root))
    assert validated.exit_code == 1
    _one_line(validated.stdout, fault)
    # The other file is still read and counted.
    assert validated.stderr == "checked 1 source, 0 drafts, 0 cases: 1 fault\n"

    added = cli("add", "https://example.org/new", "--root", str(root))
    assert added.exit_code == 1
    _one_line(added.stderr, f"Error: {fault}")
    assert "nothing added: fix the registry first" in added.stderr
    assert not (root / "sources" / "added.yaml").exists()
    assert registry.read_bytes() == LATIN1_REGISTRY

    candidates = cli("candidates", "--root", str(root))
    assert candidates.exit_code == 0, candidates.output
    assert "Traceback" not in candidates.output


@pytest.mark.usefixtures("prefect_api")
def test_crawl_names_a_registry_file_not_utf8_and_crawls_the_rest(cli: Callable, root: Path) -> None:
    (root / "sources" / "latin.yaml").write_bytes(LATIN1_REGISTRY)
    crawled = cli("crawl", "--root", str(root), "--json")
    assert crawled.exit_code == 0, crawled.output
    report = json.loads(crawled.stdout)
    assert any(f.startswith("sources/latin.yaml:2: -: not UTF-8") for f in report["registry_faults"]), report


def test_a_key_written_twice_in_the_registry_is_a_fault_and_add_refuses(cli: Callable, root: Path) -> None:
    registry = root / "sources" / "twice.yaml"
    text = "- url: https://example.org/one\n  org: One\n  org: Two\n- url: https://example.org/two\n"
    registry.write_text(text)
    validated = cli("validate", "--root", str(root))
    assert validated.exit_code == 1
    assert validated.stdout == "sources/twice.yaml:3: -: duplicate key 'org': also at line 2\n"

    # Adding the first entry's URL again would register it twice: the entry cannot be read to check.
    added = cli("add", "https://example.org/one", "--root", str(root))
    assert added.exit_code == 1
    _one_line(added.stderr, "Error: sources/twice.yaml:3: -: duplicate key 'org'")
    assert registry.read_text() == text
    assert not (root / "sources" / "added.yaml").exists()


def _case_text_with_title_twice(case_json: dict[str, Any], case_id: str) -> str:
    text = json.dumps({**case_json, "id": case_id}, indent=2, ensure_ascii=False)
    return text.replace(f'"id": "{case_id}",', f'"id": "{case_id}",\n  "title": {{"en": "Another title"}},', 1)


def test_a_case_with_a_key_twice_is_a_fault_of_validate_and_stops_site_and_show(
    cli: Callable, root: Path, case_json: dict[str, Any]
) -> None:
    (root / "cases" / "IL-0001.json").write_text(_case_text_with_title_twice(case_json, "IL-0001"))
    fault = "cases/IL-0001.json: title: duplicate key"
    validated = cli("validate", "--root", str(root))
    assert validated.exit_code == 1
    assert validated.stdout.startswith(fault), validated.stdout
    assert len(validated.stdout.splitlines()) == 1

    for command in (("site",), ("show", "IL-0001")):
        result = cli(*command, "--root", str(root))
        assert result.exit_code == 1, (command, result.output)
        _one_line(result.stderr, f"Error: {fault}")
    assert not (root / "site" / "api").exists()


def test_a_record_not_utf8_names_the_file_and_line(
    cli: Callable, store: Store, case_json: dict[str, Any], make_draft: Callable[..., Draft]
) -> None:
    case = json.dumps({**case_json, "id": "IL-0002"}, indent=2, ensure_ascii=False).encode("utf-8")
    (store.root / "cases" / "IL-0002.json").write_bytes(case.replace(b'"summary"', b'"summ\xe9"'))
    draft = make_draft()
    store.write_draft(draft)
    path = store.path("draft", draft.id)
    path.write_bytes(path.read_bytes().replace(b'"origin"', b'\n"orig\xffn"', 1))

    validated = cli("validate", "--root", str(store.root))
    assert validated.exit_code == 1
    lines = validated.stdout.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"drafts/{draft.id}.json:")
    assert ": -: not UTF-8: byte 0xff at offset" in lines[0]
    assert lines[1].startswith("cases/IL-0002.json:")
    assert ": -: not UTF-8: byte 0xe9 at offset" in lines[1]

    shown = cli("show", "IL-0002", "--root", str(store.root))
    assert shown.exit_code == 1
    _one_line(shown.stderr, "Error: cases/IL-0002.json:")


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("links.json", b'{"https://example.org/a": ', ".incidentlib/links.json:1: -: not valid JSON"),
        ("runs.json", b'{"crawl": {}, "crawl": {}}', ".incidentlib/runs.json: crawl: duplicate key"),
        ("runs.json", b'{"crawl": "\xe9t\xe9"}', ".incidentlib/runs.json:1: -: not UTF-8"),
        (
            "runs.json",
            b'{"crawl": {"started_at": "2026-11-29T10:00:00+00:00", "state": "exploded"}}',
            ".incidentlib/runs.json: crawl.state: Input should be 'completed', 'failed' or 'cancelled'",
        ),
    ],
)
def test_a_state_file_that_cannot_be_read_is_one_line(
    cli: Callable, root: Path, name: str, data: bytes, problem: str
) -> None:
    (root / ".incidentlib").mkdir(exist_ok=True)
    (root / ".incidentlib" / name).write_bytes(data)
    result = cli("status", "--root", str(root))
    assert result.exit_code == 1, result.output
    _one_line(result.stderr, f"Error: {problem}")
    assert "move it away and the next run starts it afresh" in result.stderr


CANDIDATES = (
    "- id: example-org-a-00000001\n  url: https://example.org/a\n  feed: https://example.org/feed.xml\n"
    "  title: Caf\xe9 outage\n  found_at: 2026-11-01T00:00:00Z\n"
).encode("latin-1")


def test_an_unreadable_candidates_file_is_one_line_and_never_written_over(
    cli: Callable, root: Path, farm: SiteFarm, monkeypatch: pytest.MonkeyPatch, prefect_api: None
) -> None:
    """Writing back the candidates read from a file that could not be read would lose every one of them."""
    monkeypatch.setenv("INCIDENTLIB_ALLOW_PRIVATE_HOSTS", "1")
    monkeypatch.setenv("INCIDENTLIB_PER_HOST_DELAY_S", "0")
    path = root / "sources" / "candidates.yaml"
    path.write_bytes(CANDIDATES)
    fault = "sources/candidates.yaml:4: -: not UTF-8: byte 0xe9 at offset"

    for command in (("candidates",), ("candidates", "dismiss", "example-org-a-00000001")):
        result = cli(*command, "--root", str(root))
        assert result.exit_code == 1, (command, result.output)
        _one_line(result.stderr, f"Error: {fault}")

    site = farm.add_site("feeds")
    feed = serve_atom(site, "/news.xml", [{"url": "https://example.org/b", "title": "Another outage"}])
    write_feeds(root, {"url": feed, "kind": "atom", "name": "news"})
    discovered = cli("discover", "--root", str(root))
    assert discovered.exit_code == 1, discovered.output
    _one_line(discovered.stderr, f"Error: {fault}")
    assert path.read_bytes() == CANDIDATES


@pytest.mark.parametrize(
    ("name", "command"),
    [("links.json", "refresh"), ("links.json", "promote"), ("feeds.json", "discover"), ("runs.json", "crawl")],
)
def test_a_flow_command_names_a_state_file_it_cannot_read_before_its_run(
    cli: Callable, root: Path, name: str, command: str, prefect_api: None
) -> None:
    """Not a failed flow run with Prefect's traceback in the log: one line, before anything runs."""
    (root / ".incidentlib").mkdir(exist_ok=True)
    (root / ".incidentlib" / name).write_bytes(b'{"https://example.org/a": ')
    result = cli(command, "--root", str(root))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"Error: .incidentlib/{name}:1: -: not valid JSON"), result.stderr
    assert "Traceback" not in result.output
