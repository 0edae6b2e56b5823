"""Commands that run the pipeline's flows by hand: crawl, archive, refresh, promote; the demo; the site.

Each runs one Prefect flow (pipeline.flows) and prints the typed report it returns:
a summary table, or the whole report with --json; its exit status follows the outcomes
(common.outcome_status, docs/commands.md#exit-status). Prefect is imported only here, by the
commands that run flows, after the settings have chosen its server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

import typer

from pipeline import interrupt
from pipeline.archive import ArchiveReport
from pipeline.cli.common import (
    JsonOption,
    RootOption,
    app,
    cell,
    echo,
    flow_progress,
    flow_server,
    load_settings,
    outcome_status,
    print_table,
    verbosity,
)
from pipeline.crawl import CrawlRun
from pipeline.links import RefreshReport
from pipeline.publish import PromoteReport
from pipeline.settings import Settings
from pipeline.store import Store


class _Report(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=_Report)


def _run_flow(
    name: Literal["crawl", "archive", "promote", "refresh"],
    settings: Settings,
    as_json: bool,
    kind: type[R],
    *,
    progress: bool = True,
) -> R:
    """Run one flow on the data root, with a progress bar unless quiet, and give its report (of
    type `kind`); with --json, printed. A run a signal stopped raises Interrupted; a run that
    failed raises its error."""
    # A state file the flow reads that cannot be read: one line here, not a failed run. Every flow records
    # its run; promote builds the site, which shows the links' states, and refresh updates them.
    Store.from_settings(settings).state.check("runs", *(("links",) if name in ("promote", "refresh") else ()))
    with flow_server(settings), flow_progress(progress and not as_json and verbosity() == 0):
        from pipeline import flows  # Prefect reads its settings once, when imported: after the server is chosen

        flow_ = flows.crawl_flow_for(settings) if name == "crawl" else getattr(flows, name)
        report = flows.run(flow_, kind, root=str(settings.root))
    if as_json:
        echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    return report


@app.command()
def crawl(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Fetch every source in the registry, extract it, and write or update its draft (a Prefect flow run).

    Unchanged pages download nothing and write nothing; text a person edited in a draft
    is kept. Each source's outcome is logged as it finishes; a summary ends the run: `new`
    is a source's first text, `drafts written` the drafts given text from their page.
    Exit status 3 when some sources failed, 4 when every source tried failed.
    """
    run = _run_flow("crawl", load_settings(root), as_json, CrawlRun)
    if not as_json:
        _print_crawl(run)
    outcomes = [source.outcome for source in run.report.sources]
    raise typer.Exit(outcome_status(outcomes, failed={"failed"}, untried={"deferred", "skipped"}))


def _print_crawl(run: CrawlRun) -> None:
    for fault in run.registry_faults:
        echo(f"registry: {fault}", err=True)
    report = run.report
    if not report.sources:
        echo("the registry lists no source: add one with `incidentlib add URL`", err=True)
    rows = list(report.counts().items())
    rows += [("requests sent", report.requests), ("bodies downloaded", report.bodies)]
    rows += [("drafts written", report.writes)]
    if run.archive is not None:
        rows += [(f"sources {name}", n) for name, n in run.archive.counts().items()]
    print_table("crawl", rows)
    for source in report.sources:
        if source.outcome == "failed":
            echo(f"failed {source.url}: {source.reason}: {source.message}")
        elif source.outcome == "skipped":  # rejected, or merged (the message names the survivor)
            echo(f"skipped {source.url}: {source.reason}" + (f": {source.message}" if source.message else ""))


@app.command()
def archive(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Capture every source not yet in the Wayback Machine (a Prefect flow run); reuse recent captures.

    Without keys (INCIDENTLIB_WAYBACK_ACCESS_KEY, INCIDENTLIB_WAYBACK_SECRET_KEY) existing
    captures are looked up and the rest wait. Interrupted, it carries on where it stopped.
    Exit status 3 when some captures failed, 4 when every one tried failed (a source that
    waits for the next run is no failure).
    """
    report = _run_flow("archive", load_settings(root), as_json, ArchiveReport)
    if not as_json:
        _print_archive(report)
    raise typer.Exit(outcome_status([s.outcome for s in report.sources], failed={"failed"}, untried={"waiting"}))


def _print_archive(report: ArchiveReport) -> None:
    if report.busy:
        echo(
            "another archive run of this data root is capturing: nothing done, the sources wait for the next run",
            err=True,
        )
    elif report.problem is not None:
        echo(f"captures stopped ({report.problem}): existing captures were looked up, new ones wait", err=True)
    rows = list(report.counts().items())
    rows += [(f"waiting: {reason}", n) for reason, n in report.waiting().items()]
    rows += [(f"failed: {reason}", n) for reason, n in report.failures().items()]
    print_table("archive", rows)


@app.command()
def promote(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Publish every approved, complete draft as a case (a Prefect flow run); say what the others lack.

    Exit status 3 when some approved drafts could not be published (they lack something), 4 when none could.
    """
    report = _run_flow("promote", load_settings(root), as_json, PromoteReport, progress=False)
    if not as_json:
        for entry in report.drafts:
            if entry.outcome == "incomplete":
                echo(f"{entry.draft_id}: not published, missing {', '.join(entry.missing)}")
            elif entry.outcome in ("published", "updated"):
                echo(f"{entry.draft_id}: {entry.outcome} as cases/{entry.case_id}.json")
        print_table("promote", list(report.counts().items()))
    outcomes = [entry.outcome for entry in report.drafts]
    raise typer.Exit(outcome_status(outcomes, failed={"incomplete"}, untried={"skipped"}))


@app.command()
def site(
    root: RootOption = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The folder to build the site into (default: site/ in the data root).", file_okay=False),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Build the reader's site from cases/: static pages in Korean and English, served by any static host.

    Writes only the files whose bytes changed, and says how many it wrote, left unchanged and removed
    (a case's pages are never removed). Open it with `python -m http.server -d DIR 8001` (8000 is `incidentlib
    web`'s).
    """
    from pipeline.site.build import build_site

    settings = load_settings(root)
    report = build_site(Store.from_settings(settings), settings, out)
    if as_json:
        echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    rows = [("cases", report.cases), *report.counts().items(), ("pages rendered", report.rendered)]
    if report.search is not None:
        rows.append(("search: pages indexed", sum(report.search["pages"].values())))
        rows.append(
            (
                f"search: documents {'indexed' if report.search['update'] == 'whole' else 'updated'}",
                report.search["documents"],
            )
        )
    print_table("site", rows, unit="files")
    echo(f"built {report.folder} in {report.seconds:.1f} s; to open it:")
    echo(f"  python -m http.server -d {report.folder} 8001   # then http://localhost:8001/")


@app.command()
def refresh(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Check every source of every draft and case: alive, moved or gone; re-archive what changed (a flow run).

    Exit status 3 when some links could not be checked, 4 when none could (a link gone, moved or
    blocked is a finding, not a failure: `incidentlib links --status gone` lists them).
    """
    report = _run_flow("refresh", load_settings(root), as_json, RefreshReport)
    if not as_json:
        for source in report.sources:
            if source.outcome in ("gone", "moved", "blocked", "failed"):
                extra = source.moved_to or source.reason or ""
                echo(f"{source.outcome} {source.url} {extra}".rstrip())
        print_table("refresh", list(report.counts().items()))
    raise typer.Exit(outcome_status([s.outcome for s in report.sources], failed={"failed"}, untried={"waiting"}))


@app.command()
def demo(
    keep: Annotated[
        Path | None,
        typer.Option(
            help="Leave the demo's data root here to look at, a new or empty folder (else a temporary one).",
            file_okay=False,
        ),
    ] = None,
    serve: Annotated[
        bool,
        typer.Option(
            "--serve",
            help="At the end, keep the stand-ins (its archived links open) and the review page serving until Ctrl-C.",
            show_default="off",
        ),
    ] = False,
) -> None:
    """Run the whole pipeline offline: local sites, a local Wayback stand-in, crawl to published cases."""
    from pipeline.demo import DemoError, closing_lines, run_demo, serve_review_page

    try:
        report = run_demo(keep, say=echo, hold=serve_review_page(echo, kept=keep is not None) if serve else None)
    except DemoError as exc:
        echo(str(exc), err=True)
        raise typer.Exit(exc.code) from None
    if not serve:
        for line in closing_lines(report, kept=keep is not None):
            echo(line)
    if report.faults:
        raise typer.Exit(1)


@app.command("stand-in")
def stand_in(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 to listen on.")] = 8765,
    captures_per_minute: Annotated[float, typer.Option(help="Captures a minute it allows.")] = 7,
    cdx_per_minute: Annotated[float, typer.Option(help="CDX queries a minute it allows.")] = 30,
    access_key: Annotated[str, typer.Option(help="The access key it accepts.")] = "stand-in-access",
    secret_key: Annotated[str, typer.Option(help="The secret key it accepts.")] = "stand-in-secret",
) -> None:
    """Run the local Wayback Machine stand-in in the foreground, to try the pipeline by hand (Ctrl-C stops)."""
    from pipeline.standins.wayback import WaybackRules, WaybackStandIn

    server = WaybackStandIn(
        WaybackRules(
            access_key=access_key,
            secret_key=secret_key,
            captures_per_minute=captures_per_minute,
            cdx_per_minute=cdx_per_minute,
        ),
        port=port,
    )
    try:
        echo(f"Wayback stand-in on {server.url}; point the pipeline at it with:")
        echo(f"  export INCIDENTLIB_WAYBACK_URL={server.url}")
        echo("  and INCIDENTLIB_WAYBACK_ACCESS_KEY / INCIDENTLIB_WAYBACK_SECRET_KEY set to the keys given with")
        echo("  --access-key and --secret-key (by default stand-in-access and stand-in-secret)")
        server.serve_forever()
    except (KeyboardInterrupt, interrupt.Interrupted):  # Ctrl-C is how it is meant to end
        echo("stopped")
    finally:
        server.server.server_close()


@app.command()
def learn(
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Measure and decide, but keep nothing: the model in use stays.", show_default="off"
        ),
    ] = False,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retrain the finder from the library's published cases (their passages, taken and dismissed
    suggestions), with the packaged model as the prior; keep it only when, on held-out publishers, it is
    no worse than the model in use.

    Prints each field's figures on held-out folds, the new model's beside the one in use's. Exit status 1
    when the new model is refused (too few reviewed cases, or worse on a figure): the model in use stays.
    """
    from pipeline import learn as learning

    settings = load_settings(root)
    report = learning.learn(Store.from_settings(settings), settings, dry_run=dry_run)
    if as_json:
        echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    else:
        rows = []
        for name, new in report.figures.items():
            old = report.baseline.get(name, {})
            rows.append(
                (
                    name,
                    f"{new.get('documents', 0)}+{new.get('without', 0)}",
                    f"{_figure(new.get('hit3'))} / {_figure(old.get('hit3'))}",
                    f"{_figure(new.get('precision'))} / {_figure(old.get('precision'))}",
                    f"{_figure(new.get('calibration_error'))} / {_figure(old.get('calibration_error'))}",
                )
            )
        if rows:
            from rich.console import Console
            from rich.table import Table

            table = Table(title=f"held-out figures: new / in use ({cell(report.in_use)})")
            for header in ("field", "documents with / without", "hit@3", "precision", "calibration error"):
                table.add_column(header)
            for row in rows:
                table.add_row(*(cell(v) for v in row))
            Console().print(table)
        said = "kept" if report.kept else "would keep" if report.new else "refused"
        echo(f"{said} {report.new or 'the new model'}: {'; '.join(report.reasons)}")
    if report.new is None:
        raise typer.Exit(1)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
