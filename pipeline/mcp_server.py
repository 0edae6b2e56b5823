"""`incidentlib mcp`: the library's published cases to agents, by the Model Context Protocol (the official
`mcp` SDK's MCPServer), over stdio or streamable HTTP. Read-only: four tools, two resource templates, one
prompt, each a thin shell over pipeline.lookup, whose answers (pydantic models) are the tools' structured
output.

    server = make_server(Lookup.open(store, settings))
    server.run()                                       # stdio: what an agent's configuration starts
    serve_http(server, "127.0.0.1", 8765, ready)       # streamable HTTP at http://127.0.0.1:8765/mcp
    serve(settings, http=False, host=None, port=None, say=print_line)   # what `incidentlib mcp` runs

`incidentlib mcp` starts here without loading the rest of the command line (`quick_start`, called by
pipeline.main): two of the three seconds of CPU its start took were the other commands' modules. Only
a line of the options `incidentlib mcp` declares, in their plain spellings, over a data root whose
settings are sound, starts this way; anything else (`--help`, a typo, a bad setting, another host)
goes through the command line as every command does, and is answered there.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from pipeline.errors import LookupRefused
from pipeline.lookup import CaseAnswer, Lang, Lookup, SearchAnswer, SimilarAnswer, TermKind, TermsAnswer
from pipeline.settings import Settings
from pipeline.store import Store

__all__ = [
    "INSTRUCTIONS",
    "OPTIONS",
    "PROMPT",
    "is_loopback",
    "make_server",
    "quick_start",
    "refusal",
    "serve",
    "serve_http",
]

INSTRUCTIONS = (
    "incidentlib: a reviewed library of public incident postmortems (outages, GPU training failures, "
    "Kubernetes and cloud incidents) as case records in English and Korean. Search it, read a case, or find "
    "cases like a situation you describe; cite a case by its id, its url and its sources' archived copies."
)

SEARCH = (
    "Search the library's published incident cases by words, in English or Korean (a Korean word is matched "
    "by its stem: 서울에서 finds 서울은), like the reader's site search: every word must match; results are "
    "ranked by how much of the case the words make up, each with the passage that matched. Narrow by a "
    "vocabulary term (component, symptom, root_cause: see list_terms for the names), an org (its name or "
    "slug) or a date (`since`: 2024, 2024-03 or 2024-03-02); an empty query lists the cases the filters keep, "
    "newest first. `lang` chooses the language of titles and passages (en or ko). Each result carries the "
    "case's permanent url and its sources with their archived copies: cite those. A withdrawn case comes "
    "last, with a note. The query is at most a few hundred characters; `limit` is capped."
)
GET = (
    "Read one published case by its id (as IL-0042): its title, summary, permanent url, sources with "
    "archived copies, and the whole record (both languages: timeline, impact, trigger, root cause, "
    "remediation, action items, vocabulary terms). An id that was merged into another case answers with "
    "the surviving case and a note saying so; a withdrawn case answers with a note saying why."
)
SIMILAR = (
    "Find published cases close to a situation or symptom you describe in prose (a log excerpt, an alert, "
    "what a cluster shows): ranked by how close each case's narrative is to the text (TF-IDF, the "
    "library's own similarity code), with the vocabulary's components and symptoms the text names that "
    "each case shares, and the passage behind it. Use it to ground a diagnosis in earlier incidents; "
    "withdrawn cases are never offered. The text is at most a few thousand characters."
)
TERMS = (
    "List the library's controlled vocabulary of one kind (components, symptoms, root_causes, contributing "
    "or domains): each term's name (what search_cases' filters take), its English and Korean labels, and "
    "how many published cases carry it, most first."
)
PROMPT = (
    "Check the following situation against incidentlib, the library of reviewed public postmortems.\n\n"
    "Situation:\n{situation}\n\n"
    "1. Call similar_cases with the situation's text, and search_cases with its key words (its components, "
    "error messages, symptoms); narrow with list_terms' names when useful.\n"
    "2. Read the closest cases with get_case.\n"
    "3. Say which earlier incidents match and how (shared components, symptoms, trigger), what their "
    "root causes and remediations were, and what to check now.\n"
    "Cite every case by its id and its url, and each source you rely on by its archived copy (the "
    "`archived` address; the original `url` when there is none). Say so when no case fits."
)


@contextmanager
def _answering(error: Callable[[str], Exception]) -> Iterator[None]:
    """A refusal of the query core (`LookupRefused`) said to the client as `error` (the SDK's `ToolError` or
    `ResourceError`), in one line: a context, not a decorator, so that each tool keeps the signature the SDK
    makes its JSON schema from."""
    try:
        yield
    except LookupRefused as refused:
        raise error(str(refused)) from None


def make_server(lookup: Lookup) -> Any:
    """The MCP server over `lookup`: tools, resources and the prompt, none of which writes anything."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp_types import ToolAnnotations

    from pipeline import __version__

    server = MCPServer(name="incidentlib", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    @server.tool(description=SEARCH, annotations=read_only)
    def search_cases(
        query: Annotated[str, Field(description="Words to find, English or Korean; empty with a filter lists.")],
        component: Annotated[str | None, Field(description="A component's name (list_terms components).")] = None,
        symptom: Annotated[str | None, Field(description="A symptom's name (list_terms symptoms).")] = None,
        root_cause: Annotated[str | None, Field(description="A root cause's name (list_terms root_causes).")] = None,
        org: Annotated[str | None, Field(description="The organisation, by name or slug.")] = None,
        since: Annotated[str | None, Field(description="Cases dated on or after: 2024, 2024-03, 2024-03-02.")] = None,
        lang: Annotated[Lang, Field(description="Language of titles and passages.")] = "en",
        limit: Annotated[int | None, Field(description="Most results wanted (capped by the server).")] = None,
    ) -> SearchAnswer:
        with _answering(ToolError):
            return lookup.search_cases(
                query,
                component=component,
                symptom=symptom,
                root_cause=root_cause,
                org=org,
                since=since,
                lang=lang,
                limit=limit,
            )

    @server.tool(description=GET, annotations=read_only)
    def get_case(
        id: Annotated[str, Field(description="A case id, as IL-0042.")],
        lang: Annotated[Lang, Field(description="Language of the title and summary.")] = "en",
    ) -> CaseAnswer:
        with _answering(ToolError):
            return lookup.get_case(id, lang=lang)

    @server.tool(description=SIMILAR, annotations=read_only)
    def similar_cases(
        text: Annotated[str, Field(description="The symptom or situation, in prose, English or Korean.")],
        lang: Annotated[Lang, Field(description="Language of titles and passages.")] = "en",
        limit: Annotated[int | None, Field(description="Most results wanted (capped by the server).")] = None,
    ) -> SimilarAnswer:
        with _answering(ToolError):
            return lookup.similar_cases(text, lang=lang, limit=limit)

    @server.tool(description=TERMS, annotations=read_only)
    def list_terms(
        kind: Annotated[TermKind, Field(description="Which vocabulary.")],
    ) -> TermsAnswer:
        with _answering(ToolError):
            return lookup.list_terms(kind)

    @server.resource(
        "incidentlib://cases/{id}",
        name="case",
        description="A published case as JSON: get_case's answer (an alias resolves to its survivor).",
        mime_type="application/json",
    )
    def case_json(id: str) -> str:
        with _answering(ResourceError):
            return lookup.get_case(id).model_dump_json()

    @server.resource(
        "incidentlib://cases/{id}/text",
        name="case-text",
        description="A published case as its page reads, in plain text (English, else what it has).",
        mime_type="text/plain",
    )
    def case_text(id: str) -> str:
        with _answering(ResourceError):
            return lookup.case_text(id)

    @server.prompt(
        name="check_situation",
        description="Check a situation against the library and cite cases by id and archived source.",
    )
    def check_situation(situation: str) -> str:
        return PROMPT.format(situation=situation.strip())

    return server


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (127.0.0.0/8, ::1) or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_http(server: Any, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve streamable HTTP at http://host:port/mcp until stopped; `ready` is called with the address once
    the socket listens (port 0: a free one, which the address names)."""
    import anyio
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)

    async def run() -> None:
        ready(f"http://{shown}:{bound}/mcp")
        await uv.serve(sockets=[sock])

    anyio.run(run)


def refusal(settings: Settings, *, http: bool, host: str | None) -> str | None:
    """Why the server must not start as asked (a non-loopback address not allowed), or None."""
    address = host or settings.mcp_host
    if http and not is_loopback(address) and not settings.mcp_allow_remote:
        return (
            f"mcp: {address} is not a loopback address and the server has no sign-in; "
            "set mcp_allow_remote (INCIDENTLIB_MCP_ALLOW_REMOTE=true) to listen there"
        )
    return None


def serve(
    settings: Settings, *, http: bool, host: str | None, port: int | None, say: Callable[[str, bool], None]
) -> None:
    """Index the data root's published cases and serve them until stopped: over stdio, or with `http` over
    streamable HTTP; `say(line, to_stderr)` tells a person what started (never on stdio's stdout)."""
    started = time.perf_counter()
    lookup = Lookup.open(Store.from_settings(settings), settings)
    server = make_server(lookup)
    took = time.perf_counter() - started
    if not http:
        # stdout is the protocol's: what a person reads goes to stderr
        say(f"incidentlib mcp: {len(lookup)} cases indexed in {took:.2f} s; stdio", True)
        server.run("stdio")
        return

    def ready(url: str) -> None:
        say(f"incidentlib mcp: {len(lookup)} cases indexed in {took:.2f} s; listening on {url}  (Ctrl-C stops)", False)

    serve_http(server, host or settings.mcp_host, settings.mcp_port if port is None else port, ready)


# The options of `incidentlib mcp` (pipeline.cli.tools), as `quick_start` reads them: a flag, or an option
# taking a value. tests/test_mcp.py checks the command declares exactly these.
OPTIONS = {"--http": False, "--host": True, "--port": True, "--root": True}


def _quick_options(argv: list[str]) -> dict[str, str | bool] | None:
    """The options of an `incidentlib mcp` line, or None for anything else (then the command line reads it)."""
    found: dict[str, str | bool] = {}
    words = iter(argv)
    for word in words:
        name, eq, value = word.partition("=")
        if name not in OPTIONS or name in found:
            return None
        if not OPTIONS[name]:
            if eq:
                return None
            found[name] = True
            continue
        if not eq:
            value = next(words, "")
        if not value or value.startswith("-"):
            return None
        found[name] = value
    port = found.get("--port")
    if isinstance(port, str) and not port.isdigit():
        return None
    return found


def quick_start(argv: list[str]) -> bool:
    """Serve as `incidentlib mcp` would, when `argv` (the words after `mcp`) is a plain line of its options
    and the data root and its settings are sound; False, having done nothing, otherwise."""
    from pydantic import ValidationError

    from pipeline.store import data_root_problem

    options = _quick_options(argv)
    if options is None:
        return False
    root = options.get("--root")
    try:
        settings = Settings(root=Path(root)) if isinstance(root, str) else Settings()
    except ValidationError:
        return False
    http = bool(options.get("--http"))
    host = options.get("--host")
    host = host if isinstance(host, str) else None
    port = options.get("--port")
    if data_root_problem(settings.root) or refusal(settings, http=http, host=host):
        return False
    if isinstance(port, str) and int(port) > 65535:
        return False

    def say(line: str, err: bool) -> None:
        print(line, file=sys.stderr if err else sys.stdout, flush=True)

    serve(settings, http=http, host=host, port=int(port) if isinstance(port, str) else None, say=say)
    return True
