"""The writer assist: a language model proposes what a draft lacks, the pipeline checks every claim, and a
person decides.

    report = assist(store, settings, draft_id)               # propose what the draft lacks, and Korean
    draft = accept_proposal(draft, "summary", by="dana")     # a person takes one proposal, as their edit

Optional: with no INCIDENTLIB_LLM_URL and INCIDENTLIB_LLM_MODEL nothing here runs. Any OpenAI-compatible
chat-completions API serves (a local Ollama, vLLM or llama.cpp server, or a hosted one).

prompts/      the prompts, versioned files: the library's style rules live there
answers.py    the answers' JSON Schema (pydantic models) and the prompts' loader
propose.py    pure: what a draft lacks, the messages, every proposal checked, a proposal accepted
client.py     the only code here that touches the network: the `openai` client, spaced and bounded
run.py        the I/O shell: a draft read, asked (or not, when nothing changed), its proposals written
"""

from __future__ import annotations

from pipeline.assist.propose import accept_proposal, find_proposal, lacking, stale_translations, untranslated
from pipeline.assist.run import Ask, AssistReport, DraftAssist, assist, assist_drafts

__all__ = [
    "Ask",
    "AssistReport",
    "DraftAssist",
    "accept_proposal",
    "assist",
    "assist_drafts",
    "find_proposal",
    "lacking",
    "stale_translations",
    "untranslated",
]
