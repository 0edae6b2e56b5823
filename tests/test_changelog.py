"""The changelog is one of releases: a section a version, newest first, one line a change naming its issue."""

import re
from datetime import date
from pathlib import Path

import pipeline

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
RELEASE = re.compile(r"## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})")
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
LONGEST = 200


def _lines() -> list[str]:
    return CHANGELOG.read_text(encoding="utf-8").splitlines()


def _sections() -> list[str]:
    return [line for line in _lines() if line.startswith("## ")]


def _releases() -> list[tuple[tuple[int, int, int], date]]:
    found = []
    for heading in _sections()[1:]:
        match = RELEASE.fullmatch(heading)
        assert match, f"{heading!r}: a release is headed ## [X.Y.Z] - YYYY-MM-DD"
        major, minor, patch, day = match.groups()
        found.append(((int(major), int(minor), int(patch)), date.fromisoformat(day)))
    return found


def _body() -> list[tuple[int, str]]:
    """The lines from `## [Unreleased]` on, numbered as in the file."""
    lines = _lines()
    start = lines.index("## [Unreleased]")
    return list(enumerate(lines, start=1))[start:]


def test_unreleased_is_the_first_section() -> None:
    assert _sections()[0] == "## [Unreleased]"


def test_the_newest_release_is_the_version() -> None:
    newest, _ = _releases()[0]
    assert ".".join(map(str, newest)) == pipeline.__version__


def test_releases_are_newest_first() -> None:
    releases = _releases()
    versions = [version for version, _ in releases]
    days = [day for _, day in releases]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert days == sorted(days, reverse=True)


def test_each_section_is_a_kind_of_change() -> None:
    kinds = [line.removeprefix("### ") for _, line in _body() if line.startswith("### ")]
    assert kinds and set(kinds) <= KINDS


def test_every_entry_is_one_line_naming_its_issue() -> None:
    entries = 0
    for number, line in _body():
        if not line or line.startswith(("## ", "### ")):
            continue
        assert line.startswith("- "), f"CHANGELOG.md:{number}: an entry is one line: {line!r}"
        assert len(line) <= LONGEST, f"CHANGELOG.md:{number}: {len(line)} characters, over {LONGEST}"
        assert re.search(r"\(issues? \d+", line), f"CHANGELOG.md:{number}: names no issue"
        entries += 1
    assert entries


def test_its_links_lead_to_files_of_the_repository() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (ROOT / target).is_file(), target
