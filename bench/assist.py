"""How well the writer assist's proposals match the answer key, when a model is configured.

    INCIDENTLIB_LLM_URL=http://127.0.0.1:11434/v1 INCIDENTLIB_LLM_MODEL=qwen2.5:14b \
        python bench/assist.py [../shared/corpus/postmortems] [--limit N] [--details FILE]

Without INCIDENTLIB_LLM_URL and INCIDENTLIB_LLM_MODEL (or without the corpus) it prints one JSON line
saying it was skipped and why, and exits 0. Otherwise each document of the corpus (`index.json`,
`fields.json`, as bench/drafts.py reads them) is drafted as a crawl drafts it, its English fields
the assist proposes are emptied, and the model is asked for all of them through `pipeline.assist`
(the same checks, budgets and prompts as `incidentlib assist`), in a temporary data root. Prints
one JSON line:

- `passage_recall_<field>` for trigger, detection, impact, root_cause, remediation: for each
  document where the key has the field, the share of its key passages whose words appear
  contiguously among the words of the proposal (its text and the passages it cites), averaged
  over those documents, as bench/drafts.py measures the rules' drafts; `passage_recall` the mean.
- `summary_facts`: the share of the key's `summary_must_mention` facts present in the proposed
  summary (bench/drafts.py's measure); `summary_clean`: as bench/drafts.py has it.
- `proposals`, `dropped`, `dropped_unfound_passage` (proposals thrown away because a passage they
  cite is not in the text) and its share `dropped_unfound_share`; `failed` drafts by reason;
  `tokens`, `requests`, `seconds`, the model and the prompt's version.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

# The drafts bench's corpus reader and scorers, shared: both benches measure against one answer key.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from drafts import (
    DEFAULT_FOLDER,
    PROSE_FIELDS,
    contains,
    documents,
    draft_for,
    fact_present,
    key_passages,
    summary_clean,
)
from pipeline.assist import Ask, assist
from pipeline.assist.answers import ENGLISH_FIELDS, load_prompt
from pipeline.models import Draft, Impact
from pipeline.settings import Settings
from pipeline.store import Store, init_data_root

_BLANK: dict[str, Any] = {
    "summary": None,
    "symptoms_text": None,
    "trigger": None,
    "detection": None,
    "impact": Impact(),
    "root_cause": "unknown",
    "lessons": None,
    "remediation": [],
    "evidence": [],
}


def proposed(draft: Draft) -> dict[str, str]:
    """Each field's proposal as the scorer reads it: its text, its term, and the passages it cites."""
    found: dict[str, str] = {}
    for name, path in ENGLISH_FIELDS.items():
        for proposal in draft.proposals:
            if proposal.path == path:
                found[name] = "\n".join([proposal.text, proposal.term or "", *proposal.passages])
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, nargs="?", default=DEFAULT_FOLDER)
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    parser.add_argument("--details", type=Path, help="also write one JSON line per document to this file")
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="ask the local chat stand-in, which quotes cue sentences (pipeline.standins.chat.quoting_answer): "
        "checks the bench and the assist's machinery end to end; its figures are no model's",
    )
    args = parser.parse_args(argv)
    if args.stand_in:
        from pipeline.standins.chat import ChatStandIn, quoting_answer

        with ChatStandIn(responder=quoting_answer) as chat:
            settings = Settings(llm_url=chat.url, llm_model=chat.model, llm_requests_per_minute=60000)
            run(args, settings, label="stand-in (quotes cue sentences; no model)")
        return
    run(args, Settings())


def run(args: argparse.Namespace, settings: Settings, label: str | None = None) -> None:
    if not settings.assist_configured:
        why = "no model is configured: set INCIDENTLIB_LLM_URL and INCIDENTLIB_LLM_MODEL (an OpenAI-compatible API)"
        print(json.dumps({"skipped": True, "why": why}))
        return
    if not (args.folder / "fields.json").is_file():
        print(json.dumps({"skipped": True, "why": f"{args.folder} has no index.json and fields.json"}))
        return

    began = time.perf_counter()
    recall: dict[str, list[float]] = {name: [] for name in PROSE_FIELDS}
    facts: list[bool] = []
    clean: list[bool] = []
    failed: Counter[str] = Counter()
    rows = []
    kept = dropped = unfound = tokens = requests = 0
    with tempfile.TemporaryDirectory(prefix="incidentlib-bench-assist-") as scratch:
        root = Path(scratch)
        init_data_root(root)
        store = Store(root)
        run_settings = settings.model_copy(update={"root": root})
        for number, document in enumerate(documents(args.folder)):
            if args.limit is not None and number >= args.limit:
                break
            draft, failure = draft_for(document)
            if failure or not draft.text:
                failed["unreadable"] += 1
                continue
            store.write_draft(draft.model_copy(update=_BLANK))
            done = assist(store, run_settings, draft.id, Ask(languages=["en"], again=True))
            tokens += done.tokens
            requests += done.asked
            if done.outcome == "failed":
                failed[str(done.reason)] += 1
            asked = store.read_draft(draft.id)
            run = asked.assist.get("propose")
            kept += len(asked.proposals)
            dropped += len(run.dropped) if run else 0
            unfound += sum(1 for d in (run.dropped if run else []) if d.why.startswith("a passage not in the text"))
            found = proposed(asked)
            row: dict[str, Any] = {"file": document.file, "outcome": done.outcome, "fields": sorted(found)}
            for name in PROSE_FIELDS:
                passages = key_passages(document.key[name])
                if passages:
                    share = statistics.fmean(float(contains(found.get(name, ""), p)) for p in passages)
                    recall[name].append(share)
                    row[f"recall_{name}"] = round(share, 3)
            summary = next((p.text for p in asked.proposals if p.path == "summary.en"), "")
            facts += [fact_present(summary, fact) for fact in document.key["summary_must_mention"]]
            clean.append(bool(summary) and summary_clean(summary, document.key))
            rows.append(row)
    if args.details:
        args.details.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    per_field = {f"passage_recall_{n}": round(statistics.fmean(v), 3) if v else None for n, v in recall.items()}
    means = [v for v in per_field.values() if v is not None]
    print(
        json.dumps(
            {
                "model": label or settings.llm_model,
                "prompt": load_prompt("propose").id,
                "documents": len(rows),
                "passage_recall": round(statistics.fmean(means), 3) if means else None,
                **per_field,
                "summary_facts": round(statistics.fmean(facts), 3) if facts else None,
                "summary_clean": round(statistics.fmean(clean), 3) if clean else None,
                "proposals": kept,
                "dropped": dropped,
                "dropped_unfound_passage": unfound,
                "dropped_unfound_share": round(unfound / (kept + dropped), 3) if kept + dropped else None,
                "failed": dict(failed),
                "tokens": tokens,
                "requests": requests,
                "seconds": round(time.perf_counter() - began, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
