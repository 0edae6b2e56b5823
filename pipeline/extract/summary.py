"""A summary a reader wants, pure: the document's own summary, else its opening, cleaned and cut.

The source is the first section whose own heading names the summary (Summary, Overview,
TL;DR, …), else the body after the title; either stops at the next heading, so a summary
never runs on into the root cause. Blocks a reader skips are dropped (bylines, date lines,
status labels of a status page, template text, image captions, links alone, code and log
lines, table rows), and the rest is cut at a sentence boundary within `limit` words:
uncut openings of 190-400 words were the drafts' most common fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.extract.blocks import Block
from pipeline.extract.headings import field_for_heading
from pipeline.extract.lexicon import (
    ENDED as _ENDED,
)
from pipeline.extract.sentences import sentences
from pipeline.models import SectionField

__all__ = ["LEAD_IN", "LIMIT", "Answers", "noise", "summary_from"]

LIMIT = 120

_BYLINE = re.compile(r"^\W*(?:(?:written|posted|published|updated|authored)(?:\s+\w+)?\s+(?:by|on)\b|by\s+[A-Z])", re.I)
_DATELINE = re.compile(
    r"^\W*(?:(?:posted|published|updated|date)\s*(?:on)?\W*)?(?:\w+day,?\s+)?"
    r"(?:[A-Za-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}|\d{4}-\d{2}-\d{2}|\d{1,2}\.?\s+[A-Za-z]+\.?\s+\d{4})\W*$",
    re.I,
)
# A status page's update labels: "Resolved - This incident has been resolved."
_STATUS = re.compile(
    r"^\W*(?:investigating|identified|monitoring|resolved|update|completed|scheduled|in progress|postmortem)\W*"
    r"(?:[-:–—]|$)",
    re.I,
)
# A template's own words, left in by the author, and cross-references.
_TEMPLATE = re.compile(
    r"^\W*(?:\(?based on https?://|a quick tl;?dr\b|see:|see also\b|note:|to follow\b|table of contents"
    r"|\[?(?:insert|todo|tbd|describe)\b|for the .{0,60}\bsee:)",
    re.I,
)
_LINK_OR_IMAGE = re.compile(r"^\W*(?:https?://\S+|!\[[^\]]*\]\([^)]*\))\W*$")
# Log and shell lines written as paragraphs: "[E 2017-09-29 12:01 ...]", "$ kubectl ...", "Traceback".
_LOG_LINE = re.compile(
    r"^\s*(?:\[[A-Z] \d{4}-\d\d-\d\d|[$>#] \S|traceback\b|(?:iteration|error|warning)\b.*[|:].*\d"
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?\S*\]?\s+"
    r"(?-i:\[?(?:ERROR|WARN(?:ING)?|INFO|DEBUG|FATAL|TRACE|CRITICAL)\b)"
    r"|level=\w+)",
    re.I,
)
# A label alone ("What happened?", "The underlying issue:"), as written in place of a heading.
_PSEUDO_HEADING = re.compile(r"^[^.!?]{1,60}[:?]$")
# The same label leading a paragraph: "The underlying issue: Some pods ..."
LEAD_IN = re.compile(r"^(?:[A-Z][^.:!?]{2,40}\?|[A-Z][^.:!?]{2,30}):\s+(?=[A-Z])")
_CAPTION_WORDS = 8
# Words that tell the incident itself, preferred when a summary must lose sentences.
_INCIDENT_CUE = re.compile(
    r"\b(?:caus\w*|because|due to|fail\w*|crash\w*|expir\w*|broke\w*|(?<!-)down|outage|unable|could not|error\w*|"
    r"deleted|unavailable|time ?out|roll\w* back|rollback|revert\w*|restor\w*|fix\w*|resolv\w*|mitigat\w*|"
    r"alert\w*|report\w*|notic\w*|detect\w*|users?|customers?|percent|trigger\w*|upgrad\w*|deploy(?:ed|ing)?|hang\w*|hung|spikes?|diverg\w*|explo\w*|nans?|denied|disrupt\w*|stuck|[45]\d\d)\b|%",
    re.IGNORECASE,
)
# A sentence that supposes ("giving us resiliency if a zone has disruptions") tells no event.
_SUPPOSED = re.compile(r"\b(?:if|unless|in case)\b", re.IGNORECASE)
# The same without IGNORECASE, for lowered text: counted in every sentence of a long summary.
_LOW_INCIDENT_CUE = re.compile(_INCIDENT_CUE.pattern)
# A sentence defining a thing ("Inotify allows processes to …"): background, not the incident.
_DEFINITION = re.compile(r"^[A-Z][\w.-]*(?: [\w.-]+){0,3} (?:is|are|allows?) (?:the|a|an)?\b", re.IGNORECASE)
_FILL = (SectionField.ROOT_CAUSE, SectionField.REMEDIATION)
# Footnote markers a reader skips: "[1]", "[^2]", "^3", superscript digits.
_FOOTNOTE = re.compile(
    r"(?<=[\w.,;:!?)\]])(?:\[\^?\d{1,2}\]|\[\^\w{1,12}\]|\^\d{1,2}\b|[\u00b9\u00b2\u00b3\u2070-\u2079]+)(?!\()"
)
# A status page's and a press note's stock sentences: they tell no incident, kept only when nothing else is left.
_BOILERPLATE = re.compile(
    r"^(?:(?:the |an? |our )?investigation (?:is )?(?:still )?(?:in progress|ongoing|underway)|"
    r"we (?:sincerely |deeply |truly )?(?:apologi[sz]e|are (?:very |truly |deeply )?sorry|regret)|"
    r"(?:we )?thank you for your (?:patience|understanding)|we(?: will|'ll) (?:provide|post|share) (?:an? |more )?"
    r"(?:update|details|information)|more (?:details|information|updates) (?:will|to) follow|"
    r"(?:this|the) incident has been resolved\.?$|we are (?:continuing to )?(?:investigat|monitor|look)\w*)",
    re.IGNORECASE,
)
# "We have determined that the cache failed" says "the cache failed": the clause is kept, its lead-in not.
_FIRST_PERSON_LEAD = re.compile(
    r"^(?:we|i) (?:have |had )?(?:determined|found|confirmed|identified|discovered|learned|concluded|"
    r"can confirm|now know) that (?=[a-z])",
    re.IGNORECASE,
)
# The first person: "we", "our", "us", "I". A sentence of the same content without it is preferred.
_FIRST_PERSON = re.compile(r"\b(?:[Ww]e|[Oo]urs?|us|ourselves|I|[Mm]y|me)\b")
# Words that carry no content of their own, for telling two sentences of the same content apart.
_FUNCTION_WORDS = frozenset(
    "a an the and or but of to in on at by for with from as into onto over after before then than that this "
    "these those it its is are was were be been being has have had do did does we our us ours ourselves i my me "
    "which who whom what when where while so also all any some".split()
)
_SAME_CONTENT = 0.8
# A problem told in a logbook's section: how many such words make it the incident's.
_PROBLEM = re.compile(  # lowercase, without IGNORECASE: searched in lowered text, three times faster
    r"\b(?:hang\w*|hung|crash\w*|diverg\w*|spikes?|explo\w*|nans?|fail\w*|outage|down|errors?|time[sd]? ?out|"
    r"broken?|instabilit\w*|unstable|stuck|deadlock\w*|incident)\b"
)
_PROBLEM_ENOUGH = 5
# A first paragraph this short under the title is its tagline ("Trials and tribulations ..."), no summary.
_TAGLINE_WORDS = 12


@dataclass(frozen=True)
class Answers:
    """What a reader asks after a summary, as the document's prose answers it (`prose.answers`):
    the sentences that name the cause, best first; what the incident hit; how it ended; and
    whether a text already names a cause or tells an impact; which sentences tell plans, and
    which tell the key facts (what changed, what broke), as the prose's cue rules read them."""

    causes: tuple[str, ...] = ()
    impact: str | None = None
    resolution: str | None = None
    names_cause: Callable[[str], bool] = lambda text: False
    tells_impact: Callable[[str], bool] = lambda text: False
    # A sentence of plans or of what would have been ("A probe would have detected it"): no summary's.
    planned: Callable[[str], bool] = lambda sentence: False
    # What a summary names when its source states it: a sentence telling the trigger, one the impact.
    key_facts: tuple[Callable[[str], bool], ...] = ()


def noise(block: Block) -> str | None:
    """Why a block is no summary text (a byline, a status label, …), or None when it is."""
    text = block.text.strip()
    if block.kind == "row":
        return "table row"
    if "\n" in text:
        return "code or log"  # readers join a paragraph's lines; only code keeps them
    if _LOG_LINE.match(text):
        return "code or log"
    if _BYLINE.match(text) and len(text.split()) <= 16:
        return "byline"
    if _DATELINE.match(text):
        return "date line"
    if _STATUS.match(text):
        return "status label"
    if _TEMPLATE.match(text):
        return "template"
    if _LINK_OR_IMAGE.match(text):
        return "link or image"
    if len(text.split()) <= _CAPTION_WORDS and not re.search(r"[.!?:]$", text):
        return "caption"  # a subtitle, an image's caption, a label: no sentence
    return None


def _paragraphs(blocks: list[Block], start: int, *, labels_end: bool = True) -> list[str]:
    """The clean body text from `start` to the next heading (or, when `labels_end`, pseudo-heading
    after some text: in an opening, "What happened?" starts another section; under a Summary
    heading it is a part of the summary)."""
    taken: list[str] = []
    for block in blocks[start:]:
        if block.is_heading:
            break
        text = " ".join(block.text.split())
        if _PSEUDO_HEADING.match(text) and len(text.split()) <= 8:
            if taken and labels_end:
                break
            continue
        if noise(block):
            continue
        lead_in = LEAD_IN.match(text)
        if lead_in and taken and labels_end:
            break  # "The underlying issue: …" is a section of its own, written as a label
        taken.append(text[lead_in.end() :] if lead_in else text)
    return taken


def _source(blocks: list[Block]) -> list[str]:
    for index, block in enumerate(blocks):
        if block.is_heading and field_for_heading(block.text) == SectionField.SUMMARY:
            own = _paragraphs(blocks, index + 1, labels_end=False)
            if own:
                return own
    # The opening: the first run of body text between headings that has any clean text.
    for index, block in enumerate(blocks):
        if not block.is_heading and (index == 0 or blocks[index - 1].is_heading):
            opening = _paragraphs(blocks, index)
            if opening:
                incident = [] if any(_INCIDENT_CUE.search(p) for p in opening) else _incident_section(blocks)
                if incident:
                    # What the logbook is about (not its tagline), then the section that tells its incident.
                    about = opening[:1] if len(opening[0].split()) >= _TAGLINE_WORDS else []
                    return about + incident
                return opening
    return []


def _incident_section(blocks: list[Block]) -> list[str]:
    """In a logbook whose opening tells no incident ("Notes on the training progress"), the clean
    text of the section that tells most of a problem (hangs, spikes, divergence), if one does.
    A section counts its own text, to the next heading: a title's whole document does not count."""
    best: tuple[int, int] | None = None  # (problem words, heading index)
    heading, hits = -1, 0
    for index, block in enumerate([*blocks, Block("", level=1)]):  # a last heading closes the last section
        if block.is_heading:
            if heading >= 0 and hits >= _PROBLEM_ENOUGH and (best is None or hits > best[0]):
                best = (hits, heading)
            heading, hits = index, 3 * len(_PROBLEM.findall(block.text.lower()))
        elif block.kind != "row" and "\n" not in block.text:  # prose, not tables, code or logs
            hits += len(_PROBLEM.findall(block.text.lower()))
    return _paragraphs(blocks, best[1] + 1) if best else []


def _cut(paragraphs: list[str], limit: int, keep: tuple[str, ...] = (), answers: Answers = Answers()) -> str:
    """Whole sentences, in document order, within `limit` words.

    When they do not all fit: the first sentence, then those of `keep` (how the incident ended),
    then those that tell the incident (what failed, why, who noticed, what fixed it) before
    background ("Inotify allows processes to …"), then the rest while they fit; a sentence in the
    first person after one of as many cue words without it. A key fact (`answers.key_facts`: the
    trigger, the impact) that this choice leaves out while a sentence states it takes the place of
    the last-ranked sentences that state none. A first sentence longer than `limit` is cut at a word.
    """
    # Footnote markers go before the split: "rotation.^2 The error" is two sentences.
    found = _clean(
        [(i, s) for i, p in enumerate(paragraphs) for s in sentences(_FOOTNOTE.sub("", p)) if not _TEMPLATE.match(s)],
        answers.planned,
    )
    if not found:
        return ""
    sizes = [len(s.split()) for _, s in found]
    if sizes[0] > limit:
        return " ".join(found[0][1].split()[: limit - 1]) + " …"
    chosen = {0}
    if sum(sizes) <= limit:
        chosen = set(range(len(found)))
    else:
        # Sentences telling more of the incident first (most cue words), background last.
        cues = [len(_LOW_INCIDENT_CUE.findall(s.lower())) for _, s in found]
        telling = sorted(
            (k for k, (_, s) in enumerate(found) if _INCIDENT_CUE.search(s) and not _DEFINITION.match(s)),
            key=lambda k: (bool(_SUPPOSED.search(found[k][1])), -cues[k], bool(_FIRST_PERSON.search(found[k][1]))),
        )
        pinned = [k for k, (_, s) in enumerate(found) if s in keep]
        ranked = list(dict.fromkeys([0, *pinned, *telling, *range(len(found))]))
        _fill(chosen, ranked, sizes, limit)
        marks = [tuple(fact(s) for fact in answers.key_facts) for _, s in found]
        ranking = _Ranking(ranked, sizes, limit, marks, cues, {0, *pinned})
        for which in range(len(answers.key_facts)):
            _name_fact(chosen, ranking, which)
    by_paragraph: dict[int, list[str]] = {}
    for k in sorted(chosen):
        by_paragraph.setdefault(found[k][0], []).append(found[k][1])
    return "\n\n".join(" ".join(kept) for kept in by_paragraph.values())


def _fill(chosen: set[int], ranked: list[int], sizes: list[int], limit: int) -> None:
    """Add to `chosen` the sentences of `ranked`, in its order, that still fit within `limit` words."""
    budget = limit - sum(sizes[k] for k in chosen)
    for k in ranked:
        if k not in chosen and sizes[k] <= budget:
            chosen.add(k)
            budget -= sizes[k]


@dataclass(frozen=True)
class _Ranking:
    """A summary's sentences (by their index) as they are chosen: `ranked`, best first; each one's
    size in words, the key facts it states (`marks`) and its words that tell the incident (`cues`);
    the summary's `limit` in words; the sentences that stay whatever (`fixed`)."""

    ranked: list[int]
    sizes: list[int]
    limit: int
    marks: list[tuple[bool, ...]]
    cues: list[int]
    fixed: set[int]


def _name_fact(chosen: set[int], ranking: _Ranking, which: int) -> None:
    """Where no chosen sentence states key fact `which` (`marks[k][which]`) and a left-out one does,
    the best-ranked such sentence that can be made room for takes the place of chosen sentences
    that state no key fact and tell no more of the incident (`cues`, its words) than it does, the
    last-ranked first; never the first sentence or one of `fixed` (what a reader asks next). A sentence
    that tells more stays: a fact is never bought with a richer one."""
    ranked, sizes, marks, cues = ranking.ranked, ranking.sizes, ranking.marks, ranking.cues
    if any(marks[k][which] for k in chosen):
        return
    free = ranking.limit - sum(sizes[k] for k in chosen)
    for wanted in ranked:
        if wanted in chosen or not marks[wanted][which]:
            continue
        below = [
            k
            for k in reversed(ranked)
            if k in chosen and k not in ranking.fixed and not any(marks[k]) and cues[k] <= cues[wanted]
        ]
        dropped = []
        room = free
        for k in below:
            if room >= sizes[wanted]:
                break
            dropped.append(k)
            room += sizes[k]
        if room >= sizes[wanted]:
            chosen.difference_update(dropped)
            chosen.add(wanted)
            _fill(chosen, [k for k in ranked if k not in dropped], sizes, ranking.limit)
            return


def _trimmed(sentence: str) -> str:
    """A sentence without its first-person lead-in ("We found that ..."): the clause it introduces."""
    lead = _FIRST_PERSON_LEAD.match(sentence)
    if lead:
        rest = sentence[lead.end() :]
        sentence = rest[:1].upper() + rest[1:]
    return sentence


def _clean(found: list[tuple[int, str]], planned: Callable[[str], bool] = lambda s: False) -> list[tuple[int, str]]:
    """The sentences a summary may hold, trimmed: log lines always go; stock sentences ("Investigation
    is in progress", "We apologise …"), fragments ending in a colon and sentences of plans or of what
    would have been (`planned`: "In the future we will …") go unless nothing else is left; so does a
    sentence in the first person that says no more than another sentence without it."""
    kept = [(i, _trimmed(s)) for i, s in found if not _LOG_LINE.match(s)]
    telling = [(i, s) for i, s in kept if not _BOILERPLATE.match(s) and not s.rstrip().endswith(":") and not planned(s)]
    told = telling or kept
    impersonal = [s for _, s in told if not _FIRST_PERSON.search(s)]
    return [(i, s) for i, s in told if not _FIRST_PERSON.search(s) or not any(_says(o, s) for o in impersonal)]


def _content(sentence: str) -> set[str]:
    """A sentence's content words, crudely stemmed ("rolled" and "rolls" are "roll")."""
    found = (w for w in re.findall(r"[a-z0-9]+", sentence.lower()) if w not in _FUNCTION_WORDS and len(w) > 1)
    return {re.sub(r"(?:ing|ed|es|s)$", "", w) if len(w) > 4 else w for w in found}


def _says(other: str, sentence: str) -> bool:
    """Whether `other` says what `sentence` says: it holds nearly all of the sentence's content words."""
    words = _content(sentence)
    return bool(words) and len(words & _content(other)) >= _SAME_CONTENT * len(words)


def _first_sentences(blocks: list[Block], fields: tuple[SectionField, ...]) -> list[str]:
    """The first sentence of the first clean paragraph of each field's sections, in `fields` order."""
    found: dict[SectionField, str] = {}
    stack: list[tuple[int, SectionField | None]] = []  # open headings: (level, field)
    for block in blocks:
        if block.is_heading:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, field_for_heading(block.text)))
            continue
        field = next((f for _, f in reversed(stack) if f is not None), None)
        if field in fields and field not in found and block.kind == "para" and not noise(block):
            first = sentences(" ".join(block.text.split()))
            if first:
                found[field] = first[0]
    return [found[f] for f in fields if f in found]


def _as_sentence(text: str) -> str:
    """A timeline entry's words as a sentence of prose: "Service restored" -> "Service restored."."""
    text = " ".join(text.split())
    return text if re.search(r"[.!?]$", text) else text.rstrip(":;,") + "."


def summary_from(
    blocks: list[Block], limit: int = LIMIT, *, fill_below: int = 60, answers: Answers = Answers()
) -> str | None:
    """The document's summary, at most `limit` words, or None when it has no clean text to give.

    What a reader asks next is added where the summary does not say it, and kept before other
    sentences when the limit forces a choice:
    - under `fill_below` words ("The site went down."): the first sentence under the root-cause
      and the resolution headings, else the sentence that names the cause, and what it hit;
    - at any length, a summary that names no cause gets the sentence that does, and one that
      does not say how the incident ended gets the resolution (from the timeline or the prose).
    """
    paragraphs = _source(blocks)
    text = _cut(paragraphs, limit, answers=answers)
    wanted: list[str] = []
    if len(text.split()) < fill_below:
        wanted = _first_sentences(blocks, _FILL)
        if not wanted and answers.causes:
            wanted.append(answers.causes[0])
        if answers.impact and not answers.tells_impact(text):
            wanted.append(answers.impact)
    if not answers.names_cause(text) and not any(answers.names_cause(s) for s in wanted):
        # Only where it fits beside the summary: the cause is the root cause field's to tell.
        room = limit - len(text.split()) - sum(len(s.split()) for s in wanted)
        wanted += [c for c in answers.causes if c not in text and len(c.split()) <= room][:1]
    if answers.resolution and not any(_ENDED.search(s) for s in [text, *wanted]):
        wanted.append(answers.resolution)
    wanted = list(dict.fromkeys(_as_sentence(s) for s in wanted if " ".join(s.split()) not in text))
    if not wanted:
        return text or None
    extra = [s for s in wanted if not any(s in p for p in paragraphs)]
    return _cut([*paragraphs, *extra], limit, keep=tuple(wanted), answers=answers) or None
