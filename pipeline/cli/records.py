"""Commands for whoever keeps the library's records: their format, the registry, the links, withdrawals."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from pipeline import links as linking
from pipeline.cli.common import (
    ByOption,
    JsonOption,
    RootOption,
    app,
    count,
    echo,
    load_settings,
    open_store,
    print_faults,
    read_settings,
)
from pipeline.cli.review import who
from pipeline.crawl import extract_one
from pipeline.errors import DuplicateSource, InvalidRecord
from pipeline.fmt import fmt as fmt_records
from pipeline.ids import canonical_url
from pipeline.models import SCHEMA_MODELS, LinkStatus, SourceEntry, intake, json_schema
from pipeline.records import dump_record, faults_from
from pipeline.sources import add_source
from pipeline.store import Store, init_data_root
from pipeline.validate import validate as validate_records
from pipeline.withdraw import withdraw as withdraw_case

# One member per record kind of models.SCHEMA_MODELS, so that `--help` lists them.
SchemaName = StrEnum("SchemaName", {kind.upper(): kind for kind in SCHEMA_MODELS})  # type: ignore[misc]


@app.command()
def schema(
    name: Annotated[
        SchemaName | None,
        typer.Argument(help="Which record: case, draft, source, feed or candidate; all when left out."),
    ] = None,
) -> None:
    """Print the JSON Schema of the records, generated from the models."""
    if name is None:
        document = {kind: json_schema(kind) for kind in SCHEMA_MODELS}
    else:
        document = json_schema(name.value)
    echo(json.dumps(document, indent=2, ensure_ascii=False))


@app.command()
def init(
    folder: Annotated[
        Path | None,
        typer.Argument(help="The folder to make a data root of; made if missing.", show_default="current folder"),
    ] = None,
) -> None:
    """Make a data root: sources/, drafts/ and cases/, a .gitignore for its state, a commented starter registry,
    and incidentlib.env, its settings file (every setting commented out at its default; no secret).

    Safe to run again: a file or folder already there is kept as it is, never overwritten.
    """
    report = init_data_root(folder if folder is not None else Path.cwd())
    for label in report.created:
        echo(f"created {label}")
    for label in report.kept:
        echo(f"kept {label} (already there)")
    for note in report.notes:
        echo(f"note: {note}", err=True)
    echo(f"{report.root} is a data root: add sources with `incidentlib add URL`, then `incidentlib crawl`")


@app.command()
def validate(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Check every source entry, feed, candidate, draft and case against the record format and vocabularies.

    Prints `path: field: problem` for each fault; exits 1 when there is any. Warns (on stderr,
    exit status unchanged) of drafts whose URL gives another id today: they keep theirs.
    """
    settings = load_settings(root)
    report = validate_records(
        Store.from_settings(settings),
        required_languages=settings.required_languages,
        base_url=settings.public_base_url,
    )
    faults = report.faults
    counts = {"sources": report.sources, "drafts": report.drafts, "cases": report.cases}
    if report.feeds or report.candidates:
        counts = {"sources": report.sources, "feeds": report.feeds, "candidates": report.candidates, **counts}
    if as_json:
        echo(
            json.dumps(
                {**counts, "faults": [vars(f) for f in faults], "warnings": [vars(w) for w in report.warnings]},
                indent=2,
            )
        )
    else:
        print_faults(faults)
        for warning in report.warnings:
            echo(f"warning: {warning}", err=True)
        checked = ", ".join(count(n, name) for name, n in counts.items())
        warned = f", {count(len(report.warnings), 'warnings')}" if report.warnings else ""
        echo(f"checked {checked}: {count(len(faults), 'faults')}{warned}", err=True)
    raise typer.Exit(1 if faults else 0)


@app.command()
def fmt(
    root: RootOption = None,
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing; exit 1 if any record would change.", show_default="off")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Rewrite every draft and case in the canonical layout (a no-op on records already in it)."""
    report = fmt_records(open_store(root), check=check)
    if as_json:
        echo(
            json.dumps(
                {"changed": report.changed, "unchanged": report.unchanged, "faults": [vars(f) for f in report.faults]},
                indent=2,
            )
        )
    else:
        print_faults(report.faults)
        verb = "would reformat" if check else "reformatted"
        for label in report.changed:
            echo(f"{verb} {label}")
        echo(f"{len(report.changed)} {verb}, {report.unchanged} unchanged, {len(report.faults)} faults", err=True)
    raise typer.Exit(1 if report.faults or (check and report.changed) else 0)


@app.command()
def add(
    url: Annotated[str, typer.Argument(help="The source's URL.")],
    org: Annotated[str | None, typer.Option(help="The organisation that wrote the postmortem.")] = None,
    kind: Annotated[
        str | None, typer.Option(help="Source kind (github, blog, status-page, paper, logbook, ...).")
    ] = None,
    title: Annotated[str | None, typer.Option(help="Title, when the page's own is poor.")] = None,
    date: Annotated[str | None, typer.Option(help="Date as YYYY, YYYY-MM or YYYY-MM-DD.")] = None,
    licence: Annotated[
        str | None, typer.Option(help="The licence of the page's text, when known (the site's sources page says it).")
    ] = None,
    to: Annotated[str, typer.Option("--to", help="Registry file in sources/ to append to.")] = "added.yaml",
    root: RootOption = None,
) -> None:
    """Append a source to the registry; a URL already registered (in any spelling) is refused and named."""
    store = open_store(root)
    try:
        # Registered as discovery registers what a feed lists: by its canonical URL (no tracking
        # parameters, no dot segments, no fragment), which is what a draft's id and the case carry.
        canonical = canonical_url(url)
    except ValueError:
        canonical = url  # a URL the model refuses, and says why, below
    try:
        # An operator's words are text from outside like any other: the gate cleans them (pipeline.gate).
        entry, _ = intake(
            SourceEntry,
            {"url": canonical, "org": org, "kind": kind, "title": title, "date": date, "licence": licence},
        )
    except ValidationError as exc:
        raise InvalidRecord(faults_from(exc, "add")) from None
    try:
        path = add_source(store, entry, to)
    except DuplicateSource as exc:
        raise DuplicateSource(url, exc.where) from None  # in the operator's own spelling
    spelled = f" (written {url})" if canonical != url else ""
    echo(f"added {canonical} to {store.label(path)}{spelled}")


@app.command()
def extract(
    url: Annotated[
        str | None,
        typer.Argument(help="The URL to fetch, or with --file the URL the file came from.", show_default=False),
    ] = None,
    url_option: Annotated[
        str | None, typer.Option("--url", help="The same URL, as an option.", show_default=False)
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", help="Read this saved file instead of fetching.", exists=True, dir_okay=False),
    ] = None,
    org: Annotated[str | None, typer.Option(help="The organisation, as a registry hint would give it.")] = None,
    kind: Annotated[str | None, typer.Option(help="Source kind, as a registry hint would give it.")] = None,
    root: RootOption = None,
) -> None:
    """Fetch and extract one URL (or a saved file, as if fetched from URL) and print the draft; write nothing.

    The URL decides the organisation, the kind and how the bytes are read: a GitHub
    `blob/` or `.md` URL is read as Markdown.
    """
    given = url or url_option
    if not given or (url and url_option and url != url_option):
        raise typer.BadParameter("give the URL once: as an argument or as --url")
    settings = read_settings(root)
    draft = extract_one(settings, given, body=file.read_bytes() if file else None, org=org, kind=kind)
    echo(dump_record(draft).decode("utf-8"), nl=False)


# What each status of a link means: the --help of `links`, and docs/archive.md's list (a test keeps them in step).
LINK_STATUS_MEANINGS = {
    LinkStatus.OK: "the page answers",
    LinkStatus.MOVED: "it redirects elsewhere (the new URL is shown)",
    LinkStatus.GONE: "404 or 410: the capture is all that is left",
    LinkStatus.BLOCKED: "401 or 403: often a bot block, not a dead page",
    LinkStatus.ERROR: "it could not be checked this time",
}


@app.command("links")
def links_(
    root: RootOption = None,
    status: Annotated[
        LinkStatus | None,
        typer.Option(
            help="Only links in this status, as the last refresh found them: "
            + "; ".join(f"{s.value}: {meaning}" for s, meaning in LINK_STATUS_MEANINGS.items())
            + ".",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List what the last refresh found for each source link; `--status gone` is what needs a person."""
    states = linking.links(open_store(root), status)
    if as_json:
        echo(json.dumps([s.model_dump(mode="json") for s in states], indent=2))
        return
    for state in states:
        where = f" -> {state.moved_to}" if state.moved_to else ""
        kept = f" (archived: {state.archived})" if state.archived else " (no capture)"
        echo(f"{state.status.value} {state.url}{where}{kept}  checked {state.checked_at:%Y-%m-%d %H:%M}")


@app.command()
def withdraw(
    case_id: Annotated[str, typer.Argument(help="The case's id (IL-0007).")],
    why: Annotated[str, typer.Option("--why", help="Why it is withdrawn: its page tells the reader.")],
    into: Annotated[
        str | None,
        typer.Option(
            "--into", help="For a merge: the case that survives, where its readers are sent.", show_default=False
        ),
    ] = None,
    by: ByOption = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Withdraw a published case instead of deleting it, or merge it into another with --into.

    The file stays in cases/ with the time, the reason, who did it and the survivor; its id and its page keep
    resolving, and say so. Cases merged into it earlier are sent on to the survivor. Refused: an unknown case,
    one withdrawn already, a survivor that is unknown, withdrawn or the case itself.
    """
    done = withdraw_case(open_store(root), case_id, why=why, by=who(by), into=into)
    if as_json:
        echo(json.dumps({**asdict(done), "withdrawn": done.withdrawn.isoformat()}, indent=2))
        return
    merged = f", merged into {done.merged_into}" if done.merged_into else ""
    echo(f"withdrew {done.case_id}{merged}")
    for other in done.repointed:
        echo(f"{other} now points at {done.merged_into} (it was merged into {done.case_id})")
