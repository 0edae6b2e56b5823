"""The manual's generated references, docs/commands.md and docs/settings.md: current, complete, and
read from the program as it is (pipeline.docs_reference)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from helpers import REPO
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipeline import docs_reference
from pipeline.cli import app
from pipeline.docs_reference import BEGIN, END, PAGES, REGENERATE, command_paths, spliced
from pipeline.settings import Settings


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_generated_page_is_what_the_generator_gives(page: str) -> None:
    committed = (REPO / page).read_text(encoding="utf-8")
    assert committed == spliced(committed, PAGES[page]()), f"{page} is not current: run `{REGENERATE}`"


def test_every_command_and_its_every_option_is_in_the_reference() -> None:
    reference = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")
    generated = reference.split(BEGIN)[1].split(END)[0]
    paths = command_paths()
    group = typer.main.get_command(app)
    assert {path.split()[1] for path in paths} == set(getattr(group, "commands", {}))
    assert "incidentlib candidates accept" in paths and "incidentlib reviewer add" in paths
    for path in paths:
        command = group
        for name in path.split()[1:]:
            command = command.commands[name]  # type: ignore[attr-defined]
        section = generated.split(f"\n### {path}\n", 1)[1].split("\n### ", 1)[0]
        assert command.help and " ".join(command.help.split()[:4]) in section, f"{path}: no help"
        for param in command.params:
            for opt in param.opts:
                assert f"`{opt}" in section or f" {opt}" in section, f"{path}: {opt} is not in the reference"


def test_every_setting_is_in_the_reference_with_its_variable_type_and_default() -> None:
    reference = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    generated = reference.split(BEGIN)[1].split(END)[0]
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in generated.splitlines() if line.startswith("| `")}
    assert len(Settings.model_fields) > 50
    for name, field in Settings.model_fields.items():
        variable = f"`INCIDENTLIB_{name.upper()}`"
        assert variable in rows, f"{variable} is not in docs/settings.md: run `{REGENERATE}`"
        row = rows[variable]
        assert field.description and " ".join(field.description.split()[:3]) in row, name
        secret = field.annotation in (SecretStr, SecretStr | None)
        assert ("(**secret**)" in row) == secret, f"{name}: secret marked {'(**secret**)' in row}, is {secret}"
    assert "| `INCIDENTLIB_USER_AGENT` | `str` | `incidentlib/0.1 (postmortem library crawler;" in generated
    assert "| `INCIDENTLIB_WAYBACK_ACCESS_KEY` | `SecretStr` or none (**secret**) | none |" in generated
    assert '| `INCIDENTLIB_REQUIRED_LANGUAGES` | `list[str]` | `["en"]` |' in generated
    assert "| `INCIDENTLIB_ALLOW_PRIVATE_HOSTS` | `bool` or `tuple[IPv4Network or IPv6Network, ...]` | `false` |" in (
        generated
    )


class _Toy(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TOY_")

    plain: int = Field(default=1, description="A plain one.")
    aliased: str = Field(default="a", validation_alias="OTHER_NAME", description="Read by its alias alone.")
    # The pydantic plugin takes any AliasChoices for a required field's; this one has a default.
    either: str = Field(  # type: ignore[pydantic-alias]
        default="e", validation_alias=AliasChoices("FIRST_NAME", "SECOND_NAME"), description="Two."
    )
    hidden: SecretStr | None = Field(default=None, description="A secret key.")


def test_the_variables_named_are_those_pydantic_settings_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {doc.field: doc for doc in docs_reference.setting_docs(_Toy)}
    assert docs["plain"].names == ("TOY_PLAIN",)
    assert docs["aliased"].names == ("OTHER_NAME",)
    assert docs["either"].names == ("FIRST_NAME", "SECOND_NAME")
    assert docs["hidden"].secret and not docs["plain"].secret
    values = {"plain": "7", "aliased": "b", "either": "f", "hidden": "k"}
    for field, doc in docs.items():
        for name in doc.names:
            monkeypatch.setenv(name, values[field])
            read = getattr(_Toy(), field)
            assert (read.get_secret_value() if isinstance(read, SecretStr) else str(read)) == values[field], name
            monkeypatch.delenv(name)
    page = docs_reference.settings_markdown(_Toy)
    assert "| `TOY_HIDDEN` | `SecretStr` or none (**secret**) | none | A secret key. |" in page


def test_the_settings_the_model_lacks_are_listed_until_it_has_them() -> None:
    page = docs_reference.settings_markdown()
    known = {name for doc in docs_reference.setting_docs() for name in doc.names}
    assert "`PREFECT_API_URL`" in page
    assert ("| `INCIDENTLIB_WEB_SECRET` | a key made once" in page) == ("INCIDENTLIB_WEB_SECRET" not in known)


def test_help_text_is_kept_as_text_in_markdown() -> None:
    assert docs_reference._prose("a _MODEL) of `x_y` and *b* <c> [d]\n  e|f INCIDENTLIB_ROOT") == (
        r"a \_MODEL) of `x_y` and \*b\* &lt;c\> \[d\] e\|f INCIDENTLIB_ROOT"
    )


def test_a_page_without_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        spliced("# A page\n", "generated")
    assert spliced(f"head\n{BEGIN}\nold\n{END}\ntail\n", "new\n") == f"head\n{BEGIN}\n\nnew\n\n{END}\ntail\n"


def test_one_command_rewrites_a_stale_page_and_check_says_so(tmp_path: Path) -> None:
    for page in PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((REPO / page).read_text(encoding="utf-8"), encoding="utf-8")
    stale = tmp_path / "docs" / "settings.md"
    stale.write_text(spliced(stale.read_text(encoding="utf-8"), "nothing"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "40"}  # the usage lines do not wrap

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pipeline.docs_reference", *args, "--repo", str(tmp_path)]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)

    checked = run("--check")
    assert checked.returncode == 1
    assert checked.stderr == f"docs/settings.md: not current; run `{REGENERATE}`\n"
    written = run("--write")
    assert (written.returncode, written.stdout) == (0, "rewrote docs/settings.md\n")
    assert stale.read_text(encoding="utf-8") == (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    assert (run("--check").returncode, run("--write").stdout) == (0, "the references were current\n")
