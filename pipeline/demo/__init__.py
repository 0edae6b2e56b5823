"""The offline demo: the whole pipeline, on one machine, with no network.

Real postmortems bundled in `samples/` (their public URLs, licences and the org, kind, title and
date each case must carry are in `samples.yaml`) are served by local stand-ins of their hosts as
if from those URLs (`stand_in_hosts`, pipeline.fetch.standins), with an Atom feed that lists
them; a local Wayback stand-in archives them, and while the demo runs the records' archived links
are its own copies (`wayback_public_url`). So the library the demo makes is what a real one would
be: its sources are the public URLs, its draft ids carry no local port (the same page gets the
same draft in every run), its orgs and kinds are what the pages and the URLs give (pipeline.orgs).

In a temporary data root (or `keep`, a new or empty folder), the Prefect flows then discover the
feed's entries as candidates; all but one are accepted, as a person would; the crawl drafts them
(archiving the new sources); a scripted writer and reviewer take them through review, checking
each draft against the sample's org, title, date and kind first (a mismatch stops the demo:
`DemoMismatch`); promotion publishes those approved; one page changes and a refresh re-archives
it; validation checks everything written. Some is left to review, as a newcomer needs: one draft
written (awaiting a reviewer), one extracted (awaiting a writer), one candidate waiting. Nothing
is left running, unless `hold` keeps the stand-ins serving (`incidentlib demo --serve`).
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, quoteattr

import yaml

from pipeline import candidates, interrupt, review
from pipeline.fetch import fetch_url_for
from pipeline.ids import candidate_id, draft_id_for
from pipeline.models import Draft
from pipeline.server import command_server
from pipeline.settings import Settings
from pipeline.site.build import BuildReport
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackRules, WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate

__all__ = [
    "DemoError",
    "DemoMismatch",
    "DemoRefused",
    "DemoReport",
    "closing_lines",
    "mismatch",
    "run_demo",
    "serve_review_page",
]

WRITER, REVIEWER = "demo-writer", "demo-reviewer"
# The demo's own feed and a page it lists that is no postmortem: on a name that never resolves
# (RFC 6761), so that a library kept after the demo cannot reach anyone else's host by them.
FEED_URL = "https://postmortems.demo.invalid/feed.xml"
NOTES_URL = "https://postmortems.demo.invalid/notes/release-1-2"
# When the feed was made: the date of every entry, which is when it was posted, not the incident's.
FEED_DATE = "2026-01-01"
# What the scripted reviewer checks of a draft, against the sample: the case's field, and its value.
CHECKED = ("org", "title", "date", "kind")
_ENDS = ("published", "written", "extracted", "candidate")


class DemoError(Exception):
    """The demo could not do what it shows; its text is one line for the operator. `code`: the exit code."""

    code = 1


class DemoRefused(DemoError):
    """Asked to keep its library in a folder that is not empty."""

    code = 2


class DemoMismatch(DemoError):
    """A draft the scripted writer or reviewer was to pass does not carry the sample's org, title,
    date or kind: the demo stops rather than publish a case nobody should approve."""


@dataclass
class DemoReport:
    root: Path
    steps: list[tuple[str, str]] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    faults: int = 0
    # What is left for a person: drafts `written` (awaiting a reviewer) and `extracted` (awaiting a
    # writer), by id, and the `candidates` waiting in sources/candidates.yaml, by id.
    left: dict[str, list[str]] = field(default_factory=dict)
    wayback: str = ""  # the Wayback stand-in's base URL, which the archived links name
    site: str = ""  # the folder of the reader's site built from its cases


def _samples() -> list[dict[str, str]]:
    folder = resources.files("pipeline.demo").joinpath("samples")
    entries = yaml.safe_load(folder.joinpath("samples.yaml").read_text(encoding="utf-8"))
    return [{**e, "text": folder.joinpath(e["file"]).read_text(encoding="utf-8")} for e in entries]


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Settings for this process only, put back as they were afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _refuse_unless_empty(keep: Path) -> None:
    """A library kept in a folder with anything in it would mix with what is there (a previous demo's
    cases numbered again, or someone's files): only a new or empty folder is taken."""
    if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
        raise DemoRefused(
            f"incidentlib demo: {keep} is not empty; name a new or empty folder for --keep (or remove this one)"
        )


def run_demo(
    keep: Path | None = None,
    say: Callable[[str], None] = print,
    *,
    hold: Callable[[DemoReport], None] | None = None,
    samples: list[dict[str, str]] | None = None,
) -> DemoReport:
    """Run the whole pipeline offline; `keep` is the data root to leave behind (a new or empty
    folder; else a temporary one). `hold`, when given, is called once the demo is done, while the
    stand-ins still serve (the archived links open until it returns). `samples`: the bundled
    postmortems as `samples.yaml` lists them (the default), or others to show a mismatch.

    Raises DemoRefused for a `keep` that is not empty, DemoMismatch for a draft that does not
    carry its sample's org, title, date or kind."""
    if keep is not None:
        _refuse_unless_empty(keep)
    samples = samples if samples is not None else _samples()
    with tempfile.TemporaryDirectory(prefix="incidentlib-demo-") as scratch:
        root = (keep or Path(scratch) / "library").resolve()
        with SiteFarm() as farm:
            sites = _serve(farm, samples)
            hosts = {host: site.url("") for host, site in sites.items()}
            # The demo changes a page seconds after its capture; the service would answer a new
            # capture within the hour with the old one (and the refresh would wait), so its
            # dedupe hour is off here. Everything else is as strict as the service.
            with WaybackStandIn(
                WaybackRules(
                    access_key="demo-access",
                    secret_key="demo-secret",
                    captures_per_minute=600,
                    cdx_per_minute=600,
                    dedupe_s=0,
                ),
                stand_in_hosts=hosts,
            ) as wayback:
                Store(root).write_feeds(
                    "# The demo's feed: an Atom feed of the bundled postmortems, served by a local stand-in.\n"
                    f"- url: {FEED_URL}\n  kind: atom\n  name: demo\n  exclude: [release notes]\n"
                )
                env = {
                    "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "127.0.0.0/8",  # the stand-ins are on this machine
                    "INCIDENTLIB_STAND_IN_HOSTS": json.dumps(hosts),
                    "INCIDENTLIB_PER_HOST_DELAY_S": "0.05",
                    "INCIDENTLIB_WAYBACK_URL": wayback.url,
                    "INCIDENTLIB_WAYBACK_PUBLIC_URL": wayback.url,  # archived links open its own copies
                    "INCIDENTLIB_WAYBACK_ACCESS_KEY": "demo-access",
                    "INCIDENTLIB_WAYBACK_SECRET_KEY": "demo-secret",
                    "INCIDENTLIB_CAPTURES_PER_MINUTE": "600",
                    "INCIDENTLIB_CDX_PER_MINUTE": "600",
                    "INCIDENTLIB_STATUS_POLLS_PER_MINUTE": "600",
                    "INCIDENTLIB_POLL_INTERVAL_S": "0.05",
                    "INCIDENTLIB_REUSE_CAPTURE_WITHIN_S": "0",
                    "PREFECT_LOGGING_LEVEL": os.environ.get("PREFECT_LOGGING_LEVEL", "WARNING"),
                }
                with _environment(env):
                    settings = Settings(root=root)
                    say(
                        f"stand-ins: {', '.join(sorted(hosts))} served from 127.0.0.1; "
                        f"a Wayback Machine stand-in at {wayback.url}"
                    )
                    with command_server(Store.from_settings(settings), settings):
                        report = _steps(root, farm, sites, samples, say)
                    report.wayback = wayback.url
                    if hold is not None:
                        hold(report)
                    return report


def _page_at(farm: SiteFarm, sites: dict[str, Site], url: str, page: Page) -> None:
    """Serve `page` at `url` from the stand-in of its host (one local site a host, made when first needed)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host not in sites:
        sites[host] = farm.add_site(host, latency_s=0.01)
    sites[host].pages[parts.path] = page


def _serve(farm: SiteFarm, samples: list[dict[str, str]]) -> dict[str, Site]:
    """Each sample at its public URL (a GitHub file at its raw URL too, which the crawl fetches),
    the feed, and the page it lists that is no postmortem: the stand-ins, by host."""
    sites: dict[str, Site] = {}
    for sample in samples:
        _serve_text(farm, sites, sample["url"], sample["text"])
    _page_at(farm, sites, NOTES_URL, Page.markdown("# Release notes 1.2\n\nNew buttons.\n"))
    _page_at(farm, sites, FEED_URL, Page(_feed(samples), content_type="application/atom+xml"))
    return sites


def _serve_text(farm: SiteFarm, sites: dict[str, Site], url: str, text: str) -> None:
    # As the hosts serve Markdown source: plain text (the Rust post's front matter says what it is).
    for where in dict.fromkeys((url, fetch_url_for(url))):
        _page_at(farm, sites, where, Page.markdown(text))


def _listed_url(sample: dict[str, str]) -> str:
    """The link the feed gives: a blog's with the tracking parameter blogs add to feed links, which
    discovery drops (the candidate, the registry and the case carry the canonical URL)."""
    return sample["url"] + "?utm_source=atom" if sample["kind"] == "blog" else sample["url"]


def _feed(samples: list[dict[str, str]]) -> bytes:
    """An Atom feed of the samples, titled as they are, and of one page that is no postmortem;
    every entry dated when the feed was made, as a feed dates what it posts."""
    entries = [(_listed_url(s), s["title"]) for s in samples]
    entries.append((NOTES_URL, "Release notes 1.2"))
    xml = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>Postmortems</title>',
        f"<id>{escape(FEED_URL)}</id><updated>{FEED_DATE}T00:00:00Z</updated>",
    ]
    for url, title in entries:
        xml.append(
            f"<entry><id>{escape(url)}</id><title>{escape(title)}</title><link href={quoteattr(url)}/>"
            f"<updated>{FEED_DATE}T00:00:00Z</updated></entry>"
        )
    xml.append("</feed>")
    return "\n".join(xml).encode("utf-8")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in counts.items() if n)


def mismatch(draft: Draft, sample: dict[str, str]) -> str | None:
    """The first of the sample's org, title, date and kind the draft does not carry, as one line
    naming the draft, the field, what was expected and what it holds; None when all agree."""
    held = {
        "org": draft.org,
        "title": (draft.title or {}).get("en"),
        "date": draft.date,
        "kind": draft.sources[0].kind if draft.sources else None,
    }
    for name in CHECKED:
        if held[name] != sample[name]:
            return (
                f"incidentlib demo: draft {draft.id}: {name} expected {sample[name]!r}, got {held[name]!r} "
                f"(pipeline/demo/samples/samples.yaml)"
            )
    return None


def _checked(draft: Draft, sample: dict[str, str]) -> Draft:
    problem = mismatch(draft, sample)
    if problem:
        raise DemoMismatch(problem)
    return draft


def _review(store: Store, settings: Settings, samples: list[dict[str, str]]) -> dict[str, list[str]]:
    """The scripted writer and reviewer: a sample that ends published is written and approved, one
    that ends written only written, each checked against its sample first; the rest left alone."""
    languages = settings.required_languages
    done: dict[str, list[str]] = {"published": [], "written": [], "extracted": []}
    for sample in samples:
        ends, draft_id = sample["ends"], draft_id_for(sample["url"])
        if ends == "candidate":
            continue
        if ends in ("published", "written"):

            def write(d: Draft, sample: dict[str, str] = sample) -> Draft:
                return review.write(_checked(d, sample), WRITER, languages, "demo")

            store.update_draft(draft_id, write)
        if ends == "published":

            def approve(d: Draft, sample: dict[str, str] = sample) -> Draft:
                return review.approve(_checked(d, sample), REVIEWER, languages, "demo")

            store.update_draft(draft_id, approve)
        done[ends].append(draft_id)
    return done


def _steps(
    root: Path, farm: SiteFarm, sites: dict[str, Site], samples: list[dict[str, str]], say: Callable[[str], None]
) -> DemoReport:
    from pipeline import flows
    from pipeline.crawl import CrawlRun
    from pipeline.discover import DiscoverRun
    from pipeline.links import RefreshReport
    from pipeline.publish import PromoteReport

    unknown = {s["ends"] for s in samples} - set(_ENDS)
    assert not unknown, f"samples.yaml: `ends` must be one of {_ENDS}, not {unknown}"
    report = DemoReport(root)
    settings = Settings(root=root)
    store = Store.from_settings(settings)
    for sample in samples:
        say(f"source: {sample['url']} ({sample['licence']}), served locally")

    discovered = flows.run(flows.discover, DiscoverRun, root=str(root))
    feed = discovered.report.feeds[0]
    report.steps.append(
        ("discover", f"{feed.entries} entries, {len(feed.candidates)} candidates, {feed.filtered} left")
    )
    say(f"discover: {report.steps[-1][1]} out by the feed's filter")
    waiting = [candidate_id(s["url"]) for s in samples if s["ends"] == "candidate"]
    chosen = [candidate_id(s["url"]) for s in samples if s["ends"] != "candidate"]
    accepted = candidates.accept(store, settings, chosen)
    report.steps.append(
        (
            "accept",
            f"{len(accepted.registered)} candidates registered in sources/discovered.yaml, "
            f"{len(waiting)} left waiting in sources/candidates.yaml",
        )
    )
    say(f"accept: {report.steps[-1][1]}")

    crawled = flows.run(flows.crawl, CrawlRun, root=str(root))
    report.steps.append(("crawl", _counts(crawled.counts())))
    report.steps.append(("archive", _counts(crawled.archive.counts() if crawled.archive else {})))
    say(f"crawl: {report.steps[-2][1]}; archive: {report.steps[-1][1]}")

    done = _review(store, settings, samples)
    report.steps.append(
        (
            "review",
            f"{len(done['published'])} drafts written by {WRITER} and approved by {REVIEWER}, "
            f"{len(done['written'])} written and left for a reviewer, {len(done['extracted'])} left for a writer "
            "(each checked first against its sample's org, title, date and kind)",
        )
    )
    say(f"review: {report.steps[-1][1]}")
    report.left = {"written": done["written"], "extracted": done["extracted"], "candidates": waiting}

    promoted = flows.run(flows.promote, PromoteReport, root=str(root))
    report.cases = [d.case_id for d in promoted.drafts if d.case_id]
    report.steps.append(("promote", _counts(promoted.counts())))
    say(f"promote: {report.steps[-1][1]} -> {', '.join(report.cases)}")

    changed = next(s for s in samples if s["ends"] == "published")
    _serve_text(farm, sites, changed["url"], changed["text"] + "\n\nUpdate: a follow-up fixed the root cause.\n")
    refreshed = flows.run(flows.refresh, RefreshReport, root=str(root))
    report.steps.append(("refresh", _counts(refreshed.counts())))
    say(f"refresh (one page changed): {report.steps[-1][1]}")

    # Promotion built the site already; built again, its case pages show the links' states refresh found.
    built = flows.run(flows.site, BuildReport, root=str(root))
    report.site = built.folder
    report.steps.append(("site", _counts(built.counts())))
    say(f"site (after the refresh): {report.steps[-1][1]} -> {built.folder}")

    report.faults = len(
        validate(store, required_languages=settings.required_languages, base_url=settings.public_base_url).faults
    )
    report.steps.append(("validate", f"{report.faults} faults"))
    say(f"validate: {report.faults} faults")
    return report


def closing_lines(report: DemoReport, *, kept: bool, serving: bool = False) -> list[str]:
    """What the demo says at its end: what it published, what it left to review and how to look at
    it, where its archived links lead; last, how to open the review page on its library."""
    root = _quoted(report.root)
    where = f"the library it made is in {report.root}" if kept else "the library it made was temporary (use --keep DIR)"
    running = "the stand-ins serve until Ctrl-C" if serving else "nothing is left running"
    lines = [f"done: {len(report.cases)} cases published ({', '.join(report.cases)}); {where}; {running}"]
    left = report.left
    lines.append(
        f"left to review: {len(left.get('written', []))} draft written, awaiting a reviewer "
        f"({', '.join(left.get('written', [])) or 'none'}); {len(left.get('extracted', []))} extracted, awaiting "
        f"a writer ({', '.join(left.get('extracted', [])) or 'none'}); {len(left.get('candidates', []))} candidate "
        f"waiting in sources/candidates.yaml ({', '.join(left.get('candidates', [])) or 'none'})"
    )
    if kept or serving:
        lines.append(f"look at them: incidentlib queue --root {root}; incidentlib candidates --root {root}")
    if serving:
        lines.append(
            f"archived links: the records link to the Wayback stand-in's own copies ({report.wayback}/web/...), "
            "which open while it serves"
        )
    elif kept:
        lines.append(
            f"archived links: the records link to the Wayback stand-in's own copies ({report.wayback}/web/...), "
            "gone now it has stopped; incidentlib demo --keep DIR --serve keeps them (and the review page) "
            "serving until Ctrl-C"
        )
    if kept or serving:
        lines.append(
            f"reader's site: python -m http.server -d {_quoted(Path(report.site))} 8001, then open "
            "http://127.0.0.1:8001/ (incidentlib site --root DIR builds it again)"
        )
    else:
        lines.append("reader's site: run the demo with --keep DIR, then python -m http.server -d DIR/site")
    if serving:
        lines.append(
            f"review page: incidentlib reviewer add NAME --root {root} (in another terminal), then open "
            "http://127.0.0.1:8000/"
        )
    elif kept:
        lines.append(
            f"review page: incidentlib reviewer add NAME --root {root}, then incidentlib web --root {root} "
            "and open http://127.0.0.1:8000/"
        )
    else:
        lines.append("review page: run the demo with --keep DIR, then incidentlib web --root DIR")
    return lines


def _quoted(path: Path) -> str:
    return shlex.quote(str(path))


def serve_review_page(say: Callable[[str], None], *, kept: bool, port: int = 8000) -> Callable[[DemoReport], None]:
    """A `hold` for `run_demo`: say the closing lines, then serve the review page on the demo's library
    until Ctrl-C, while the stand-ins serve the archived copies its draft pages frame."""

    def hold(report: DemoReport) -> None:
        import uvicorn

        from pipeline.web import create_app

        for line in closing_lines(report, kept=kept, serving=True):
            say(line)
        # Made here, with the demo's settings: the page frames the stand-in's copies.
        app = create_app(Settings(root=report.root))
        say(f"serving until Ctrl-C: the review page at http://127.0.0.1:{port}/, archived copies at {report.wayback}")
        try:
            uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", proxy_headers=False)
        except interrupt.Interrupted:  # uvicorn hands the Ctrl-C it stopped on to the command's handler
            interrupt.reset()
        say("stopped: the review page and the stand-ins")

    return hold
