"""The offline demo: the whole pipeline, on one machine, with no network.

A local site serves real postmortems bundled in `samples/` (with their public URLs
and licences in `samples.yaml`) and an Atom feed that lists them; a local Wayback
stand-in archives them. In a temporary data root (or `keep`), the Prefect flows then
discover the feed's entries as candidates, which are accepted as a person would, crawl
the registry (archiving the new sources), a scripted writer and reviewer take every
draft through review, promotion
publishes the cases, one page changes and a refresh re-archives it, and validation
checks everything written. Nothing is left running.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import yaml

from pipeline import candidates, review
from pipeline.server import command_server
from pipeline.settings import Settings
from pipeline.standins.sitefarm import Page, Site, SiteFarm
from pipeline.standins.wayback import WaybackStandIn
from pipeline.store import Store
from pipeline.validate import validate

__all__ = ["DemoReport", "run_demo"]

WRITER, REVIEWER = "demo-writer", "demo-reviewer"


@dataclass
class DemoReport:
    root: Path
    steps: list[tuple[str, str]] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)
    faults: int = 0


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


def run_demo(keep: Path | None = None, say: Callable[[str], None] = print) -> DemoReport:
    """Run the whole pipeline offline; `keep` is the data root to leave behind (else a temporary one)."""
    with tempfile.TemporaryDirectory(prefix="incidentlib-demo-") as scratch:
        root = (keep or Path(scratch) / "library").resolve()
        (root / "sources").mkdir(parents=True, exist_ok=True)
        with (
            SiteFarm() as farm,
            # The demo changes a page seconds after its capture; the service would answer a new
            # capture within the hour with the old one (and the refresh would wait), so its
            # dedupe hour is off here. Everything else is as strict as the service.
            WaybackStandIn(
                access_key="demo-access",
                secret_key="demo-secret",
                captures_per_minute=600,
                cdx_per_minute=600,
                dedupe_s=0,
            ) as wayback,
        ):
            site = farm.add_site("postmortems", latency_s=0.01)
            samples = _samples()
            for n, sample in enumerate(samples):
                site.pages[f"/{n}/{sample['file']}"] = Page.markdown(sample["text"])
            site.pages["/notes/release-1-2.md"] = Page.markdown("# Release notes 1.2\n\nNew buttons.\n")
            site.pages["/feed.xml"] = Page(_feed(site, samples), content_type="application/atom+xml")
            (root / "sources" / "feeds.yaml").write_text(
                "# The demo's feed: an Atom feed of the bundled postmortems, served by a local site.\n"
                f"- url: {site.url('/feed.xml')}\n  kind: atom\n  name: demo\n  source_kind: blog\n"
                "  exclude: [release notes]\n",
                encoding="utf-8",
            )
            env = {
                "INCIDENTLIB_ALLOW_PRIVATE_HOSTS": "1",  # the demo's sites are on this machine
                "INCIDENTLIB_PER_HOST_DELAY_S": "0.05",
                "INCIDENTLIB_WAYBACK_URL": wayback.url,
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
                with command_server(Store.from_settings(settings), settings):
                    return _steps(root, site, samples, say)


def _feed(site: Site, samples: list[dict[str, str]]) -> bytes:
    """An Atom feed of the samples (their first heading is the title), and of one page that is no postmortem."""
    entries = [
        (site.url(f"/{n}/{s['file']}"), s["text"].lstrip("# ").splitlines()[0], s["org"]) for n, s in enumerate(samples)
    ]
    entries.append((site.url("/notes/release-1-2.md"), "Release notes 1.2", "demo"))
    xml = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>Postmortems</title>',
        f"<id>{escape(site.url('/feed.xml'))}</id><updated>2026-01-01T00:00:00Z</updated>",
    ]
    for url, title, org in entries:
        xml.append(
            f"<entry><id>{escape(url)}</id><title>{escape(title)}</title><link href={quoteattr(url)}/>"
            f"<author><name>{escape(org)}</name></author><updated>2026-01-01T00:00:00Z</updated></entry>"
        )
    xml.append("</feed>")
    return "\n".join(xml).encode("utf-8")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in counts.items() if n)


def _steps(root: Path, site: Site, samples: list[dict[str, str]], say: Callable[[str], None]) -> DemoReport:
    from pipeline import flows
    from pipeline.crawl import CrawlRun
    from pipeline.discover import DiscoverRun
    from pipeline.links import RefreshReport
    from pipeline.publish import PromoteReport

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
    accepted = candidates.accept(store, settings, all_from="demo")
    report.steps.append(("accept", f"{len(accepted.registered)} candidates registered in sources/discovered.yaml"))
    say(f"accept: {report.steps[-1][1]}")

    crawled = flows.run(flows.crawl, CrawlRun, root=str(root))
    report.steps.append(("crawl", _counts(crawled.counts())))
    report.steps.append(("archive", _counts(crawled.archive.counts() if crawled.archive else {})))
    say(f"crawl: {report.steps[-2][1]}; archive: {report.steps[-1][1]}")

    for draft_id in store.ids("draft"):
        store.update_draft(draft_id, lambda d: review.write(d, WRITER, settings.required_languages, "demo"))
        store.update_draft(draft_id, lambda d: review.approve(d, REVIEWER, settings.required_languages, "demo"))
    report.steps.append(("review", f"{len(store.ids('draft'))} drafts written by {WRITER}, approved by {REVIEWER}"))
    say(f"review: {report.steps[-1][1]}")

    promoted = flows.run(flows.promote, PromoteReport, root=str(root))
    report.cases = [d.case_id for d in promoted.drafts if d.case_id]
    report.steps.append(("promote", _counts(promoted.counts())))
    say(f"promote: {report.steps[-1][1]} -> {', '.join(report.cases)}")

    first_path = next(iter(site.pages))
    site.pages[first_path] = Page.markdown(
        site.pages[first_path].body.decode() + "\n\nUpdate: a follow-up fixed the root cause.\n"
    )
    refreshed = flows.run(flows.refresh, RefreshReport, root=str(root))
    report.steps.append(("refresh", _counts(refreshed.counts())))
    say(f"refresh (one page changed): {report.steps[-1][1]}")

    report.faults = len(validate(store, required_languages=settings.required_languages).faults)
    report.steps.append(("validate", f"{report.faults} faults"))
    say(f"validate: {report.faults} faults")
    return report
