"""Extraction: bytes in, text, metadata and sections out — real documents, no network."""

from __future__ import annotations

import codecs
import json
import tracemalloc
from collections.abc import Callable

import pytest
from charset_normalizer import from_bytes
from documents import POSTMORTEM_MD, make_pdf
from helpers import SHARED

from pipeline.errors import EmptyDocument, UnsupportedContent
from pipeline.extract import decode_text, detect_format, extract, org_for_url
from pipeline.extract.headings import field_for_heading
from pipeline.models import SectionField
from pipeline.precedence import Hints, Said

POSTMORTEMS = SHARED / "corpus" / "postmortems"


def test_markdown_front_matter_title_date_and_sections() -> None:
    x = extract(POSTMORTEM_MD.encode(), "https://github.com/acme/postmortems/blob/main/2024-03-05-cache.md")
    assert x.format == "markdown"
    assert x.title == "Cache stampede took the API down"
    assert (x.date, x.date_kind) == ("2024-03-05", "published")
    assert (x.org, x.org_slug) == ("acme", "acme")
    fields = {s.heading: s.field for s in x.sections}
    assert fields == {
        "Cache stampede took the API down": None,
        "Summary": "summary",
        "Impact": "impact",
        "Timeline": "timeline",
        "2024-03-05": "timeline",  # a sub-heading inherits its section's field
        "Root cause": "root_cause",
        "Contributing factors": "contributing",
        "Action items": "action_items",
        "Lessons learned": "lessons",
    }
    assert (x.summary or "").startswith("On 5 March 2024 the API returned errors")
    assert "- Warm the cache before a restart.\n- Add request coalescing" in x.text
    assert "database" in x.tags["components"]


def test_toml_front_matter_and_a_date_in_the_url() -> None:
    text = (
        '+++\ntitle = "docs.rs outage"\n+++\n\n'
        "The build queue stopped on 21 October 2019.\n\n## Resolution\n\nRestarted it.\n"
    )
    x = extract(text.encode(), "https://blog.example.org/2019/10/24/docsrs-outage/", None)
    assert x.format == "markdown"
    assert x.title == "docs.rs outage"
    assert (x.date, x.date_kind) == ("2019-10-24", "published")
    assert x.texts_for(SectionField.REMEDIATION) == ["Restarted it."]


def test_a_logbook_without_template_headings_gets_a_summary_from_its_opening() -> None:
    text = (
        "# Chronicles\n\nTrials and tribulations of the 176B run, kept day by day by the engineers on call.\n\n"
        "## 2022-03-06\n\nThe run hung at iteration 1200 with an NCCL timeout.\n"
    )
    x = extract(text.encode(), "https://github.com/org/repo/blob/main/chronicles.md")
    assert (x.summary or "").startswith("Trials and tribulations of the 176B run")
    assert (x.date, x.date_kind) == ("2022-03-06", "incident")


def test_html_headings_become_sections_and_the_site_name_is_cut_from_the_title() -> None:
    page = (
        "<html><head><title>Database outage on 2 May | Acme Engineering</title>"
        '<meta property="og:site_name" content="Acme Engineering"></head><body>'
        "<nav><a href='/'>Home</a><a href='/blog'>Blog</a></nav>"
        "<article><h1>Database outage on 2 May</h1>"
        "<p>On 2 May 2023 our primary database stopped accepting writes for 25 minutes after a failover.</p>"
        "<h2>What happened</h2><p>The replica promoted during the failover had fallen behind by several minutes.</p>"
        "<h2>Detection</h2><p>The write error rate alert paged the on-call engineer within two minutes.</p>"
        "<h2>Corrective actions</h2>"
        "<ul><li>Block promotion of a lagging replica.</li><li>Test failover monthly.</li></ul>"
        "</article><footer>© Acme</footer></body></html>"
    )
    x = extract(page.encode(), "https://acme.example/blog/database-outage", "text/html; charset=utf-8")
    assert x.title == "Database outage on 2 May"
    assert x.org == "Acme"  # the site's name without the publication's word
    assert [(s.heading, s.field) for s in x.sections if s.heading] == [
        ("Database outage on 2 May", None),
        ("What happened", "summary"),
        ("Detection", "detection"),
        ("Corrective actions", "action_items"),
    ]
    assert "Home" not in x.text and "© Acme" not in x.text


def test_pdf_text_layer_is_read() -> None:
    pdf = make_pdf(
        [
            "1 Introduction",
            "We trained on 16,384 GPUs for 54 days and saw 419 unexpected interruptions.",
            "Posted on July 23, 2024.",
        ],
        title="Reliability at scale",
    )
    x = extract(pdf, "https://arxiv.org/pdf/2407.21783")
    assert x.format == "pdf"
    assert x.title == "Reliability at scale"
    assert "419 unexpected interruptions" in x.text
    assert (x.date, x.date_kind) == ("2024-07-23", "published")


@pytest.mark.parametrize(
    ("url", "content_type", "body", "expected"),
    [
        ("https://github.com/o/r/blob/main/a.md", "text/plain", b"# x", "markdown"),
        ("https://example.org/paper", "application/pdf", b"%PDF-1.4", "pdf"),
        ("https://example.org/a", None, b"%PDF-1.7 ...", "pdf"),
        ("https://example.org/post/", "text/html", b"<p>x</p>", "html"),
        ("https://example.org/notes.txt", None, b"plain", "text"),
        ("https://example.org/saved", None, b"<!DOCTYPE html><html>", "html"),
        ("https://example.org/saved", None, b"+++\ntitle='x'\n+++\n", "markdown"),
    ],
)
def test_format_is_decided_by_type_then_url_then_bytes(
    url: str, content_type: str | None, body: bytes, expected: str
) -> None:
    assert detect_format(url, content_type, body) == expected


def test_anything_else_is_refused_with_the_reason() -> None:
    with pytest.raises(
        UnsupportedContent, match=r"https://example.org/a.png: image/png is not a document incidentlib reads"
    ):
        extract(b"\x89PNG", "https://example.org/a.png", "image/png")


def test_binary_served_as_html_is_refused() -> None:
    with pytest.raises(UnsupportedContent, match="binary content served as text/html"):
        extract(bytes(range(256)) * 20, "https://example.org/page", "text/html")


@pytest.mark.parametrize("body", [b"", b"<html><body></body></html>", b"   \n\n  "])
def test_an_empty_page_says_so(body: bytes) -> None:
    with pytest.raises(EmptyDocument, match="no text found"):
        extract(body, "https://example.org/empty", "text/html")


def test_malformed_html_still_gives_its_text() -> None:
    body = (
        b"<html><body><div><p>The load balancer dropped every connection for ten minutes after a config push"
        b"<div><p>Rolled back at 14:10"
    )
    x = extract(body, "https://example.org/broken", "text/html")
    assert "load balancer dropped every connection" in x.text


def test_wrong_or_missing_charset() -> None:
    text = "Die Störung dauerte 40 Minuten und betraf alle Nutzer in Köln und München gleichermaßen."
    # UTF-8 bytes declared as Latin-1: the bytes win.
    x = extract(f"<p>{text}</p>".encode(), "https://example.org/a", "text/html; charset=iso-8859-1")
    assert "Störung" in x.text and "München" in x.text
    # Windows-1252 bytes with no charset at all.
    x = extract(f"<html><body><p>{text}</p></body></html>".encode("cp1252"), "https://example.org/b", "text/html")
    assert "Störung" in x.text


CAFE = "Café outage – naïve retry: the cache’s “warm-up” failed for 20 minutes after a deploy."
TOKYO = "東京リージョンで 40 分間の障害: キャッシュの設定誤りにより API が停止しました。"
MOSCOW = "Сбой кэша длился сорок минут и затронул всех пользователей в Москве и Санкт-Петербурге."
WARSAW = "Awaria pamięci podręcznej spowodowała, że żądania były błędnie obsługiwane przez łącza."
ISTANBUL = "Dağıtım sırasında önbellek yapılandırması hatalıydı; istekler kırk dakika başarısız oldu."
REYKJAVIK = "Bilunin í skyndiminni stóð yfir í fjörutíu mínútur og hafði áhrif á alla notendur þjónustunnar."


@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        # Issue 13: windows-1252 declared as UTF-8 came out as cp775, "Cafķ outage ¢ na’ve retry".
        (CAFE.encode("cp1252"), "text/html; charset=utf-8", CAFE),
        (CAFE.encode("cp1252"), "text/html", CAFE),
        # Latin-1 declared is read as windows-1252, as browsers do: 0x92 is ’, not a control character.
        (CAFE.encode("cp1252"), "text/html; charset=ISO-8859-1", CAFE),
        ("Störung in Köln".encode("latin-1"), "text/plain; charset=latin1", "Störung in Köln"),
        (f'<meta charset="windows-1252"><p>{CAFE}</p>'.encode("cp1252"), "text/html", CAFE),
        # UTF-8 wins over a wrong declaration, and needs none.
        (CAFE.encode(), "text/html; charset=iso-8859-1", CAFE),
        (TOKYO.encode(), None, TOKYO),
        (TOKYO.encode(), "text/html; charset=Shift_JIS", TOKYO),
        # Shift-JIS, declared and not: not taken for windows-1252.
        (TOKYO.encode("shift_jis"), "text/html; charset=Shift_JIS", TOKYO),
        (f"<html><body><p>{TOKYO}</p></body></html>".encode("shift_jis"), "text/html", TOKYO),
        # Other scripts and Central European letters are left to the guess, not forced into windows-1252.
        (f"<html><body><p>{MOSCOW}</p></body></html>".encode("cp1251"), "text/html", MOSCOW),
        (f"<html><body><p>{WARSAW}</p></body></html>".encode("cp1250"), "text/html", WARSAW),
        # Turkish reads as Latin text in windows-1252 too (`daðýtým`): its letters ğ ı ş tell.
        (f"<html><body><p>{ISTANBUL}</p></body></html>".encode("cp1254"), "text/html", ISTANBUL),
        (ISTANBUL.encode("cp1254"), None, ISTANBUL),
        # Icelandic writes ð ý þ too, in windows-1252, with its acute vowels.
        (f"<html><body><p>{REYKJAVIK}</p></body></html>".encode("cp1252"), "text/html", REYKJAVIK),
        (codecs.BOM_UTF16_LE + CAFE.encode("utf-16-le"), "text/plain", CAFE),
    ],
    ids=[
        "windows-1252-declared-utf-8",
        "windows-1252-undeclared",
        "windows-1252-declared-latin-1",
        "latin-1-declared",
        "windows-1252-meta",
        "utf-8-declared-latin-1",
        "utf-8-undeclared",
        "utf-8-declared-shift-jis",
        "shift-jis-declared",
        "shift-jis-undeclared",
        "windows-1251-undeclared",
        "windows-1250-undeclared",
        "windows-1254-undeclared",
        "windows-1254-bare",
        "windows-1252-icelandic",
        "utf-16-bom",
    ],
)
def test_text_is_decoded_in_the_charset_it_is_really_in(body: bytes, content_type: str | None, text: str) -> None:
    assert text in decode_text(body, content_type, "https://example.org/a")


def test_a_large_page_in_another_code_page_is_decoded_once() -> None:
    line = MOSCOW + " "
    body = (line * 40_000).encode("cp1251")  # 3.5 MiB
    decode_text(line.encode("cp1251"), None, "https://example.org/a")  # what is imported on first use

    def peak(decode: Callable[[], str]) -> int:
        tracemalloc.start()
        try:
            assert decode().startswith(line)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    guess_alone = peak(lambda: str(from_bytes(body).best()))
    # Every guess decoded whole and kept: 40.2 MiB at the peak against the guess's 23.5 MiB.
    assert peak(lambda: decode_text(body, None, "https://example.org/a")) < 1.1 * guess_alone


def test_a_page_declaring_utf8_in_windows_1252_is_drafted_with_its_words() -> None:
    page = f"<html><body><h1>Café outage</h1><p>{CAFE}</p></body></html>".encode("cp1252")
    x = extract(page, "https://example.org/cafe", "text/html; charset=utf-8")
    assert CAFE in x.text and x.title == "Café outage"


def test_org_comes_from_the_github_owner_or_the_domain() -> None:
    assert org_for_url("https://github.com/dfds/postmortems/blob/master/x.md") == "dfds"
    assert org_for_url("https://blog.rust-lang.org/inside-rust/2023/07/21/x/") == "rust-lang"
    assert org_for_url("https://engineering.fb.com/2021/10/05/x/") == "fb"


def test_registry_hints_win_over_the_page() -> None:
    hints = Hints(registry=Said.hint(org="Acme Corp", title="Cache stampede", date="2024-03"))
    x = extract(POSTMORTEM_MD.encode(), "https://example.org/pm.md", hints=hints)
    assert (x.org, x.org_slug, x.title, x.date, x.date_kind) == (
        "Acme Corp",
        "acme-corp",
        "Cache stampede",
        "2024-03",
        "published",
    )


@pytest.mark.parametrize(
    ("heading", "field"),
    [
        ("Root Cause Analysis", "root_cause"),
        ("5 Whys", "root_cause"),
        ("Contributing Factors (findings)", "contributing"),
        ("What went well", "lessons"),
        ("Where we got lucky", "lessons"),
        ("Leadup", "trigger"),
        ("Mitigation", "remediation"),
        ("Next steps", "action_items"),
        ("2. Customer impact", "impact"),
        ("Appendix", None),
    ],
)
def test_template_headings_map_to_case_fields(heading: str, field: str | None) -> None:
    assert field_for_heading(heading) == field


def test_every_heading_of_the_real_postmortems_maps_to_its_field() -> None:
    """The shared corpus of real postmortems, read when it lies beside the checkout (bench/extraction.py
    measures the same figures)."""
    if not (POSTMORTEMS / "index.json").is_file():
        pytest.skip(f"{POSTMORTEMS} not found: the real postmortems are read only beside ../shared")
    for item in json.loads((POSTMORTEMS / "index.json").read_text(encoding="utf-8")):
        x = extract((POSTMORTEMS / item["file"]).read_bytes(), item["source_url"])
        fields = {s.heading: s.field for s in x.sections}
        for heading in item["headings"]:
            assert fields.get(heading["heading"]) == heading["field"], (item["file"], heading)
        assert x.title in item["titles"], item["file"]
        if item["dates"]:
            assert x.date in item["dates"], item["file"]


def test_tags_for_several_vocabularies_match_one_pass_each() -> None:
    """One pass over the text for all vocabularies finds what a pass per vocabulary finds,
    where a longer phrase of one vocabulary overlaps a word of another ("gpu fell off")."""
    from pipeline.extract.tags import suggest_tags, suggest_terms
    from pipeline.vocabulary import Kind

    text = (
        "The GPU fell off the bus twice; an NCCL timeout followed, then a collective operation "
        "timeout. The gpu died again and all-reduce hung; the NCCL watchdog fired. An ECC error was "
        "logged for the GPU. Checkpoint-writer (not a checkpoint) was fine."
    )
    kinds: tuple[Kind, ...] = ("domains", "components", "symptoms", "contributing")
    together = suggest_tags(kinds, text, min_hits=1)
    assert together == {kind: suggest_terms(kind, text, min_hits=1) for kind in kinds}
    assert "gpu-hardware" in together["components"] and "gpu-unavailable" in together["symptoms"]
    assert together["symptoms"][0] == "nccl-timeout"  # three mentions, most first


_QUOTED = "The outage was triggered by a change to the proxy configuration, as the first report had it."
_TOLD = "The workers stopped after the deploy, and the queue filled up with jobs nobody could run for hours."


@pytest.mark.parametrize(
    ("body", "url", "content_type"),
    [
        (
            f"# Queue outage\n\n## What happened\n\nA customer wrote:\n\n> {_QUOTED}\n\n{_TOLD}\n".encode(),
            "https://example.org/queue.md",
            None,
        ),
        (
            "<html><body><article><h1>Queue outage</h1><h2>What happened</h2>"
            "<p>A customer wrote to us on the day, in a long note that we keep here for the record.</p>"
            f"<blockquote><p>{_QUOTED}</p></blockquote><p>{_TOLD}</p></article></body></html>".encode(),
            "https://example.org/queue.html",
            "text/html",
        ),
    ],
    ids=["markdown", "html"],
)
def test_a_blockquote_keeps_its_words_and_is_marked_quoted(body: bytes, url: str, content_type: str | None) -> None:
    extraction = extract(body, url, content_type)
    (happened,) = [s for s in extraction.sections if s.heading == "What happened"]
    assert _QUOTED in happened.text and _TOLD in happened.text, "the text is the page's own, no mark in it"
    assert happened.quotes == [_QUOTED]
    rules = {p.text: p.rule for p in extraction.passages["trigger"]}
    assert rules[_QUOTED] == "cue.trigger+quoted"
