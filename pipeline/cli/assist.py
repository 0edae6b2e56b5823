"""The writer assist's command: `incidentlib assist ID` asks the model, `--accept PATH` takes a proposal.

incidentlib assist ID [--fields summary,trigger] [--lang en|ko] [--again] [--json]
incidentlib assist ID --accept summary [--accept summary.ko] [--by NAME]
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipeline import assist as assisting
from pipeline import changes
from pipeline.assist import Ask
from pipeline.changes import Act
from pipeline.cli.common import ByOption, DraftArgument, JsonOption, RootOption, app, echo, load_settings
from pipeline.cli.review import who
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
        act = Act(who(by))
        for path in accept:
            updated = changes.accept_proposal(store, draft_id, path, act)
            echo(f"{updated.id}: accepted the proposal for {path}, now {updated.state.value}")
        return
    chosen = [f.strip() for f in fields.split(",") if f.strip()] if fields else None
    done = assisting.assist(store, settings, draft_id, Ask(chosen, lang or ["en", "ko"], again))
    if as_json:
        echo(json.dumps(done.__dict__, indent=2, default=str))
        return
    for line in done.said():
        echo(line)
    if done.outcome == "failed":
        raise typer.Exit(1)
