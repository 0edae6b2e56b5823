"""What the reader's site calls things, in each of its languages: the record's fields, the listing's
sections, and the words around them.

The fields themselves come from the record format (`pipeline.models.Case`); this module only names
them. A test keeps the two in step: every field of a published case, and every part of a field of
parts (`impact.scope`), has a label in every language of `LANGS`. The listing's sections follow the
seed listing (`reference/example-listing-ko.txt`): 증상, 촉발, 원인, 구성 요소, 기여 요인, 감지, 조치,
후속 조치, 교훈, in that order.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CASE_FACTS",
    "CASE_HEAD",
    "CASE_RECORD_ONLY",
    "FACET_FIELDS",
    "FACET_FOLDERS",
    "LANGS",
    "LISTING_SECTIONS",
    "Lang",
    "field_label",
    "ui",
]

Lang = Literal["ko", "en"]
# The site's languages, the first its default: `/index.html` and `/cases/{id}/` lead to it.
LANGS: tuple[Lang, ...] = ("ko", "en")

# Each field of a published case, and each part of a field of parts, in both languages.
FIELD_LABELS: dict[str, dict[Lang, str]] = {
    "id": {"ko": "사례 번호", "en": "Case id"},
    "org": {"ko": "조직", "en": "Organisation"},
    "org_slug": {"ko": "조직 식별자", "en": "Organisation slug"},
    "date": {"ko": "날짜", "en": "Date"},
    "date_kind": {"ko": "날짜의 뜻", "en": "Date kind"},
    "title": {"ko": "제목", "en": "Title"},
    "domain": {"ko": "분야", "en": "Domain"},
    "severity": {"ko": "심각도", "en": "Severity"},
    "summary": {"ko": "요약", "en": "Summary"},
    "symptoms_text": {"ko": "증상", "en": "Symptoms"},
    "trigger": {"ko": "촉발", "en": "Trigger"},
    "impact": {"ko": "영향", "en": "Impact"},
    "impact.scope": {"ko": "영향 범위", "en": "Scope"},
    "impact.users": {"ko": "영향받은 사용자", "en": "Users affected"},
    "impact.region": {"ko": "영향받은 지역", "en": "Region affected"},
    "detection": {"ko": "감지", "en": "Detection"},
    "root_cause": {"ko": "원인", "en": "Root cause"},
    "lessons": {"ko": "교훈", "en": "Lessons"},
    "symptoms": {"ko": "증상 분류", "en": "Symptom classes"},
    "components": {"ko": "구성 요소", "en": "Components"},
    "contributing": {"ko": "기여 요인", "en": "Contributing factors"},
    "remediation": {"ko": "조치", "en": "Remediation"},
    "action_items": {"ko": "후속 조치", "en": "Action items"},
    "timeline": {"ko": "시간", "en": "Timeline"},
    "timeline.detected_after": {"ko": "감지까지", "en": "Detected after"},
    "timeline.resolved_after": {"ko": "해결까지", "en": "Resolved after"},
    "sources": {"ko": "출처", "en": "Sources"},
    "related": {"ko": "관련 사례", "en": "Related cases"},
    "recurrence_of": {"ko": "재발한 사례", "en": "Recurrence of"},
    "docs": {"ko": "참고 문서", "en": "Documentation"},
    "review": {"ko": "검토", "en": "Review"},
    "review.written_by": {"ko": "작성", "en": "Written by"},
    "review.reviewed_by": {"ko": "검토", "en": "Reviewed by"},
    "review.reviewed_at": {"ko": "검토 시각", "en": "Reviewed at"},
    "updated_at": {"ko": "갱신 시각", "en": "Updated at"},
    "url": {"ko": "영구 주소", "en": "Permanent address"},
    "withdrawn": {"ko": "철회 시각", "en": "Withdrawn at"},
    "withdrawn_reason": {"ko": "철회 이유", "en": "Why withdrawn"},
    "withdrawn_by": {"ko": "철회한 사람", "en": "Withdrawn by"},
    "merged_into": {"ko": "합쳐진 사례", "en": "Merged into"},
    "machine_translations": {"ko": "기계 번역된 글", "en": "Machine-translated texts"},
    "published": {"ko": "처음 공개한 시각", "en": "First published"},
    "aliases": {"ko": "다른 번호", "en": "Also known as"},
}

# The listing's sections under each case, in the seed's order: (field, as the listing shows it).
LISTING_SECTIONS: tuple[str, ...] = (
    "symptoms_text",
    "trigger",
    "root_cause",
    "components",
    "contributing",
    "detection",
    "remediation",
    "action_items",
    "lessons",
)

# The case page (pipeline/site/pages.py): its head (the title, then who, when and how bad), the summary as its
# lead, the listing's text sections (LISTING_SECTIONS without the vocabulary's, which are facts) in the
# listing's order, and the facts beside them, in this order, each only when the case has it. What none of
# these shows is the record's own bookkeeping, left to the record's JSON behind the page's "record" link
# (the id stays, small, beside it; a withdrawal and a merge are said in the banner). A test holds every
# field of the record to exactly one of these places.
CASE_HEAD: tuple[str, ...] = ("title", "org", "date", "severity", "summary")
CASE_FACTS: tuple[str, ...] = (
    "components",
    "symptoms",
    "root_cause",
    "contributing",
    "domain",
    "impact.users",
    "impact.scope",
    "impact.region",
    "timeline.detected_after",
    "timeline.resolved_after",
    "sources",
    "related",
    "recurrence_of",
    "docs",
    "aliases",
    "published",
    "updated_at",
    "review.written_by",
    "review.reviewed_by",
    "url",  # the site's own address for the case, never the record's spelling of it
)
CASE_RECORD_ONLY: tuple[str, ...] = (
    "id",
    "org_slug",
    "date_kind",
    "review.reviewed_at",
    "withdrawn",
    "withdrawn_reason",
    "withdrawn_by",
    "merged_into",
    "machine_translations",
)

# The words around the records. `{n}`, `{first}`, `{last}`, `{terms}` are filled in by the pages.
_UI: dict[str, dict[Lang, str]] = {
    "site_title": {"ko": "장애 사례 라이브러리", "en": "Incident case library"},
    "count": {"ko": "사례 {n}건", "en": "{n} cases"},
    "count_one": {"ko": "사례 {n}건", "en": "{n} case"},
    "range": {"ko": "{n}건 중 {first}~{last}번째", "en": "{first}–{last} of {n}"},
    "summing_up": {
        "ko": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}",
        "en": "Components most frequent in these {n} cases: {terms}",
    },
    "summing_up_one": {
        "ko": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}",
        "en": "Components most frequent in this case: {terms}",
    },
    "summing_up_none": {
        "ko": "이 {n}건에는 구성 요소가 없습니다.",
        "en": "These {n} cases name no component.",
    },
    # No component stands above the rest (the top ones tie beyond SUMMING_UP_TERMS): the tie said as one.
    "summing_up_tie": {
        "ko": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.",
        "en": "No component stands out in these {n} cases: {tied} appear in {times} cases each.",
    },
    "summing_up_tie_once": {
        "ko": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.",
        "en": "No component stands out in these {n} cases: {tied} appear in one case each.",
    },
    "summing_up_tie_one": {
        "ko": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.",
        "en": "No component stands out in this case: it names {tied}.",
    },
    "not_translated": {"ko": "아직 번역되지 않음", "en": "Not yet translated"},
    "machine_translated": {"ko": "기계 번역", "en": "Machine-translated"},
    "read_in_english": {"ko": "영어 원문", "en": "English original"},
    "archived_copy": {"ko": "보관본", "en": "Archived copy"},
    "live_link": {"ko": "원래 주소", "en": "Live page"},
    "cite": {"ko": "인용", "en": "Cite"},
    "retrieved": {"ko": "검색일", "en": "Retrieved"},
    "json": {"ko": "기록 (JSON)", "en": "Record (JSON)"},
    "facts": {"ko": "한눈에 보기", "en": "At a glance"},
    "search": {"ko": "검색", "en": "Search"},
    "search_results": {"ko": "검색 결과 {n}건", "en": "{n} results"},
    "search_results_one": {"ko": "검색 결과 {n}건", "en": "{n} result"},
    "search_more": {"ko": "검색 결과 더 보기", "en": "More results"},
    "search_failed": {"ko": "검색할 수 없습니다", "en": "Search is unavailable"},
    "filters": {"ko": "거르기", "en": "Filters"},
    "clear_filters": {"ko": "거르기 지우기", "en": "Clear filters"},
    "more_cases": {"ko": "사례 더 보기", "en": "More cases"},
    "previous": {"ko": "이전", "en": "Previous"},
    "next": {"ko": "다음", "en": "Next"},
    "withdrawn": {"ko": "철회된 사례", "en": "Withdrawn case"},
    "merged_into": {"ko": "이 사례는 {id} 에 합쳐졌습니다.", "en": "This case was merged into {id}."},
    "other_language": {"ko": "English", "en": "한국어"},
    "feed": {"ko": "새 사례와 갱신 (Atom)", "en": "New and updated cases (Atom)"},
    "site_nav": {"ko": "사이트", "en": "Site"},
    "unknown": {"ko": "알 수 없음", "en": "unknown"},
    "crumbs": {"ko": "위치", "en": "You are here"},
    "pages_nav": {"ko": "쪽", "en": "Pages"},
    "year": {"ko": "연도", "en": "Year"},
    # the case page
    "related_from": {"ko": "이 사례를 관련 사례로 꼽은 사례", "en": "Cases that name this one as related"},
    "recurrences": {"ko": "이 사례가 재발한 사례", "en": "Recurrences of this case"},
    "link_state": {"ko": "마지막 확인 ({date}): {state}", "en": "Last checked {date}: {state}"},
    "link_unchecked": {"ko": "아직 확인하지 않음", "en": "Not checked yet"},
    "link_ok": {"ko": "열림", "en": "live"},
    "link_moved": {"ko": "옮겨짐", "en": "moved"},
    "link_gone": {"ko": "사라짐", "en": "gone"},
    "link_blocked": {"ko": "막힘", "en": "blocked"},
    "link_error": {"ko": "확인 못 함", "en": "could not be checked"},
    "withdrawn_note": {"ko": "이 사례는 {date} 에 철회되었습니다.", "en": "This case was withdrawn on {date}."},
    "withdrawn_reason": {"ko": "이유", "en": "Why"},
    "aliases": {"ko": "다른 번호", "en": "Also known as"},
    "see_survivor": {"ko": "{id} 로 가기", "en": "Go to {id}"},
    "cases_of": {"ko": "{label}: {value}", "en": "{label}: {value}"},
    "all_values": {"ko": "{label} 전체", "en": "All {label}"},
    "listing": {"ko": "전체 사례", "en": "All cases"},
    "goes_to": {"ko": "한국어 페이지로 이동합니다", "en": "This page moved to Korean"},
    "page_n": {"ko": "{n}쪽", "en": "page {n}"},
    "bibtex": {"ko": "BibTeX", "en": "BibTeX"},
    # every page's footer, the sources page, the 404 page
    "footer_nav": {"ko": "라이브러리에 대해", "en": "About the library"},
    "licence_line": {
        "ko": "이 라이브러리의 글은 다음 라이선스를 따릅니다:",
        "en": "The library's texts are licensed under",
    },
    "about_title": {"ko": "소개와 출처", "en": "About and sources"},
    "about_link": {"ko": "소개와 출처", "en": "About and sources"},
    "api": {"ko": "API (JSON)", "en": "API (JSON)"},
    "about_text": {
        "ko": "이 라이브러리는 공개된 장애 사후 보고서(포스트모템)를 사람이 검토한 사례 기록으로 모은 것입니다. "
        "각 사례는 원래 글을 요약하고 그 일부를 인용하며, 원래 주소와 보관본을 함께 적습니다.",
        "en": "This library gathers public incident postmortems as case records, each reviewed by a person. "
        "A case summarises its sources and quotes from them, and gives their addresses and archived copies.",
    },
    "licence_heading": {"ko": "라이선스", "en": "Licence"},
    "licence_text": {
        "ko": "사례의 글(요약, 원인, 교훈 등)은 아래 라이선스로 쓸 수 있습니다. "
        "인용한 글은 각 출처의 라이선스를 따릅니다.",
        "en": "The cases' texts (summaries, causes, lessons and the rest) may be used under the licence below. "
        "What they quote keeps its source's licence.",
    },
    "sources_heading": {"ko": "출처", "en": "Sources"},
    "sources_count": {"ko": "{cases}이 {sites}곳의 글을 인용합니다.", "en": "{cases} quote {sites} sites."},
    "site_cases": {"ko": "사례 {n}건", "en": "{n} cases"},
    "site_cases_one": {"ko": "사례 {n}건", "en": "{n} case"},
    "attribution": {
        "ko": "{host} 의 글을 인용함. 라이선스: {licence}",
        "en": "Quotes text from {host}. Licence: {licence}",
    },
    "licence_unknown": {"ko": "기록 없음", "en": "not recorded"},
    "not_found": {"ko": "페이지를 찾을 수 없습니다", "en": "Page not found"},
    "not_found_text": {
        "ko": "이 주소에는 페이지가 없습니다. 사례 목록에서 찾아보세요.",
        "en": "There is no page at this address. Look for it in the list of cases.",
    },
}

# The facets (api/v1/facets.json, the static term pages): each facet's case field and folder under a language.
FACET_FIELDS: dict[str, str] = {
    "domain": "domain",
    "component": "components",
    "symptom": "symptoms",
    "contributing": "contributing",
    "root_cause": "root_cause",
    "severity": "severity",
    "org": "org",
    "year": "date",
}
FACET_FOLDERS: dict[str, str] = {
    "domain": "domain",
    "component": "components",
    "symptom": "symptoms",
    "contributing": "contributing",
    "root_cause": "root-causes",
    "severity": "severity",
    "org": "orgs",
    "year": "years",
}


def field_label(path: str, lang: Lang) -> str:
    """A field's label ("impact.scope", "trigger") in `lang`; KeyError names a field with no label."""
    return FIELD_LABELS[path][lang]


def ui(key: str, lang: Lang, **values: object) -> str:
    """One of the site's phrases in `lang`, its `{placeholders}` filled from `values`."""
    return _UI[key][lang].format(**values)
