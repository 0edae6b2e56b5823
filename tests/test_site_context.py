"""The reader site's base and its labels: pure, no files."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.case_view import case_rows
from pipeline.ids import case_base_url
from pipeline.models import Case
from pipeline.site.context import SiteContext
from pipeline.site.labels import FIELD_LABELS, LANGS, LISTING_SECTIONS, field_label, ui
from pipeline.vocabulary import KINDS, vocabulary


@pytest.mark.parametrize(
    "setting",
    ["https://example.org/lib/app", "https://example.org/lib/app/", "https://example.org/lib/app/cases/"],
)
def test_the_base_is_the_sites_and_an_older_cases_prefix_reads_the_same(setting: str) -> None:
    assert case_base_url(setting) == "https://example.org/lib/app"
    ctx = SiteContext.of([], base_url=setting, built_at=datetime(2026, 12, 1, tzinfo=UTC))
    assert ctx.case_url("IL-0428") == "https://example.org/lib/app/cases/IL-0428"


def _case(case_id: str, date: str) -> Case:
    return Case.model_validate(
        {
            "id": case_id,
            "org": "Acme",
            "org_slug": "acme",
            "date": date,
            "date_kind": "incident",
            "title": {"en": f"Case {case_id}"},
            "summary": {"en": "A summary."},
            "sources": [{"url": "https://example.org/pm", "kind": "blog"}],
            "updated_at": "2026-11-30T10:00:00Z",
            "url": f"https://example.org/lib/app/cases/{case_id}",
        }
    )


def test_cases_are_newest_first_then_by_id() -> None:
    cases = [_case("IL-0002", "2024-01-05"), _case("IL-0001", "2025-03-01"), _case("IL-0003", "2024-01-05")]
    ctx = SiteContext.of(cases, base_url="https://example.org/lib/app", built_at=datetime(2026, 12, 1, tzinfo=UTC))
    assert [c.id for c in ctx.cases] == ["IL-0001", "IL-0002", "IL-0003"]


def test_every_field_of_a_published_case_has_a_label_in_every_language() -> None:
    full = _case("IL-0001", "2025-03-01")
    paths = {row.path for row in case_rows(full)} | set(Case.model_fields)
    missing = sorted(p for p in paths if p not in FIELD_LABELS or set(FIELD_LABELS[p]) != set(LANGS))
    assert missing == []
    assert all(section in FIELD_LABELS for section in LISTING_SECTIONS)
    assert [field_label(s, "ko") for s in LISTING_SECTIONS] == [
        "증상", "촉발", "원인", "구성 요소", "기여 요인", "감지", "조치", "후속 조치", "교훈",
    ]  # fmt: skip
    assert ui("count", "ko", n=2) == "사례 2건" and ui("range", "ko", n=2, first=1, last=2) == "2건 중 1~2번째"


def test_every_vocabulary_term_has_a_korean_label() -> None:
    unlabelled = [f"{kind}.{t.name}" for kind in KINDS for t in vocabulary().terms[kind].values() if not t.label_ko]
    assert unlabelled == []
    nccl = vocabulary().terms["components"]["nccl"]
    assert (nccl.label_in("ko"), nccl.label_in("en")) == ("NCCL", "NCCL")
    assert vocabulary().terms["symptoms"]["training-hang"].label_in("ko") == "학습 멈춤"
