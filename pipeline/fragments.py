"""Text fragments, pure: a link that opens a page at a passage and marks it.

    text_fragment(text, start, end)           -> "#:~:text=..."
    fragment_link(url, text, start, end)      -> url + the directive

Built per the WICG "URL Fragment Text Directives" (https://wicg.github.io/scroll-to-text-fragment/):
`#:~:text=[prefix-,]start[,end][,-suffix]`. Every character but `[a-zA-Z0-9]` and
`! $ ' ( ) * + . / : ; = ? @ _ ~` is percent-encoded as UTF-8, the syntax's own `-`, `,`
and `&` included. A browser matches each term case-insensitively, on word boundaries,
within one block (a paragraph, a list item, a cell), and goes to the first match:

- a quote of one line shorter than 300 characters is given whole (`start`); a longer one,
  or one over several lines, by its first and last few words (`start,end`), each from one line;
- when the quote is not unique in the text, the words before and after it are added as
  `prefix-` and `-suffix`, one word more each time until it is, five at most;
- list markers (`- `, `1. `), heading marks and the ` | ` between table cells are the
  extractor's, not the page's text, and are never part of a term.

Whether a term matches is judged on the draft's text, which approximates the page as
rendered; the quote printed beside the link is the evidence, the link a convenience.
"""

from __future__ import annotations

import re
from urllib.parse import quote as percent_encode

__all__ = ["encode_term", "fragment_link", "text_fragment"]

_SAFE = "!$'()*+./:;=?@_~"  # TextDirectiveExplicitChar besides letters and digits; quote() keeps "-" too
EXACT_LIMIT = 300  # the specification's advice: an exact term below 300 characters, a range above
RANGE_WORDS = (4, 6, 8)  # words of each end of a range, more when fewer do not find the quote
CONTEXT_WORDS = 5  # at most, each side
_CONTEXT_WINDOW = 2000  # characters read on each side for them: far more than five words of any block
_MARKER = re.compile(r"^(?:[-*+>|]|#{1,6}|\d{1,3}[.)])$")  # a token the page does not show as text
_LINE = re.compile(r"\n| \| ")  # a block boundary in the draft's text: a line break or a table cell joiner
_GAP = r"[\s\-*+>|#]*"  # what may stand between a context term and the match (white space, markers)


def encode_term(term: str) -> str:
    """One term percent-encoded for a text directive (`-` as %2D, `,` as %2C, `&` as %26, space as %20)."""
    return percent_encode(term, safe=_SAFE).replace("-", "%2D")


def _tokens(line: str) -> list[str]:
    words = line.split()
    while words and _MARKER.match(words[0]):
        words.pop(0)
    return words


def _lines(text: str) -> list[list[str]]:
    """The words of each block of `text` with the extractor's markers left out; empty blocks dropped."""
    return [words for words in (_tokens(line) for line in _LINE.split(text)) if words]


def _term_pattern(words: list[str]) -> str:
    return r"\s+".join(re.escape(w) for w in words)


def _directive(prefix: list[str], start: list[str], end: list[str], suffix: list[str]) -> re.Pattern[str]:
    """How a browser would find the directive in the text, roughly: the first match is where it goes."""
    pattern = r"(?<!\w)(?P<start>" + _term_pattern(start) + ")"
    if end:
        pattern += r"[\s\S]*?(?P<end>" + _term_pattern(end) + ")"
    pattern += r"(?!\w)"
    if prefix:
        pattern = _term_pattern(prefix) + _GAP + pattern
    if suffix:
        pattern += _GAP + _term_pattern(suffix)
    return re.compile(pattern, re.IGNORECASE)


def _encode(prefix: list[str], start: list[str], end: list[str], suffix: list[str]) -> str:
    parts = [encode_term(" ".join(start))]
    if end:
        parts.append(encode_term(" ".join(end)))
    if prefix:
        parts.insert(0, encode_term(" ".join(prefix)) + "-")
    if suffix:
        parts.append("-" + encode_term(" ".join(suffix)))
    return "#:~:text=" + ",".join(parts)


def text_fragment(text: str, start: int, end: int) -> str:
    """The text directive (`#:~:text=...`) that finds text[start:end] in a page showing `text`.

    Raises ValueError when the offsets hold no words.
    """
    lines = _lines(text[start:end])
    if not lines:
        raise ValueError(f"no words at {start}-{end} to link to")
    words = [w for line in lines for w in line]
    one_line = len(lines) == 1
    exact = one_line and (len(" ".join(words)) < EXACT_LIMIT or len(words) < 2 * RANGE_WORDS[0])
    # Where the quote's words lie in the text, so that a match can be told to be this passage.
    quoted = text[start:end]
    first_at = start + quoted.find(words[0])
    last_end = start + quoted.rfind(words[-1]) + len(words[-1])
    # Only the block next to the quote gives context words, and only its last (first) few: a window
    # of the text, not all of it, is read for them (each passage of a long page read it whole).
    before = _lines(text[max(0, start - _CONTEXT_WINDOW) : start])
    after = _lines(text[end : end + _CONTEXT_WINDOW])
    prefix_words = before[-1] if before else []
    suffix_words = after[0] if after else []

    candidates: list[tuple[list[str], list[str], list[str], list[str]]] = []
    for k in range(min(CONTEXT_WORDS, max(len(prefix_words), len(suffix_words))) + 1):
        prefix = prefix_words[-k:] if k else []
        suffix = suffix_words[:k]
        if exact:
            candidates.append((prefix, words, [], suffix))
        else:
            for n in RANGE_WORDS:
                head, tail = lines[0][:n], lines[-1][-n:]
                if one_line and len(head) + len(tail) > len(words):
                    break
                candidates.append((prefix, head, tail, suffix))
    ours: tuple[list[str], list[str], list[str], list[str]] | None = None
    for candidate in candidates:
        matches = list(_directive(*candidate).finditer(text))
        at_quote = bool(matches) and (
            matches[0].start("start") == first_at and matches[0].end("end" if candidate[2] else "start") == last_end
        )
        if at_quote and len(matches) == 1:
            return _encode(*candidate)
        if at_quote and ours is None:
            ours = candidate
    return _encode(*(ours or candidates[-1]))


def fragment_link(url: str, text: str, start: int, end: int) -> str:
    """`url` opening at text[start:end]; a fragment the URL already has stays in front of the directive."""
    directive = text_fragment(text, start, end)
    if "#" in url:
        base, _, fragment = url.partition("#")
        fragment = fragment.split(":~:", 1)[0]
        return f"{base}#{fragment}{directive.removeprefix('#')}"
    return url + directive
