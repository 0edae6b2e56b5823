"""The `incidentlib` command. Each command is one call into the library, of the same name.

No logic lives here: options are parsed, one library function runs, its result is
printed. Expected failures (an IncidentlibError) print one line and exit 1; anything
else is a bug and shows its traceback.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from pipeline.errors import Fault, IncidentlibError, SettingsError
from pipeline.fmt import fmt as fmt_records
from pipeline.models import SCHEMA_MODELS, json_schema
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.validate import validate as validate_records

app = typer.Typer(
    name="incidentlib",
    help="Turn public postmortems into a curated, reviewed library of incident cases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Options shared by every command: defined once so they mean the same everywhere.
RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Data root holding sources/, drafts/ and cases/ [env: INCIDENTLIB_ROOT; default: current folder].",
        file_okay=False,
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document for scripts instead of text.")]


def _read_settings(root: Path | None) -> Settings:
    try:
        return Settings(root=root) if root is not None else Settings()
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        name = "INCIDENTLIB_" + str(error["loc"][0]).upper() if error["loc"] else "settings"
        raise SettingsError(f"{name}: {error['msg']}") from None


def load_settings(root: Path | None) -> Settings:
    settings = _read_settings(root)
    if not settings.root.is_dir():
        raise SettingsError(f"{settings.root}: no such data root (give --root or INCIDENTLIB_ROOT)")
    return settings


def open_store(root: Path | None) -> Store:
    return Store.from_settings(load_settings(root))


def _count(n: int, plural: str) -> str:
    return f"{n} {plural[:-1] if n == 1 else plural}"


def _print_faults(faults: list[Fault]) -> None:
    for fault in faults:
        typer.echo(str(fault))


class SchemaName(StrEnum):
    CASE = "case"
    DRAFT = "draft"
    SOURCE = "source"


@app.command()
def schema(
    name: Annotated[SchemaName | None, typer.Argument(help="Which record: case, draft or source; all when left out.")] = None,
) -> None:
    """Print the JSON Schema of the records, generated from the models."""
    if name is None:
        document = {kind: json_schema(kind) for kind in SCHEMA_MODELS}
    else:
        document = json_schema(name.value)
    typer.echo(json.dumps(document, indent=2, ensure_ascii=False))


@app.command()
def validate(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Check every source entry, draft and case against the record format and vocabularies.

    Prints `path: field: problem` for each fault; exits 1 when there is any.
    """
    settings = load_settings(root)
    report = validate_records(Store.from_settings(settings), required_languages=settings.required_languages)
    faults = report.faults
    counts = {"sources": report.sources, "drafts": report.drafts, "cases": report.cases}
    if as_json:
        typer.echo(json.dumps({**counts, "faults": [vars(f) for f in faults]}, indent=2))
    else:
        _print_faults(faults)
        checked = ", ".join(_count(n, name) for name, n in counts.items())
        typer.echo(f"checked {checked}: {_count(len(faults), 'faults')}", err=True)
    raise typer.Exit(1 if faults else 0)


@app.command()
def fmt(
    root: RootOption = None,
    check: Annotated[bool, typer.Option("--check", help="Change nothing; exit 1 if any record would change.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Rewrite every draft and case in the canonical layout (a no-op on records already in it)."""
    report = fmt_records(open_store(root), check=check)
    if as_json:
        typer.echo(
            json.dumps(
                {"changed": report.changed, "unchanged": report.unchanged, "faults": [vars(f) for f in report.faults]},
                indent=2,
            )
        )
    else:
        _print_faults(report.faults)
        verb = "would reformat" if check else "reformatted"
        for label in report.changed:
            typer.echo(f"{verb} {label}")
        typer.echo(f"{len(report.changed)} {verb}, {report.unchanged} unchanged, {len(report.faults)} faults", err=True)
    raise typer.Exit(1 if report.faults or (check and report.changed) else 0)


def main() -> None:
    try:
        app()
    except IncidentlibError as exc:
        typer.echo(f"Error: {exc}", err=True)
        sys.exit(1)
