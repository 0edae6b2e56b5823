"""Which case field a section heading means, pure.

Postmortem templates (Google SRE, PagerDuty, the Rust project's, DFDS's, ...) name
their sections in a handful of ways; the patterns below are matched, in order, against
the heading with numbering, punctuation and case removed. The first match wins, so
more specific patterns ("contributing factors") stand before looser ones ("factors").
"""

from __future__ import annotations

import functools
import re

from pipeline.models import SectionField

__all__ = ["field_for_heading", "normalise_heading"]

_RULES: list[tuple[SectionField, str]] = [
    (
        SectionField.ACTION_ITEMS,
        r"action items?|corrective (actions?|measures?)|next steps|follow[- ]?ups?( actions?| items?)?"
        r"|preventi(ve|on)( actions?| measures?)?|(what|how) (we are|we re|we will|will we) (doing|do|change|prevent)"
        r"|future work|todo|remediation (items|actions|plan)",
    ),
    (SectionField.CONTRIBUTING, r"contributing (factors?|causes?)|contributors"),
    (
        SectionField.ROOT_CAUSE,
        r"root causes?( analysis)?( of .*)?|rca|((5|five) )?whys|fault|causes?( of .*)?"
        r"|why (did )?(it|this) happen(ed)?|technical (details|analysis)|what went wrong technically",
    ),
    (
        SectionField.LESSONS,
        r"lessons?( learned| learnt)?|learnings|takeaways|what went (well|wrong|badly)"
        r"|where we got lucky|things that went (well|wrong)|reflections?|retrospective",
    ),
    (SectionField.TIMELINE, r"timeline|chronology|sequence of events|incident timeline|time ?line of events"),
    (SectionField.DETECTION, r"detection|how (was it|we) (detected|found out|noticed)|alerting|discovery"),
    (
        SectionField.IMPACT,
        r"(customer |user |business )?impact( on .*)?|who was affected|scope|affected (users|services|customers)",
    ),
    (SectionField.TRIGGER, r"trigger(s|ing event)?|lead ?up|what triggered (it|the incident)"),
    (
        SectionField.REMEDIATION,
        r"resolution|mitigations?|recovery|response|remediation|fix(es)?|workarounds?"
        r"|how we fixed it|resolution and recovery",
    ),
    (
        SectionField.SUMMARY,
        r"(incident |executive )?summary|overview|what happened|tl ?dr|description|abstract|introduction",
    ),
]
_PATTERNS = [(field, re.compile(rf"^(?:{pattern})$")) for field, pattern in _RULES]
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[ivx]+[.)]|[a-z][.)])\s+")
_PARENTHETICAL = re.compile(r"\s*[(\[].*?[)\]]\s*")


def normalise_heading(heading: str) -> str:
    text = heading.strip().lower()
    text = _NUMBERING.sub("", text)
    text = _PARENTHETICAL.sub(" ", text)
    text = text.replace("&", " and ").replace("’", "'").replace("'", " ")
    text = re.sub(r"[^\w\s-]", " ", text)
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=4096)
def field_for_heading(heading: str) -> SectionField | None:
    """The case field a heading means, or None for a heading of the document's own. Cached: the
    sections, the summary and the incidents each ask it of every heading, and headings repeat."""
    text = normalise_heading(heading)
    for field, pattern in _PATTERNS:
        if pattern.match(text):
            return field
    return None
