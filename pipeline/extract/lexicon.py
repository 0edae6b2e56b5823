"""The drafter's cue words, one named group each: the rules (`extract.prose`, `summary`, `durations`,
`symptoms`) and the finder's features (`pipeline.finder.features`) read the same patterns, so cues and
features never drift apart.

A group is a compiled regular expression of whole words and phrases (`\\b(one|two|...)\\b`), written
in lowercase where the rules lower a sentence once to scan it faster (`prose._LOW_CUES`). To add a word:
add it to its group, run `tests/test_lexicon.py` (which names every group) and `bench/drafts.py`, and
judge the figures on documents the word was not chosen from: a word read off a failing document fits
that document and seldom the next thousand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["GROUPS", "alternatives", "hits", "union"]

# ---------------------------------------------------------------- prose

CUES: dict[str, re.Pattern[str]] = {
    "trigger": re.compile(
        r"\b(after deploying|a change to|changes to|was triggered by|triggered|was caused by|caused by|"
        r"deploy(?:ed|ment of)|upgrad(?:e|ed|ing)|applied|accidental(?:ly)?|unintentional(?:ly)?|"
        r"planned maintenance|scheduled|was merged|expired|runs? out of|pulled|changed domains|exposed by)\b",
        re.IGNORECASE,
    ),
    "detection": re.compile(
        r"\b(alerted|alerts? (?:fired|detect\w*|triggered)|got paged|paged|received (?:a|an) (?:automated )?"
        r"(?:report|warning|alert|email)|(?:a|the) (?:user|customer|developer|team member|community member)s? "
        r"(?:reported|notified)|users? report(?:ed|ing)?|noticed|was detected|detected|when alerted|"
        r"first (?:notified|learned|heard) of)\b",
        re.IGNORECASE,
    ),
    "impact": re.compile(
        r"\b(users? (?:could not|couldn't|were unable|was unable|were getting|experienced)|unable to|could not|"
        r"failed to|were failing|was failing|customers?|percent of|% of|all (?:services|users|inbound traffic)|"
        r"regions?|unavailable|affected|resulted in|no loss of|a period of|fail to|to fail|to timeout|not possible|"
        r"in turn|(?:fully|completely|was|were|went) down|to (?:go down|crash\w*|be deleted|not work)|"
        r"(?:is|was|were) not available|access denied|showed (?:an )?errors?|(?:does|do|did) not (?:launch|start|"
        r"load|work|respond|resolve)|failed (?:launches|builds|requests|deploys|jobs)|"
        r"(?:nodes?|services?|pods?) (?:are|were|is|was) down)\b",
        re.IGNORECASE,
    ),
    "remediation": re.compile(
        r"\b(rolled back|roll(?:ed)? ?back|rollback|restarted|reverted|failed over|we fixed|fixed it|"
        r"fix (?:was )?deployed|manually (?:patched|attach\w*|marked|deleted|downgraded|reattached)|"
        r"applied (?:a )?(?:quick |manual )?fix|cleared|relaunched|cordon\w*|bump(?:ed)? to|increased|"
        r"scal(?:ed|ing) down|killed|deleted|re-?ran|rerun|generated|rolled over|downgraded|reattached|toggling|"
        r"removed|re-queued|revert\w*|terminated|re-?work\w*|merged and deployed|increase (?:the )?limit|patched|"
        r"upgraded and|restor\w*|fix committed|applied|replac(?:ed|ing|ement)|migrated)\b",
        re.IGNORECASE,
    ),
}

# Fixes in plain verbs no cue above holds ("disabled the flag", "drained the node", "scaled it back
# down"): a remediation only when "we" or the team took the step, or a timeline entry starts with it,
# and the sentence tells no failure (`_plain_fix`).
PLAIN_FIX = re.compile(
    r"\b(disabl(?:e|ed|ing)|drain(?:ed|ing)?|eject(?:ed|ing)?|evict(?:ed|ing)?|scaled (?:\w+ ){0,3}?(?:back )?"
    r"(?:down|up)|fail(?:ed)? (?:\w+ ){0,3}?over to|rolled (?:\w+ ){1,3}?back|switched (?:\w+ ){0,3}?(?:back|over) to|"
    r"rerouted|redirected|flushed|purged|rebooted|redeployed|turned off|shut (?:\w+ )?(?:down|off))\b"
)

WE_DID = re.compile(
    r"\b(?:we|our (?:\w+ )?team|the (?:\w+ )?team|on-?call (?:engineers?|staff)|engineers)\W+(?:\w+\W+){0,2}$"
)

# The root cause's narrative: read besides the four above (a sentence naming a cause often names a
# trigger too), and kept as the passage behind the root cause's class. Cues in tiers, strongest
# first: a sentence that says "root cause" outranks one that says "because", and "probably"
# comes last; a field keeps its best few, shown in the document's order.
ROOT_CAUSE_TIERS = (
    re.compile(
        r"\b(root[- ]cause|the (?:underlying|actual|real|primary|main) (?:technical )?(?:cause|issue|problem)|"
        r"(?:primary|main|biggest|largest) (?:cause|factor|contributor)|the cause (?:was|of)|"
        r"(?:was|were|is|are) (?:\w+ )?caused by|stemmed from|resulted from|the reason (?:was|for)|turned out|"
        r"(?:was |were |is )?identified (?:that|as|the (?:issue|problem|cause|culprit))|the (?:issue|problem) was)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(caus(?:ed|ing)|due to|because|a result of|a bug (?:in|that|where)|bugs in|misbehaving|meant that|"
        r"since it was|culprit|triggering)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(probably|suspect(?:ed|ing)?|likely)\b", re.IGNORECASE),
)

# What was planned, supposed or would have been, not what happened: "would have detected", "we will".
MODAL = re.compile(
    r"\b(?:would(?: not|n't)? have|could have|might have|would've|we will|we'll|will (?:be|now|also|add|make|"
    r"continue|need|work|improve|ensure|implement)|are going to|going forward|moving forward|in the future|"
    r"should|plan(?:s|ning)? to|intend(?:s)? to|next steps?|in order to prevent|to prevent (?:this|a|such|similar)|"
    r"(?:we are|we're) (?:committing|committed) to|(?:we are|we're) going to|"
    r"to make sure (?:it|this) (?:does not|doesn't))\b",
    re.IGNORECASE,
)

# A negation just before the cue ("was not triggered by", "had never been detected").
NEGATION = re.compile(
    r"(?:\b(?:not|never|no|no one|nobody|nothing|neither|nor|without)|n't)\W+(?:\w+\W+){0,2}$", re.IGNORECASE
)

# A cue inside a quotation of four words or more: what someone said or wrote, not the narrative.
QUOTED = re.compile(r"[\"\u201c][^\"\u201c\u201d]*(?:\s\S+){3,}[^\"\u201c\u201d]*[\"\u201d]")

# Sections that tell how things stand or work, not what happened.
BACKGROUND = re.compile(
    r"\b(?:background|context|overview|architecture|history|how (?:\w+ )*works?|about (?:us|the)|glossary)\b",
    re.IGNORECASE,
)

# The fix, not the trigger: "the fix that ended an outage is no trigger".
FIX = re.compile(
    r"\b(?:fix(?:es|ed)?|hotfix|patch(?:ed)?|revert\w*|roll(?:ed|ing)? ?back|rollback|mitigat\w*|resolv\w*|"
    r"restor\w*|recover\w*|workaround)\b",
    re.IGNORECASE,
)

# A sentence that says what caused something: a trigger told, not a remediation ("We upgraded X, which caused").
CAUSED = re.compile(
    r"\b(?:caus(?:ed|es|ing)|trigger(?:s|ed)|led to|resulted in|broke|began to fail|started failing)\b", re.I
)

# "Another root cause", "a contributing factor": a cause beside the root cause, not it.
OTHER_CAUSE = re.compile(
    r"\b(?:another|a second|a secondary|a separate|an additional|other) (?:root )?(?:cause|factor|issue|problem)s?\b|"
    r"\bcontribut(?:ing|ory) (?:factor|cause)|\balso contributed\b",
    re.IGNORECASE,
)

# ... unless the sentence names the main one too ("the biggest factor ..., with contributing factors").
MAIN_CAUSE = re.compile(
    r"\b(?:primary|main|biggest|largest|underlying|actual|real) (?:technical )?"
    r"(?:cause|factor|issue|problem|contributor)",
    re.IGNORECASE,
)

# A counterfactual explains a cause ("a change which would have mitigated it was not released"): for
# the root cause only the forward-looking modals lower a sentence.
COUNTERFACTUAL = re.compile(r"\b(?:would(?: not|n't)? have|could have|might have|would've)\b", re.IGNORECASE)

# A failure told, not a step taken: an item under a remediation heading that says what broke.
FAILURE = re.compile(
    r"\b(?:failed|failing|fails|errors?|unable|could not|couldn't|was down|were down|outage|unavailable|crash\w*|"
    r"timed? ?out|broke(?:n)?)\b",
    re.IGNORECASE,
)

# "X was not affected", "reads remained unaffected": what the incident spared, not its impact. Only
# these: an impact's other negations ("users could not log in") are what it is.
SPARED = re.compile(
    r"\b(?:(?:not|never)|n't)\W+(?:(?:been|be|directly|at all|in any way)\W+)?(?:affected|impacted)\b|"
    r"\b(?:unaffected|unimpacted)\b|"
    r"\bno (?:other )?(?:customers?|users?|services?|systems?|data|regions?|one|teams?|products?) "
    r"(?:was|were|has been|have been) (?:affected|impacted)\b",
    re.IGNORECASE,
)

# "had not caused", "was not triggered by": the causal verb itself negated, wherever the cue stands.
NEGATED_CAUSE = re.compile(
    r"(?:\b(?:not|never)|n't)\W+(?:\w+\W+)?(?:caus\w*|trigger\w*|le[ad] to|led to|result\w* in)\b",
    re.IGNORECASE,
)

# What an alert did, not what set the incident off: "the SLO burn alert triggered at 01:53".
ALERT_TRIGGERED = re.compile(
    r"\b(?:alerts?|alarms?|pages?|monitors?|pagers?|monitoring)\W+(?:\w+\W+)?(?:was |were |had |have )?triggered\b|"
    r"\btriggered (?:an?|the|our|multiple|several) (?:\w+ )?(?:alerts?|alarms?|pages?)\b",
    re.IGNORECASE,
)

# A symptom's rise, not a step taken: "increased error rates", "experienced increased latency".
RISE = re.compile(
    r"\bincreased (?:\w+ ){0,2}?(?:errors?|error rates?|latenc\w*|load|traffic|demand|timeouts?|packet loss|"
    r"response times?|failures?|failure rates?)\b",
    re.IGNORECASE,
)

# The impact's cue that names only whom ("customers"): an impact only with a harm in the sentence.
AUDIENCE = re.compile(r"customers?", re.IGNORECASE)

FOR_WHOM = re.compile(r"\b(?:for|to|with|of|thank)\W+(?:(?:all|our|your|the|affected)\W+){0,2}$", re.IGNORECASE)

HARM = re.compile(
    r"\b(?:failed|failing|fails|failures?|errors?|unable|could not|couldn't|cannot|can't|down|outage|unavailable|"
    r"crash\w*|timed? ?out|timeouts?|broke(?:n)?|affected|impacted|degraded|slow\w*|delay\w*|lost|loss|"
    r"disrupt\w*|interrupt\w*|missing|rejected|denied|latency|experienced)\b",
    re.IGNORECASE,
)

# A step nobody meant to take: a fix is deliberate, so "an accidental execution deleted the nodes", "the
# pipeline unintentionally reverted the changes" tell a trigger, not a remediation (unless "we" did it).
ACCIDENT = re.compile(
    r"\b(?:accidental(?:ly)?|unintentional(?:ly)?|unintended|inadvertent(?:ly)?|by mistake|mistakenly|"
    r"unexpected(?:ly)?|erroneous(?:ly)?|unplanned|incorrect(?:ly)?|wrongly|in error)\b",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- summary

# Words that say how an incident ended: a summary holding none is followed by the resolution.
ENDED = re.compile(
    # Verbs of an ending, not the nouns of a topic ("the restarts", "a fix we tried").
    r"\b(?:rolled back|rolling back|reverted|restored|resolved|mitigated|fixed|fixing|recovered|restarted|"
    r"replaced|renewed|regenerated|relaunched|rolled over|switched|back to normal|working again|came back|"
    r"solved|to solve|(?:implemented|applied|deployed|shipped) (?:a |the )?(?:[\w-]+ ){0,4}(?:fix|patch))\b",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- durations

# Service-level resolutions only: "restarted the web server" is an action, not the end.
RESOLVE = re.compile(
    r"(all systems (?:verified )?operational|verified all systems operational|all healthy|"
    r"\b(?:service|services|everything|site|website|it)\b(?: is| are| was| were| has been| have been)? (?:fully )?"
    r"(?:restored|back (?:online|up|to normal)|working again|fine)|back online|back to normal|"
    r"\b(?:issue|incident|problem|outage)s?\b(?: is| was| has been)? (?:resolved|mitigated|fixed|solved)|\(resolved\)|"
    r"which solved the issue|fix deployed|outage to an end|rolled back|rollback)",
    re.IGNORECASE,
)

# ---------------------------------------------------------------- symptoms

# How it ended, not what was seen: "error rates returned to normal", "the jobs failed over".
RECOVERY = re.compile(
    r"\b(?:returned to (?:normal|service|baseline)|back to normal|recovered|restored|resolved|failed over|"
    r"came back|working again)\b",
    re.IGNORECASE,
)

# What was done about it, told with the failure it answered: "re-queued the builds that failed".
DONE = re.compile(
    r"\b(?:added|re-?queued|requeued|restarted|rolled back|reverted|redeployed|re-?ran|finished|completed|"
    r"deleted|inspecting|investigating)\b",
    re.IGNORECASE,
)


# ---------------------------------------------------------------- building patterns


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern written `\\b(one|two|...)\\b`."""
    body = pattern[3:-3]
    found, depth, start, i = [], 0, 0, 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            i += 1  # an escape: the next character is not syntax
        elif char == "[":
            i = body.index("]", i + 1)
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            found.append(body[start:i])
            start = i + 1
        i += 1
    return [*found, body[start:]]


def union(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str]:
    """One pattern matching where any of `patterns` (each `\\b(...)\\b`, lowercase) matches, with
    its alternatives grouped by first letter. Python's re tries every alternative at every place
    in the text; grouped, a place costs one comparison per letter: 2.2 times faster on a page."""
    by_letter: dict[str, list[str]] = {}
    rest: list[str] = []
    for pattern in patterns:
        for alternative in alternatives(pattern.pattern):
            if alternative[:1].isalpha() and alternative[1:2] not in ("?", "*", "+", "{"):
                by_letter.setdefault(alternative[0], []).append(alternative[1:])
            else:
                rest.append(alternative)
    grouped = [f"{letter}(?:{'|'.join(tails)})" for letter, tails in sorted(by_letter.items())]
    return re.compile(r"\b(?:" + "|".join([*grouped, *rest]) + r")\b")


# ---------------------------------------------------------------- as features

# The groups the finder weighs (`pipeline.finder.features`), by the name its model files keep weights under.
GROUPS: dict[str, re.Pattern[str]] = {
    **{f"cue.{name}": pattern for name, pattern in CUES.items()},
    **{f"cue.root_cause.tier{n}": pattern for n, pattern in enumerate(ROOT_CAUSE_TIERS)},
    "cue.plain_fix": PLAIN_FIX,
    "cue.fix": FIX,
    "cue.caused": CAUSED,
    "cue.modal": MODAL,
    "cue.negation": NEGATION,
    "cue.failure": FAILURE,
    "cue.alert_triggered": ALERT_TRIGGERED,
}


def hits(text: str) -> dict[str, bool]:
    """Which of the feature groups the text holds a word of."""
    return {name: pattern.search(text) is not None for name, pattern in GROUPS.items()}
