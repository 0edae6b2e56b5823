"""Commands for writers and reviewers: the queue, a draft, its edits and its way through review.

Each change is one call to pipeline.changes (or pipeline.merge), the same the review page makes: the
command parses its arguments, makes the call, and says what was done.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import threading
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from pipeline import changes, gate, interrupt, review
from pipeline import merge as merging
from pipeline import queue as review_queue
from pipeline.changes import Act
from pipeline.cli.common import (
    ByOption,
    DraftArgument,
    JsonOption,
    RootOption,
    app,
    cell,
    count,
    echo,
    load_settings,
    open_store,
    use_known_server,
)
from pipeline.errors import ConflictError, InvalidRecord, ReviewError, SettingsError
from pipeline.models import Draft
from pipeline.records import dump_record
from pipeline.review import ReviewAction
from pipeline.settings import Settings
from pipeline.store import Store


def _git_name() -> str:
    try:
        return subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def who(by: str | None) -> str:
    """The person acting: --by, else git's user.name. Every move needs a person's name, an edit
    too: the four-eyes rule checks the approver against everyone who wrote or edited the draft."""
    name = (by or "").strip() or _git_name()
    if not name:
        raise ReviewError("say who you are with --by NAME (or set git's user.name)")
    return name


def _say_done(draft: Draft, what: str) -> None:
    echo(f"{draft.id}: {what}, now {draft.state.value}")


def _move(action: ReviewAction, draft_id: str, act: Act, root: Path | None) -> Settings:
    """The review move `action` (pipeline.changes.move), said done ("written by ann, now written");
    the settings read, for what follows it."""
    settings = load_settings(root)
    draft = changes.move(Store.from_settings(settings), draft_id, action, act, settings.required_languages)
    _say_done(draft, f"{_DONE[action]} by {act.by}")
    return settings


_DONE = {
    ReviewAction.WRITE: "written",
    ReviewAction.APPROVE: "approved",
    ReviewAction.REQUEST_CHANGES: "changes requested",
    ReviewAction.REJECT: "rejected",
    ReviewAction.REOPEN: "reopened",
}


@app.command()
def write(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="A note for the reviewer.")] = None,
    root: RootOption = None,
) -> None:
    """Sign a draft as written (its narrative fields filled) and hand it to review."""
    _move(ReviewAction.WRITE, draft_id, Act(who(by), comment), root)


@app.command()
def approve(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="A note kept in the history.")] = None,
    root: RootOption = None,
) -> None:
    """Approve a complete draft; the approver must not be its writer."""
    settings = _move(ReviewAction.APPROVE, draft_id, Act(who(by), comment), root)
    _request_promotion(settings)


def _request_promotion(settings: Settings) -> None:
    """After an approval, a promotion run on the served deployments, when a server is known;
    otherwise `incidentlib promote` publishes (said so, nothing fails)."""
    api_url = use_known_server(settings)
    if not api_url:
        echo("no Prefect server is known: run `incidentlib promote` to publish", err=True)
        return
    from pipeline.deployments import request_promotion

    try:
        run = request_promotion(str(settings.root))
    except Exception as exc:  # the approval stands; only the convenience failed
        echo(f"approved, but no promotion run could be asked of {api_url}: {exc}", err=True)
        return
    if run is None:
        echo(
            f"{api_url} serves no promote deployment for this data root: run `incidentlib promote` to publish", err=True
        )
    else:
        echo(f"promotion run {run} requested of {api_url}")


@app.command("request-changes")
def request_changes(
    draft_id: DraftArgument,
    comment: Annotated[str, typer.Option(help="What should change.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Send a draft back to its writer with what should change."""
    _move(ReviewAction.REQUEST_CHANGES, draft_id, Act(who(by), comment), root)


@app.command()
def reject(
    draft_id: DraftArgument,
    reason: Annotated[str, typer.Option(help="Why it is not a case for the library.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Reject a draft with a reason; it is kept, and its source is not drafted again unless reopened."""
    _move(ReviewAction.REJECT, draft_id, Act(who(by), reason), root)


@app.command()
def reopen(
    draft_id: DraftArgument,
    by: ByOption = None,
    comment: Annotated[str | None, typer.Option(help="Why it is back.")] = None,
    root: RootOption = None,
) -> None:
    """Reopen a rejected draft: back to the start, and its source is crawled again."""
    _move(ReviewAction.REOPEN, draft_id, Act(who(by), comment), root)


@app.command("set")
def set_(
    draft_id: DraftArgument,
    field: Annotated[
        str,
        typer.Argument(
            help="A field, or a dotted path: summary.en (a text in one language), impact.scope, components."
        ),
    ],
    value: Annotated[str, typer.Argument(help="The value: JSON (a list, an object, null) or plain text.")],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Set one field of a draft, for scripts; the draft is validated before it is saved."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    name = who(by)
    draft = changes.set_value(open_store(root), draft_id, field, parsed, Act(name))
    _say_done(draft, f"{field} set")


@app.command("take-suggestion")
def take_suggestion(
    draft_id: DraftArgument,
    number: Annotated[
        int, typer.Argument(help="The suggestion's number, as `incidentlib show` prints it (suggestion 0, 1, ...).")
    ],
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Take a suggestion (a passage offered, not written: below the confidence threshold, or a trigger's
    other passage) into its field as your edit: a text gets it as a paragraph, a list of steps as an
    item; the passage stays marked as the field's evidence."""
    taken = changes.take_suggestion(open_store(root), draft_id, number, Act(who(by)))
    _say_done(taken.draft, f"took suggestion {number} into {taken.path}: \u201c{taken.quote[:80]}\u201d")


@app.command("dismiss-suggestion")
def dismiss_suggestion(
    draft_id: DraftArgument,
    number: Annotated[
        int, typer.Argument(help="The suggestion's number, as `incidentlib show` prints it (suggestion 0, 1, ...).")
    ],
    comment: Annotated[str | None, typer.Option("--comment", "-m", help="Why the passage is wrong.")] = None,
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Dismiss a suggestion: the passage is wrong for its field. It leaves the draft's suggestions, a
    re-crawl does not offer it again, and `incidentlib learn` counts it as wrong for that field."""
    draft = changes.dismiss_suggestion(open_store(root), draft_id, number, Act(who(by), comment))
    _say_done(draft, f"dismissed suggestion {number}")


@app.command()
def edit(draft_id: DraftArgument, by: ByOption = None, root: RootOption = None) -> None:
    """Open a draft in $VISUAL or $EDITOR (else vi); the result is checked before it is saved.

    A refused edit (not valid, or against the review's rules) is opened again with the
    reason on top, in lines starting with # (dropped when read), until it is fixed. Saving
    the same text again, or quitting the editor with an error (vi: :cq), gives up: nothing
    is saved to the draft, and your text is kept in a file under .incidentlib/edits/, named.
    """
    store = open_store(root)
    name = who(by)
    before, version = store.read_draft_versioned(draft_id)
    original = dump_record(before)
    label = f"{store.label(store.path('draft', draft_id))} (as edited)"
    folder = store.state.folder("edits")
    handle, file_name = tempfile.mkstemp(dir=folder, prefix=f"{draft_id}.", suffix=".json")
    os.close(handle)
    path = Path(file_name)
    saved = False
    try:
        text, notes, refused, reason = original, b"", None, ""
        while True:
            path.write_bytes(notes + text)
            status = _run_editor(path)
            text = review.without_notes(path.read_bytes())
            path.write_bytes(text)  # what is kept if this attempt goes no further: the person's text alone
            if text == original:
                echo(f"{draft_id}: no change")
                return
            if not text.strip():
                raise ReviewError(f"{label}: the file was emptied; nothing saved")
            if status != 0 or text == refused:  # given up: the last reason, and where the text is
                quit_ = f"the editor exited with status {status}" if status else ""
                why = "; ".join(part for part in (reason if text == refused else "", quit_) if part)
                raise ReviewError(f"{why}; nothing saved, your text is kept in {path}")
            try:
                result = changes.edit(store, draft_id, review.read_edit(before, text, label), Act(name, seen=version))
            except (InvalidRecord, ReviewError) as exc:
                refused, reason = text, str(exc)
                notes = _refusal_notes(exc, path)
                continue
            except ConflictError as exc:
                raise ReviewError(f"{exc}; nothing saved, your text is kept in {path}") from None
            saved = True
            _say_done(result, "saved")
            return
    finally:
        # The working file goes only when it holds nothing of the person's: saved, or as it began.
        if saved or not path.exists() or path.read_bytes() in (original, b""):
            path.unlink(missing_ok=True)


def _refusal_notes(exc: InvalidRecord | ReviewError, path: Path) -> bytes:
    problems = [str(f) for f in exc.faults] if isinstance(exc, InvalidRecord) else [str(exc)]
    lines = [
        *(f"# incidentlib: not saved: {problem}" for problem in problems),
        "# Fix it and save to try again; lines starting with # are ignored. To give up, save it unchanged",
        f"# or quit the editor with an error (vi: :cq): your text is then kept in {path}",
    ]
    return ("\n".join(" ".join(line.split()) for line in lines) + "\n").encode("utf-8")


def _run_editor(path: Path) -> int:
    """Let a person edit `path` in $VISUAL or $EDITOR (else vi); the editor's exit status.

    While the editor runs, this process ignores Ctrl-C and Ctrl-\\, as git does: they reach the
    whole foreground group, and are the editor's to take (vim users press Ctrl-C routinely),
    not a reason to kill it and lose the buffer. SIGTERM still stops both."""
    variable = "VISUAL" if os.environ.get("VISUAL") else "EDITOR"
    editor = os.environ.get(variable) or "vi"
    keyboard = (signal.SIGINT, signal.SIGQUIT) if threading.current_thread() is threading.main_thread() else ()
    previous: dict[signal.Signals, Any] = {}
    process: subprocess.Popen[bytes] | None = None
    try:
        # A SIGTERM while the editor starts is held until `process` is known, so the editor goes
        # with us: raised inside Popen, after the fork, it left the editor running and holding
        # our pipes.
        with interrupt.cooperating():
            try:
                process = subprocess.Popen([*shlex.split(editor), str(path)])
            except (OSError, ValueError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise SettingsError(
                    f"{variable}={editor}: cannot run it ({why}); set {variable} to your editor", name=variable
                ) from None
            # Ignored once it has started, so that the editor does not inherit the ignoring.
            for sig in keyboard:
                previous[sig] = signal.signal(sig, signal.SIG_IGN)
        interrupt.check()
        return process.wait()
    except BaseException:  # a SIGTERM: the editor goes too, as subprocess.run would have it
        if process is not None:
            process.kill()
            process.wait()
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@app.command()
def queue(
    root: RootOption = None,
    state: Annotated[
        list[str] | None,
        typer.Option(
            "--state", help="Only drafts in this state (repeatable); unreadable: broken files.", show_default=False
        ),
    ] = None,
    org: Annotated[str | None, typer.Option(help="Only this organisation (org or org_slug).")] = None,
    component: Annotated[str | None, typer.Option(help="Only drafts tagged with this component.")] = None,
    older_than: Annotated[float | None, typer.Option(help="Only drafts older than this many days.")] = None,
    writer: Annotated[str | None, typer.Option(help="Only drafts written by this person.")] = None,
    search: Annotated[
        str | None, typer.Option(help="Only drafts whose title, id or text hold all these words.")
    ] = None,
    sort: Annotated[str, typer.Option(help="Sort by age, state, org or id.")] = "age",
    as_json: JsonOption = False,
) -> None:
    """List drafts by state, with what each still lacks for publication; a broken draft file as unreadable."""
    settings = load_settings(root)
    filters = review_queue.QueueFilter(
        states=tuple(state or ()),
        org=org,
        component=component,
        older_than_days=older_than,
        writer=writer,
        search=search,
        sort=sort,
    )
    entries = review_queue.queue(Store.from_settings(settings), settings.required_languages, filters)
    if as_json:
        echo(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        echo(_empty_queue(Store.from_settings(settings)))
        return
    console = Console()
    console.print(_queue_table(entries, console.width), crop=False)  # a fault line is never cut


# The queue's table: its columns, those shown whole, the room its borders and padding take (a border
# each side of each column and one space of padding on each side), and the least room the org, title and
# lacks together need to say anything (below it, each draft is printed on lines of its own).
_QUEUE_COLUMNS = ("id", "state", "org", "age", "title", "lacks")
_QUEUE_WHOLE = ("id", "state", "age")
_QUEUE_CHROME = 1 + 3 * len(_QUEUE_COLUMNS)
_QUEUE_LEAST = 30


def _queue_table(entries: list[review_queue.QueueEntry], width: int) -> Table | Group:
    """The queue fitted to `width` (the terminal's: COLUMNS, else its own, else 80): one line a draft,
    the id, state and age whole, the org, title and lacks cut with an ellipsis where the width runs out
    (the org to a sixth of what is left, the lacks to two fifths of the rest, the title the remainder); an
    unreadable draft's problem, when cut, is said whole under the table (it names the file and field).
    When the ids leave too little room (a draft id may take 77 characters), each draft gets its own
    lines instead: the id whole, then its state, age, org and title, then what it lacks."""
    rows = [_queue_cells(e) for e in entries]
    natural = {name: max(len(name), *(len(row[i]) for row in rows)) for i, name in enumerate(_QUEUE_COLUMNS)}
    room = width - _QUEUE_CHROME - sum(natural[name] for name in _QUEUE_WHOLE)
    if room < _QUEUE_LEAST:
        return _queue_lines(rows, width)
    fitted = dict(natural)
    fitted["org"] = min(natural["org"], room // 6)
    fitted["lacks"] = min(natural["lacks"], (room - fitted["org"]) * 2 // 5)
    fitted["title"] = min(natural["title"], room - fitted["org"] - fitted["lacks"])
    fitted["lacks"] = min(natural["lacks"], room - fitted["org"] - fitted["title"])  # what the title left over
    table = Table(title=f"queue ({len(entries)} drafts)")
    for name in _QUEUE_COLUMNS:
        table.add_column(
            name, width=fitted[name], no_wrap=True, overflow="ellipsis", justify="right" if name == "age" else "left"
        )
    for row in rows:
        table.add_row(*(cell(text) for text in row))  # page and person text: escaped, never read as markup
    # An unreadable draft's problem names its file and field: said whole under the table, never cut.
    problems = [cell(f"{e.id}: {e.problem}") for e in entries if e.problem and len(e.problem) > fitted["lacks"]]
    for problem in problems:
        problem.no_wrap, problem.overflow = True, "ignore"  # the one line of a fault, as `validate` prints it
    return Group(table, *problems) if problems else table


def _queue_cells(e: review_queue.QueueEntry) -> tuple[str, ...]:
    """A draft's cells, in _QUEUE_COLUMNS' order."""
    lacks = ", ".join(e.missing[:3]) + (f" (+{len(e.missing) - 3})" if len(e.missing) > 3 else "")
    title = (
        (f"[{e.incidents} incidents] " if e.incidents else "")
        + (f"[{count(e.duplicates, 'possible duplicates')}] " if e.duplicates else "")
        + (e.title or "")
    )
    return (e.id, e.state, e.org or "", f"{e.age_days:.0f} d", title, e.problem or lacks or "nothing")


def _queue_lines(rows: list[tuple[str, ...]], width: int) -> Group:
    """The queue on a narrow terminal: each draft's id whole on a line of its own (folded, never cut, on
    a terminal narrower than it), then its state, age, org and title cut to the width with an ellipsis,
    then what it lacks, on one line however long (it may name a broken file's field)."""
    lines: list[Text] = [Text(f"queue ({len(rows)} drafts)", style="italic")]
    for draft_id, state, org, age, title, lacks in rows:
        lines.append(Text(gate.for_terminal(draft_id), style="bold", overflow="fold"))
        said = cell("  " + " · ".join(part for part in (state, age, org, title) if part))
        said.truncate(width, overflow="ellipsis")
        lacked = cell(f"  lacks: {lacks}")
        lacked.no_wrap, lacked.overflow = True, "ignore"  # one line, never cut: it may name a broken file's field
        lines += [said, lacked]
    return Group(*lines)


def _empty_queue(store: Store) -> str:
    """What an empty queue says: that no draft matches the filters, or that there is none yet and how
    drafts come."""
    drafts = len(store.ids("draft"))
    if drafts:
        return f"no draft matches these filters (of {count(drafts, 'drafts')} in drafts/)"
    return "the queue is empty: no draft yet; add a source with `incidentlib add URL`, then `incidentlib crawl`"


@app.command()
def show(
    record_id: Annotated[
        str,
        typer.Argument(help="A draft's id (its file name in drafts/ without .json), or a published case's: IL-0001."),
    ],
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="Print section texts and the extracted text whole, not a preview.", show_default="off"
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Show every field of a draft or a published case: for a draft also what it lacks, each drafted field's
    evidence (the quote and a link that opens the archived copy at it), its sources' archive state, where
    its text came from, its sections beside the fields they fill, and its history."""
    settings = load_settings(root)
    blocks = review_queue.show(Store.from_settings(settings), record_id, settings.required_languages, full=full)
    for index, block in enumerate(blocks):
        if index:
            echo("")
        echo(block.title, bold=True)
        for line in block.lines:  # plain text: a page's [brackets] are printed as they are
            echo(line)


class Relation(StrEnum):
    RELATED = "related"
    RECURRENCE = "recurrence"


class Suggested(StrEnum):
    DUPLICATE = "duplicate"
    RELATED = "related"
    RECURRENCE = "recurrence"


RecordArgument = Annotated[str, typer.Argument(help="A draft's id, or a published case's (IL-0007: its draft).")]
OtherArgument = Annotated[str, typer.Argument(help="The other draft's or case's id, as the suggestion names it.")]


@app.command()
def merge(
    draft_id: Annotated[
        str, typer.Argument(help="The draft merged away: its id, or a published case's (IL-0007: its draft).")
    ],
    into: Annotated[
        str, typer.Option("--into", help="The draft or case that survives and takes its sources.", show_default=False)
    ],
    comment: Annotated[str | None, typer.Option(help="Why, kept in both histories.")] = None,
    by: ByOption = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Merge a draft into the draft or case that tells the same incident: its sources move there, each with
    its capture, and it is marked merged, so the crawl never drafts them again.

    Four eyes: whoever wrote or edited the merged draft cannot merge it. A case's sources change when its
    draft, sent back to review, is approved again and promoted. A merged draft that was published has its
    case withdrawn into the survivor's, where its id keeps sending readers.
    """
    done = merging.merge(open_store(root), draft_id, into, Act(who(by), comment))
    if as_json:
        said = {
            "draft": done.draft.id,
            "into": into,
            "survivor": done.survivor.id,
            "survivor_state": done.survivor.state.value,
            "sources": done.sources,
            "withdrawn": done.withdrawn,
        }
        echo(json.dumps(said, indent=2))
        return
    echo(f"{done.draft.id}: merged into {into}, now {done.draft.state.value}")
    moved = count(len(done.sources), "sources") + (
        " with its capture" if len(done.sources) == 1 else " with their captures"
    )
    echo(f"{done.survivor.id}: took {moved}, now {done.survivor.state.value}")
    if done.withdrawn:
        echo(f"withdrew {done.withdrawn}, merged into {done.survivor.case_id}")
    if done.sources and done.survivor.case_id:
        echo(f"{done.survivor.case_id} cites them once {done.survivor.id} is approved again and promoted")


@app.command()
def relate(
    record_id: RecordArgument,
    other: Annotated[str, typer.Argument(help="The case it is related to, or a recurrence of (IL-0003).")],
    kind: Annotated[
        Relation, typer.Option("--as", help="related: add it to related; recurrence: make it recurrence_of.")
    ],
    comment: Annotated[str | None, typer.Option(help="A note kept in the history.")] = None,
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Accept a suggestion: add a case to the draft's related cases, or make it the case the draft is a
    recurrence of. An edit like any other: in the history, and a published draft goes back to review."""
    name = who(by)
    draft = merging.relate(open_store(root), record_id, other, kind.value, Act(name, comment))
    now = f"related {', '.join(draft.related)}" if kind == Relation.RELATED else f"recurrence_of {draft.recurrence_of}"
    _say_done(draft, f"{now} (by {name})")


@app.command()
def dismiss(
    record_id: RecordArgument,
    other: OtherArgument,
    kind: Annotated[
        Suggested, typer.Option("--as", help="What it was suggested as: duplicate, related or recurrence.")
    ],
    comment: Annotated[str | None, typer.Option(help="Why, kept with the dismissal.")] = None,
    by: ByOption = None,
    root: RootOption = None,
) -> None:
    """Dismiss a suggestion for good: the draft keeps the dismissal (who, when, why), and the same pair is
    never suggested again. A note in the history, not an edit: it makes nobody a writer of the draft."""
    draft = merging.dismiss(open_store(root), record_id, other, kind.value, Act(who(by), comment))
    kept = next(d for d in draft.dismissed if (d.kind, d.id) == (kind.value, other))
    _say_done(draft, f"{kind.value} {other} dismissed by {kept.by} at {kept.at:%Y-%m-%d %H:%M}")


@app.command()
def similar(
    record_id: Annotated[str, typer.Argument(help="A draft's id, or a published case's (IL-0007).")],
    limit: Annotated[int, typer.Option(min=1, help="At most this many of each kind.")] = 5,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """List a draft's or case's suggestions: its possible duplicates, related cases and recurrences, each
    with its score and why. Suggestions only, never written: `relate` accepts one, `dismiss` dismisses
    it for good, `merge` merges a duplicate. A merged record's are its survivor's."""
    from pipeline.duplicates import similar_to  # the index's libraries, loaded when asked for

    found = similar_to(open_store(root), record_id, limit=limit)
    kinds = {"duplicates": "duplicate", "related": "related", "recurrences": "recurrence"}
    if as_json:
        said: dict[str, Any] = {"asked": found.asked, "id": found.id}
        said |= {name: [asdict(m) for m in getattr(found.suggestions, name)] for name in kinds}
        echo(json.dumps(said, indent=2, ensure_ascii=False))
        return
    if found.id != found.asked:
        echo(f"{found.asked} was merged into {found.id}: the suggestions of {found.id}")
    for name, kind in kinds.items():
        matches = getattr(found.suggestions, name)
        echo(f"{name.replace('_', ' ')} (suggested)", bold=True)
        if not matches:
            echo("  none")
        for match in matches:
            echo(f"  {match.id}  {match.score:.2f}  {'; '.join(match.reasons)}")
            if match.passage:
                echo(f"      \u201c{match.passage}\u201d")
        if matches:
            accept = "merge" if kind == "duplicate" else "relate"
            how = f"{accept} {found.id} --into ID" if kind == "duplicate" else f"relate {found.id} ID --as {kind}"
            echo(f"  accept: incidentlib {how}; dismiss: incidentlib dismiss {found.id} ID --as {kind}")
