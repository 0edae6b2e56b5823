"""The `incidentlib` command. Each command is one call into the library, of the same name.

No logic lives here: options are parsed, one library function runs, its result is
printed. Expected failures (an IncidentlibError) print one line and exit 1 (the command
group does it, so every way of running a command behaves the same); anything else is a
bug and shows its traceback. The entry point is pipeline.main, which takes the signals
before this is loaded. The commands are grouped by who uses them:

    records   schema, validate, fmt, add, extract, links,   whoever keeps the records
              withdraw
    review    queue, show, edit, set, write, approve, ...   writers and reviewers
    runs      crawl, archive, refresh, promote, demo, ...   running the flows by hand
    discover  discover, candidates [accept|dismiss]         finding new postmortems in feeds
    assist    assist                                        a language model's proposals for a draft
    service   serve, deploy, status, config                 running it as a service
    web       web                                           the reviewer's web page
    tools     mcp                                           the published cases to agents and tools
    reviewers reviewer add, password, remove, list          whoever keeps the web page's accounts
"""

from __future__ import annotations

from pipeline.cli import assist, discover, records, review, reviewers, runs, service, tools, web
from pipeline.cli.common import app

__all__ = ["app", "assist", "discover", "records", "review", "reviewers", "runs", "service", "tools", "web"]
