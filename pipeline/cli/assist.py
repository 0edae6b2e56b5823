"""The writer assist's command: `incidentlib assist ID` asks the model, `--accept PATH` takes a proposal.

incidentlib assist ID [--fields summary,trigger] [--lang en|ko] [--again] [--json]
incidentlib assist ID --accept summary [--accept summary.ko] [--by NAME]
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipeline import assist as assisting
from pipeline.cli.common import ByOption, DraftArgument, JsonOption, RootOption, app, echo, load_settings
from pipeline.cli.review import who
from pipeline.models import Draft
from pipeline.store import Store


@app.command()
def assist(
    draft_id: DraftArgument,
    fields: Annotated[
        str | None,
        typer.Option(
            "--fields",
            help="Only these fields, comma-separated: summary, symptoms_text, trigger, detection, impact, "
            "root_cause, lessons, remediation (proposed in English), title, action_items (translated).",
        ),
    ] = None,
    lang: Annotated[
        list[str] | None,
        typer.Option(
            "--lang", help="en: propose what the draft lacks; ko: translate its English.", show_default="both"
        ),
    ] = None,
    again: Annotated[
        bool,
        typer.Option("--again", help="Ask even if nothing changed since the model last answered.", show_default="off"),
    ] = False,
    accept: Annotated[
        list[str] | None,
        typer.Option("--accept", help="Take the proposal for this field (summary, summary.ko, ...) as your edit."),
    ] = None,
    by: ByOption = None,
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """Ask the language model (INCIDENTLIB_LLM_URL, _MODEL) for what a draft lacks, and for Korean of its
    English; the proposals wait beside the fields. With --accept, take proposals as your own edit."""
    settings = load_settings(root)
    store = Store.from_settings(settings)
    if accept:
        name = who(by)
        for path in accept:

            def take(draft: Draft, path: str = path) -> Draft:
                return assisting.accept_proposal(draft, path, name)

            updated = store.update_draft(draft_id, take)
            echo(f"{updated.id}: accepted the proposal for {path}, now {updated.state.value}")
        return
    languages = lang or ["en", "ko"]
    chosen = [f.strip() for f in fields.split(",") if f.strip()] if fields else None
    done = assisting.assist(store, settings, draft_id, fields=chosen, languages=languages, again=again)
    if as_json:
        echo(json.dumps(done.__dict__, indent=2, default=str))
        return
    said = {
        "proposed": f"{len(done.proposed)} proposals: {', '.join(done.proposed)}",
        "unchanged": "asked before about the same text: nothing asked (--again asks anyway)",
        "nothing": "nothing to propose" if not done.dropped else "no proposal stood",
        "skipped": "not asked: the draft is published, rejected, merged or has no text",
        "failed": f"{done.reason}: {done.message}",
    }[done.outcome]
    echo(f"{draft_id}: {said}")
    if done.dropped:
        echo(f"{draft_id}: {done.dropped} proposals dropped (incidentlib show {draft_id} says why)")
    if done.tokens:
        echo(f"{draft_id}: {done.tokens} tokens")
    if done.outcome == "failed":
        raise typer.Exit(1)
