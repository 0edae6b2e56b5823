"""The texts' Markdown (pipeline/render.py): the subset rendered, everything else shown as written."""

from __future__ import annotations

import itertools
import random

import lxml.html
import pytest
from markupsafe import Markup, escape

from pipeline.render import _parsed, _plain, escaped, inline, inline_text, markdown


def tree(html: str) -> lxml.html.HtmlElement:
    return lxml.html.fragment_fromstring(html, create_parent="div")


def test_inline_code_is_code_and_a_lone_paragraph_stays_inline() -> None:
    html = markdown("`CUDA_LAUNCH_BLOCKING=1` 을 설정하자, *한 번만*")
    assert isinstance(html, Markup)
    assert html == "<code>CUDA_LAUNCH_BLOCKING=1</code> 을 설정하자, <em>한 번만</em>"


def test_a_star_between_digits_is_a_multiplication_not_emphasis() -> None:
    # CommonMark reads "1024*14 ... 1024*12" as an emphasis from one star to the other
    said = "Keeping the hidden size at 1024*14 and adding layers, 1024*12 hung; 2*3*4 too"
    assert markdown(said) == said
    assert markdown("*stages* at 8*A100, `1024*10` kept") == "<em>stages</em> at 8*A100, <code>1024*10</code> kept"
    assert inline("`x` at 1024*14 and 1024*12 *whole*") == "<code>x</code> at 1024*14 and 1024*12 <em>whole</em>"
    assert inline_text("1024*14 and 1024*12 *whole*") == "1024*14 and 1024*12 whole"


def test_a_links_text_is_decoded_unless_it_would_hold_a_control_character() -> None:
    html = markdown("See https://e.org/%ED%95%9C, https://e.org/a%1Bb and [x](https://e.org/%E2%80%AEz)")
    assert ">https://e.org/한</a>" in html
    assert ">https://e.org/a%1Bb</a>" in html and "\x1b" not in html and "\u202e" not in html


def test_a_dash_list_is_a_list_and_may_follow_a_line() -> None:
    html = markdown("Two lessons:\n- a\n- b `c`")
    doc = tree(html)
    assert [p.text_content() for p in doc.findall("p")] == ["Two lessons:"]
    assert [li.text_content() for li in doc.findall("ul/li")] == ["a", "b c"]
    assert doc.find("ul/li/code").text == "c"


def test_a_bare_url_is_a_link_that_says_nofollow_and_leaves_the_full_stop() -> None:
    html = markdown("See https://example.com/runbook?a=1&b=2. Or [the log](https://example.com/log).")
    links = tree(html).findall(".//a")
    assert [(a.get("href"), a.text, a.get("rel")) for a in links] == [
        ("https://example.com/runbook?a=1&b=2", "https://example.com/runbook?a=1&b=2", "nofollow noopener"),
        ("https://example.com/log", "the log", "nofollow noopener"),
    ]
    assert "&amp;b=2" in html  # escaped in the attribute and the text
    assert markdown("mail <mailto:oncall@example.com>").count('href="mailto:oncall@example.com"') == 1


def test_a_word_that_looks_like_a_host_is_not_linked() -> None:
    assert "<a" not in markdown("example.com and node-1.internal failed")


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "<b>bold</b> &lt;i&gt;",
    ],
)
def test_raw_html_is_shown_as_text(text: str) -> None:
    doc = tree(markdown(text))
    assert [element.tag for element in doc.iter()] == ["div"], "no element of the text's own"
    assert doc.text_content() == text.replace("&lt;", "<").replace("&gt;", ">")


@pytest.mark.parametrize(
    "text",
    [
        "[click](javascript:alert(1))",
        "[click](JAVASCRIPT:alert(1))",
        "[click](data:text/html,<script>alert(1)</script>)",
        "[click](vbscript:x)",
        "[click](/relative/path)",
        "<javascript:alert(1)>",
    ],
)
def test_a_link_to_anything_but_http_https_or_mailto_is_not_a_link(text: str) -> None:
    html = markdown(text)
    assert tree(html).findall(".//a") == []
    assert "click" in html or "javascript" in html


def test_headings_images_quotes_and_code_blocks_are_text() -> None:
    html = markdown("# Not a heading\n\n![a chart](https://example.com/c.png)\n\n> quoted\n\n    indented")
    doc = tree(html)
    assert doc.findall(".//h1") == [] and doc.findall(".//img") == [] and doc.findall(".//blockquote") == []
    assert doc.findall(".//pre") == []
    shown = [p.text_content() for p in doc.findall("p")]
    assert shown == ["# Not a heading", "![a chart](https://example.com/c.png)", "> quoted", "indented"]


def test_korean_is_untouched_and_a_newline_is_a_line_break() -> None:
    text = "체크포인트 쓰기가 학습 랭크의 임계 경로 위에 있어서, 파일 시스템 호출 하나가 느려지자 작업 전체가 멈췄다."
    assert markdown(text) == text
    assert markdown("첫 줄\n둘째 줄") == "첫 줄<br>\n둘째 줄"


def test_a_control_or_bidirectional_character_does_not_pass() -> None:
    assert markdown("a\x1b[2Jb \u202eevil") == "a[2Jb evil"


@pytest.mark.parametrize("seed", range(5))
def test_a_text_taken_for_plain_renders_as_the_parser_renders_it(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [
        *"가나다 시스템이 abc XYZ 09 .,;:'\"()%#=~|/-+*`_[]<>&!\\\n\t",
        " 1. ",
        "- ",
        "http://a.b",
        "WWW.",
        "Mailto:",
    ]
    plain = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        if _plain(text):
            plain += 1
            assert markdown(text) == _parsed(text), repr(text)
    assert plain > 300, "the test tries enough plain texts"


def test_escaped_is_markupsafes_escaping_as_a_str() -> None:
    pieces = ["a", "장", "&", "<", ">", "'", '"', "&amp;", "\n"]
    for text in map("".join, itertools.product(pieces, repeat=3)):  # every string of three pieces
        done = escaped(text)
        assert type(done) is str and done == str(escape(text)), repr(text)
    assert escaped(Markup("<b>safe</b>")) == "<b>safe</b>", "what says it is HTML is left as it is"
    assert escaped(7) == "7"


def test_a_titles_code_and_emphasis_are_rendered_and_nothing_else() -> None:
    assert inline("`train_step` 멈춤") == "<code>train_step</code> 멈춤"
    assert inline("The `x` *hang*") == "The <code>x</code> <em>hang</em>"
    # never a link (a title sits inside one on the listings), never a list, its HTML text
    said = "- see [docs](https://example.com) https://example.com <b>&amp;</b>"
    assert inline(said) == "- see [docs](https://example.com) https://example.com &lt;b&gt;&amp;&lt;/b&gt;"
    assert inline("a `<script>` b") == "a <code>&lt;script&gt;</code> b"


def test_a_titles_plain_text_has_no_backticks_nor_markup() -> None:
    assert inline_text("`train_step` 멈춤") == "train_step 멈춤"
    assert inline_text("The *`x`* hang \\*") == "The x hang *"
    assert inline_text("plain & <b>") == "plain & <b>", "plain text, escaped where it is printed"
