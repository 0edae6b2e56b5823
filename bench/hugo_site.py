"""The same cases as a Hugo site, for `bench/site.py` to build side by side with incidentlib's.

Hugo is the yardstick issue 38 names: a static site generator built for speed. Each case becomes one
Markdown page per language (English and Korean) with its facts in front matter and its sections as
the body, and the vocabulary's kinds become Hugo taxonomies, so that Hugo makes what the reader's
site makes of them: a page per case and language, a listing per language, a page and a feed per term.
The layouts are minimal and hold the same texts; Hugo writes no search index, no API and no archive,
which the reader's site does, so the comparison favours Hugo.

    project = write_project(folder, cases)      # then: hugo --source project --destination out
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from pipeline.models import Case

__all__ = ["TAXONOMIES", "build", "hugo_available", "write_project"]

# The vocabulary's kinds a listing is filtered by, as Hugo taxonomies (singular = plural).
TAXONOMIES = {
    "component": "components",
    "symptom": "symptoms",
    "domain": "domain",
    "contributing": "contributing",
    "severity": "severities",
    "org": "orgs",
}

_CONFIG = """\
baseURL = "https://example.org/incidentlib/app/"
title = "incidentlib"
defaultContentLanguage = "ko"
defaultContentLanguageInSubdir = true
disableKinds = ["robotsTXT", "sitemap"]

[languages.ko]
languageName = "한국어"
weight = 1
[languages.en]
languageName = "English"
weight = 2

[taxonomies]
{taxonomies}
"""

_BASEOF = """<!doctype html>
<html lang="{{ .Site.Language.Lang }}"><head><meta charset="utf-8">
<title>{{ .Title }} · {{ .Site.Title }}</title></head>
<body>{{ block "main" . }}{{ end }}</body></html>
"""

_LIST = """{{ define "main" }}<h1>{{ .Title }}</h1><p>{{ len .Pages }}</p>
<ol>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a> {{ .Params.org }}
{{ .Date.Format "2006-01-02" }}<p>{{ .Params.summary }}</p>
{{ range .Params.components }}<span>{{ . }}</span>{{ end }}</li>{{ end }}</ol>{{ end }}
"""

_SINGLE = """{{ define "main" }}<article><h1>{{ .Title }}</h1><p>{{ .Params.org }} {{ .Date.Format "2006-01-02" }}
{{ .Params.severity }}</p>
{{ range .Params.components }}<a href="{{ "components/" | relLangURL }}{{ . | urlize }}/">{{ . }}</a>{{ end }}
{{ .Content }}</article>{{ end }}
"""

_TERMS = """{{ define "main" }}<h1>{{ .Title }}</h1><ul>{{ range .Data.Terms.Alphabetical }}
<li><a href="{{ .Page.RelPermalink }}">{{ .Page.Title }}</a> {{ .Count }}</li>{{ end }}</ul>{{ end }}
"""


def hugo_available() -> str | None:
    """The `hugo` command's path, when it is installed (Debian: `apt-get install hugo`)."""
    return shutil.which("hugo")


def _front(case: Case, lang: str) -> dict[str, object]:
    def text(value: dict[str, str] | None) -> str:
        return (value or {}).get(lang) or (value or {}).get("en") or ""

    return {
        "title": text(case.title) or case.id,
        "date": case.date or "2000-01-01",
        "org": case.org,
        "orgs": [case.org],
        "severity": case.severity,
        "severities": [case.severity] if case.severity else [],
        "components": list(case.components),
        "symptoms": list(case.symptoms),
        "domain": list(case.domain),
        "contributing": list(case.contributing),
        "summary": text(case.summary),
        "slug": case.id,
    }


def _body(case: Case, lang: str) -> str:
    def text(value: dict[str, str] | None) -> str:
        return (value or {}).get(lang) or (value or {}).get("en") or ""

    parts = []
    for title, value in (
        ("Summary", case.summary),
        ("Symptoms", case.symptoms_text),
        ("Trigger", case.trigger),
        ("Detection", case.detection),
        ("Lessons", case.lessons),
    ):
        if text(value):
            parts.append(f"## {title}\n\n{text(value)}\n")
    for title, items in (("Remediation", case.remediation), ("Action items", case.action_items)):
        lines = [f"- {text(item.text)}" for item in items if text(item.text)]
        if lines:
            parts.append(f"## {title}\n\n" + "\n".join(lines) + "\n")
    sources = [f"- <{source.url}>" for source in case.sources]
    parts.append("## Sources\n\n" + "\n".join(sources) + "\n")
    return "\n".join(parts)


def write_project(folder: Path, cases: Iterable[Case]) -> Path:
    """A Hugo project of `cases` in `folder` (made anew): config, layouts, one page per case and language."""
    shutil.rmtree(folder, ignore_errors=True)
    taxonomies = "\n".join(f'{singular} = "{plural}"' for singular, plural in TAXONOMIES.items())
    (folder / "layouts" / "_default").mkdir(parents=True)
    (folder / "config.toml").write_text(_CONFIG.format(taxonomies=taxonomies), encoding="utf-8")
    layouts = {"baseof.html": _BASEOF, "list.html": _LIST, "single.html": _SINGLE, "terms.html": _TERMS}
    for name, text in layouts.items():
        (folder / "layouts" / "_default" / name).write_text(text, encoding="utf-8")
    content = folder / "content" / "cases"
    content.mkdir(parents=True)
    for case in cases:
        for lang in ("en", "ko"):
            # JSON is YAML: the front matter needs no escaping of its own.
            front = json.dumps(_front(case, lang), ensure_ascii=False)
            page = f"---\n{front}\n---\n\n{_body(case, lang)}"
            (content / f"{case.id}.{lang}.md").write_text(page, encoding="utf-8")
    return folder


def build(project: Path, out: Path) -> float:
    """Build the project into `out` (emptied first) with Hugo; the seconds it took, start to end of the process."""
    shutil.rmtree(out, ignore_errors=True)
    began = time.perf_counter()
    subprocess.run(
        ["hugo", "--quiet", "--source", str(project), "--destination", str(out)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - began
