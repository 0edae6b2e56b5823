"""The HTML reader's headline, date and main-text rules, on small pages written for each rule."""

from __future__ import annotations

import pytest

from pipeline.extract.dates import machine_date
from pipeline.extract.html import TitleMetadata, choose_title, read_html

PROSE = " ".join(
    f"Paragraph {n} of the story explains what the team saw, what they tried first and why "
    "the fix took longer than anyone expected on the day."
    for n in range(6)
)


def page(head: str = "", body: str = "") -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


def article(headline: str, byline: str = "", extra: str = "") -> str:
    paragraphs = "".join(f"<p>{PROSE}</p>" for _ in range(3))
    nav = "<nav><a href='/'>Home</a> <a href='/blog'>Blog</a></nav>"
    return f"{nav}<article><h1>{headline}</h1>{byline}{extra}{paragraphs}</article>"


# -- headline -----------------------------------------------------------------


def test_h1_matching_a_title_part_wins_even_when_the_site_name_is_the_longest_part() -> None:
    title = "Managing dependencies - The Go Programming Language"
    assert (
        choose_title(["Managing dependencies"], TitleMetadata(og_title=title, page_title=title))
        == "Managing dependencies"
    )


def test_site_logo_h1_is_passed_over_for_the_first_part_of_the_title() -> None:
    # No og:title or og:site_name: the last part of "Page - Site" names the site.
    title = "What is Ownership? - The Rust Programming Language"
    assert choose_title(["The Rust Programming Language"], TitleMetadata(page_title=title)) == "What is Ownership?"


def test_h1_that_is_the_host_name_is_not_the_headline() -> None:
    assert (
        choose_title(
            ["davidbau.com"], TitleMetadata(page_title="Vibe Coding"), url="https://davidbau.com/archives/x.html"
        )
        == "Vibe Coding"
    )


def test_call_to_action_h1_loses_to_the_metadata_title() -> None:
    assert (
        choose_title(
            ["Subscribe to our newsletter"], TitleMetadata(og_title="Quarterly results | Acme", site_name="Acme")
        )
        == "Quarterly results"
    )


def test_site_name_is_cut_from_the_h1() -> None:
    h1 = "Critics’ Choice: Best UK Art Exhibitions 2025 – Artlyst"
    assert (
        choose_title([h1], TitleMetadata(og_title=f"{h1} - Artlyst", site_name="Artlyst"))
        == "Critics’ Choice: Best UK Art Exhibitions 2025"
    )


def test_site_name_equal_to_the_whole_title_is_not_a_site_name() -> None:
    title = "How to Design a Website: a Complete Guide"
    assert choose_title([title], TitleMetadata(og_title=title, page_title=title, site_name=title)) == title


def test_json_ld_headline_is_a_reference_and_a_fallback() -> None:
    assert choose_title([], TitleMetadata(headline="Grid failure report")) == "Grid failure report"
    assert (
        choose_title(["Grid failure report", "Related posts"], TitleMetadata(headline="Grid failure report"))
        == "Grid failure report"
    )


def test_h1_inside_the_article_is_read_as_a_reader_sees_it() -> None:
    markup = page(
        "<title>Weekend Coding Agent | Labs</title>",
        article("Weekend<br>Coding <button>Copy link</button><span hidden>tooltip</span>Agent"),
    )
    assert read_html(markup, "https://labs.example/reports/agent").title == "Weekend Coding Agent"


def test_json_ld_headline_is_read_from_the_page() -> None:
    ld = (
        '<script type="application/ld+json">'
        '{"@graph": [{"@type": "NewsArticle", "headline": "Storm &amp; flood"}]}</script>'
    )
    markup = page(ld, f"<div><p>{PROSE}</p></div>")
    assert read_html(markup, "https://news.example/a").title == "Storm & flood"


# -- publication date -----------------------------------------------------------


def test_declared_publication_meta_comes_first() -> None:
    head = (
        '<meta property="article:modified_time" content="2025-08-19T13:25:59+00:00">'
        '<meta property="article:published_time" content="2025-01-29T20:47:55+00:00">'
        '<script type="application/ld+json">{"datePublished": "2024-05-01"}</script>'
    )
    markup = page(head, article("Photography trends", "<p class='byline'>Updated August 19, 2025</p>"))
    assert read_html(markup, "https://photo.example/trends").date == "2025-01-29"


def test_byline_date_under_the_headline_beats_json_ld() -> None:
    head = (
        '<script type="application/ld+json">{"@type": "Article", "datePublished": "2024-03-06T02:16:49-08:00"}</script>'
    )
    markup = page(
        head, article("Analytics for ecommerce", "<div class='meta'>By Elena · Last updated on November 19, 2025</div>")
    )
    assert read_html(markup, "https://blog.example/analytics").date == "2025-11-19"


def test_time_element_in_the_article_when_there_is_no_byline() -> None:
    time = '<section><p>Filed under: news</p><time datetime="2023-03-20T00:00:00-07:00">Monday</time></section>'
    markup = page("", article("Nine food myths", extra=f"<p>{PROSE}</p>{time}"))
    assert read_html(markup, "https://health.example/myths").date == "2023-03-20"


def test_date_in_the_opening_sentence_is_not_a_byline() -> None:
    story = f"<p>On October 6, 2020 our primary database stopped accepting writes. {PROSE}</p>"
    markup = page("<title>Database outage</title>", f"<article><h1>Database outage</h1>{story}</article>")
    assert read_html(markup, "https://acme.example/blog/outage").date != "2020-10-06"


def test_date_in_a_sidebar_next_to_the_headline_is_not_a_byline() -> None:
    sidebar = (
        "<aside>Most read: Ten tips for spring, March 3, 2024</aside><p class='byline'>By Ann Lee, May 5, 2025</p>"
    )
    markup = page("<title>Garden notes</title>", article("Garden notes", sidebar))
    assert read_html(markup, "https://garden.example/notes").date == "2025-05-05"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-01-29T20:47:55+00:00", "2025-01-29"),
        ("2025-12-19T09:04:00+13:00", "2025-12-19"),  # the page's own day, not UTC's
        ("2025/12/18", "2025-12-18"),
        ("March 11, 2026", "2026-03-11"),
        ("01/07/16", None),  # day and month cannot be told apart
        ("https://www.facebook.com/acme", None),
        ("", None),
        (None, None),
    ],
)
def test_machine_date(value: str | None, expected: str | None) -> None:
    assert machine_date(value) == expected


# -- main text -----------------------------------------------------------------


@pytest.mark.parametrize("favor", ["precision", "balanced", "recall"])
def test_main_text_without_menus_or_footers(favor: str) -> None:
    markup = page("<title>Outage</title>", article("Outage") + "<footer>© Acme 2025 · Privacy</footer>")
    document = read_html(markup, "https://acme.example/outage", favor=favor)
    text = " ".join(block.text for block in document.blocks)
    assert "Paragraph 5 of the story" in text
    assert "Privacy" not in text and "Home" not in text


def test_broken_json_ld_is_ignored() -> None:
    markup = page(
        '<script type="application/ld+json">{"headline": </script><title>Plain page</title>',
        f"<div><p>{PROSE}</p></div>",
    )
    assert read_html(markup, "https://example.org/p").title == "Plain page"


def test_a_boxed_callout_reaches_the_draft_by_default() -> None:
    # Blogs put the key finding in a bordered box; trafilatura's precision mode drops any
    # block with a border in its style, its balanced mode (the default here) keeps it.
    callout = (
        '<div class="callout" style="border-left: 4px solid #f0a020; padding: 8px"><p>Root cause: the NCCL '
        "watchdog timed out because one rank stalled on a slow NFS read while the others waited.</p></div>"
    )
    markup = page(
        "<title>Training hang</title>",
        f"<main><h1>Training hang</h1>{f'<p>{PROSE}</p>' * 3}{callout}<p>{PROSE}</p></main>",
    )

    def text(**favor: str) -> str:
        return " ".join(block.text for block in read_html(markup, "https://acme.example/hang", **favor).blocks)

    assert "NCCL watchdog timed out" in text()
    assert "NCCL watchdog timed out" not in text(favor="precision")
    assert "Paragraph 5 of the story" in text(favor="precision")


def test_text_held_in_a_page_wide_form_is_read() -> None:
    # ASP.NET sites wrap the whole page in one <form>: its text is the page's.
    markup = page(
        "<title>Outage</title>",
        f"<form action='/' method='post'>{article('Outage')}<input type='hidden' name='v'></form>",
    )
    text = " ".join(block.text for block in read_html(markup, "https://acme.example/outage").blocks)
    assert "Paragraph 5 of the story" in text and "Home" not in text


@pytest.mark.parametrize("wrapper", ["noscript", "fieldset", "label", "menu"])
def test_an_article_inside_a_part_trafilatura_strips_is_still_read(wrapper: str) -> None:
    # Pages rendered by scripts put the article for readers without them in a <noscript>;
    # other sites wrap it in a fieldset or a label. Balanced mode falls back on the whole
    # page when what it found is short, so those parts must still be there when it does.
    paragraphs = "".join(f"<p>The storage cluster lost quorum after a partition ({n}). {PROSE}</p>" for n in range(4))
    markup = page("<title>Outage</title>", f"<div><p>Intro words.</p><{wrapper}>{paragraphs}</{wrapper}></div>")
    text = " ".join(block.text for block in read_html(markup, "https://acme.example/outage").blocks)
    assert text.count("lost quorum") == 4


@pytest.mark.parametrize(
    "beside",
    [
        "<noscript><p>This site works best with JavaScript enabled. Please enable JavaScript in your browser "
        "settings to receive live updates on incidents and maintenance.</p></noscript>",
        "<menu>" + "".join(f"<li><p>Product area number {n} overview</p></li>" for n in range(15)) + "</menu>",
    ],
)
def test_a_short_status_update_keeps_to_itself(beside: str) -> None:
    # Two sentences are less than trafilatura calls a result, so its fallbacks run; the
    # notice or menu stripped beside them holds no article and stays out.
    update = (
        "<main><h1>Elevated API errors</h1><p>We are investigating elevated error rates on the API in eu-west-1.</p>"
        "<p>Update 14:05 UTC: a fix has been deployed and error rates are back to normal.</p></main>"
    )
    markup = page("<title>Elevated API errors - Acme Status</title>", beside + update)
    texts = [block.text for block in read_html(markup, "https://status.acme.example/incidents/1").blocks]
    assert texts[0] == "Elevated API errors"
    assert "back to normal" in texts[-1]
    assert not any("JavaScript" in text or "Product area" in text for text in texts)


def test_preformatted_output_keeps_its_lines() -> None:
    # Postmortems paste command output in a bare <pre>; joined into one line it is unreadable.
    output = "NAME    READY   STATUS\npg-0    1/1     Running\npg-1    0/1     CrashLoopBackOff"
    markup = page(
        "<title>Outage</title>", f"<article><h1>Outage</h1><p>{PROSE}</p><pre>{output}</pre><p>{PROSE}</p></article>"
    )
    texts = [block.text for block in read_html(markup, "https://acme.example/outage").blocks]
    assert output in texts
