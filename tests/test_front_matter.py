"""Front matter (YAML and TOML): severity, start, resolution, affected components, with evidence."""

from __future__ import annotations

from pipeline.draft import field_evidence, field_proposals
from pipeline.extract import extract

STATUS_PAGE = b"""---
title: Upload errors
date: 2024-03-01T09:10:00Z
severity: disrupted
resolvedWhen: 2024-03-01T10:25:00+00:00
affected:
  - Ingress
  - Uploads
---
Uploads failed for part of the morning while the ingress pool was replaced.
"""


def test_a_status_pages_front_matter_fills_severity_resolution_and_components() -> None:
    x = extract(STATUS_PAGE, "https://status.example.org/issues/2024-03-01-uploads.md")
    proposals = field_proposals(x)
    assert proposals["severity"] == "medium"
    assert proposals["timeline"]["resolved_after"] == "PT1H15M"
    assert proposals["components"][0] == "ingress"
    assert x.front.affected == ["Uploads"]  # not a component term: kept as the writer's words
    rules = {(e.field, e.rule): e.quote for e in field_evidence(x, proposals)}
    assert rules[("severity", "front-matter.severity")] == "severity: disrupted"
    assert ("timeline.resolved_after", "front-matter.resolvedWhen") in rules
    assert rules[("components.0", "front-matter.affected")].startswith("affected:")
    for entry in field_evidence(x, proposals):
        assert x.text[entry.start : entry.end] == entry.quote


def test_toml_front_matter_and_a_statuspage_impact() -> None:
    doc = b"""+++
title = "Login outage"
impact = "major"
started_at = 2024-05-02T12:00:00Z
resolved_at = 2024-05-02T12:40:00Z
components = ["kubelet", "Payments"]
+++
Nobody could log in for forty minutes.
"""
    x = extract(doc, "https://example.org/incidents/login.md")
    proposals = field_proposals(x)
    assert proposals["severity"] == "high"
    assert proposals["timeline"]["resolved_after"] == "PT40M"
    assert "kubelet" in proposals["components"]
    assert x.date == "2024-05-02"


def test_times_without_a_zone_give_no_duration() -> None:
    doc = b"""---
title: Slow search
started: 2024-03-01 09:10:00
resolved: 2024-03-01 10:25:00
severity: notice
---
Search answered slowly for an hour.
"""
    x = extract(doc, "https://example.org/incidents/search.md")
    proposals = field_proposals(x)
    assert x.front.resolved_after is None
    assert proposals["timeline"] is None or proposals["timeline"]["resolved_after"] is None
    assert proposals["severity"] is None  # "notice" is not a severity


def test_a_blog_posts_front_matter_adds_nothing_to_its_text() -> None:
    doc = b"""---
title: What we learned from a cache stampede
date: 2024-03-01
tags: [cache]
---
The cache stampede began when the keys expired together.
"""
    x = extract(doc, "https://example.org/blog/stampede.md")
    assert x.text.startswith("The cache stampede")
    assert x.front.severity is None and x.front.resolved_after is None
