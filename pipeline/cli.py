"""The `incidentlib` command. Each command is one call into the library, of the same name.

No logic lives here: options are parsed, one library function runs, its result is
printed. Expected failures (an IncidentlibError) print one line and exit 1; anything
else is a bug and shows its traceback.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import SecretStr, ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from pipeline import links as linking
from pipeline import queue as review_queue
from pipeline import review
from pipeline import server as prefect_server
from pipeline.crawl import extract_one
from pipeline.errors import Fault, IncidentlibError, InvalidRecord, ReviewError, SettingsError
from pipeline.fmt import fmt as fmt_records
from pipeline.models import SCHEMA_MODELS, Draft, SourceEntry, json_schema
from pipeline.records import dump_record, faults_from, load_record
from pipeline.settings import Settings
from pipeline.status import status as library_status
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

# How much a run prints: 0 a progress bar and one line per problem, 1 one line per source, 2 debugging.
_verbosity = 0


@app.callback()
def _global_options(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="-v: one line per source as it ends; -vv: debugging too.")
    ] = 0,
) -> None:
    global _verbosity
    _verbosity = verbose
    # Read by Prefect when it is first imported, which the commands that run flows do after this.
    if verbose or "PREFECT_LOGGING_LEVEL" not in os.environ:  # an operator's own level stands without -v
        os.environ["PREFECT_LOGGING_LEVEL"] = ("WARNING", "INFO", "DEBUG")[min(verbose, 2)]
    if verbose:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
        logging.getLogger("pipeline").addHandler(handler)
        logging.getLogger("pipeline").setLevel(logging.INFO if verbose == 1 else logging.DEBUG)


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


def _print_table(title: str, rows: list[tuple[str, int]], unit: str = "sources") -> None:
    table = Table(title=title)
    table.add_column("what")
    table.add_column(unit, justify="right")
    for name, n in rows:
        table.add_row(name, str(n))
    Console().print(table)


def _print_faults(faults: list[Fault]) -> None:
    for fault in faults:
        typer.echo(str(fault))


def _rate(done: int, elapsed: float) -> str:
    if not done or elapsed <= 0:
        return ""
    per_second = done / elapsed
    return f"{per_second:.1f}/s" if per_second >= 1 else f"{per_second * 60:.1f}/min"


@contextmanager
def _flow_progress(show: bool) -> Iterator[None]:
    """A progress bar on stderr for each flow this process runs: done/total, rate, time left."""
    if not show:
        yield
        return
    from pipeline import flows

    started: dict[str, float] = {}
    tasks: dict[str, object] = {}
    with Progress(
        TextColumn("{task.description:<8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>10}"),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    ) as bar:

        def listen(flow_name: str, done: int, total: int) -> None:
            if flow_name not in tasks:
                started[flow_name] = time.monotonic()
                tasks[flow_name] = bar.add_task(flow_name, total=total or None, rate="")
            rate = _rate(done, time.monotonic() - started[flow_name])
            bar.update(tasks[flow_name], completed=done, total=total or None, rate=rate)

        flows.progress_listeners.append(listen)
        try:
            yield
        finally:
            flows.progress_listeners.remove(listen)


def _use_known_server(settings: Settings) -> str | None:
    """The Prefect server this data root's commands use (PREFECT_API_URL, else the one a running
    `serve` started), made the one Prefect talks to; None when none is known.

    Runs then go to it, so that they show there. Set before Prefect is first imported.
    """
    api_url = prefect_server.api_url_for(Store.from_settings(settings))
    if api_url:
        os.environ["PREFECT_API_URL"] = api_url
    return api_url


class SchemaName(StrEnum):
    CASE = "case"
    DRAFT = "draft"
    SOURCE = "source"


@app.command()
def schema(
    name: Annotated[
        SchemaName | None, typer.Argument(help="Which record: case, draft or source; all when left out.")
    ] = None,
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


@app.command()
def crawl(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Fetch every source in the registry, extract it, and write or update its draft (a Prefect flow run).

    Unchanged pages download nothing and write nothing; text a person edited in a draft
    is kept. Each source's outcome is logged as it finishes; a summary ends the run.
    """
    settings = load_settings(root)
    _use_known_server(settings)
    from pipeline.flows import crawl_flow_for  # Prefect is imported only by the commands that run flows

    with _flow_progress(not as_json and _verbosity == 0):
        summary = crawl_flow_for(settings)(root=str(settings.root))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    for fault in summary["registry_faults"]:
        typer.echo(f"registry: {fault}", err=True)
    rows = list(summary["counts"].items())
    rows += [("requests sent", summary["requests"]), ("bodies downloaded", summary["bodies"])]
    rows += [("drafts written", summary["writes"])]
    if summary.get("archive"):
        rows += [(f"sources {name}", n) for name, n in summary["archive"]["counts"].items()]
    _print_table("crawl", rows)
    for source in summary["sources"]:
        if source["outcome"] == "failed":
            typer.echo(f"failed {source['url']}: {source['reason']}: {source['message']}")


@app.command()
def archive(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Capture every source not yet in the Wayback Machine (a Prefect flow run); reuse recent captures.

    Without keys (INCIDENTLIB_WAYBACK_ACCESS_KEY, INCIDENTLIB_WAYBACK_SECRET_KEY) existing
    captures are looked up and the rest wait. Interrupted, it carries on where it stopped.
    """
    settings = load_settings(root)
    _use_known_server(settings)
    from pipeline.flows import archive as archive_flow

    with _flow_progress(not as_json and _verbosity == 0):
        summary = archive_flow(root=str(settings.root))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    if summary["busy"]:
        typer.echo(
            "another archive run of this data root is capturing: nothing done, the sources wait for the next run",
            err=True,
        )
    elif not summary["keys"]:
        typer.echo(
            f"captures stopped ({summary['problem']}): existing captures were looked up, new ones wait", err=True
        )
    rows = list(summary["counts"].items())
    rows += [(f"waiting: {reason}", n) for reason, n in summary["waiting"].items()]
    rows += [(f"failed: {reason}", n) for reason, n in summary["failures"].items()]
    _print_table("archive", rows)


@app.command("stand-in")
def stand_in(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 to listen on.")] = 8765,
    captures_per_minute: Annotated[float, typer.Option(help="Captures a minute it allows.")] = 12,
    cdx_per_minute: Annotated[float, typer.Option(help="CDX queries a minute it allows.")] = 30,
    access_key: Annotated[str, typer.Option(help="The access key it accepts.")] = "stand-in-access",
    secret_key: Annotated[str, typer.Option(help="The secret key it accepts.")] = "stand-in-secret",
) -> None:
    """Run the local Wayback Machine stand-in in the foreground, to try the pipeline by hand (Ctrl-C stops)."""
    from pipeline.standins.wayback import WaybackStandIn

    server = WaybackStandIn(
        access_key=access_key,
        secret_key=secret_key,
        captures_per_minute=captures_per_minute,
        cdx_per_minute=cdx_per_minute,
        port=port,
    )
    typer.echo(f"Wayback stand-in on {server.url}; point the pipeline at it with:")
    typer.echo(f"  export INCIDENTLIB_WAYBACK_URL={server.url}")
    typer.echo("  and INCIDENTLIB_WAYBACK_ACCESS_KEY / INCIDENTLIB_WAYBACK_SECRET_KEY set to the keys given with")
    typer.echo("  --access-key and --secret-key (by default stand-in-access and stand-in-secret)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.server.server_close()


@app.command()
def add(
    url: Annotated[str, typer.Argument(help="The source's URL.")],
    org: Annotated[str | None, typer.Option(help="The organisation that wrote the postmortem.")] = None,
    kind: Annotated[
        str | None, typer.Option(help="Source kind (github, blog, status-page, paper, logbook, ...).")
    ] = None,
    title: Annotated[str | None, typer.Option(help="Title, when the page's own is poor.")] = None,
    date: Annotated[str | None, typer.Option(help="Date as YYYY, YYYY-MM or YYYY-MM-DD.")] = None,
    to: Annotated[str, typer.Option("--to", help="Registry file in sources/ to append to.")] = "added.yaml",
    root: RootOption = None,
) -> None:
    """Append a source to the registry; a URL already registered (in any spelling) is refused and named."""
    store = open_store(root)
    try:
        entry = SourceEntry(url=url, org=org, kind=kind, title=title, date=date)
    except ValidationError as exc:
        raise InvalidRecord(faults_from(exc, "add")) from None
    path = store.add_source(entry, to)
    typer.echo(f"added {url} to {store.label(path)}")


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
    settings = _read_settings(root)
    draft = extract_one(settings, given, body=file.read_bytes() if file else None, org=org, kind=kind)
    typer.echo(dump_record(draft).decode("utf-8"), nl=False)


# ------------------------------------------------------------------ review

ByOption = Annotated[
    str | None,
    typer.Option("--by", help="Who does it [default: git's user.name].", show_default=False),
]
DraftArgument = Annotated[str, typer.Argument(help="The draft's id (its file name in drafts/ without .json).")]


def _git_name() -> str:
    try:
        return subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def who(by: str | None, fallback: str | None = None) -> str:
    """The person acting: --by, else git's user.name, else `fallback`; a review step needs a name."""
    name = (by or "").strip() or _git_name() or (fallback or "")
    if not name:
        raise ReviewError("say who you are with --by NAME (or set git's user.name)")
    return name


def _review_step(root: Path | None, draft_id: str, step: Callable[[Draft, Settings], Draft]) -> Draft:
    settings = load_settings(root)
    store = Store.from_settings(settings)
    return store.update_draft(draft_id, lambda draft: step(draft, settings))


def _said(draft: Draft, what: str) -> None:
    typer.echo(f"{draft.id}: {what}, now {draft.state.value}")


@app.command()
def write(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="A note for the reviewer.")] = None,
    root: RootOption = None,
) -> None:
    """Sign a draft as written (its narrative fields filled) and hand it to review."""
    name = who(by)
    draft = _review_step(root, draft_id, lambda d, s: review.write(d, name, s.required_languages, comment))
    _said(draft, f"written by {name}")


@app.command()
def approve(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="A note kept in the history.")] = None,
    root: RootOption = None,
) -> None:
    """Approve a complete draft; the approver must not be its writer."""
    name = who(by)
    draft = _review_step(root, draft_id, lambda d, s: review.approve(d, name, s.required_languages, comment))
    _said(draft, f"approved by {name}")
    _request_promotion(root)


def _request_promotion(root: Path | None) -> None:
    """After an approval, a promotion run on the served deployments, when a server is known;
    otherwise `incidentlib promote` publishes (said so, nothing fails)."""
    settings = load_settings(root)
    api_url = _use_known_server(settings)
    if not api_url:
        typer.echo("no Prefect server is known: run `incidentlib promote` to publish", err=True)
        return
    from pipeline.flows import request_promotion

    try:
        run = request_promotion(str(settings.root))
    except Exception as exc:  # the approval stands; only the convenience failed
        typer.echo(f"approved, but no promotion run could be asked of {api_url}: {exc}", err=True)
        return
    if run is None:
        typer.echo(
            f"{api_url} serves no promote deployment for this data root: run `incidentlib promote` to publish", err=True
        )
    else:
        typer.echo(f"promotion run {run} requested of {api_url}")


@app.command("request-changes")
def request_changes(
    draft_id: DraftArgument,
    comment: Annotated[str, typer.Option(help="What should change.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Send a draft back to its writer with what should change."""
    name = who(by)
    draft = _review_step(root, draft_id, lambda d, s: review.request_changes(d, name, comment))
    _said(draft, f"changes requested by {name}")


@app.command()
def reject(
    draft_id: DraftArgument,
    reason: Annotated[str, typer.Option(help="Why it is not a case for the library.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Reject a draft with a reason; it is kept, and its source is not drafted again unless reopened."""
    name = who(by)
    draft = _review_step(root, draft_id, lambda d, s: review.reject(d, name, reason))
    _said(draft, f"rejected by {name}")


@app.command()
def reopen(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="Why it is back.")] = None,
    root: RootOption = None,
) -> None:
    """Reopen a rejected draft: back to the start, and its source is crawled again."""
    name = who(by)
    draft = _review_step(root, draft_id, lambda d, s: review.reopen(d, name, comment))
    _said(draft, f"reopened by {name}")


@app.command("set")
def set_(
    draft_id: DraftArgument,
    field: Annotated[str, typer.Argument(help="A field, or a dotted path: summary.ko, impact.scope, components.")],
    value: Annotated[str, typer.Argument(help="The value: JSON (a list, an object, null) or plain text.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Set one field of a draft, for scripts; the draft is validated before it is saved."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    name = who(by, "incidentlib set")
    draft = _review_step(root, draft_id, lambda d, s: review.edited(d, review.set_field(d, field, parsed), name))
    _said(draft, f"{field} set")


@app.command()
def edit(draft_id: DraftArgument, by: ByOption = None, root: RootOption = None) -> None:
    """Open a draft in $EDITOR; the result is validated before it is saved (an invalid edit changes nothing)."""
    store = open_store(root)
    before, version = store.read_draft_versioned(draft_id)
    original = dump_record(before)
    edited_bytes = _edit_in_editor(original, f"{draft_id}.json")
    if edited_bytes == original:
        typer.echo(f"{draft_id}: no change")
        return
    label = f"{store.label(store.path('draft', draft_id))} (as edited)"
    after = load_record(Draft, edited_bytes, label)
    if after.id != before.id:
        raise ReviewError(f"{label}: id: the id is the file name; it cannot be edited")
    name = who(by, "incidentlib edit")
    result = review.edited(before, after, name)
    store.write_draft(result, expected_version=version)
    _said(result, "saved")


def _edit_in_editor(data: bytes, name: str) -> bytes:
    """The bytes after a person edits them in $EDITOR (or $VISUAL, else vi)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        completed = subprocess.run([*shlex.split(editor), str(path)], check=False)
        if completed.returncode != 0:
            raise ReviewError(f"{editor} exited with status {completed.returncode}; nothing saved")
        return path.read_bytes()


@app.command()
def queue(
    root: RootOption = None,
    state: Annotated[
        list[str] | None, typer.Option("--state", help="Only drafts in this state (repeatable).", show_default=False)
    ] = None,
    org: Annotated[str | None, typer.Option(help="Only this organisation (org or org_slug).")] = None,
    component: Annotated[str | None, typer.Option(help="Only drafts tagged with this component.")] = None,
    older_than: Annotated[float | None, typer.Option(help="Only drafts older than this many days.")] = None,
    sort: Annotated[str, typer.Option(help="Sort by age, state, org or id.")] = "age",
    as_json: JsonOption = False,
) -> None:
    """List drafts by state, with what each still lacks for publication."""
    settings = load_settings(root)
    entries = review_queue.queue(
        Store.from_settings(settings),
        settings.required_languages,
        states=state,
        org=org,
        component=component,
        older_than_days=older_than,
        sort=sort,
    )
    if as_json:
        typer.echo(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return
    table = Table(title=f"queue ({len(entries)} drafts)")
    for column in ("id", "state", "org", "age", "title", "lacks"):
        table.add_column(column)
    for e in entries:
        lacks = ", ".join(e.missing[:3]) + (f" (+{len(e.missing) - 3})" if len(e.missing) > 3 else "")
        table.add_row(e.id, e.state, e.org or "", f"{e.age_days:.0f} d", (e.title or "")[:50], lacks or "nothing")
    Console(width=200).print(table)


@app.command()
def show(draft_id: DraftArgument, root: RootOption = None) -> None:
    """Show a draft: its fields, what it lacks, its sources' archive state, and its sections beside their fields."""
    settings = load_settings(root)
    store = Store.from_settings(settings)
    draft = store.read_draft(draft_id)
    console = Console(width=120)
    console.print(
        f"[bold]{draft.id}[/bold]  {draft.state.value}" + (f"  (case {draft.case_id})" if draft.case_id else "")
    )
    for name in ("org", "date", "date_kind", "severity", "root_cause"):
        console.print(f"{name}: {getattr(draft, name)}")
    for name in ("domain", "components", "symptoms", "contributing"):
        console.print(f"{name}: {', '.join(getattr(draft, name)) or '-'}")
    console.print(f"written_by: {draft.review.written_by}  reviewed_by: {draft.review.reviewed_by}")
    missing = review.missing_for_publication(draft, settings.required_languages)
    console.print(f"lacks: {', '.join(missing) if missing else 'nothing'}")
    for name in ("title", *review.REQUIRED_NARRATIVE[1:], *review.OPTIONAL_NARRATIVE):
        text = getattr(draft, name)
        if text:
            for lang, value in text.items():
                console.print(f"\n[bold]{name}.{lang}[/bold]\n{value}")
    console.print("\n[bold]sources[/bold]")
    for source in draft.sources:
        state = source.archive
        console.print(
            f"- {source.url} [{source.kind}] archive: {state.status.value}"
            + (f" ({state.reason})" if state.reason else "")
            + (f" {source.archived}" if source.archived else "")
        )
    if draft.origin.failure:
        console.print(f"fetch failed: {draft.origin.failure.reason}: {draft.origin.failure.message}")
    console.print("\n[bold]sections[/bold] (heading -> field it fills)")
    for section in draft.sections:
        preview = " ".join(section.text.split())[:100]
        console.print(
            f"- {section.heading or '(opening)'} -> {section.field.value if section.field else '-'}: {preview}"
        )
    if draft.history:
        console.print("\n[bold]history[/bold]")
        for entry in draft.history:
            note = f": {entry.comment}" if entry.comment else ""
            was = entry.from_state.value if entry.from_state else "-"
            console.print(f"- {entry.at:%Y-%m-%d %H:%M} {entry.by}: {was} -> {entry.to_state.value}{note}")


@app.command()
def promote(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Publish every approved, complete draft as a case (a Prefect flow run); say what the others lack."""
    settings = load_settings(root)
    _use_known_server(settings)
    from pipeline.flows import promote as promote_flow

    summary = promote_flow(root=str(settings.root))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    for entry in summary["drafts"]:
        if entry["outcome"] == "incomplete":
            typer.echo(f"{entry['draft_id']}: not published, missing {', '.join(entry['missing'])}")
        elif entry["outcome"] in ("published", "updated"):
            typer.echo(f"{entry['draft_id']}: {entry['outcome']} as cases/{entry['case_id']}.json")
    _print_table("promote", list(summary["counts"].items()))


@app.command()
def refresh(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Check every source of every draft and case: alive, moved or gone; re-archive what changed (a flow run)."""
    settings = load_settings(root)
    _use_known_server(settings)
    from pipeline.flows import refresh as refresh_flow

    with _flow_progress(not as_json and _verbosity == 0):
        summary = refresh_flow(root=str(settings.root))
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    for source in summary["sources"]:
        if source["outcome"] in ("gone", "moved", "blocked", "failed"):
            extra = source["moved_to"] or source["reason"] or ""
            typer.echo(f"{source['outcome']} {source['url']} {extra}".rstrip())
    _print_table("refresh", list(summary["counts"].items()))


@app.command("links")
def links_(
    root: RootOption = None,
    status: Annotated[
        str | None, typer.Option(help="Only links in this status: ok, moved, gone, blocked or error.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List what the last refresh found for each source link; `--status gone` is what needs a person."""
    states = linking.links(open_store(root), status)
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in states], indent=2))
        return
    for state in states:
        where = f" -> {state.moved_to}" if state.moved_to else ""
        kept = f" (archived: {state.archived})" if state.archived else " (no capture)"
        typer.echo(f"{state.status.value} {state.url}{where}{kept}  checked {state.checked_at:%Y-%m-%d %H:%M}")


@app.command()
def demo(
    keep: Annotated[
        Path | None,
        typer.Option(help="Leave the demo's data root here to look at (else a temporary folder).", file_okay=False),
    ] = None,
) -> None:
    """Run the whole pipeline offline: local sites, a local Wayback stand-in, crawl to published cases."""
    from pipeline.demo import run_demo

    report = run_demo(keep, say=typer.echo)
    where = f"the library it made is in {report.root}" if keep else "the library it made was temporary (use --keep DIR)"
    typer.echo(f"done: {len(report.cases)} cases published; {where}; nothing is left running")
    if report.faults:
        raise typer.Exit(1)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@app.command()
def serve(root: RootOption = None) -> None:
    """Run the flows on their schedules until stopped (Ctrl-C): crawl, archive, refresh, and promote.

    Uses the Prefect server PREFECT_API_URL names; with none, starts one here (SQLite under
    the data root's .incidentlib/prefect/), prints its UI address and stops it on exit.
    Schedules stay active across a restart.
    """
    settings = load_settings(root)
    store = Store.from_settings(settings)
    # A service manager stops with SIGTERM: taken as Ctrl-C from here on, so that the server
    # this starts is stopped too, even while it is still starting.
    signal.signal(signal.SIGTERM, _interrupt)
    with prefect_server.running_server(store, settings) as server:
        os.environ["PREFECT_API_URL"] = server.api_url  # before Prefect is imported below
        # A service's log: every source of every scheduled run, one line each, here and in the UI.
        os.environ["PREFECT_LOGGING_LEVEL"] = "DEBUG" if _verbosity >= 2 else "INFO"
        from pipeline import flows

        typer.echo(f"Prefect UI: {server.ui_url}  (API {server.api_url})")
        for name in flows.DEPLOYMENT_FLOWS:
            typer.echo(f"  {name}/{flows.DEPLOYMENT}: {flows.schedule_of(settings, name) or 'on demand'}")
        typer.echo("serving; Ctrl-C stops" + ("" if server.pid is None else " (and stops the server)"))
        try:
            flows.serve(settings)
        except KeyboardInterrupt:  # one that arrived before or after Prefect's own loop caught it
            pass
    typer.echo("stopped")


@app.command()
def deploy(
    pool: Annotated[str, typer.Option("--pool", help="The Prefect work pool whose workers run the flows.")],
    root: Annotated[
        Path | None,
        typer.Option(
            "--root", help="Data root every run uses; left out, each worker's own INCIDENTLIB_ROOT.", file_okay=False
        ),
    ] = None,
) -> None:
    """Create the same deployments, with their schedules, on a work pool of the server PREFECT_API_URL names.

    Workers (`prefect worker start --pool NAME`) on any machine with incidentlib installed
    then run them. With INCIDENTLIB_CAPTURE_LIMIT set, that global concurrency limit is
    created too, for the workers' captures to share one rate.
    """
    settings = _read_settings(root)
    api_url = os.environ.get("PREFECT_API_URL")
    if not api_url:
        raise SettingsError("PREFECT_API_URL: set it to the Prefect server the workers use (deploy needs a server)")
    if not prefect_server.healthy(api_url, timeout=10.0):
        raise SettingsError(f"PREFECT_API_URL={api_url}: no Prefect server answers there")
    from pipeline import flows

    flows.deploy(settings, pool, str(settings.root) if root is not None else None)
    for name in flows.DEPLOYMENT_FLOWS:
        typer.echo(f"{name}/{flows.DEPLOYMENT} on pool {pool}: {flows.schedule_of(settings, name) or 'on demand'}")
    if settings.capture_limit:
        typer.echo(
            f"global concurrency limit {settings.capture_limit}: {settings.captures_per_minute:g} captures a minute"
        )


@app.command()
def status(root: RootOption = None, as_json: JsonOption = False) -> None:
    """What is scheduled, how each flow last ran, the review queue, captures waiting, links gone."""
    settings = load_settings(root)
    store = Store.from_settings(settings)
    api_url = _use_known_server(settings)
    served = None
    if api_url:
        from pipeline.flows import served_deployments

        try:
            served = served_deployments(str(settings.root))
        except Exception as exc:  # the rest of the status stands without the server
            typer.echo(
                f"{api_url}: the Prefect server did not answer ({type(exc).__name__}); schedules unknown", err=True
            )
    report = library_status(store, settings, api_url, served)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    console = Console()
    console.print(f"data root {settings.root}")
    console.print(f"Prefect server: {api_url or 'none known (nothing runs on a schedule; see incidentlib serve)'}")
    table = Table(title="flows")
    for column in ("flow", "schedule", "scheduled", "next run", "last run", "ended", "counts"):
        table.add_column(column)
    for flow in report.flows:
        last = flow.last_run or {}
        scheduled = (
            "-"
            if flow.served is None
            else ("no" if not flow.served else "yes" if flow.ready else "yes, nothing runs it")
        )
        counts = ", ".join(f"{n} {k}" for k, n in (last.get("counts") or {}).items())
        ended = last.get("state", "never run") + (f": {last['error']}" if last.get("error") else "")
        table.add_row(
            flow.flow,
            flow.schedule or "on demand",
            scheduled,
            (flow.next_run or "-")[:19],
            (last.get("started_at") or "-")[:19],
            ended,
            counts,
        )
    console.print(table)
    _print_table(
        "library",
        [
            *((f"drafts {state}", n) for state, n in report.drafts.items()),
            ("cases published", report.cases),
            *((f"waiting for capture: {reason}", n) for reason, n in report.waiting_capture.items()),
            *((f"capture failed: {reason}", n) for reason, n in report.failed_capture.items()),
            *((f"links {state}", n) for state, n in report.links.items()),
        ],
        unit="count",
    )
    for url in report.gone:
        typer.echo(f"gone {url}")
    for label in report.unreadable:
        typer.echo(f"unreadable {label}", err=True)


@app.command()
def config(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Print the effective settings (environment, incidentlib.env, defaults), secrets masked."""
    settings = _read_settings(root)
    values = {}
    for name, value in settings:
        if isinstance(value, SecretStr):
            value = "********" if value.get_secret_value() else None
        values[name] = str(value) if isinstance(value, Path) else value
    values["prefect_api_url"] = prefect_server.api_url_for(Store.from_settings(settings))
    if as_json:
        typer.echo(json.dumps(values, indent=2))
        return
    # NAME=value lines, as the environment and incidentlib.env spell them, each with its origin.
    fields = type(settings).model_fields
    for name, value in values.items():
        env = f"INCIDENTLIB_{name.upper()}" if name in fields else "PREFECT_API_URL"
        if name == "root" and root is not None:
            origin = "--root"
        elif env in os.environ:
            origin = "environment"
        elif name in settings.model_fields_set:
            origin = "incidentlib.env"
        elif name in fields:
            origin = "default"
        else:
            origin = "a running `incidentlib serve`" if value else "not set"
        shown = "" if value is None else json.dumps(value) if isinstance(value, list) else str(value)
        typer.echo(f"{env}={shown}  # {origin}")


def main() -> None:
    try:
        app()
    except IncidentlibError as exc:
        typer.echo(f"Error: {exc}", err=True)
        sys.exit(1)
