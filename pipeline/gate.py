"""The one gate for text from outside, pure: what a record's text may hold, and text made safe to print.

Text reaches the records from crawled pages, feeds, the registry's files, the `set` command, the web form
and a language model's answers. Some characters in it break what the library writes or mislead whoever
reads it:

- C0 and C1 control characters (but tab, line feed and carriage return) and DEL: XML 1.0 has no place for
  most of them (a feed or a page with one fails to build), and a terminal runs them (`ESC[2J` clears the
  screen, `ESC]0;…BEL` retitles the window);
- lone surrogates, which no UTF-8 file can hold, and the Unicode non-characters (U+FFFE, U+FFFF, U+FDD0 to
  U+FDEF and the last two code points of every plane), which XML refuses;
- bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066 to U+2069): invisible, they
  reorder what a reader sees ("Trojan Source"), so a title can show one thing and say another. The marks
  (U+200E, U+200F, U+061C) only hint a direction and are kept.

    clean(text) -> Cleaned                 the text without them; what was removed, counted
    clean_text(text) -> str                the text without them, nothing counted (what a page prints)
    clean_tree(value) -> (value, Removed)  the same over a JSON-like value (strings in dicts and lists)
    fault(text) -> str | None              why a text may not stand in a record, naming the character
    for_terminal(text) -> str              a text safe to print: every such character (and ESC) made visible
    finalize(value)                        the pages' last line (Jinja's finalize): a string cleaned

Written by hand: no library draws this line. `unicodedata.category` puts U+2028 and the marks with the
format characters that are harmless (soft hyphens, zero-width joiners that Korean and emoji need), and
a sanitiser for HTML (nh3, bleach) works on markup, not on the characters of a plain text.

Form feeds, vertical tabs, NEL and the Unicode line and paragraph separators are turned into line feeds
(a PDF's pages, a page's `<br>` in some encoders), so a text keeps its lines; carriage returns likewise.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Cleaned",
    "Removed",
    "TextFault",
    "clean",
    "clean_text",
    "clean_tree",
    "document_clean",
    "fault",
    "for_terminal",
    "holds_forbidden",
    "name_of",
]

# The non-characters past the first plane (the last two code points of each) are kept apart: in one class
# with the rest they make every search eight times slower, and texts with such code points are rare.
_NONCHARACTERS = "\ufdd0-\ufdef\ufffe\uffff"
_ASTRAL_NONCHARACTERS = "".join(f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(1, 17))
_CONTROLS = "\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f"  # \t \n \r kept; \x0b \x0c \x85 are line breaks
_BIDI = "\u202a-\u202e\u2066-\u2069"
_SURROGATES = "\ud800-\udfff"
_LINE_BREAKS = "\x0b\x0c\x85\u2028\u2029"
# What the gate removes (after the line breaks below became line feeds), and what a record refuses.
_FORBIDDEN_BMP = re.compile(f"[{_CONTROLS}{_LINE_BREAKS}{_BIDI}{_SURROGATES}{_NONCHARACTERS}]")
_FORBIDDEN = re.compile(f"[{_CONTROLS}{_LINE_BREAKS}{_BIDI}{_SURROGATES}{_NONCHARACTERS}{_ASTRAL_NONCHARACTERS}]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_BREAKS = re.compile(f"\r\n?|[{_LINE_BREAKS}]")
# What a terminal must not be handed raw: the forbidden, and carriage returns (they overwrite a line).
_UNPRINTABLE = re.compile(f"[\r{_CONTROLS}{_LINE_BREAKS}{_BIDI}{_SURROGATES}{_NONCHARACTERS}{_ASTRAL_NONCHARACTERS}]")


def _search(text: str) -> re.Match[str] | None:
    """The first character a record refuses, fast for the texts without any beyond the first plane."""
    if _ASTRAL.search(text) is None:
        return _FORBIDDEN_BMP.search(text)
    return _FORBIDDEN.search(text)


# Unicode gives control characters no name; these are the ones people meet.
_NAMES = {"\x00": "NULL", "\x07": "BELL", "\x08": "BACKSPACE", "\x1b": "ESCAPE", "\x7f": "DELETE", "\x9b": "CSI"}


def name_of(char: str) -> str:
    """`U+001B (a control character)`: a character named so that a person can find it."""
    code = ord(char)
    if char in _LINE_BREAKS:
        kind = "a line break other than a line feed"
    elif 0xD800 <= code <= 0xDFFF:
        kind = "a lone surrogate"
    elif re.fullmatch(f"[{_BIDI}]", char):
        kind = "a bidirectional control"
    elif re.fullmatch(f"[{_NONCHARACTERS}{_ASTRAL_NONCHARACTERS}]", char):
        kind = "a non-character"
    else:
        kind = "a control character"
    label = _NAMES.get(char) or unicodedata.name(char, "")
    return f"U+{code:04X}{f' {label}' if label else ''} ({kind})"


@dataclass
class Removed:
    """What the gate took out, by character, and in which fields (for a history note)."""

    chars: Counter[str] = field(default_factory=Counter)
    fields: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.chars)

    def add(self, other: Removed, where: str | None = None) -> None:
        if other:
            self.chars.update(other.chars)
            if where and where not in self.fields:
                self.fields.append(where)

    def note(self) -> str:
        """`removed U+001B ESCAPE (a control character) twice, U+202E … from title, summary`."""
        times = {1: "", 2: " twice"}
        parts = ", ".join(
            f"{name_of(char)}{times.get(count, f' {count} times')}" for char, count in sorted(self.chars.items())
        )
        where = f" from {', '.join(self.fields)}" if self.fields else ""
        return f"removed {parts}{where}"


@dataclass(frozen=True)
class Cleaned:
    text: str
    removed: Removed


def clean(text: str) -> Cleaned:
    """The text with its line breaks made line feeds and every character a record refuses removed
    (`clean_text`), and what was removed, counted."""
    cleaned = clean_text(text)
    if cleaned is text:  # nothing to remove, the common case: no count to make
        return Cleaned(text, Removed())
    return Cleaned(cleaned, Removed(Counter(_FORBIDDEN.findall(_BREAKS.sub("\n", text)))))


def clean_text(text: str) -> str:
    """The text with its line breaks made line feeds and every character a record refuses removed, with
    no count of what went: for the pages and feeds, which print a text and note nothing (a site's build
    cleans a million of them; the count's objects were a third of that time). A text with nothing to
    remove is returned as it is, the same object."""
    if "\r" not in text and _search(text) is None:  # the common case, at the speed of a scan or two
        return text
    return _FORBIDDEN.sub("", _BREAKS.sub("\n", text))


def clean_tree(value: Any) -> tuple[Any, Removed]:
    """A JSON-like value (strings, dicts of them, lists of them, nested) with each string cleaned."""
    removed = Removed()
    if isinstance(value, str):
        done = clean(value)
        return done.text, done.removed
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            cleaned_key, key_removed = clean_tree(key)
            out[cleaned_key], item_removed = clean_tree(item)
            removed.add(key_removed)
            removed.add(item_removed)
        return out, removed
    if isinstance(value, (list, tuple)):
        items = []
        for item in value:
            cleaned_item, item_removed = clean_tree(item)
            items.append(cleaned_item)
            removed.add(item_removed)
        return items, removed
    return value, removed


# A JSON escape that can write a character a record refuses: \b and \f (control characters, line breaks)
# and \uXXXX (anything). \n, \r, \t, \", \\ and \/ write only what a record may hold.
_RISKY_ESCAPE = re.compile(r"\\[bfu]")


# The validation context's key by which `pipeline.records.load_record` says a record's whole file passed
# `document_clean`: the record (and each record inside it) then skips its own check of every string.
SCANNED = "gate-scanned"


def document_clean(text: str) -> bool:
    """Whether no string of this JSON document can hold a character a record refuses: none stands in its
    text, and no escape in it can write one. One scan of a whole file, for a record read from its file:
    looking at each of its strings instead (`holds_forbidden`, a record's own check) took a quarter of a
    case's reading. False only errs towards that check (an escaped backslash before a `u`, say)."""
    return _search(text) is None and _RISKY_ESCAPE.search(text) is None


def holds_forbidden(value: Any) -> bool:
    """Whether a string of a JSON-like value holds a character a record refuses; records inside it are not
    looked into (they check their own). Called on every text field of every record read: kept to the bone."""
    kind = type(value)
    if kind is str:
        return _search(value) is not None
    if kind is list:
        for item in value:
            if holds_forbidden(item):
                return True
    elif kind is dict:
        for key, item in value.items():
            if holds_forbidden(key) or holds_forbidden(item):
                return True
    return False


class TextFault(ValueError):
    """A text a record refuses: where in the field it stands (`en`, `[2].text.en`, or "" for the field itself)
    and why. pipeline.records names the field with `where` added."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)
        self.where, self.problem = where, problem


def fault(text: str) -> str | None:
    """Why `text` may not stand in a record (the first character the gate would remove, and where), or None."""
    found = _search(text)
    if found is None:
        return None
    return (
        f"holds {name_of(found.group())} at character {found.start()}; "
        "remove it (the crawl, `set` and the review page remove such characters themselves)"
    )


def finalize(value: Any) -> Any:
    """Jinja's `finalize` for the pages: every plain string a template prints passes the gate, the pages'
    last line (autoescape then escapes it for HTML). Markup, the templates' own, is left as it is. A string
    with nothing to remove, nearly every one, is returned as it is with no object made: a site's build
    prints some 300,000 of them."""
    return clean_text(value) if type(value) is str else value


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return {"\r": "\\r", "\x1b": "\\e"}.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    )


def for_terminal(text: str) -> str:
    """The text safe to print on a terminal: each control character, bidirectional control, carriage
    return and non-character shown as an escape (`\\e`, `\\x00`, `\\u202e`), so it is seen, not obeyed."""
    return _UNPRINTABLE.sub(_visible, text)
