"""The manual (docs/, mkdocs.yml) and the README, its front page: every page reachable, every link
between them leading somewhere, the README's set-up commands those CI runs."""

from __future__ import annotations

import re
from typing import Any

import yaml
from helpers import REPO
from manual import DOCS

LINK = re.compile(r"\]\(([^)\s]+)\)")


def nav_pages(entries: list[Any]) -> list[str]:
    pages: list[str] = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_navigation_once_and_every_entry_is_a_page() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert (config["docs_dir"], config["theme"]["name"], config["theme"]["font"]) == ("docs", "material", False)
    listed = nav_pages(config["nav"])
    assert sorted(listed) == sorted(path.name for path in DOCS.glob("*.md"))
    assert len(set(listed)) == len(listed)
    ignored = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert f"{config['site_dir']}/" in ignored, "the built site must not be committed"


def test_the_readme_is_a_front_page_whose_links_all_lead_somewhere() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    targets = [link for link in LINK.findall(readme) if not link.startswith(("http://", "https://", "#"))]
    for target in targets:
        assert (REPO / target.split("#")[0]).is_file(), f"the README links to {target}, which is not there"
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    for page in nav_pages(config["nav"]):
        assert f"docs/{page}" in targets, f"the README does not link to docs/{page}"
    for picture in sorted(DOCS.glob("*.png")):
        assert f"(docs/{picture.name})" in readme, f"the README does not show docs/{picture.name}"


def test_the_readme_gives_the_two_set_up_commands_and_ci_runs_the_second() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    for text in (readme, start):
        assert "pip install -e . && incidentlib demo\n" in text
        assert "\nscripts/test\n" in text, "the tests by the script that installs what they need"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert "pip install -e '.[dev]'" in ci and "scripts/test" in ci
    script = (REPO / "scripts" / "test").read_text(encoding="utf-8").splitlines()
    assert """"$python" -m pip install -e '.[dev]'""" in script and """exec "$python" -m pytest "$@\"""" in script
