"""The command line, used as a person would: exit codes and what it prints."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from helpers import REPO, reviewable_draft
from manual import section
from typer.core import TyperGroup

from pipeline.cli import app
from pipeline.draft import new_draft
from pipeline.models import Case, Draft, RunRecord, SourceEntry
from pipeline.store import Store

pytestmark = pytest.mark.runs_long(50)  # seconds in all: such modules start first (conftest.py)


def command_names() -> list[str]:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return sorted(group.commands)


def test_every_command_has_help_and_is_in_the_manual(cli: Callable) -> None:
    brief = section("commands.md", "## In brief")  # the hand-written part, not the generated reference
    for name in command_names():
        result = cli(name, "--help")
        assert result.exit_code == 0, name
        assert "Usage: incidentlib" in result.stdout
        assert f"incidentlib {name}" in brief, f"docs/commands.md does not tell of `incidentlib {name}` in brief"


def test_validate_passes_on_a_good_root(cli: Callable, root: Path, case_json: dict) -> None:
    (root / "cases" / "IL-0428.json").write_text(json.dumps(case_json))
    (root / "sources" / "starter.yaml").write_text("- url: https://example.org/postmortem\n  org: Example\n")
    result = cli("validate", "--root", str(root))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr == "checked 1 source, 0 drafts, 1 case: 0 faults\n"


def test_validate_warns_of_a_draft_its_url_names_otherwise_and_passes(
    cli: Callable, store: Store, make_draft: Callable[..., Draft]
) -> None:
    url = "http://0x7f.0.0.1:8080/x/../page.html"
    # 0.1.0 resolved neither the spelling nor the dot segments: its id hashed the URL as written.
    moved = make_draft(url, id="0x7f-0-0-1-page-dd0f150e")
    store.write_draft(moved)
    store.write_draft(make_draft(url))
    result = cli("validate", "--root", str(store.root))
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "warning: drafts/0x7f-0-0-1-page-dd0f150e.json: id: http://0x7f.0.0.1:8080/x/../page.html gives the id "
        "127-0-0-1-page-cf57552b now; this draft keeps its id, and the crawl updates it, not the second draft of "
        "the page, 127-0-0-1-page-cf57552b: keep one of the two\n"
        "checked 0 sources, 2 drafts, 0 cases: 0 faults, 1 warning\n"
    )


def test_validate_prints_one_line_per_fault(
    cli: Callable, root: Path, case_json: dict, make_draft: Callable[..., Draft]
) -> None:
    cases = root / "cases"
    (cases / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001", "components": ["warp-drive"]}))
    (cases / "IL-0002.json").write_text(json.dumps({**case_json, "id": "IL-0003"}))
    (cases / "IL-0004.json").write_text('{"id": "IL-0004",')
    (cases / "IL-0005.json").write_text(json.dumps({**case_json, "id": "IL-0005", "related": ["IL-0999"]}))
    draft = make_draft()
    (root / "drafts" / f"{draft.id}.json").write_text(
        json.dumps({**draft.model_dump(mode="json"), "date": "yesterday"})
    )
    (root / "sources" / "a.yaml").write_text(
        "- url: https://example.org/one\n"
        "- url: not-a-url\n"
        "- url: https://example.org/two\n"
        "  kind: podcast\n"
        "- url: https://EXAMPLE.org/one#again\n"
    )
    (root / "sources" / "b.yaml").write_text("- url: [unclosed\n")
    (root / "sources" / "c.yaml").write_text("- url: https://example.org:99999/x\n")
    (cases / "IL-0006 copy.json").write_text(json.dumps({**case_json, "id": "IL-0006"}))
    (cases / "IL-0007.json").write_text(json.dumps({**case_json, "id": "IL-0007", "title": {"ko": "제목"}}))
    (cases / "folder.json").mkdir()  # not a record file: ignored

    result = cli("validate", "--root", str(root))

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert all(re.match(r"^[^:]+(:\d+)?: \S+: .+$", line) for line in lines), lines
    expected = [
        f"drafts/{draft.id}.json: date: expected YYYY, YYYY-MM or YYYY-MM-DD, got 'yesterday'",
        "cases/IL-0001.json: components.0: unknown component 'warp-drive'; known: nccl, ",
        "cases/IL-0002.json: id: 'IL-0003' does not match the file name 'IL-0002.json'",
        "cases/IL-0004.json: -: not valid JSON: ",
        "cases/IL-0005.json: related.0: IL-0999 is not a case in cases/",
        "sources/a.yaml:2: url: not an absolute http(s) URL: 'not-a-url'",
        "sources/a.yaml:3: kind: unknown source kind 'podcast'; known: github, ",
        "sources/a.yaml:5: url: duplicate of the entry at sources/a.yaml:1: https://example.org/one",
        "sources/b.yaml:2: -: not valid YAML: ",
        "sources/c.yaml:1: url: URL has an invalid port: 'https://example.org:99999/x'",
        "cases/IL-0006 copy.json: id: 'IL-0006' does not match the file name 'IL-0006 copy.json'",
        "cases/IL-0007.json: title: missing the required language en",
    ]
    for start in expected:
        assert any(line.startswith(start) for line in lines), f"missing {start!r} in {lines}"
    assert len(lines) == len(expected)


def test_validate_json_output_for_scripts(cli: Callable, root: Path, case_json: dict) -> None:
    (root / "cases" / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001", "severity": "dire"}))
    result = cli("validate", "--root", str(root), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert (report["sources"], report["drafts"], report["cases"]) == (0, 0, 1)
    assert report["faults"] == [
        {"path": "cases/IL-0001.json", "field": "severity", "problem": report["faults"][0]["problem"]}
    ]
    assert report["faults"][0]["problem"].startswith("unknown severity 'dire'")


def test_root_comes_from_the_environment_when_not_given(
    cli: Callable, root: Path, tmp_path: Path, case_json: dict
) -> None:
    (root / "cases" / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001", "severity": "dire"}))
    good = tmp_path / "good"
    (good / "cases").mkdir(parents=True)
    (good / "cases" / "IL-0428.json").write_text(json.dumps(case_json))
    from_env = cli("validate", env={"INCIDENTLIB_ROOT": str(root)})
    assert from_env.exit_code == 1 and from_env.stdout.startswith("cases/IL-0001.json: severity: ")
    given = cli("validate", "--root", str(good), env={"INCIDENTLIB_ROOT": str(root)})
    assert given.exit_code == 0 and "1 case: 0 faults" in given.stderr


def test_fmt_rewrites_a_case_without_changing_a_key_or_value(cli: Callable, root: Path, case_json: dict) -> None:
    path = root / "cases" / "IL-0428.json"
    # As another tool might write it: keys in alphabetical order, ASCII escapes, one line.
    path.write_text(json.dumps(case_json, sort_keys=True))
    written = path.read_bytes()
    assert cli("fmt", "--root", str(root), "--check").exit_code == 1
    assert path.read_bytes() == written, "--check changes nothing"

    result = cli("fmt", "--root", str(root))
    assert result.exit_code == 0
    assert result.stdout == "reformatted cases/IL-0428.json\n"
    assert json.loads(path.read_text(encoding="utf-8")) == case_json

    formatted = path.read_bytes()
    again = cli("fmt", "--root", str(root))
    assert again.exit_code == 0 and again.stdout == ""
    assert "0 reformatted, 1 unchanged" in again.stderr
    assert path.read_bytes() == formatted
    assert cli("fmt", "--root", str(root), "--check").exit_code == 0


def test_fmt_leaves_an_invalid_record_exactly_as_it_was(cli: Callable, root: Path) -> None:
    path = root / "cases" / "IL-0001.json"
    path.write_text('{"id": "IL-0001",   "org": 1}')
    before = path.read_bytes()
    result = cli("fmt", "--root", str(root))
    assert result.exit_code == 1
    assert result.stdout.startswith("cases/IL-0001.json: org: ")
    assert path.read_bytes() == before


def test_schema_prints_every_record_kind(cli: Callable) -> None:
    everything = json.loads(cli("schema").stdout)
    assert sorted(everything) == ["candidate", "case", "draft", "feed", "source"]
    case = json.loads(cli("schema", "case").stdout)
    assert case == everything["case"]
    assert set(case["required"]) >= {"id", "org", "title", "summary", "sources", "url"}
    draft = json.loads(cli("schema", "draft").stdout)
    assert {"origin", "sections", "history", "state"} <= set(draft["properties"])
    feed = json.loads(cli("schema", "feed").stdout)
    assert set(feed["required"]) == {"url", "kind"}
    assert feed["$defs"]["FeedKind"]["enum"] == [
        "atom",
        "rss",
        "statuspage",
        "gcp-incidents",
        "markdown-list",
        "html-links",
    ]


def run_installed(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The real program in a process of its own, as an operator's shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_a_bad_setting_is_one_line_naming_it(root: Path) -> None:
    result = run_installed("validate", "--root", str(root), env={"INCIDENTLIB_CASE_ID_PREFIX": "lower"})
    assert result.returncode == 1
    assert result.stderr.startswith("Error: INCIDENTLIB_CASE_ID_PREFIX: String should match pattern")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_missing_root_is_an_error_not_an_empty_library(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    result = run_installed("validate", "--root", str(typo))
    assert result.returncode == 2
    assert result.stderr == (
        f"Error: {typo}: no such folder; make one with `incidentlib init {typo}`, or give --root or INCIDENTLIB_ROOT\n"
    )


def test_a_fault_is_always_one_line(cli: Callable, root: Path, case_json: dict) -> None:
    (root / "cases" / "IL-0001.json").write_text(json.dumps({**case_json, "id": "IL-0001", "bad\nkey": 1}))
    result = cli("validate", "--root", str(root))
    assert result.stdout == "cases/IL-0001.json: bad\\nkey: extra inputs are not permitted\n"


def test_the_installed_command_validates_a_root(root: Path, make_case: Callable[..., Case]) -> None:
    (root / "cases" / "IL-0007.json").write_text(make_case("IL-0007").model_dump_json())
    result = run_installed("validate", "--root", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "checked 0 sources, 0 drafts, 1 case: 0 faults\n"


def test_add_appends_to_the_registry_and_refuses_a_duplicate(cli: Callable, root: Path) -> None:
    (root / "sources" / "starter.yaml").write_text("# the starter set\n- url: https://example.org/pm/1\n")
    added = cli(
        "add",
        "https://example.org/pm/2",
        "--org",
        "Example",
        "--kind",
        "blog",
        "--date",
        "2024-05-01",
        "--licence",
        "CC BY 4.0",
        "--root",
        str(root),
    )
    assert added.exit_code == 0 and added.stdout == "added https://example.org/pm/2 to sources/added.yaml\n"
    assert (root / "sources" / "added.yaml").read_text() == (
        "- url: https://example.org/pm/2\n  org: Example\n  kind: blog\n  date: '2024-05-01'\n  licence: CC BY 4.0\n"
    )
    again = run_installed("add", "https://EXAMPLE.org/pm/1#summary", "--root", str(root))
    assert again.returncode == 1
    assert again.stderr == "Error: https://EXAMPLE.org/pm/1#summary is already registered at sources/starter.yaml:2\n"
    # Registered by its canonical URL, as discovery registers a feed's pages; the spelling given is said.
    tracked = cli("add", "https://example.org/pm/./4?utm_source=feed&id=4#top", "--root", str(root))
    assert tracked.exit_code == 0, tracked.stdout
    assert tracked.stdout == (
        "added https://example.org/pm/4?id=4 to sources/added.yaml "
        "(written https://example.org/pm/./4?utm_source=feed&id=4#top)\n"
    )
    assert "- url: https://example.org/pm/4?id=4\n" in (root / "sources" / "added.yaml").read_text()
    bad = run_installed("add", "https://example.org/pm/3", "--kind", "podcast", "--root", str(root))
    assert bad.returncode == 1 and bad.stderr.startswith("Error: add: kind: unknown source kind 'podcast'; known: ")
    assert cli("validate", "--root", str(root)).exit_code == 0


def test_extract_reads_a_saved_file_as_if_fetched_from_its_url(cli: Callable, tmp_path: Path, root: Path) -> None:
    from documents import POSTMORTEM_MD

    saved = tmp_path / "pm.md"
    saved.write_text(POSTMORTEM_MD)
    url = "https://github.com/acme/postmortems/blob/main/cache.md"
    by_option = json.loads(cli("extract", "--file", str(saved), "--url", url).stdout)
    assert (by_option["id"], by_option["title"]) == (
        json.loads(cli("extract", "--file", str(saved), url).stdout)["id"],
        {"en": "Cache stampede took the API down"},
    )
    result = cli("extract", "--file", str(saved), url, "--root", str(root))
    assert result.exit_code == 0, result.output
    draft = json.loads(result.stdout)
    assert (draft["org"], draft["title"], draft["date"]) == (
        "acme",
        {"en": "Cache stampede took the API down"},
        "2024-03-05",
    )
    assert draft["sources"] == [
        {
            "url": "https://github.com/acme/postmortems/blob/main/cache.md",
            "kind": "github",
            "archived": None,
            "archive": {
                "status": "pending",
                "reason": None,
                "detail": None,
                "attempts": 0,
                "last_attempt_at": None,
                "captured_at": None,
                "job_id": None,
                "job_submitted_at": None,
                "captured_url": None,
                "reused": False,
                "confirmed": False,
            },
        }
    ]
    assert list((root / "drafts").iterdir()) == [], "extract writes nothing"


def test_config_masks_the_keys_and_says_where_each_value_came_from(
    cli: Callable, root: Path, tmp_path: Path, monkeypatch
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "incidentlib.env").write_text(
        "INCIDENTLIB_WAYBACK_SECRET_KEY=file-secret-42\nINCIDENTLIB_CAPTURES_PER_MINUTE=6\n"
    )
    monkeypatch.chdir(workdir)
    env = {"INCIDENTLIB_WAYBACK_ACCESS_KEY": "env-access-17", "INCIDENTLIB_CRAWL_SCHEDULE": "15m"}

    as_json = cli("config", "--root", str(root), "--json", env=env)
    values = json.loads(as_json.stdout)
    assert values["wayback_access_key"] == values["wayback_secret_key"] == "********"
    assert values["captures_per_minute"] == 6.0 and values["crawl_schedule"] == "15m" and values["root"] == str(root)
    assert values["prefect_api_url"] is None

    text = cli("config", "--root", str(root), env=env)
    assert "env-access-17" not in text.stdout + as_json.stdout and "file-secret-42" not in text.stdout + as_json.stdout
    lines = text.stdout.splitlines()
    assert "INCIDENTLIB_WAYBACK_ACCESS_KEY=********  # environment" in lines
    assert "INCIDENTLIB_CAPTURES_PER_MINUTE=6.0  # incidentlib.env" in lines
    assert f"INCIDENTLIB_ROOT={root}  # --root" in lines
    assert "INCIDENTLIB_PER_HOST_DELAY_S=1.0  # default" in lines
    assert "INCIDENTLIB_PROMOTE_SCHEDULE=  # default" in lines


def test_a_schedule_that_is_neither_cron_nor_interval_is_one_line(root: Path) -> None:
    result = run_installed("status", "--root", str(root), env={"INCIDENTLIB_CRAWL_SCHEDULE": "hourly"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: INCIDENTLIB_CRAWL_SCHEDULE: 'hourly' is neither a cron line")
    nothing = run_installed("status", "--root", str(root), env={"INCIDENTLIB_ARCHIVE_SCHEDULE": "0s"})
    assert nothing.stderr == "Error: INCIDENTLIB_ARCHIVE_SCHEDULE: '0s': an interval must be longer than nothing\n"


def test_a_cron_line_prefect_would_refuse_is_named_before_anything_runs(root: Path) -> None:
    from pipeline.deployments import deployments
    from pipeline.errors import SettingsError
    from pipeline.settings import Settings

    with pytest.raises(SettingsError, match=r"^INCIDENTLIB_REFRESH_SCHEDULE: '99 \* \* \* \*': "):
        deployments(Settings(root=root, refresh_schedule="99 * * * *"), str(root))


def test_deploy_needs_a_server_and_says_so(root: Path) -> None:
    env = {name: "" for name in ("PREFECT_API_URL",)}
    result = run_installed("deploy", "--pool", "incidents", "--root", str(root), env=env)
    assert result.returncode == 1
    assert (
        result.stderr
        == "Error: PREFECT_API_URL: set it to the Prefect server the workers use (deploy needs a server)\n"
    )


def test_status_without_a_server_reads_the_data_root(
    cli: Callable, root: Path, make_draft: Callable[..., Draft]
) -> None:
    from pipeline.models import ArchiveState, LinkState, utc_now
    from pipeline.store import Store

    store = Store(root)
    waiting = make_draft("https://example.org/pm/1")
    waiting.sources[0].archive = ArchiveState(reason="no-keys")
    store.write_draft(waiting)
    store.write_draft(make_draft("https://example.org/pm/2"))
    store.state.update_links(
        {
            "https://example.org/pm/2": LinkState(
                url="https://example.org/pm/2", checked_at=utc_now(), status="gone", http_status=410
            )
        }
    )
    store.state.record_run(
        "crawl",
        RunRecord(
            started_at="2026-11-29T10:00:00+00:00",
            finished_at="2026-11-29T10:01:00+00:00",
            state="completed",
            counts={"new": 2},
            flow_run="brave-otter",
        ),
    )

    report = json.loads(cli("status", "--root", str(root), "--json").stdout)
    assert report["server"] is None
    flows = {f["flow"]: f for f in report["flows"]}
    assert flows["crawl"]["served"] is None and flows["crawl"]["last_run"]["counts"] == {"new": 2}
    assert flows["promote"]["schedule"] is None and flows["archive"]["last_run"] is None
    assert report["drafts"] == {"extracted": 2} and report["cases"] == 0
    assert report["waiting_capture"] == {"no-keys": 1, "not-tried": 1}
    assert report["links"] == {"gone": 1} and report["gone"] == ["https://example.org/pm/2"]

    text = cli("status", "--root", str(root)).stdout
    assert "none known" in text and "completed" in text and "gone https://example.org/pm/2" in text


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [
        ([], 0),  # nothing to do
        (["new", "unchanged"], 0),
        (["new", "failed"], 3),
        (["failed", "failed"], 4),
        (["failed", "deferred", "skipped"], 4),  # what was not tried counts neither way
        (["deferred"], 0),
    ],
)
def test_a_run_over_many_sources_exits_by_their_outcomes(outcomes: list[str], status: int) -> None:
    from pipeline.cli.common import outcome_status

    assert outcome_status(outcomes, failed={"failed"}, untried={"deferred", "skipped"}) == status


def test_every_exit_status_a_command_gives_is_in_the_manual() -> None:
    from pipeline.cli.common import ALL_FAILED, SOME_FAILED

    table = section("commands.md", "## Exit status")
    for status in (0, 1, 2, SOME_FAILED, ALL_FAILED, 130, 143):
        assert re.search(rf"^\| [\d, ]*\b{status}\b[\d, ]* \|", table, re.MULTILINE), status


def test_status_and_serve_name_all_seven_deployments(cli: Callable, root: Path) -> None:
    from pipeline.deployments import DEPLOYMENT_FLOWS
    from pipeline.status import FLOWS

    assert FLOWS == DEPLOYMENT_FLOWS == ("discover", "crawl", "archive", "refresh", "promote", "site", "learn")
    report = json.loads(cli("status", "--root", str(root), "--json").stdout)
    assert [flow["flow"] for flow in report["flows"]] == list(FLOWS)
    assert report["flows"][0]["schedule"] == "50 5 * * *"
    rows = [
        line.split("│")[1].strip() for line in cli("status", "--root", str(root)).stdout.splitlines() if "│" in line
    ]
    assert rows[:7] == list(FLOWS), rows
    shown = _flat(cli("serve", "--help", env={"COLUMNS": "400"}).stdout)
    assert "discover, crawl, archive, refresh, promote, site, learn" in shown


def _flat(text: str) -> str:
    """Help as words: box lines and wrapping gone."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_every_help_prints_its_texts_and_defaults_as_written(cli: Callable) -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    for name, command in group.commands.items():
        shown = _flat(cli(name, "--help", env={"COLUMNS": "400"}).stdout)
        for paragraph in (command.help or "").split("\n\n"):
            assert _flat(paragraph) in shown, f"{name}: its help lost {paragraph!r}"
        for param in command.params:
            help_text = getattr(param, "help", None)
            if help_text:
                assert _flat(help_text) in shown, f"{name} {param.name}: its help shows {help_text!r} otherwise"
            show_default = getattr(param, "show_default", None)
            if getattr(param, "is_flag", False) and param.secondary_opts == []:  # --json: nothing says it is off
                assert isinstance(show_default, str), f"{name} {param.name}: a flag with no default shown"
            if isinstance(show_default, str):
                assert f"[default: ({show_default})]" in shown, f"{name} {param.name}: no default shown"
            elif param.default not in (None, False) and not getattr(param, "is_flag", False):
                default = getattr(param.default, "value", param.default)
                assert f"[default: {default}]" in shown, f"{name} {param.name}: no default shown"


def test_links_status_takes_exactly_the_statuses_a_link_keeps(cli: Callable, root: Path) -> None:
    from pipeline.cli.records import LINK_STATUS_MEANINGS
    from pipeline.models import LinkStatus

    assert list(LINK_STATUS_MEANINGS) == list(LinkStatus)
    brief = _flat(section("commands.md", "## In brief"))
    explained = _flat(section("archive.md", "### A link's status"))
    assert f"incidentlib links [--status {'|'.join(LinkStatus)}] [--json]" in brief
    shown = _flat(cli("links", "--help", env={"COLUMNS": "400"}).stdout)
    for status, meaning in LINK_STATUS_MEANINGS.items():
        assert f"`{status.value}`: {meaning}" in explained and f"{status.value}: {meaning}" in shown
    refused = cli("links", "--status", "failed", "--root", str(root))
    assert refused.exit_code == 2 and "'failed' is not one of 'ok', 'moved', 'gone', 'blocked', 'error'" in _flat(
        refused.stderr
    )


def test_version_is_printed_as_written_in_its_one_place(cli: Callable) -> None:
    import ast
    import tomllib

    import pipeline

    assert re.fullmatch(r"\d+\.\d+\.\d+", pipeline.__version__)
    shown = cli("--version")
    assert shown.exit_code == 0 and shown.stdout == f"incidentlib {pipeline.__version__}\n"
    # The package's metadata takes it from there: no second copy in pyproject.toml to fall behind.
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pipeline.__version__"}
    # A string literal, which setuptools reads without importing the package (and its dependencies).
    module = ast.parse((REPO / "pipeline" / "__init__.py").read_text(encoding="utf-8"))
    written = [n.value for n in module.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "__version__"]
    assert [ast.literal_eval(value) for value in written] == [pipeline.__version__]


def _every_command() -> list[tuple[list[str], object]]:
    """Every command and subcommand, as typed after `incidentlib`, with its click command."""
    found: list[tuple[list[str], object]] = []

    def walk(command: object, path: list[str]) -> None:
        found.append((path, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_help_names_its_arguments_and_flags_as_the_manual_does(cli: Callable) -> None:
    """An argument in capitals in the usage line (`URL`, in brackets when it may be left out), a switch with
    no type: typer 0.29 printed `{url}` and `<bool>`."""
    for path, command in _every_command():
        shown = cli(*path, "--help", env={"COLUMNS": "400"}).stdout
        assert "<bool>" not in shown, path
        usage = next(line for line in shown.splitlines() if "Usage:" in line).split()
        for param in getattr(command, "params", []):
            if isinstance(param, typer.core.TyperArgument):
                name = param.name.upper() + ("..." if param.nargs != 1 else "")
                assert (name if param.required else f"[{name}]") in usage, (path, usage)
    usage = _flat(cli("add", "--help").stdout)
    assert "Usage: incidentlib add [OPTIONS] URL " in usage and "* url <str> The source's URL." in usage
    assert "Usage: incidentlib init [OPTIONS] [FOLDER]" in _flat(cli("init", "--help").stdout)
    assert "[OPTIONS] [IDS...]" in _flat(cli("candidates", "accept", "--help").stdout)
    top = _flat(cli("--help").stdout)
    assert "Usage: incidentlib [OPTIONS] COMMAND [ARGS]..." in top and "<int>" not in top, "-v counts, takes no number"
    assert "--json Print one JSON document" in _flat(cli("queue", "--help", env={"COLUMNS": "400"}).stdout)


def test_the_commands_are_listed_in_the_order_a_newcomer_uses_them(cli: Callable) -> None:
    from pipeline.cli.common import COMMAND_ORDER

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    assert sorted(COMMAND_ORDER) == command_names(), "every command has its place"
    listed = group.list_commands(typer.Context(group))
    assert listed[:6] == ["init", "demo", "add", "discover", "candidates", "crawl"]
    shown = cli("--help", env={"COLUMNS": "200"}).stdout
    rows = [line.split()[1] for line in shown.split("Commands")[1].splitlines() if re.match(r"│ [a-z]", line)]
    assert rows == listed


def test_an_empty_queue_says_so(cli: Callable, root: Path, make_draft: Callable[..., Draft]) -> None:
    nothing = cli("queue", "--root", str(root))
    assert nothing.stdout == (
        "the queue is empty: no draft yet; add a source with `incidentlib add URL`, then `incidentlib crawl`\n"
    )
    Store(root).write_draft(make_draft())
    filtered = cli("queue", "--state", "approved", "--root", str(root))
    assert filtered.stdout == "no draft matches these filters (of 1 draft in drafts/)\n"
    assert cli("queue", "--state", "approved", "--root", str(root), "--json").stdout == "[]\n"


def test_the_review_page_with_no_account_says_how_to_add_one(root: Path) -> None:
    import signal
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    served = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "web", "--port", str(port), "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert served.stderr is not None
        said = served.stderr.readline()
    finally:
        served.send_signal(signal.SIGTERM)
        served.communicate(timeout=30)
    assert said == (
        f"no reviewer account yet, so nobody can sign in: add one with `incidentlib reviewer add NAME --root {root}` "
        "(it asks for a password)\n"
    )


def _early_breaks(lines: list[str], start: int, end: int) -> list[str]:
    """The lines of one wrapped paragraph (its text in columns start..end of each line) that end before
    they had to: a line may end early only where the next line's first word would not have fitted on it
    (a greedy wrap, as the terminal's own). The paragraph's last line ends where it likes."""
    texts = [line[start:end].rstrip() for line in lines]
    return [
        f"{text!r} | {after.split()[0]}"
        for text, after in itertools.pairwise(texts)
        if after.strip() and len(text) + 1 + len(after.split()[0]) <= end - start
    ]


def _help_breaks(shown: str, columns: int) -> list[str]:
    """Every early break in a help screen's description (its paragraphs under the usage line, `end` one
    space short of the width) and in the description column of its Commands panel (one command's rows:
    its name, then rows whose name cell is blank; `end` one space short of the panel's right border)."""
    lines = shown.splitlines()
    breaks: list[str] = []
    usage = next(i for i, line in enumerate(lines) if "Usage:" in line)
    top = list(itertools.takewhile(lambda line: not line.startswith("╭"), lines[usage + 1 :]))
    paragraph: list[str] = []
    for line in [*top, ""]:
        if line.strip():
            paragraph.append(line)
        elif paragraph:
            breaks += _early_breaks(paragraph, 1, columns - 1)
            paragraph = []
    panel = "\n".join(lines).split("─ Commands ─")[1:]
    rows: list[list[str]] = []
    for line in panel[0].splitlines()[1:] if panel else []:
        if not line.startswith("│"):
            break
        if re.match(r"│ \S", line):
            rows.append([line])
        else:
            rows[-1].append(line)
    for row in rows:
        found = re.match(r"│ \S+\s+", row[0])
        assert found is not None
        breaks += _early_breaks(row, found.end(), row[0].rindex("│") - 1)
    return breaks


@pytest.mark.parametrize("columns", [80, 120])
def test_no_help_breaks_a_line_before_the_terminal_must(cli: Callable, columns: int) -> None:
    """typer's rich mode kept the docstrings' hard line breaks in the commands' list: "each drafted field's"
    ended a line half way across an 80-column terminal, "evidence (the quote..." began the next."""
    for path, command in _every_command():
        shown = cli(*path, "--help", env={"COLUMNS": str(columns)}).stdout
        assert max(len(line) for line in shown.splitlines()) <= columns, path
        assert _help_breaks(shown, columns) == [], path
        help_text = getattr(command, "help", None) or ""
        first = " ".join(help_text.split("\n\n")[0].split())
        assert first in _flat(shown), path  # the description whole, re-flowed


def _queue_root(root: Path, case_json: dict[str, Any]) -> tuple[Draft, Draft]:
    """A complete draft still awaiting its writer, and one with the longest id a source's URL gives
    (70 characters), a long org and a long title, lacking most of its fields."""
    store = Store(root)
    complete = reviewable_draft(case_json)
    url = "https://status.some-very-long-organisation-name.example.com/incidents/2024-03-17-a-very-long-path"
    sparse = new_draft(SourceEntry(url=url + "-of-an-outage-in-three-regions"))
    sparse = sparse.model_copy(
        update={
            "org": "Some Very Long Organisation Name Incorporated",
            "title": {"en": "A very long title of an outage that took down everything in three regions for hours"},
        }
    )
    for draft in (complete, sparse):
        store.write_draft(draft)
    return complete, sparse


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_queue_fits_the_terminal_and_never_cuts_an_id(
    cli: Callable, root: Path, case_json: dict[str, Any], columns: int
) -> None:
    """The queue drew a 145-column table at any width (rich told a width of 200)."""
    complete, sparse = _queue_root(root, case_json)
    assert len(sparse.id) == 70
    shown = cli("queue", "--root", str(root), env={"COLUMNS": str(columns)}).stdout
    lines = shown.splitlines()
    assert max(len(line) for line in lines) <= columns, shown
    for draft in (complete, sparse):
        assert any(re.search(rf"(^|[│ ]){draft.id}($|[│ ])", line) for line in lines), (draft.id, shown)
    assert "…" in shown, "the long title is cut with an ellipsis"
    if columns == 200:  # room for the table: its header, one row a draft
        assert re.search(r"┃ id +┃ state +┃ org +┃ age +┃ title +┃ lacks +┃", shown)
        assert sum(1 for line in lines if line.startswith("│ ")) == 2
    else:  # an id of 70 leaves no room beside it: each draft on lines of its own, the id on the first
        assert f"\n{sparse.id}\n" in shown and "  lacks: summary, " in shown
        assert "  lacks: the writer's sign-off, a reviewer's approval" in shown


def test_the_queue_fits_short_ids_in_a_table_at_100_columns(
    cli: Callable, root: Path, case_json: dict[str, Any]
) -> None:
    Store(root).write_draft(reviewable_draft(case_json))
    shown = cli("queue", "--root", str(root), env={"COLUMNS": "100"}).stdout
    assert max(len(line) for line in shown.splitlines()) <= 100, shown
    row = next(line for line in shown.splitlines() if line.startswith("│ example-org-outage-00000001 │"))
    assert "│ extracted │" in row and "the writer's" in row and row.rstrip().endswith("│")


def _served_ports(text: str) -> dict[str, set[int]]:
    """The ports a text's hints serve each thing on: `python -m http.server -d DIR PORT` (8000 when
    left out) the reader's site, `mkdocs serve [-a HOST:PORT]` (8000 when left out) the manual, and
    `incidentlib web` the review page, at the address its line names after it."""
    ports: dict[str, set[int]] = {"site": set(), "manual": set(), "web": set()}
    for found in re.finditer(r"python -m http\.server -d \S+?(?: (\d+))?[`\s]", text):
        ports["site"].add(int(found.group(1) or 8000))
    for found in re.finditer(r"mkdocs serve(?: -a [\w.]+:(\d+))?", text):
        ports["manual"].add(int(found.group(1) or 8000))
    for found in re.finditer(r"incidentlib web[^\n]*?127\.0\.0\.1:(\d+)", text):
        ports["web"].add(int(found.group(1)))
    return ports


def test_the_hints_to_serve_the_site_and_the_manual_leave_the_review_pages_port(cli: Callable, root: Path) -> None:
    """The README's `python -m http.server` and `mkdocs serve` took 8000, the port `incidentlib web`
    listens on by default: following the README, the second one failed to start."""
    web = typer.main.get_command(app).commands["web"]  # type: ignore[attr-defined]
    default = next(param.default for param in web.params if param.name == "port")
    assert default == 8000
    built = cli("site", "--root", str(root), env={"COLUMNS": "200"})
    texts = {
        "README.md": (REPO / "README.md").read_text(encoding="utf-8"),
        "docs": "\n".join(p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))),
        "incidentlib site": built.stdout,
    }
    for name, text in texts.items():
        ports = _served_ports(text)
        assert ports["web"] <= {default}, name
        assert default not in ports["site"] | ports["manual"], (name, ports)
    readme = _served_ports(texts["README.md"])
    assert readme == {"site": {8001}, "manual": {8002}, "web": {8000}}
    assert "python -m http.server -d " in built.stdout and "http://localhost:8001/" in built.stdout
