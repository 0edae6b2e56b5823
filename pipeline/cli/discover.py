"""Commands for finding new postmortems: `discover` (a flow run) and `candidates` (what it proposed).

incidentlib discover [--feed NAME]...
incidentlib candidates [--feed NAME] [--dismissed] [--json]
incidentlib candidates accept ID... | --all-from NAME
incidentlib candidates dismiss ID... [--reason TEXT]
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipeline import candidates as candidating
from pipeline.cli.common import (
    JsonOption,
    RootOption,
    Typer,
    app,
    count,
    echo,
    flow_server,
    load_settings,
    open_store,
    outcome_status,
    print_table,
)
from pipeline.discover import DISCOVERED_FILE, DiscoverRun, select_feeds
from pipeline.errors import RecordError
from pipeline.store import Store

FeedOption = Annotated[
    list[str] | None,
    typer.Option("--feed", help="Only this feed (its name or URL in sources/feeds.yaml); may be repeated."),
]


@app.command()
def discover(
    feed: FeedOption = None,
    no_crawl: Annotated[
        bool, typer.Option("--no-crawl", help="Do not crawl the sources registered or changed.", show_default="off")
    ] = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Read the feeds of sources/feeds.yaml and propose what they list as candidates (a Prefect flow run).

    Every feed is read with a conditional request: an unchanged feed downloads nothing. A feed with
    its own schedule is read only when due, unless named with --feed. Sources a feed with auto_accept
    registered, and registered sources whose entry changed, are crawled next (unless --no-crawl).
    Exit status 3 when some feeds (or sources crawled) failed, 4 when every one tried failed; 1 when
    sources/candidates.yaml cannot be read (nothing is sorted, and the next run reads the entries again).
    """
    settings = load_settings(root)
    if feed:  # a name that is no feed's is one line here, not a failed flow run and its traceback
        select_feeds(Store.from_settings(settings).read_feeds()[0], feed)
    Store.from_settings(settings).state.check("runs", "feeds")  # so is a state file that cannot be read
    with flow_server(settings):
        from pipeline import flows  # Prefect reads its settings once, when imported: after the server is chosen

        run = flows.run(flows.discover, DiscoverRun, root=str(settings.root), feeds=feed, crawl_found=not no_crawl)
    if as_json:
        echo(json.dumps(run.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_discover(run)
    if run.report.stopped:
        typer.echo(f"Error: {run.report.stopped}", err=True)
        raise typer.Exit(1)
    outcomes: list[str] = [feed.outcome for feed in run.report.feeds]
    outcomes += [source.outcome for source in run.crawl.sources] if run.crawl is not None else []
    raise typer.Exit(outcome_status(outcomes, failed={"failed"}, untried={"not_due", "deferred", "skipped"}))


def _print_discover(run: DiscoverRun) -> None:
    report = run.report
    for fault in report.faults:
        echo(f"feeds: {fault}", err=True)
    for result in report.feeds:
        if result.outcome == "failed":
            echo(f"failed {result.url}: {result.reason}: {result.message}")
        for warning in result.warnings:
            echo(f"warning {result.url}: {warning}")
    rows = list(report.counts().items())
    rows += [("requests sent", report.requests), ("bytes downloaded", report.bytes_read)]
    rows += [("drafts written from feed text", sum(1 for d in report.drafts if d.wrote))]
    if run.crawl is not None:
        rows += [(f"crawled: {name}", n) for name, n in run.crawl.counts().items() if n]
    print_table("discover", rows, unit="feeds")
    if report.counts()["candidates"]:
        echo("see them with: incidentlib candidates")


candidates_app = Typer(
    name="candidates",
    help="The pages the feeds proposed (sources/candidates.yaml): list them, accept or dismiss them.",
    invoke_without_command=True,
    add_completion=False,
)
app.add_typer(candidates_app)

IdsArgument = Annotated[list[str] | None, typer.Argument(help="Candidate ids (c-…), as `candidates` lists them.")]


@candidates_app.callback()
def list_candidates(
    ctx: typer.Context,
    feed: Annotated[str | None, typer.Option("--feed", help="Only this feed's (its name or URL).")] = None,
    dismissed: Annotated[
        bool, typer.Option("--dismissed", help="The dismissed ones instead.", show_default="off")
    ] = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """List the candidates waiting for a person, newest first (with a subcommand: accept or dismiss)."""
    if ctx.invoked_subcommand is not None:
        return
    waiting = candidating.candidates(open_store(root), feed, dismissed=dismissed)
    if as_json:
        echo(json.dumps([c.model_dump(mode="json") for c in waiting], indent=2, ensure_ascii=False))
        return
    if not waiting:
        echo("no dismissed candidates" if dismissed else "no candidates waiting")
        return
    for c in waiting:
        # Two lines each, not a table: titles and URLs are long, and a table folds them into columns.
        org = f"{c.org}: " if c.org and c.org != c.title else ""
        echo(f"{c.id}  {c.date or '':10}  {org}{c.title or c.url}")
        why = c.why if not dismissed else f"dismissed: {c.reason or 'no reason given'}"
        text = "; the feed carries its text" if c.feed_text else ""
        echo(f"    {c.url}\n    {why}{text} (feed {c.feed})")
    echo(f"{count(len(waiting), 'candidates')}" + (" dismissed" if dismissed else " waiting"))


@candidates_app.command("accept")
def accept(
    ids: IdsArgument = None,
    all_from: Annotated[
        str | None, typer.Option("--all-from", help="Every open candidate of this feed (its name or URL).")
    ] = None,
    file: Annotated[str, typer.Option("--file", help="The registry file in sources/ to add them to.")] = (
        DISCOVERED_FILE
    ),
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register candidates as sources (with discovered_from); the next crawl drafts them. One whose feed
    carries its text (a status page's postmortem) is drafted at once."""
    if not ids and not all_from:
        raise RecordError("name the candidates to accept (their ids), or --all-from FEED")
    settings = load_settings(root)
    report = candidating.accept(open_store(root), settings, ids or [], all_from=all_from, file_name=file)
    if as_json:
        echo(
            json.dumps(
                {
                    "registered": [e.model_dump(mode="json", exclude_defaults=True) for e in report.registered],
                    "drafts": [d.draft_id for d in report.drafts],
                    "waiting_for_text": report.waiting_for_text,
                },
                indent=2,
            )
        )
        return
    for entry in report.registered:
        echo(f"registered {entry.url} in sources/{file}")
    for draft in report.drafts:
        echo(f"drafted {draft.url} from its feed's text -> drafts/{draft.draft_id}.json")
    for url in report.waiting_for_text:
        echo(f"{url}: its feed's text is not here; the next discover drafts it")


@candidates_app.command("dismiss")
def dismiss(
    ids: IdsArgument = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why, for whoever looks later.")] = None,
    root: RootOption = None,
) -> None:
    """Dismiss candidates for good: no feed proposes them again."""
    if not ids:
        raise RecordError("name the candidates to dismiss (their ids)")
    for candidate in candidating.dismiss(open_store(root), ids, reason=reason):
        echo(f"dismissed {candidate.id} {candidate.url}")
