"""Text fragment links (WICG scroll-to-text): terms encoded, ranges for long quotes, context only when needed."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from pipeline.fragments import encode_term, fragment_link, text_fragment


def at(text: str, quote: str, occurrence: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(quote, start + 1)
    return start, start + len(quote)


def terms(directive: str) -> list[str]:
    """The directive's comma-separated parts, each decoded: the way a browser reads them."""
    assert directive.startswith("#:~:text=")
    return [unquote(part) for part in directive.removeprefix("#:~:text=").split(",")]


def test_every_character_the_syntax_uses_is_percent_encoded() -> None:
    assert encode_term("The fix-up, A & B, was 100% done.") == (
        "The%20fix%2Dup%2C%20A%20%26%20B%2C%20was%20100%25%20done."
    )
    assert encode_term("crates.io → #2226 [x] a|b") == "crates.io%20%E2%86%92%20%232226%20%5Bx%5D%20a%7Cb"
    # The characters the grammar allows bare stay bare.
    assert encode_term("a!$'()*+./:;=?@_~z") == "a!$'()*+./:;=?@_~z"


def test_a_unique_short_quote_is_one_exact_term() -> None:
    text = "Summary\n\nA deploy at 09:12 broke logins. Logins came back at 09:40, after a rollback."
    directive = text_fragment(text, *at(text, "A deploy at 09:12 broke logins."))
    assert directive == "#:~:text=A%20deploy%20at%2009:12%20broke%20logins."


def test_a_quote_that_is_not_unique_gets_a_prefix_and_a_suffix_until_it_is() -> None:
    text = (
        "Timeline\n\n"
        "- 09:12 We rolled back the release. Errors stayed high.\n"
        "- 09:30 We rolled back the release. Errors fell to zero."
    )
    second = text_fragment(text, *at(text, "We rolled back the release.", 1))
    assert terms(second) == ["09:30-", "We rolled back the release.", "-Errors"]
    first = text_fragment(text, *at(text, "We rolled back the release.", 0))
    assert terms(first) == ["09:12-", "We rolled back the release.", "-Errors"]


def test_context_never_takes_the_extractors_markers() -> None:
    text = "- restarted the workers\n- restarted the workers | node pool b"
    directive = text_fragment(text, *at(text, "restarted the workers", 1))
    # The second item has no words before it but the first item's, and none of "- " or " | ".
    assert terms(directive) == ["workers-", "restarted the workers", "-node"]


def test_a_long_quote_is_a_range_of_its_first_and_last_words() -> None:
    sentence = " ".join(f"word{i}" for i in range(70)) + "."
    text = "Root cause\n\n" + sentence + "\n\nLessons follow."
    assert terms(text_fragment(text, *at(text, sentence))) == [
        "word0 word1 word2 word3",
        "word66 word67 word68 word69.",
    ]


def test_a_quote_over_several_blocks_is_a_range_from_the_first_to_the_last() -> None:
    text = "Remediation\n\n- Roll back, then page.\n- Add an alert on 5xx rates\n\nLessons"
    start, _ = at(text, "Roll back")
    _, end = at(text, "5xx rates")
    assert terms(text_fragment(text, start, end)) == ["Roll back, then page.", "alert on 5xx rates"]


def test_a_range_whose_end_comes_earlier_in_the_quote_grows_until_it_finds_this_end() -> None:
    words = [f"word{i}" for i in range(80)]
    body = " ".join(["It began quietly that morning: the disk filled up", *words, "and then the disk filled up"])
    text = "Impact\n\n" + body
    # Four last words would end at their first match, early in the quote: six end it where it ends.
    assert terms(text_fragment(text, *at(text, body))) == [
        "It began quietly that morning: the",
        "and then the disk filled up",
    ]


def test_a_link_keeps_the_address_and_its_own_fragment() -> None:
    text = "One passage here."
    assert fragment_link("https://web.archive.org/web/20260101000000/https://example.org/pm", text, 0, 17) == (
        "https://web.archive.org/web/20260101000000/https://example.org/pm#:~:text=One%20passage%20here."
    )
    assert fragment_link("https://example.org/pm#impact", text, 4, 11) == (
        "https://example.org/pm#impact:~:text=passage"
    )


def test_offsets_without_words_are_refused() -> None:
    with pytest.raises(ValueError, match="no words"):
        text_fragment("a  \n\n b", 1, 5)
