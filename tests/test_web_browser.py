"""The reviewer's web page in a real browser: Debian's chromium, headless, driven by Playwright.

The app is served by uvicorn on 127.0.0.1 (a port the system chose, in a thread); each test
signs its reviewers in through the sign-in form, in browser contexts of their own, and works
the page as a person does: clicks, typing, form posts, htmx. One browser serves the module.

Without chromium these tests fail, saying how to install it (`scripts/test` does, as root).
With INCIDENTLIB_SCREENSHOTS=DIR the picture tests save `queue.png`, `draft.png`, `candidates.png` and
`assist.png` (and `suggestions.png`) into DIR (the pictures of the README and the manual:
`INCIDENTLIB_SCREENSHOTS=docs python -m pytest tests/test_web_browser.py`).
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from helpers import HOSTILE, case_page_lacks, related_case, reviewable_draft, sample_drafts
from playwright.sync_api import Browser, BrowserContext, Dialog, Locator, Page, expect, sync_playwright
from test_finder import story, training_set
from test_site_search import axe_script

from pipeline import claims, review
from pipeline.candidates import candidates
from pipeline.demo import run_demo
from pipeline.discover import discover
from pipeline.draft import DraftRules, apply_extraction, new_draft
from pipeline.extract import extract
from pipeline.finder import Finder
from pipeline.finder.model import fit
from pipeline.ids import draft_id_for, same_page_key
from pipeline.models import DraftState, Origin, SourceEntry
from pipeline.publish import promote
from pipeline.reviewers import add_reviewer
from pipeline.settings import Settings
from pipeline.sources import registered_by_page
from pipeline.standins.chat import ChatStandIn, Reply
from pipeline.standins.sitefarm import Page as FarmPage
from pipeline.standins.sitefarm import SiteFarm
from pipeline.store import Store
from pipeline.web import create_app
from pipeline.web.forms import form_fields
from pipeline.web.marks import evidence_passages, suggestion_passages

pytestmark = pytest.mark.runs_long(75)  # seconds in all: such modules start first (conftest.py)

PASSWORD = "correct horse battery"
DRAFT_ID = "example-org-outage-00000001"
# Read when the module is imported: the suite's autouse fixture takes INCIDENTLIB_* variables away.
SCREENSHOTS = os.environ.get("INCIDENTLIB_SCREENSHOTS")
CHROMIUM_MISSING = (
    "chromium is not installed: the browser tests need Debian's (`apt-get install chromium`, as root; "
    "scripts/test does it)"
)
TIMEOUT_MS = 10_000


def questions(chat: ChatStandIn) -> list[dict[str, Any]]:
    """What each request to the model asked: its user message, parsed (the fields wanted, the text or the English)."""
    return [json.loads(r.body["messages"][-1]["content"].split("\n\nAnswer with JSON")[0]) for r in chat.completions]


# ---------------------------------------------------------------- the browser and the server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail(CHROMIUM_MISSING, pytrace=False)
    with sync_playwright() as playwright:
        # As root, chromium refuses to start inside its own sandbox.
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = playwright.chromium.launch(executable_path=executable, args=args)
        yield launched
        launched.close()


class _Server(uvicorn.Server):
    """uvicorn's server, telling a waiting thread when its start-up is over, done or failed."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()


@contextmanager
def served(settings: Settings) -> Iterator[str]:
    """The web page on the data root of `settings`, on 127.0.0.1 in a thread; its address."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(settings), log_level="warning", ws="none", lifespan="off")
    server = _Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, name="web-server", daemon=True)
    thread.start()
    try:
        assert server.ready.wait(10) and server.started, "the web page's server did not start"
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()


@dataclass
class Site:
    url: str
    root: Path
    store: Store


@pytest.fixture
def site(root: Path, store: Store, case_json: dict[str, Any]) -> Iterator[Site]:
    """The page on a data root holding one draft (crawled text with markup), with two reviewers, ann and bob."""
    store.write_draft(reviewable_draft(case_json, DRAFT_ID))
    add_reviewer(store, "ann", PASSWORD)
    add_reviewer(store, "bob", PASSWORD)
    with served(Settings(root=root)) as url:
        yield Site(url, root, store)


# ---------------------------------------------------------------- what a person does


@pytest.fixture
def browsers(browser: Browser) -> Iterator[Callable[..., Page]]:
    """Browsers for the test's people: each a page in a context of its own (its own cookies), closed after."""
    contexts: list[BrowserContext] = []

    def new_page(url: str, **options: Any) -> Page:
        context = browser.new_context(base_url=url, **options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield new_page
    for context in contexts:
        context.close()


def problems(page: Page) -> list[str]:
    return page.locator(".problem").all_inner_texts()


def press(page: Page, button: Locator, status: int = 303) -> None:
    """Click a button that sends its form, and check the answer to the post before looking at the page."""
    with page.expect_response(lambda r: r.request.method == "POST" and r.request.resource_type == "document") as sent:
        button.click()
    page.wait_for_load_state()
    answer = sent.value
    assert answer.status == status, f"POST {answer.url}: {answer.status}, not {status}; the page says {problems(page)}"


def sign_in_here(page: Page, name: str) -> None:
    """Fill in and send the sign-in form the page shows."""
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    press(page, page.get_by_role("button", name="Sign in"))
    expect(page.locator("header .me")).to_contain_text(f"signed in as {name}")


def signed_in(new_page: Callable[..., Page], url: str, name: str, **options: Any) -> Page:
    """A fresh browser whose person opened the queue, was sent to sign in, and did."""
    page = new_page(url, **options)
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login\?next=%2F$"))
    sign_in_here(page, name)
    expect(page).to_have_url(f"{url}/")
    return page


def field(page: Page, path: str) -> Locator:
    return page.locator(f'#draft-form [name="{path}"]')


# ---------------------------------------------------------------- the scenarios


def test_a_writer_fixes_a_draft_a_second_reviewer_approves_it_and_promotion_publishes_it(
    browsers: Callable[..., Page], site: Site
) -> None:
    ann = signed_in(browsers, site.url, "ann")
    row = ann.locator("table.queue tbody tr").filter(has_text=DRAFT_ID)
    expect(row.locator(".state")).to_have_text("extracted")
    row.get_by_role("button", name="claim").click()  # htmx, with the session's token in a header
    expect(row.locator(".claim")).to_contain_text("on it: ann")
    title = row.get_by_role("link")
    title_text = title.inner_text()
    title.click()
    expect(ann).to_have_url(f"{site.url}/drafts/{DRAFT_ID}")
    expect(ann.get_by_role("heading", level=1)).to_have_text(title_text)

    summary = field(ann, "summary.en")
    before = summary.input_value()
    assert "hung" in before
    summary.fill(before.replace("hung", "stalled", 1))
    summary.press("End")
    summary.press_sequentially(" It took two hours.")
    press(ann, ann.get_by_role("button", name="Save"))
    expect(ann.get_by_role("status")).to_have_text("Saved.")
    expect(field(ann, "summary.en")).to_have_value(re.compile(r"stalled.*It took two hours\.$", re.S))
    press(ann, ann.get_by_role("button", name="Mark written"))
    expect(ann.get_by_role("status")).to_have_text("Done: write.")
    expect(ann.locator(".draft-head .state")).to_have_text("written")

    bob = signed_in(browsers, site.url, "bob")
    bob.goto(f"/drafts/{DRAFT_ID}")
    change = bob.locator("ol.history .diff li").filter(has_text="summary.en")
    expect(change.locator("ins")).to_contain_text(["stalled", "It took two hours."])
    expect(change.locator("del")).to_contain_text(["hung"])
    # Apart, and marked as deleted and inserted without their colours: struck through, underlined.
    expect(change).to_contain_text(re.compile(r"hung\.? stalled"))
    style = "e => getComputedStyle(e).textDecorationLine"
    assert change.locator("del").first.evaluate(style) == "line-through"
    assert change.locator("ins").first.evaluate(style) == "underline"
    # ann's one change, and no other: fields she left alone are no part of her edit.
    expect(bob.locator("ol.history .diff li code")).to_have_text(["summary.en"])
    expect(bob.locator("ol.history > li").last).to_contain_text("ann")
    press(bob, bob.get_by_role("button", name="Approve"))
    expect(bob.get_by_role("status")).to_have_text("Done: approve.")
    expect(bob.locator(".draft-head .state")).to_have_text("approved")

    # The promote command's library call, as its flow makes it.
    report = promote(site.store, Settings(root=site.root))
    assert report.counts()["published"] == 1, report.to_dict()
    case_id = report.drafts[0].case_id
    assert case_id and site.store.exists("case", case_id)
    case = site.store.read_case(case_id)
    assert case.summary and case.summary["en"].endswith("It took two hours.")
    bob.goto("/cases")
    listed = bob.locator("table.queue tbody tr").filter(has=bob.get_by_role("link", name=case_id))
    expect(listed).to_contain_text(title_text)
    bob.goto(f"/drafts/{DRAFT_ID}")
    expect(bob.locator(".draft-head")).to_contain_text(f"published as {case_id}")


def test_crawled_markup_is_shown_as_text_and_the_policy_forbids_inline_script(
    browsers: Callable[..., Page], site: Site
) -> None:
    page = signed_in(browsers, site.url, "ann")
    dialogs: list[str] = []

    def opened(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", opened)
    answer = page.goto(f"/drafts/{DRAFT_ID}")
    assert answer is not None and answer.status == 200
    text = page.locator(".source .text").first
    expect(text).to_contain_text(HOSTILE)  # and the finder's name for the sentence's likeliest field
    assert page.locator("main script, main img").count() == 0, "the crawled markup became elements"
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
    # The browser enforces it: a script element written into the page does not run.
    outcome = page.evaluate(
        """() => new Promise(done => {
            document.addEventListener("securitypolicyviolation", e => done("refused: " + e.effectiveDirective));
            const script = document.createElement("script");
            script.textContent = "window.ran = true; alert('ran')";
            document.body.append(script);
            setTimeout(() => done(window.ran ? "ran" : "no word"), 2000);
        })"""
    )
    assert outcome == "refused: script-src-elem"
    page.locator("details").filter(has_text="Summary").locator("summary").click()  # the section, opened
    expect(page.locator("details .text").first).to_have_text(HOSTILE)
    assert dialogs == []


def test_a_post_without_the_csrf_token_is_refused(browsers: Callable[..., Page], site: Site) -> None:
    page = signed_in(browsers, site.url, "ann")
    target = f"/drafts/{DRAFT_ID}/write"
    assert page.request.post(target, form={"comment": "forged"}, max_redirects=0).status == 403
    assert page.request.post(target, form={"csrf_token": "guessed"}, max_redirects=0).status == 403
    assert page.request.post(f"/drafts/{DRAFT_ID}/claim", max_redirects=0).status == 403
    assert site.store.read_draft(DRAFT_ID).state == DraftState.EXTRACTED
    assert claims.claims(site.store) == {}


def test_a_stale_save_is_refused_and_shows_the_other_change(browsers: Callable[..., Page], site: Site) -> None:
    ann = signed_in(browsers, site.url, "ann")
    bob = signed_in(browsers, site.url, "bob")
    for page in (ann, bob):
        page.goto(f"/drafts/{DRAFT_ID}")
    field(ann, "impact.users").fill("all API users")
    press(ann, ann.get_by_role("button", name="Save"))
    expect(ann.get_by_role("status")).to_have_text("Saved.")

    field(bob, "lessons.en").fill("Mine.")
    press(bob, bob.get_by_role("button", name="Save"), status=409)
    expect(bob.locator("p.problem")).to_contain_text("someone changed this draft after you opened it")
    theirs = bob.locator(".theirs")
    expect(theirs).to_contain_text("ann")
    expect(theirs).to_contain_text("impact.users")
    expect(theirs.locator("p code")).to_have_text(["impact.users"])  # ann's one field, no other
    expect(theirs.locator("p ins")).to_have_text(["all", "API", "users"])
    # The form shows the draft as it is now, so saving it again cannot undo ann's change; what bob
    # typed is listed beside it, to copy back.
    expect(field(bob, "impact.users")).to_have_value("all API users")
    expect(theirs.locator("li", has_text="lessons.en")).to_contain_text("Mine.")
    saved = site.store.read_draft(DRAFT_ID)
    assert saved.impact.users == "all API users" and saved.lessons != {"en": "Mine."}
    assert [(h.by, h.changed) for h in saved.history] == [("ann", ["impact.users"])]


def test_a_signed_out_request_is_sent_to_the_sign_in_page(browsers: Callable[..., Page], site: Site) -> None:
    page = browsers(site.url)
    answer = page.goto(f"/drafts/{DRAFT_ID}")
    assert answer is not None and answer.request.redirected_from is not None
    assert answer.request.redirected_from.url == f"{site.url}/drafts/{DRAFT_ID}"
    expect(page).to_have_url(f"{site.url}/login?next=%2Fdrafts%2F{DRAFT_ID}")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.request.post(f"/drafts/{DRAFT_ID}/approve", form={"csrf_token": "x"}).status == 401
    sign_in_here(page, "bob")
    expect(page).to_have_url(f"{site.url}/drafts/{DRAFT_ID}")  # back where the person was going


# ---------------------------------------------------------------- the pictures


def demo_library(store: Store) -> list[str]:
    """The demo's three postmortems as a library being reviewed: one being edited and claimed, one
    written, one published. Their ids, in the demo's order."""
    languages = ["en"]
    coredns, binder, crates = sample_drafts()
    assert coredns.impact is not None
    fixed = coredns.impact.model_copy(update={"users": "every team on the shared Kubernetes cluster"})
    store.write_draft(review.edited(coredns, coredns.model_copy(update={"impact": fixed}), "erin"))
    claims.claim(store, coredns.id, "erin")
    store.write_draft(review.write(binder, "erin", languages, "ready for a second pair of eyes"))
    written = review.write(crates, "erin", languages)
    store.write_draft(review.approve(written, "frank", languages))
    assert promote(store, Settings(root=store.root)).counts()["published"] == 1
    return [coredns.id, binder.id, crates.id]


def test_the_queue_and_a_draft_of_the_demo_library(browsers: Callable[..., Page], root: Path, store: Store) -> None:
    ids = demo_library(store)
    add_reviewer(store, "dana", PASSWORD)
    with served(Settings(root=root)) as url:
        page = signed_in(browsers, url, "dana", viewport={"width": 1400, "height": 900})
        rows = page.locator("table.queue tbody tr")
        expect(rows).to_have_count(3)
        expect(page.locator("p.total")).to_have_text("3 drafts")
        for draft_id, state in zip(ids, ["extracted", "written", "published"], strict=True):
            expect(rows.filter(has_text=draft_id).locator(".state")).to_have_text(state)
        expect(rows.filter(has_text=ids[0]).locator(".claim")).to_contain_text("on it: erin")
        expect(rows.filter(has_text=ids[1]).locator("td:nth-child(5)")).to_have_text("erin")
        if SCREENSHOTS:
            page.screenshot(path=Path(SCREENSHOTS) / "queue.png")

        rows.filter(has_text=ids[0]).get_by_role("link").click()
        expect(page).to_have_url(f"{url}/drafts/{ids[0]}")
        expect(page.get_by_role("heading", level=1)).to_have_text("CoreDNS upgrade issue")
        expect(field(page, "impact.users")).to_have_value("every team on the shared Kubernetes cluster")
        assert field(page, "summary.en").input_value().strip()
        assert page.locator(".source mark").count() >= 10, "the drafted fields' passages are marked in the text"
        assert page.locator(".fields .evidence li").count() >= 10, "each field lists its evidence"
        expect(page.locator("ol.history .diff ins")).to_contain_text(["every team on the shared Kubernetes cluster"])
        if SCREENSHOTS:
            page.screenshot(path=Path(SCREENSHOTS) / "draft.png")


def serious_axe(page: Page) -> list[str]:
    """axe-core's serious and critical violations on the page, each its rule and the elements it found."""
    page.add_script_tag(content=axe_script())
    found = page.evaluate(
        "async () => (await axe.run(document)).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => [v.id, v.nodes.map(n => n.html)])"
    )
    return [f"{rule}: {nodes}" for rule, nodes in found]


def overflow(page: Page) -> dict[str, Any]:
    """How wide the page is drawn against the window, and the elements that reach beyond the window's right
    edge (not inside a region that scrolls on its own)."""
    return dict(
        page.evaluate(
            """() => {
            const width = document.documentElement.clientWidth;
            const beyond = [...document.querySelectorAll("body *")].filter(e => {
                if (e.closest(".scroll")) return false;
                const box = e.getBoundingClientRect();
                return box.width > 0 && box.right > width + 1;
            }).map(e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).replace(/ /g, ".") : ""));
            return {scroll: document.documentElement.scrollWidth, width, beyond: beyond.slice(0, 8)};
        }"""
        )
    )


def test_the_queue_a_draft_and_a_case_fit_a_phone_and_stay_as_they_were_on_a_screen(
    browsers: Callable[..., Page], root: Path, store: Store
) -> None:
    ids = demo_library(store)
    case_id = store.read_draft(ids[2]).case_id
    assert case_id
    add_reviewer(store, "dana", PASSWORD)
    with served(Settings(root=root)) as url:
        # axe-core is put into the page as a script of its own, which the page's policy (script-src self) forbids
        page = signed_in(browsers, url, "dana", viewport={"width": 390, "height": 844}, bypass_csp=True)
        for path, name in [("/", "queue"), (f"/drafts/{ids[0]}", "draft"), (f"/cases/{case_id}", "case")]:
            page.set_viewport_size({"width": 390, "height": 844})
            page.goto(path)
            expect(page.get_by_role("heading", level=1)).to_be_visible()
            # nothing wider than the phone: the header wraps, a table scrolls inside its own labelled region
            drawn = overflow(page)
            assert drawn["scroll"] <= 390 and drawn["beyond"] == [], f"{path} at 390 px: {drawn}"
            found = serious_axe(page)
            assert found == [], f"{path}: {found}"
            if SCREENSHOTS:
                page.screenshot(path=Path(SCREENSHOTS) / f"{name}-390.png", full_page=True)
            # a screen: the header in one line, the queue's table its own width, the draft's two columns
            page.set_viewport_size({"width": 1280, "height": 900})
            header = page.locator("header.top").bounding_box()
            brand = page.locator("header.top .brand").bounding_box()
            assert header and brand and header["height"] < 3 * brand["height"], f"{path}: the header wraps at 1280"
            assert overflow(page)["scroll"] <= 1280
            if SCREENSHOTS:
                page.screenshot(path=Path(SCREENSHOTS) / f"{name}-1280.png", full_page=True)
        page.goto("/")
        table = page.locator("table.queue").bounding_box()
        assert table and table["width"] > 1200, "the queue's table spans the screen"
        page.goto(f"/drafts/{ids[0]}")
        fields = page.locator("section.fields").bounding_box()
        source = page.locator(".columns > :nth-child(2)").bounding_box()
        assert fields and source and source["x"] > fields["x"] + fields["width"] - 1, "the draft's columns side by side"


# ---------------------------------------------------------------- candidates the feeds proposed

STATUS_ENTRIES = [
    # (incident, title, date, postmortem or None): a status page lists every blip; those with a postmortem are proposed.
    (
        "k3q9",
        "Elevated API error rates in eu-west",
        "2026-03-02",
        "## Summary<br><br>On 2 March 2026 a database failover left the API without a primary for 34 minutes. "
        "Requests failed with 503 until the new primary was promoted by hand.<br><br>## Root cause<br><br>"
        "The failover script waited for a replica that had been removed the week before.",
    ),
    ("k2p1", "Delayed webhook deliveries", "2026-02-27", None),
    (
        "j8w4",
        "Object storage unavailable in us-east",
        "2026-02-09",
        "## Summary<br><br>On 9 February 2026 a certificate rotation on the storage gateways dropped every "
        "connection for 18 minutes.<br><br>## Root cause<br><br>The new certificate lacked an intermediate.",
    ),
]
BLOG_ENTRIES = [
    ("2026/02/cdn-outage", "How a CDN configuration push caused a global outage", "2026-02-20"),
    ("2026/02/launch", "Announcing regional outage alerts for every plan", "2026-02-12"),
    ("2026/01/hiring", "We are hiring site reliability engineers", "2026-01-30"),
    ("2026/01/dns-outage", "Postmortem: the DNS outage of 14 January", "2026-01-16"),
]


def atom(title: str, entries: list[tuple[str, str, str, str]]) -> FarmPage:
    """An Atom feed of (link, title, date, content) entries, newest first."""
    items = "".join(
        f'<entry><id>{link}</id><title>{name}</title><link href="{link}"/><updated>{date}T12:00:00Z</updated>'
        f'<content type="html">{content}</content></entry>'
        for link, name, date, content in entries
    )
    body = f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>{title}</title>'
    return FarmPage(
        f"{body}<updated>2026-03-03T00:00:00Z</updated>{items}</feed>".encode(), content_type="application/atom+xml"
    )


def discovered(farm: SiteFarm, store: Store, root: Path) -> None:
    """A status page's history feed and an engineering blog's feed on the farm, listed in
    sources/feeds.yaml, and read by discover: four candidates, two carrying their postmortems."""
    from html import escape

    status, blog = farm.add_site("status"), farm.add_site("blog")
    status.pages["/history.atom"] = atom(
        "Example Cloud status",
        [
            (
                status.url(f"/incidents/{key}"),
                name,
                date,
                escape(f"<p><small>{date}</small><br><strong>Resolved</strong> - Fixed.</p>")
                + (escape(f"<p><small>{date}</small><br><strong>Postmortem</strong> - {text}</p>") if text else ""),
            )
            for key, name, date, text in STATUS_ENTRIES
        ],
    )
    blog.pages["/feed.atom"] = atom(
        "Example Cloud engineering",
        [(blog.url(f"/{path}"), name, date, "A post.") for path, name, date in BLOG_ENTRIES],
    )
    (store.sources_dir / "feeds.yaml").write_text(
        f"- url: {status.url('/history.atom')}\n  kind: statuspage\n  name: example-status\n  org: Example Cloud\n"
        f"- url: {blog.url('/feed.atom')}\n  kind: atom\n  name: example-blog\n  org: Example Cloud\n"
        "  include: [outage, postmortem]\n  exclude: [announcing]\n",
        encoding="utf-8",
    )
    settings = Settings(root=root, allow_private_hosts=True, per_host_delay_s=0)
    # In a thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        report = pool.submit(discover, store, settings).result()
    assert report.counts()["candidates"] == 4, report.to_dict()


def test_a_reviewer_accepts_one_candidate_and_dismisses_another(
    browsers: Callable[..., Page], root: Path, store: Store
) -> None:
    add_reviewer(store, "dana", PASSWORD)
    with SiteFarm() as farm, served(Settings(root=root)) as url:
        discovered(farm, store, root)
        waiting = candidates(store)
        status, cdn, storage, dns = waiting
        assert status.feed_text and "/incidents/k3q9" in status.url and "cdn-outage" in cdn.url

        page = signed_in(browsers, url, "dana", viewport={"width": 1400, "height": 760})
        page.get_by_role("navigation").get_by_role("link", name="Candidates").click()
        expect(page).to_have_url(f"{url}/candidates")
        rows = page.locator("table.candidates tbody tr")
        expect(rows).to_have_count(4)
        expect(page.locator("p.total")).to_have_text("4 waiting")
        row = rows.filter(has_text=status.id)
        expect(row).to_contain_text("the feed carries its text")
        expect(row).to_contain_text("it has a postmortem")
        expect(row.get_by_role("link", name="Elevated API error rates in eu-west")).to_have_attribute(
            "rel", "noopener noreferrer"
        )

        press(page, row.get_by_role("button", name="Accept"), status=200)
        done = page.get_by_role("status")
        expect(done).to_contain_text("Accepted 1 candidate.")
        expect(done).to_contain_text("sources/discovered.yaml")
        draft_link = done.get_by_role("link", name=draft_id_for(status.url))
        expect(draft_link).to_have_attribute("href", f"/drafts/{draft_id_for(status.url)}")
        expect(rows).to_have_count(3)
        if SCREENSHOTS:
            page.screenshot(path=Path(SCREENSHOTS) / "candidates.png")

        row = rows.filter(has_text=dns.id)
        row.get_by_role("textbox").fill("already in the library from the status page")
        press(page, row.get_by_role("button", name="Dismiss"), status=200)
        expect(page.get_by_role("status")).to_contain_text("Dismissed 1 candidate.")
        expect(rows).to_have_count(2)
        expect(rows).to_contain_text([cdn.id, storage.id])
        page.get_by_role("link", name="the dismissed ones").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("already in the library from the status page")

        page.goto(f"/drafts/{draft_id_for(status.url)}")
        expect(page.get_by_role("heading", level=1)).to_have_text("Elevated API error rates in eu-west")

    assert same_page_key(status.url) in registered_by_page(store)
    assert [c.id for c in candidates(store)] == [cdn.id, storage.id]
    (gone,) = candidates(store, dismissed=True)
    assert gone.id == dns.id and gone.reason == "already in the library from the status page"


# ---------------------------------------------------------------- the writer assist

COREDNS_SYMPTOMS = (
    "The CoreDNS pods crash-looped after the upgrade, and with them a large number of pods that depended on "
    "CoreDNS, KIAM among them."
)
COREDNS_ANSWERS = [
    Reply.slow(
        1.5,  # long enough to see the page say it is waiting
        then=Reply.json(
            {
                "proposals": [
                    {
                        "field": "symptoms_text",
                        "text": COREDNS_SYMPTOMS,
                        "term": None,
                        "passages": [
                            "caused the CoreDNS service to fail and crash-loop",
                            "a large number of other pods, that depended on CoreDNS, to crash-loop, including other "
                            "critical components like KIAM",
                        ],
                    },
                    {
                        "field": "root_cause",
                        "text": "Vendor-specific changes to CoreDNS were not made at the upgrade.",
                        "term": "configuration-error",
                        "passages": ["These vendor specific changes, when not implemented at the time of upgrade"],
                    },
                ]
            }
        ),
    ),
    Reply.json(
        {
            "translations": [
                {"path": "title.ko", "text": "CoreDNS 업그레이드 문제"},
                {
                    "path": "detection.ko",
                    "text": "알림을 받은 SRE 팀이 멈춘 CoreDNS 구성 요소를 조사해 오픈 소스 문서와 벤더 문서의 차이를 "
                    "찾아냈고, 벤더 전용 수정을 적용해 문제를 해결했다.",
                },
            ]
        }
    ),
]


def test_a_reviewer_asks_the_model_and_accepts_its_proposal(
    browsers: Callable[..., Page], root: Path, store: Store
) -> None:
    coredns = demo_library(store)[0]
    # The drafting rules fill symptoms_text on this draft; a writer who found it wanting cleared it, so
    # the field is one the draft lacks, for the model to propose.
    drafted = store.read_draft(coredns)
    assert drafted.symptoms_text, "the rules drafted the symptoms: the test clears them"
    store.write_draft(
        drafted.model_copy(
            update={
                "symptoms_text": None,
                "evidence": [e for e in drafted.evidence if not e.field.startswith("symptoms_text")],
            }
        )
    )
    add_reviewer(store, "dana", PASSWORD)
    with ChatStandIn(COREDNS_ANSWERS, model="stand-in-7b") as chat:
        settings = Settings(
            root=root, llm_url=chat.url, llm_model="stand-in-7b", llm_max_retries=0, llm_requests_per_minute=6000
        )
        with served(settings) as url:
            page = signed_in(browsers, url, "dana", viewport={"width": 1400, "height": 900})
            page.goto(f"/drafts/{coredns}")
            symptoms = page.locator("#field-symptoms_text")
            expect(symptoms.get_by_role("button", name="Ask the model")).to_be_visible()
            expect(page.locator(".proposal")).to_have_count(0)

            everything = page.get_by_role("button", name="Ask for everything it lacks")
            everything.click()  # htmx: the page waits for the answer, saying so
            expect(page.locator("#assist-busy")).to_be_visible()
            expect(everything).to_be_disabled()
            expect(symptoms.get_by_role("button", name="Ask the model")).to_be_disabled()
            proposal = symptoms.locator(".proposal")
            expect(proposal).to_contain_text(COREDNS_SYMPTOMS, timeout=TIMEOUT_MS)
            expect(page.locator("#assist-busy")).to_be_hidden()
            expect(page).to_have_url(f"{url}/drafts/{coredns}")
            expect(symptoms.get_by_role("status")).to_have_count(0)  # the message is beside the panel's button
            expect(page.locator("#assist").get_by_role("status")).to_contain_text("The model proposed 4")
            expect(proposal).to_contain_text("by stand-in-7b · propose/2")
            expect(proposal.locator(".mark-ref")).to_have_count(2)
            marks = page.locator(".source mark.proposed")
            expect(marks).to_have_count(3)  # symptoms_text's two passages, root_cause's one
            expect(marks.first).to_contain_text("These vendor specific changes")
            root_cause = page.locator("#field-root_cause .proposal")
            expect(root_cause).to_contain_text("root cause: Configuration error (configuration-error)")
            expect(page.locator("#field-title .proposal")).to_contain_text("CoreDNS 업그레이드 문제")
            expect(page.locator("#field-detection .proposal")).to_contain_text("translates: “When alerted")
            english, korean = questions(chat)
            assert english["fields"] == ["symptoms_text", "root_cause"]
            assert [f["path"] for f in korean["fields"]][:2] == ["title.ko", "summary.ko"]
            if SCREENSHOTS:
                page.locator(".source mark.proposed").nth(1).scroll_into_view_if_needed()
                symptoms.scroll_into_view_if_needed()
                page.evaluate("window.scrollBy(0, -80)")
                page.screenshot(path=Path(SCREENSHOTS) / "assist.png")

            proposal.get_by_role("button", name="Accept").click()
            expect(symptoms.get_by_role("status")).to_have_text(
                "Accepted the proposal for symptoms_text.en as your edit."
            )
            expect(field(page, "symptoms_text.en")).to_have_value(COREDNS_SYMPTOMS)
            expect(symptoms.locator(".proposal")).to_have_count(0)
            expect(page.locator("ol.history > li").first).to_contain_text("dana", use_inner_text=True)
            expect(page.locator("ol.history > li").first).to_contain_text("accepted the proposal of stand-in-7b")

    draft = store.read_draft(coredns)
    assert draft.symptoms_text == {"en": COREDNS_SYMPTOMS}
    assert draft.history[-1].by == "dana" and draft.history[-1].changed == ["symptoms_text"]
    assert {p.path for p in draft.proposals} == {"root_cause", "title.ko", "detection.ko"}


# ---------------------------------------------------------------- a tour of the demo's library

# Each evidence number beside a field: where it links, and what its target holds (its superscripts aside).
LANDINGS = """(suggested) => [...document.querySelectorAll(".fields .evidence a.mark-ref")]
  .filter(a => Boolean(a.closest(".suggestions")) === suggested).map(a => {
    const target = document.getElementById(a.getAttribute("href").slice(1));
    if (!target) return [a.getAttribute("href"), null];
    const copy = target.cloneNode(true);
    copy.querySelectorAll("sup").forEach(s => s.remove());
    return [a.getAttribute("href"), copy.textContent];
})"""


def test_a_tour_of_the_demos_library_finds_every_evidence_link_landing_and_every_field_of_each_case(
    browsers: Callable[..., Page], tmp_path: Path, prefect_api: None
) -> None:
    # The demo's flows report to the session's Prefect server (prefect_api), as the demo's own tests'
    # do: this worker has imported Prefect already, and a server of the demo's own would be refused.
    library = tmp_path / "demo"
    # In a thread of its own: Playwright's sync API keeps an event loop running in this one. The thread
    # runs in a copy of this one's context, where Prefect's settings name the session's server.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(contextvars.copy_context().run, run_demo, library, lambda line: None).result()
    store = Store(library)
    drafts, cases = sorted(store.drafts(), key=lambda d: d.id), sorted(store.cases(), key=lambda c: c.id)
    assert drafts, "the demo left no draft"
    add_reviewer(store, "dana", PASSWORD)
    answers: list[tuple[int, str]] = []
    with served(Settings(root=library)) as url:
        page = signed_in(browsers, url, "dana", viewport={"width": 1400, "height": 900})
        page.on("response", lambda answer: answers.append((answer.status, answer.url)))
        page.goto("/")
        expect(page.locator("table.queue tbody tr")).to_have_count(len(drafts))
        page.goto("/candidates")
        linked = 0
        for draft in drafts:
            page.goto(f"/drafts/{draft.id}")
            text = draft.text or ""
            _, marks = evidence_passages(text, draft.evidence)
            landings = page.evaluate(LANDINGS, False)
            assert len(landings) == sum(len(f.evidence) for f in form_fields(draft, ["en"], marks)), draft.id
            # The suggestions beside the fields, numbered after the evidence, land on their passages too.
            _, suggested = suggestion_passages(text, draft.suggestions, len(marks) + 1)
            offered = page.evaluate(LANDINGS, True)
            assert len(offered) == len(suggested), draft.id
            for href, held in landings + offered:
                number = int(href.removeprefix("#mark-"))
                entry = marks[number] if number in marks else suggested[number]
                assert held is not None, f"{draft.id}: {href} lands nowhere"
                assert entry.quote in held, f"{draft.id}: {href} does not hold its passage {entry.quote[:60]!r}"
            linked += len(landings)
            if draft.sections and text:
                expect(page.locator('.source .text [role="heading"]').first).to_be_visible()
            if landings:  # following a number shows its passage
                href = landings[-1][0]
                page.locator(f'.fields .evidence a.mark-ref[href="{href}"]').first.click()
                expect(page).to_have_url(f"{url}/drafts/{draft.id}{href}")
                expect(page.locator(href)).to_be_in_viewport()
        assert linked >= 10, "the demo's drafts link their evidence"
        for case in cases:
            page.goto(f"/cases/{case.id}")
            expect(page.get_by_role("heading", level=1)).to_contain_text(case.id)
            assert case_page_lacks(page.content(), case) == [], case.id
    assert [a for a in answers if a[0] >= 400] == [], "a page asked for something that is not there"
    assert (200, f"{url}/static/favicon.svg") in answers, "the page's icon, asked for and there"


# ---------------------------------------------------------------- suggestions the rules trusted too little

SUGGESTING_URL = "https://status.example.org/postmortems/2024-06-proxy.md"
SUGGESTING = b"""# Proxy outage on 3 June 2024

## What happened

The outage was triggered by a change to the proxy configuration.
A synthetic probe would have detected the broken route within a minute.
Customers could not reach the dashboard for 40 minutes.

## Remediation

- Requests to the dashboard failed with errors.
- We reverted the proxy change.
"""


def test_a_writer_takes_a_suggestion_into_its_field(browsers: Callable[..., Page], root: Path, store: Store) -> None:
    entry = SourceEntry(url=SUGGESTING_URL)
    extraction = extract(SUGGESTING, SUGGESTING_URL, None)
    origin = Origin(url=SUGGESTING_URL, canonical_url=SUGGESTING_URL, final_url=SUGGESTING_URL, format="markdown")
    draft = apply_extraction(new_draft(entry), entry, extraction, origin)
    assert draft.detection is None and {s.field for s in draft.suggestions} == {"detection", "remediation"}
    store.write_draft(draft)
    add_reviewer(store, "ann", PASSWORD)
    with served(Settings(root=root)) as url:
        page = signed_in(browsers, url, "ann", viewport={"width": 1400, "height": 900})
        page.goto(f"/drafts/{draft.id}")
        take = page.get_by_role("button", name="Take into detection")
        expect(take).to_be_visible()
        expect(page.locator("#field-detection .suggestions")).to_contain_text("A synthetic probe would have detected")
        if SCREENSHOTS:
            page.screenshot(path=Path(SCREENSHOTS) / "suggestions.png", full_page=True)
        press(page, take)
        expect(page.get_by_role("status")).to_have_text("Took the suggestion into detection as your edit.")
        expect(field(page, "detection.en")).to_have_value(
            "A synthetic probe would have detected the broken route within a minute."
        )
        expect(page.locator("#field-detection .evidence li")).to_contain_text(["cue.detection+modal"])
        expect(page.get_by_role("button", name="Take into detection")).to_have_count(0)
        expect(page.get_by_role("button", name="Take into remediation")).to_be_visible()
        expect(page.locator("ol.history")).to_contain_text("took the suggestion of cue.detection+modal")
    stored = store.read_draft(draft.id)
    assert stored.detection == {"en": "A synthetic probe would have detected the broken route within a minute."}
    assert [(h.by, h.changed) for h in stored.history] == [("ann", ["detection"])]


def test_a_writer_reads_the_finders_ranking_and_dismisses_a_suggestion_with_one_key(
    browsers: Callable[..., Page], root: Path, store: Store
) -> None:
    """The library's finder (one `learn` kept) offers its passages beside their fields, surest first,
    naming the model and why; the text marks each sentence with its likeliest field; `d` on a focused
    suggestion dismisses it."""
    model = fit(training_set(), name="library-test")
    store.state.keep_finder_model(model.to_json())
    text, _ = story(42)
    seen = "The billing error rate climbed on the engineer's dashboard at 10:42 for the on-call team."
    text = text.replace(story(42)[1]["detection"], seen)
    url = "https://example.org/postmortems/2024-07-09-billing.md"
    entry = SourceEntry(url=url)
    extraction = extract(f"# Billing outage\n\n## What happened\n\n{text}\n".encode(), url, None)
    origin = Origin(url=url, canonical_url=url, final_url=url, format="markdown")
    draft = apply_extraction(new_draft(entry), entry, extraction, origin, DraftRules(finder=Finder(model)))
    by_finder = [s for s in draft.suggestions if s.rule.startswith("finder.")]
    assert by_finder and all(s.model == "library-test" for s in by_finder)
    store.write_draft(draft)
    add_reviewer(store, "ann", PASSWORD)
    first = by_finder[0]
    with served(Settings(root=root)) as served_url:
        page = signed_in(browsers, served_url, "ann", viewport={"width": 1400, "height": 1000})
        page.goto(f"/drafts/{draft.id}")
        box = page.locator(f"#field-{first.field if first.field != 'impact' else 'impact.scope'} .suggestions")
        expect(box).to_contain_text(f"finder {first.model}")
        expect(box).to_contain_text("why: ")
        # Each sentence the finder reads as serving a field says so, in its mark (a mark of its own, or the
        # evidence's mark at the same place).
        expect(page.locator('mark[title*="likely detection"]').first).to_be_visible()
        if SCREENSHOTS:
            page.screenshot(path=Path(SCREENSHOTS) / "finder.png", full_page=True)
        item = box.locator("li[tabindex]").filter(has_text=" ".join(first.quote.split())[:40]).first
        item.focus()
        with page.expect_navigation():
            page.keyboard.press("d")
        expect(page.get_by_role("status")).to_have_text(
            f"Dismissed the suggestion for {first.field}: it is not offered again."
        )
    stored = store.read_draft(draft.id)
    assert first not in stored.suggestions and first in stored.dismissed_passages
    assert stored.history[-1].by == "ann" and stored.history[-1].action == "dismiss"


# ---------------------------------------------------------------- duplicates and suggested relations


def test_a_reviewer_merges_a_possible_duplicate_from_the_page(
    site: Site, browsers: Callable[..., Page], case_json: dict[str, Any], make_case: Callable[..., Any]
) -> None:
    """A second draft of the same incident, flagged as its duplicate: the page shows the shared passage
    and, once loaded, the suggested related cases; bob merges it and the page says where it went."""
    from pipeline.merge import record_duplicates
    from pipeline.models import PossibleDuplicate

    copy = reviewable_draft(case_json, "example-org-outage-copy-00000002")
    site.store.write_draft(copy)
    passage = case_json["summary"]["en"].split(". ")[0]
    record_duplicates(
        site.store,
        copy.id,
        [
            PossibleDuplicate(
                id=DRAFT_ID,
                score=0.97,
                reasons=["same text: 97% of the shorter one's wording is in the other"],
                passage=passage,
            )
        ],
    )
    site.store.write_case(related_case(make_case))
    page = signed_in(browsers, site.url, "bob", viewport={"width": 1280, "height": 900})
    page.goto(f"/drafts/{copy.id}")
    box = page.locator("section.duplicates")
    expect(box).to_contain_text("Possible duplicates (1)")
    expect(box.locator("blockquote.passage")).to_have_text(passage)
    expect(box.get_by_role("link", name=DRAFT_ID)).to_have_attribute("href", f"/drafts/{DRAFT_ID}")
    related = page.locator("#similar ul.suggested-related")  # loaded after the page, by htmx
    expect(related.get_by_role("link", name="IL-0900")).to_be_visible()
    expect(related.get_by_role("button", name="Add to related")).to_be_visible()
    if SCREENSHOTS:
        page.locator("div.draft-head").screenshot(path=Path(SCREENSHOTS) / "duplicates.png")
        page.locator("#similar").screenshot(path=Path(SCREENSHOTS) / "related.png")

    press(page, box.get_by_role("button", name=f"Merge into {DRAFT_ID}"))
    expect(page.get_by_role("status")).to_contain_text("Done: merge.")
    expect(page.locator("p.merged")).to_contain_text(f"Merged into {DRAFT_ID}")
    expect(page.locator("section.duplicates")).to_have_count(0)
    merged = site.store.read_draft(copy.id)
    assert merged.state == DraftState.MERGED and merged.merged_into == DRAFT_ID
    assert site.store.read_draft(DRAFT_ID).related == []  # a suggestion is never written by itself
