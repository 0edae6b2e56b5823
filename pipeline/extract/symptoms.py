"""symptoms_text, pure: what users and operators saw, drafted from impact, symptom and alert passages.

    symptom_passages(sections) -> [Symptom, ...]   (document order, each with its kind and confidence)
    symptoms_text(passages, threshold) -> str | None   (those at or above the gate, joined)

A case's symptoms_text tells what was seen, not why: the errors users met ("requests returned
502s", "could not sign in"), what the dashboards and alerts showed ("error rates rose to 30 %",
"the latency alert fired"), what stopped working. Postmortems say it in an Impact or Symptoms
section, or in sentences of the summary and the timeline; the cause and the fix are other
fields'. Each passage is an exact sentence (or list item) of the document, so it can be quoted
back as evidence, and carries a confidence:

- `heading`: a sentence under a heading that names the impact or the symptoms (0.85);
- `error`: someone (users, requests, builds, the site) met an error, a failure or a slowness (0.75);
- `alert`: an alert fired or a dashboard showed it (0.75);
- `list`: an item under a lead-in that says what was seen ("customers experienced:") (0.7);
- `impact`: a service stated down or unavailable, nobody named (0.65).

Lowered by what makes a sentence no observation: modality and plans ("would have", "we will",
"in the future", "if"), negation ("no customers were affected"), and the sections that explain
rather than observe (root cause, trigger, contributing factors, remediation). Two kinds of sentence
are no observation wherever they stand, and are kept below the gate with the reason in their rule
("symptoms.error+apology"): an apology, a thanks or a commitment to the reader ("we apologize for the
disruption to users who could not sign in", "thank you for your patience", "we know how important the
service is to you"), and the state of the investigation ("the root cause is still under
investigation", "we are investigating", "we have identified the cause"). Action items and
lessons are not read: they tell what will be done. Precision first: below the draft's threshold
(`draft_confidence_threshold`) a passage is kept as a suggestion, not written into the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pipeline.extract.lexicon import (
    DONE as _DONE,
)
from pipeline.extract.lexicon import (
    RECOVERY as _RECOVERY,
)
from pipeline.extract.sentences import sentences
from pipeline.models import Section, SectionField

__all__ = ["Symptom", "chosen", "symptom_passages", "symptoms_text"]

# A field read, not skimmed: a few passages, a paragraph or two.
_MAX_PASSAGES = 6
_MAX_WORDS = 160

_BASE = {"heading": 0.85, "error": 0.75, "alert": 0.75, "list": 0.7, "impact": 0.65}

# A heading that names what was seen, beside the Impact headings the section table maps.
_SYMPTOM_HEADING = re.compile(
    r"\b(?:symptoms?|what (?:users|customers|people|we) (?:saw|experienced|noticed)|user[- ]visible|observed)\b",
    re.IGNORECASE,
)
# Who or what meets a symptom: people, and the things they use that fail in front of them.
_SEER = (
    r"(?:users?|customers?|clients?|visitors?|developers?|people|members|subscribers|merchants|players|"
    r"requests?|api calls?|calls|queries|builds?|jobs?|pipelines?|deploys?|deployments?|pushes|uploads?|"
    r"downloads?|logins?|sign-?ins?|webhooks?|pages?|launch(?:es)?|pods?|nodes?|runs?|traffic|"
    r"(?:the )?(?:site|website|web ?ui|app|api|dashboard|service|console|checkout|endpoint)s?|everyone|anyone)"
)
# Who watches: what they saw needs an error word ("we saw loss spikes"), not a mere "we saw that".
_WATCHER = r"(?:we|our (?:team|engineers|on-?call\w*|monitoring)|engineers|operators|the on-?call\w*|sres?)"
# Verbs that need an object telling the error: "saw 502s", "received an 'access denied'".
_SEEN = (
    r"(?:saw|see|seeing|sees|received|receiving|got|getting|experienced|experiencing|experience|encountered|"
    r"encountering|observed|noticed|met|hit|faced|reported|reporting|returned|returning|showed|showing|"
    r"displayed|threw|throwing|logged)"
)
# Verbs that tell a failure alone: "launches failed", "users could not sign in".
_FAILED = (
    r"(?:failed(?! over)|failing|fails|fail|could not|couldn't|were unable|was unable|unable to|were not able|"
    r"was not able|timed out|timing out|hung|stalled|were stuck|was stuck|were slow|was slow|were down|was down|"
    r"went down|(?:were|was) (?:rejected|denied|dropped|lost|delayed|blocked|degraded))"
)
_ERROR_WORDS = (
    r"(?:errors?|error rates?|error messages?|exceptions?|failures?|time ?outs?|timeouts?|latenc(?:y|ies)|"
    r"slow\w*|degrad\w+|unavailab\w+|outages?|hangs?|crash\w*|spikes?|explosions?|nans?|"
    r"tracebacks?|stack ?traces?|5\d\d\w*|4\d\d\w*|bad gateway|service unavailable|internal server error|"
    r"not found|access denied|permission denied|forbidden|connection (?:refused|reset)|blank pages?|spinners?)"
)
_MET = _SEEN  # a lead-in's verb: "customers experienced:"
# Someone met it: "users saw 502s", "requests returned errors", "customers could not log in", "we saw nans".
_ERROR = re.compile(
    rf"\b(?:{_SEER}\b(?:\s+[\w'-]+){{0,4}}?\s+{_FAILED}\b|(?:{_SEER}|{_WATCHER})\b(?:\s+[\w'-]+){{0,4}}?\s+"
    rf"{_SEEN}\b(?:\W+[\w'-]+){{0,6}}?\W+(?:{_ERROR_WORDS}\b|[\"'\u2018\u201c]))",
    re.IGNORECASE,
)
# An HTTP status or an error message met, whoever met it: "returned HTTP 503", "a 502 Bad Gateway".
_STATUS = re.compile(
    r"\b(?:(?:HTTP|status)\s*[45]\d\d|[45]\d\d(?:s\b|\s+(?:errors?|responses?|status|codes?|bad gateway|"
    r"service unavailable|internal server error|gateway time-?out))|bad gateway|service unavailable|"
    r"internal server error|gateway time-?out)\b",
    re.IGNORECASE,
)
# What monitors showed: an alert fired, a dashboard or a graph showed, a rate climbed.
_ALERT = re.compile(
    r"\b(?:(?:alerts?|alarms?|pages?|monitors?|health ?checks?|probes?)\s+(?:\w+\s+)?(?:fired|firing|went off|"
    r"triggered|were triggered|was triggered|started|failed|failing|turned red)|(?:fired|triggered|raised) "
    r"(?:an? |the |several |multiple )?(?:\w+ )?(?:alerts?|alarms?|pages?)|(?:dashboards?|graphs?|charts?|"
    r"monitoring|metrics|grafana|datadog|prometheus|pagerduty|sentry|status ?page)\s+(?:\w+\s+)?(?:showed|shows|"
    r"showing|reported|indicated|lit up|spiked|alerted)|"
    rf"{_ERROR_WORDS}\s+(?:\w+\s+)?(?:rose|rising|spiked|spiking|increased|increasing|climbed|jumped|"
    r"grew|surged|peaked|reached))\b",
    re.IGNORECASE,
)
# Stated down, nobody named: "the registry was unavailable", "all services went down".
_IMPACT = re.compile(
    r"\b(?:(?:was|were|went|became|become|becoming|is|are|to be) "
    r"(?:not |completely |fully |partially |briefly |largely )?"
    r"(?:down|unavailable|not available|unreachable|inaccessible|unresponsive|degraded|offline)|outage of|"
    r"to (?:fail|time ?out|crash|hang|return (?:status )?[45]\d\d)|"
    r"elevated (?:error|latenc|failure)\w*|increased (?:error|latenc|failure)\w*|(?:high|higher) (?:error|latenc)\w*|"
    r"(?:degraded|intermittent|partial|full|complete) (?:performance|availability|outage|service)|"
    r"not (?:load|respond|resolve|start|work)(?:ing)?)\b",
    re.IGNORECASE,
)
_LIST_FAILURE = re.compile(rf"\b(?:{_ERROR_WORDS}|{_FAILED}|not (?:being )?\w+ed|hangs?|broken)\b", re.IGNORECASE)
# A lead-in to a list of what was seen: "During the affected period, some customers may have experienced:".
_LEAD_IN = re.compile(rf"\b(?:{_MET}|symptoms?|impact(?:ed)?|affected|following (?:errors?|issues?))\b[^:]*:$", re.I)
# A plan, a supposition or a counterfactual: no observation. "may have experienced" is how status pages hedge a
# real impact, so only the plainer modal verbs lower.
_MODAL = re.compile(
    r"\b(?:would|should|will|won't|shall|could have|might|if|unless|whenever|in case|in the future|going forward|"
    r"(?:we|you|they)'ll|(?:we|you) need to|needs? to be|plan(?:ning)? to|"
    r"to (?:prevent|avoid|ensure|detect|reduce)|we plan|planned to|in order to)\b",
    re.IGNORECASE,
)
# "No customers were affected", "users did not notice": the sentence says nothing was seen.
_NEGATED = re.compile(
    r"\b(?:no (?:\w+ )?(?:impact|users?|customers?|errors?|alerts?|data loss|downtime|one|reports?)|"
    r"not (?:affected|impacted|noticeable|visible|user-facing)|did(?: not|n't) (?:see|notice|affect|impact|experience)|"
    r"were(?: not|n't) (?:affected|impacted)|without (?:any )?(?:impact|errors?|downtime|interruption)|unaffected|"
    r"nobody|no-one|none of)\b",
    re.IGNORECASE,
)
# A status page's update label before its sentence: "Investigating - We are seeing elevated errors."
_STATUS_LABEL = re.compile(r"^(?:investigating|identified|monitoring|update|resolved)\s*[-–—:]\s*", re.IGNORECASE)
# Said to the reader, not seen: an apology, a thanks, a commitment. The disruption it names is told elsewhere.
_APOLOGY = re.compile(
    r"\b(?:(?:we|i)(?: are|'re| am|'m)? (?:\w+ )?(?:apologi[sz]e|sorry|regret)|(?:our|my) (?:\w+ )?apolog\w*|"
    r"sorry for|thank(?:s| you)(?: \w+)? (?:for|to)|(?:we )?appreciate (?:your|the) (?:patience|understanding)|"
    r"(?:for|with) (?:your|their) (?:patience|understanding)|"
    r"we (?:know|understand|recogni[sz]e|realise|realize) (?:how|that) (?:\w+ )?(?:important|critical|essential|"
    r"frustrating|disruptive|much)|we(?: are|'re) (?:deeply |fully |firmly )?committed to|we take \w+(?: \w+)? "
    r"(?:very )?seriously|(?:we|i) (?:want|wish|would like) to apologi[sz]e)\b",
    re.IGNORECASE,
)
# The state of the investigation, not what was seen: "the root cause is still under investigation",
# "we are investigating", "engineers have identified the cause".
_INVESTIGATION = re.compile(
    r"\b(?:(?:is|are|remains?|still|currently) (?:\w+ )?under investigation|investigation (?:is|remains) "
    r"(?:\w+ )?(?:ongoing|underway|under way|in progress)|(?:are|is|were|was|'re|been|continu\w+|begun|began|started) "
    r"(?:to )?(?:\w+ )?investigat\w*|(?:still )?looking into|"
    r"(?:root )?cause (?:\w+ ){0,3}?(?:is|was|has|have|had|remains?)(?: \w+){0,3}? (?:been )?(?:identified|"
    r"determined|found|known|unknown|unclear|understood|confirmed|isolated)|"
    r"(?:identified|determined|found|isolated|confirmed|pinpointed) (?:the|a) (?:\w+ )?(?:root )?cause|"
    r"working (?:on|to) (?:identify|identifying|determine|determining|understand|understanding|find|finding) "
    r"(?:the )?(?:root )?cause)\b",
    re.IGNORECASE,
)
# How high a sentence that is no observation (an apology, the investigation's state) may stay: a suggestion.
_NO_OBSERVATION = 0.45
# Sections whose sentences explain or repair: a symptom there is told in passing.
_EXPLAINING = frozenset(
    {SectionField.ROOT_CAUSE, SectionField.TRIGGER, SectionField.CONTRIBUTING, SectionField.REMEDIATION}
)
_SKIPPED = frozenset({SectionField.ACTION_ITEMS, SectionField.LESSONS})


@dataclass(frozen=True)
class Symptom:
    """One passage of what was seen: exact text of the document, its kind, how sure the rule is."""

    text: str
    kind: str  # heading, error, alert, list, impact
    confidence: float
    # What says it is no observation, kept in the rule: "apology", "investigation".
    reasons: tuple[str, ...] = ()

    @property
    def rule(self) -> str:
        return f"symptoms.{self.kind}" + "".join(f"+{reason}" for reason in self.reasons)


def _paragraphs(section: Section) -> Iterator[tuple[str, bool]]:
    """The section's one-line paragraphs and list items, each with whether it is a list item: not
    table rows, code or logs (the only blocks that keep their line breaks)."""
    for chunk in re.split(r"\n\s*\n", section.text):
        lines = chunk.strip().splitlines()
        if len(lines) == 1 and not lines[0].startswith("- ") and " | " not in lines[0]:
            yield lines[0], False
        elif lines and all(line.startswith("- ") for line in lines):
            yield from ((line[2:].strip(), True) for line in lines if " | " not in line)


def _kind(sentence: str, *, named: bool, listed: bool) -> str | None:
    if named:
        return "heading"
    if _ALERT.search(sentence):
        return "alert"
    if _ERROR.search(sentence) or _STATUS.search(sentence):
        return "error"
    if _IMPACT.search(sentence):
        return "impact"
    # An item under "customers experienced:" that itself tells a failure ("Uploads not saved").
    return "list" if listed and _LIST_FAILURE.search(sentence) else None


def _no_observation(sentence: str) -> tuple[str, ...]:
    """What in `sentence` says it tells no observation, whatever error it names: the reasons' names."""
    checks = (("apology", _APOLOGY), ("investigation", _INVESTIGATION))
    return tuple(name for name, pattern in checks if pattern.search(sentence))


def _confidence(kind: str, sentence: str, field: SectionField | None, reasons: tuple[str, ...] = ()) -> float:
    value = _BASE[kind]
    if _MODAL.search(sentence):
        value -= 0.35
    if _NEGATED.search(sentence):
        value -= 0.4
    if field in _EXPLAINING:
        value -= 0.15
    if kind != "heading" and (_RECOVERY.search(sentence) or _DONE.search(sentence)):
        value -= 0.25
    if sentence.endswith((":", "?")):
        value -= 0.3  # a lead-in or a question tells nothing itself
    if reasons:
        value = min(value, _NO_OBSERVATION)
    return round(max(value, 0.0), 2)


def _section_passages(section: Section, named: bool) -> Iterator[Symptom]:
    lead_in = False  # the paragraph before says the items below are what was seen
    for paragraph, listed in _paragraphs(section):
        in_list = listed and lead_in
        if not listed:
            lead_in = bool(_LEAD_IN.search(paragraph))
        for sentence in sentences(_STATUS_LABEL.sub("", paragraph)):
            kind = _kind(sentence, named=named, listed=in_list)
            if kind is not None and len(sentence.split()) >= 3 and not sentence.startswith(("http://", "https://")):
                reasons = _no_observation(sentence)
                yield Symptom(sentence, kind, _confidence(kind, sentence, section.field, reasons), reasons)


def symptom_passages(sections: Sequence[Section]) -> list[Symptom]:
    """Every passage that tells what users or operators saw, in document order, each once."""
    found: dict[str, Symptom] = {}
    for section in sections:
        if section.field in _SKIPPED:
            continue
        named = section.field == SectionField.IMPACT or bool(_SYMPTOM_HEADING.search(section.heading))
        for passage in _section_passages(section, named):
            kept = found.get(passage.text)
            if kept is None or passage.confidence > kept.confidence:
                found[passage.text] = passage
    return list(found.values())


def chosen(passages: Sequence[Symptom], threshold: float) -> list[Symptom]:
    """The passages the field is written from: at or above the gate, the surest first while they fit
    `_MAX_PASSAGES` and `_MAX_WORDS`, shown in document order."""
    sure = sorted(
        (i for i, p in enumerate(passages) if p.confidence >= threshold), key=lambda i: -passages[i].confidence
    )
    kept: list[int] = []
    words = 0
    for index in sure:
        size = len(passages[index].text.split())
        if len(kept) < _MAX_PASSAGES and (not kept or words + size <= _MAX_WORDS):
            kept.append(index)
            words += size
    return [passages[i] for i in sorted(kept)]


def symptoms_text(passages: Sequence[Symptom], threshold: float) -> str | None:
    """The field's text: the chosen passages, one paragraph each, or None when none is sure enough."""
    kept = chosen(passages, threshold)
    return "\n\n".join(p.text for p in kept) or None
