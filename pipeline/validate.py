"""`validate`: check every record under a data root against the models and vocabularies.

Each fault is one line, `path: field: problem`, so an operator (or CI on the data
repository) sees every problem at once, not just the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.errors import Fault, InvalidRecord
from pipeline.ids import draft_id_for
from pipeline.merge import Unfinished, unfinished_merges
from pipeline.models import Case, Draft, DraftState
from pipeline.publish import foreign_url, promoted_unmarked, source_key
from pipeline.records import file_name_fault, load_record
from pipeline.registry import find_duplicates
from pipeline.review import missing_languages
from pipeline.store import MODELS, RecordKind, Store

__all__ = ["ValidateReport", "language_faults", "validate"]


@dataclass
class ValidateReport:
    sources: int = 0
    feeds: int = 0
    candidates: int = 0
    drafts: int = 0
    cases: int = 0
    faults: list[Fault] = field(default_factory=list)
    # Not faults: what a person may want to know, which passes validation (drafts whose URL
    # gives another id today).
    warnings: list[Fault] = field(default_factory=list)

    @property
    def records(self) -> int:
        return self.drafts + self.cases


def language_faults(record: Case | Draft, languages: Sequence[str], label: str) -> list[Fault]:
    """Narrative texts that lack one of the required languages (empty fields are not faults here)."""
    return [
        Fault(label, name, f"missing the required language {', '.join(langs)}")
        for name, langs in missing_languages(record, languages)
    ]


def validate(
    store: Store, *, required_languages: Sequence[str] = ("en",), base_url: str | None = None
) -> ValidateReport:
    """Every fault of every record under the store's root; no faults means all is well. `base_url`: the
    library's base (INCIDENTLIB_PUBLIC_BASE_URL), under which every case's `url` must lie."""
    sources, faults = store.read_sources()
    faults += find_duplicates(sources)
    feeds, feed_faults = store.read_feeds()
    candidates, candidate_faults = store.read_candidates()
    report = ValidateReport(
        sources=len(sources),
        feeds=len(feeds),
        candidates=len(candidates),
        faults=faults + feed_faults + candidate_faults,
    )
    faults = report.faults

    loaded: dict[RecordKind, dict[str, tuple[Draft | Case, str]]] = {"draft": {}, "case": {}}
    for kind, path in [(k, p) for k in MODELS for p in store.files(k)]:
        if kind == "draft":
            report.drafts += 1
        else:
            report.cases += 1
        label = store.label(path)
        try:
            record = load_record(MODELS[kind], path.read_bytes(), label)
        except InvalidRecord as exc:
            faults += exc.faults
            continue
        misnamed = file_name_fault(record, path, label)
        if misnamed:
            faults.append(misnamed)
        if isinstance(record, Case):
            faults += language_faults(record, required_languages, label)
            foreign = foreign_url(record, base_url) if base_url else None
            if foreign:
                faults.append(Fault(label, "url", foreign))
        loaded[kind][path.stem] = (record, label)

    drafts = {i: r for i, (r, _) in loaded["draft"].items() if isinstance(r, Draft)}
    cases = {i: r for i, (r, _) in loaded["case"].items() if isinstance(r, Case)}
    unfinished = unfinished_merges(drafts, cases)  # read once: both checks below name what it finds
    faults += _links(loaded, _merges_cut_short(drafts, cases, unfinished))
    faults += _cut_short(loaded, drafts, cases, unfinished)
    report.warnings = _moved_ids(loaded["draft"])
    return report


def _moved_ids(drafts: dict[str, tuple[Draft | Case, str]]) -> list[Fault]:
    """Drafts named by an earlier canonical form of their URL: they keep their id, and the crawl
    keeps updating them under it (`crawl.kept_draft_ids`)."""
    warnings = []
    for draft_id, (record, label) in drafts.items():
        if not isinstance(record, Draft) or record.part_of is not None:  # a part is named after its page's draft
            continue
        try:
            today = draft_id_for(record.origin.url)
        except ValueError:
            continue
        if today == draft_id:
            continue
        problem = f"{record.origin.url} gives the id {today} now; this draft keeps its id, and the crawl updates it"
        if today in drafts:
            problem += f", not the second draft of the page, {today}: keep one of the two"
        warnings.append(Fault(label, "id", problem))
    return warnings


def _links(loaded: dict[RecordKind, dict[str, tuple[Draft | Case, str]]], pending: set[tuple[str, str]]) -> list[Fault]:
    """References between records must point at records that exist: a reader follows them. Merges cut
    short (`pending`) are named once, by `_cut_short` and the survivor's fault, with the command that
    finishes them: an alias written before the rest of its merge is not a second fault."""
    cases = loaded["case"]
    faults = []
    for records in loaded.values():
        for record, label in records.values():
            for index, other in enumerate(record.related):
                if other not in cases:
                    faults.append(Fault(label, f"related.{index}", f"{other} is not a case in cases/"))
            if record.recurrence_of and record.recurrence_of not in cases:
                faults.append(Fault(label, "recurrence_of", f"{record.recurrence_of} is not a case in cases/"))
            if isinstance(record, Case) and record.merged_into:
                faults += _survivor_faults(record.merged_into, label, cases)
            if isinstance(record, Case):
                faults += _alias_faults(record, label, cases, pending)
            if isinstance(record, Draft) and record.state == DraftState.PUBLISHED:
                if record.case_id is None:
                    faults.append(Fault(label, "case_id", "a published draft must name its case"))
                elif record.case_id not in cases:
                    faults.append(Fault(label, "case_id", f"{record.case_id} is not a case in cases/"))
            if isinstance(record, Draft) and record.part_of and record.part_of not in loaded["draft"]:
                faults.append(Fault(label, "part_of", f"{record.part_of} is not a draft in drafts/"))
            if isinstance(record, Draft):
                faults += _merged_faults(record, label, loaded)
    return faults


def _cut_short(
    loaded: dict[RecordKind, dict[str, tuple[Draft | Case, str]]],
    drafts: dict[str, Draft],
    cases: dict[str, Case],
    unfinished: list[Unfinished],
) -> list[Fault]:
    """A promotion or a merge a crash stopped between two of its writes, each named with the command that
    finishes it: every record is whole, but the records disagree."""
    by_sources = {source_key(case): case_id for case_id, case in sorted(cases.items(), reverse=True)}
    faults = []
    for draft_id, draft in drafts.items():
        case_id = promoted_unmarked(draft, by_sources)
        if case_id:
            problem = (
                f"published as {case_id}, but not marked published (a promotion cut short): rerun `incidentlib promote`"
            )
            faults.append(Fault(loaded["draft"][draft_id][1], "state", problem))
    for left in unfinished:
        problem = f"a merge into {left.into} cut short ({left.state}): rerun `{left.command}`"
        faults.append(Fault(loaded["draft"][left.draft][1], "merged_into", problem))
    return faults


def _merged_faults(
    draft: Draft, label: str, loaded: dict[RecordKind, dict[str, tuple[Draft | Case, str]]]
) -> list[Fault]:
    """A merged draft's sources went to its survivor (pipeline.merge): it must name one that exists."""
    if draft.state == DraftState.MERGED and not draft.merged_into:
        return [Fault(label, "merged_into", "a merged draft must name the draft or case it was merged into")]
    if draft.merged_into and draft.merged_into not in loaded["draft"] and draft.merged_into not in loaded["case"]:
        return [Fault(label, "merged_into", f"{draft.merged_into} is neither a draft in drafts/ nor a case in cases/")]
    return []


def _survivor_faults(survivor_id: str, label: str, cases: dict[str, tuple[Draft | Case, str]]) -> list[Fault]:
    """A merged case's readers are sent to its survivor: it must exist and stand (one hop, no chain)."""
    if survivor_id not in cases:
        return [Fault(label, "merged_into", f"{survivor_id} is not a case in cases/")]
    survivor = cases[survivor_id][0]
    if isinstance(survivor, Case) and survivor.withdrawn is not None:
        onward = (
            f", merged into {survivor.merged_into}: name that one, or finish the merge cut short that left it "
            f"here with `incidentlib withdraw {survivor_id} --into {survivor.merged_into} --why …`"
            if survivor.merged_into
            else ""
        )
        return [Fault(label, "merged_into", f"{survivor_id} is withdrawn itself{onward}")]
    return []


def _merges_cut_short(
    drafts: dict[str, Draft], cases: dict[str, Case], unfinished: list[Unfinished]
) -> set[tuple[str, str]]:
    """(case, survivor) of each merge a crash stopped before the case was withdrawn or sent on: a merged
    draft's case not withdrawn yet, or a case merged into one that was merged on since."""
    pending = {(drafts[left.draft].case_id or "", left.into) for left in unfinished if left.draft in drafts}
    for case_id, case in cases.items():
        hop, seen = case.merged_into, {case_id}
        while hop in cases and hop not in seen and cases[hop].merged_into:
            seen.add(hop)
            hop = cases[hop].merged_into
            pending.add((case_id, hop or ""))
    return pending


def _alias_faults(
    case: Case, label: str, cases: dict[str, tuple[Draft | Case, str]], pending: set[tuple[str, str]]
) -> list[Fault]:
    """A case's aliases are the ids merged into it (pipeline.withdraw): each a case withdrawn into this one,
    or one whose merge into it was cut short (`pending`: named once, elsewhere)."""
    faults = []
    for index, alias in enumerate(case.aliases):
        other = cases.get(alias, (None, ""))[0]
        if not isinstance(other, Case):
            faults.append(Fault(label, f"aliases.{index}", f"{alias} is not a case in cases/"))
        elif other.merged_into != case.id and (alias, case.id) not in pending:
            onward = f"it was merged into {other.merged_into}" if other.merged_into else "it was not merged into it"
            faults.append(Fault(label, f"aliases.{index}", f"{alias} is no alias of {case.id}: {onward}"))
    return faults
