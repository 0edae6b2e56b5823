"""A data root is explicit: `incidentlib init` makes one, and every other command outside one says so."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup

from pipeline.cli import app
from pipeline.registry import parse_registry
from pipeline.settings import Settings

# The commands that need no data root, and what every other one is given to run outside one.
ANYWHERE = {"config", "demo", "deploy", "extract", "init", "schema", "stand-in"}
DRAFT = "example-org-pm-00000000"
NEEDS_ROOT: dict[str, list[str]] = {
    "add": ["https://example.org/pm"],
    "approve": [DRAFT, "--by", "bob"],
    "archive": [],
    "assist": [DRAFT, "--accept", "summary", "--by", "alice"],
    "candidates": [],
    "crawl": [],
    "discover": [],
    "dismiss": [DRAFT, "IL-0001", "--as", "duplicate", "--by", "bob"],
    "edit": [DRAFT, "--by", "alice"],
    "fmt": [],
    "links": [],
    "merge": [DRAFT, "--into", "IL-0001", "--by", "bob"],
    "mcp": [],
    "promote": [],
    "queue": [],
    "refresh": [],
    "relate": [DRAFT, "IL-0001", "--as", "related", "--by", "bob"],
    "reject": [DRAFT, "--by", "bob", "--reason", "not an incident"],
    "reopen": [DRAFT, "--by", "bob"],
    "request-changes": [DRAFT, "--by", "bob", "--comment", "more"],
    "reviewer": ["list"],  # each of its commands: tests/test_reviewers.py
    "serve": [],
    "set": [DRAFT, "org", "Example", "--by", "alice"],
    "show": [DRAFT],
    "similar": [DRAFT],
    "site": [],
    "status": [],
    "take-suggestion": [DRAFT, "0", "--by", "alice"],
    "dismiss-suggestion": [DRAFT, "0", "--by", "alice"],
    "learn": [],
    "validate": [],
    "web": [],
    "withdraw": ["IL-0001", "--why", "a duplicate", "--by", "bob"],
    "write": [DRAFT, "--by", "alice"],
}


def command_names() -> set[str]:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return set(group.commands)


def test_every_command_is_known_to_need_a_data_root_or_not() -> None:
    assert set(NEEDS_ROOT) | ANYWHERE == command_names()
    assert not set(NEEDS_ROOT) & ANYWHERE


@pytest.mark.parametrize("command", sorted(NEEDS_ROOT))
def test_a_command_outside_a_data_root_says_so_in_one_line(
    command: str, cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(command, *NEEDS_ROOT[command])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: {tmp_path}: not a data root (no sources/, drafts/ or cases/ folder); "
        f"make one with `incidentlib init {tmp_path}`, or give --root or INCIDENTLIB_ROOT\n"
    )
    assert os.listdir(tmp_path) == [], "nothing is made outside a data root"


def test_a_missing_root_is_named_too(cli: Callable, tmp_path: Path) -> None:
    result = cli("validate", env={"INCIDENTLIB_ROOT": str(tmp_path / "typo")})
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {tmp_path / 'typo'}: no such folder; make one with `incidentlib init ")


def test_a_crawl_outside_a_data_root_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "crawl"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "not a data root" in result.stderr and "incidentlib init" in result.stderr


def test_commands_that_need_no_data_root_work_anywhere(
    cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("schema", "source").exit_code == 0
    assert cli("config").exit_code == 0
    page = tmp_path / "pm.md"
    page.write_text("# Cache outage\n\nThe cache fell over.\n")
    assert cli("extract", "--file", str(page), "https://example.org/pm.md").exit_code == 0
    deploy = cli("deploy", "--pool", "incidents", env={"PREFECT_API_URL": ""})
    assert "PREFECT_API_URL" in deploy.stderr and "data root" not in deploy.stderr


def test_init_makes_a_data_root_that_validates(cli: Callable, tmp_path: Path) -> None:
    folder = tmp_path / "library"
    made = cli("init", str(folder))
    assert made.exit_code == 0, made.output
    assert made.stdout.splitlines()[:5] == [
        "created sources/",
        "created drafts/",
        "created cases/",
        "created .gitignore",
        "created sources/README.yaml",
    ]
    assert all((folder / name).is_dir() for name in ("sources", "drafts", "cases"))
    ignored = (folder / ".gitignore").read_text().splitlines()
    assert ".incidentlib/" in ignored and "incidentlib.env" in ignored
    checked = cli("validate", "--root", str(folder))
    assert checked.exit_code == 0 and checked.stderr == "checked 0 sources, 0 drafts, 0 cases: 0 faults\n"


def test_the_starter_registry_shows_an_entry_in_the_format(cli: Callable, tmp_path: Path) -> None:
    cli("init", str(tmp_path))
    starter = (tmp_path / "sources" / "README.yaml").read_text()
    assert starter.endswith("\n[]\n") and all(line.startswith("#") for line in starter.splitlines()[:-1])
    example = "\n".join(line[2:] for line in starter.splitlines() if line.startswith(("# - ", "#   ")))
    entries, faults = parse_registry(example, "example")
    assert faults == [] and [(e.entry.org, e.entry.kind, e.entry.date) for e in entries] == [
        ("DFDS", "github", "2020-10-06")
    ]


def test_init_never_overwrites_a_file(cli: Callable, tmp_path: Path) -> None:
    (tmp_path / "sources").mkdir()
    (tmp_path / ".gitignore").write_text("__pycache__/\n")
    (tmp_path / "sources" / "README.yaml").write_text("- url: https://example.org/mine\n")
    again = cli("init", str(tmp_path))
    assert again.exit_code == 0
    assert (tmp_path / ".gitignore").read_text() == "__pycache__/\n"
    assert (tmp_path / "sources" / "README.yaml").read_text() == "- url: https://example.org/mine\n"
    assert "kept .gitignore (already there)" in again.stdout and "created drafts/" in again.stdout
    assert again.stderr == "note: .gitignore does not ignore .incidentlib/ (locks and state): add that line to it\n"


def test_init_makes_the_current_folder_a_data_root_by_default(
    cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init").exit_code == 0
    assert cli("init").stdout.count("(already there)") == 6
    assert cli("queue", "--json").stdout == "[]\n"


@pytest.mark.parametrize(
    ("in_the_way", "named", "problem"),
    [
        ("library/sources", "library/sources", "not a folder"),
        ("library", "library", "not a folder"),
        ("", "library/sources", "cannot make the folder: Not a directory"),  # the folder above is a file
        ("library/.gitignore/", "library/.gitignore", "cannot read the file: Is a directory"),
    ],
    ids=["sources-is-a-file", "root-is-a-file", "the-folder-above-is-a-file", "gitignore-is-a-folder"],
)
def test_init_with_something_in_the_way_says_so_in_one_line_naming_it(
    cli: Callable, tmp_path: Path, in_the_way: str, named: str, problem: str
) -> None:
    above = tmp_path / "above"
    path = above / in_the_way
    path.parent.mkdir(parents=True, exist_ok=True)
    if in_the_way.endswith("/"):
        path.mkdir()
    else:
        path.write_text("")
    made = cli("init", str(above / "library"))
    assert made.exit_code == 1
    assert made.stderr == f"Error: {above / named}: {problem}\n"


# ------------------------------------------------------------------ the data root's settings file


def test_init_writes_a_settings_file_of_comments_only_at_the_defaults(cli: Callable, tmp_path: Path) -> None:
    made = cli("init", str(tmp_path))
    assert "created incidentlib.env" in made.stdout.splitlines()
    path = tmp_path / "incidentlib.env"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "it may come to hold the archive's keys"
    lines = path.read_text().splitlines()
    assert all(not line or line.startswith("#") for line in lines), "nothing is set: every line a comment"
    named = {line[2:].split("=", 1)[0] for line in lines if line.startswith("# INCIDENTLIB_")}
    assert named == {f"INCIDENTLIB_{name.upper()}" for name in Settings.model_fields} - {"INCIDENTLIB_ROOT"}
    # Taken as set, each commented line gives the default it shows: no value of its own, so no secret.
    given = [line.removeprefix("# ") for line in lines if line.startswith("# INCIDENTLIB_")]
    (tmp_path / "incidentlib.env").write_text("\n".join(given) + "\n")
    assert Settings(root=tmp_path) == Settings(root=tmp_path, _env_file=None)
    assert "kept incidentlib.env (already there)" in cli("init", str(tmp_path)).stdout


def test_the_settings_follow_the_data_root(cli: Callable, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--root DIR reads DIR/incidentlib.env: the environment wins over it, it wins over the working
    folder's, and it cannot move the data root."""
    library, work = tmp_path / "library", tmp_path / "work"
    cli("init", str(library))
    work.mkdir()
    monkeypatch.chdir(work)
    (library / "incidentlib.env").write_text(
        "INCIDENTLIB_CAPTURES_PER_MINUTE=5\nINCIDENTLIB_CASE_ID_PREFIX=LIB\nINCIDENTLIB_ROOT=/elsewhere\n"
    )
    (work / "incidentlib.env").write_text("INCIDENTLIB_CAPTURES_PER_MINUTE=6\nINCIDENTLIB_CDX_PER_MINUTE=12\n")

    lines = cli("config", "--root", str(library), env={"INCIDENTLIB_CASE_ID_PREFIX": "ENV"}).stdout.splitlines()
    assert f"INCIDENTLIB_CAPTURES_PER_MINUTE=5.0  # {library / 'incidentlib.env'}" in lines
    assert "INCIDENTLIB_CASE_ID_PREFIX=ENV  # environment" in lines
    assert "INCIDENTLIB_CDX_PER_MINUTE=12.0  # incidentlib.env" in lines, "the working folder's file, below it"
    assert f"INCIDENTLIB_ROOT={library}  # --root" in lines

    # As every flow run opens its data root: by its path alone, from wherever the worker runs.
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=library)
    assert (settings.root, settings.captures_per_minute, settings.case_id_prefix) == (library, 5.0, "LIB")
    monkeypatch.setenv("INCIDENTLIB_ROOT", str(library))
    assert Settings().case_id_prefix == "LIB", "INCIDENTLIB_ROOT names the data root as --root does"
