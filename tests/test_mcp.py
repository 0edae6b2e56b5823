"""`incidentlib mcp`, driven by the official SDK's own client: over stdio (a real `python -m pipeline mcp`
subprocess) and over streamable HTTP on a loopback port, against a data root of a few published cases, a
withdrawn one merged into another, and a draft that must never be answered. And the lookup beneath it
(pipeline.lookup) on real files: its cache kept in step with the case files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from typer.core import TyperGroup

from pipeline import mcp_server
from pipeline.cli import app
from pipeline.lookup import Lookup
from pipeline.models import Case
from pipeline.records import dump_record
from pipeline.settings import Settings
from pipeline.store import Store

pytestmark = pytest.mark.runs_long(40)  # seconds in all: such modules start first (conftest.py)

REPO = Path(__file__).resolve().parent.parent
DNS_EN = "CoreDNS pods ran out of memory and every name lookup in the cluster failed for 25 minutes"
DNS_KO = "CoreDNS 파드가 메모리를 다 써서 클러스터의 이름 조회가 25분 동안 모두 실패했다"


def _texts(en: str, ko: str) -> dict[str, str]:
    return {"en": en, "ko": ko}


def dns_case(make_case: Callable[..., Case]) -> Case:
    summary = _texts(
        "A node pool upgrade doubled the pods asking the cluster's resolver, and CoreDNS was killed for memory; "
        "services could not resolve each other's names until the replicas were raised.",
        "노드 풀 업그레이드로 클러스터 리졸버에 묻는 파드가 두 배가 되자 CoreDNS가 메모리 부족으로 종료됐고, "
        "복제본을 늘릴 때까지 서비스들이 서로의 이름을 찾지 못했다.",
    )
    other = _texts("The resolver's replicas were raised and given memory limits.", "리졸버 복제본을 늘렸다.")
    return make_case(
        "IL-0001",
        org="Example Cloud",
        org_slug="example-cloud",
        date="2024-03-02",
        title=_texts(DNS_EN, DNS_KO),
        summary=summary,
        symptoms_text=summary,
        trigger=other,
        detection=other,
        lessons=other,
        impact={},
        remediation=[{"text": other}],
        action_items=[{"text": other}],
        domain=["kubernetes"],
        components=["dns", "kubelet"],
        symptoms=["dns-failure", "service-unavailable"],
        contributing=["missing-monitoring"],
        root_cause="capacity-exhaustion",
        url="https://benchlet.com/incidentlib/app/cases/IL-0001",
    )


@pytest.fixture
def library(root: Path, store: Store, make_case: Callable[..., Case], make_draft: Callable[..., Any]) -> Path:
    """IL-0001 (CoreDNS), IL-0002 (the suite's checkpoint stall, NCCL), IL-0003 (withdrawn: merged into
    IL-0002), and a draft of a word no case holds."""
    checkpoint = make_case("IL-0002", aliases=["IL-0003"], url="https://benchlet.com/incidentlib/app/cases/IL-0002")
    merged = make_case(
        "IL-0003",
        withdrawn="2025-08-01T00:00:00Z",
        withdrawn_reason="a duplicate of IL-0002",
        withdrawn_by="Rin",
        merged_into="IL-0002",
        url="https://benchlet.com/incidentlib/app/cases/IL-0003",
    )
    for case in (dns_case(make_case), checkpoint, merged):
        (root / "cases" / f"{case.id}.json").write_bytes(dump_record(case))
    store.write_draft(make_draft(title={"en": "Zebrafinch cluster drowned"}, summary={"en": "zebrafinch zebrafinch"}))
    return root


def _env() -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}


def _data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


async def _check_session(client: Client) -> None:
    # the tools, each described and with its schema
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"search_cases", "get_case", "similar_cases", "list_terms"}
    for tool in tools.values():
        assert tool.description and len(tool.description) > 150
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
        assert tool.annotations is not None and tool.annotations.read_only_hint
    assert set(tools["search_cases"].input_schema["properties"]) >= {"query", "component", "since", "lang", "limit"}

    # search in English: the case, its permanent address, its archived sources, the passage that matched
    found = _data(await client.call_tool("search_cases", {"query": "CoreDNS resolver"}))
    assert [hit["id"] for hit in found["results"]] == ["IL-0001"]
    hit = found["results"][0]
    assert hit["url"] == "https://benchlet.com/incidentlib/app/cases/IL-0001"
    assert "coredns" in hit["passage"]["text"].lower()
    assert hit["sources"][0]["archived"].startswith("https://web.archive.org/web/")

    # in Korean, by stem: a query word with a particle (리졸버를) finds 리졸버에 and 리졸버
    found = _data(await client.call_tool("search_cases", {"query": "리졸버를", "lang": "ko"}))
    assert found["words"] == ["리졸버"]
    assert [hit["id"] for hit in found["results"]] == ["IL-0001"]
    assert "리졸버" in found["results"][0]["passage"]["text"]
    assert found["results"][0]["title"] == DNS_KO

    # a filter: the component's cases only, the withdrawn one after the standing one, saying so
    found = _data(await client.call_tool("search_cases", {"query": "", "component": "nccl"}))
    assert [hit["id"] for hit in found["results"]] == ["IL-0002", "IL-0003"]
    assert found["results"][1]["withdrawn"] and "merged into IL-0002" in found["results"][1]["note"]
    found = _data(await client.call_tool("search_cases", {"query": "checkpoint", "component": "dns"}))
    assert found["total"] == 0

    # an alias resolves to its survivor, saying so
    case = _data(await client.call_tool("get_case", {"id": "IL-0003"}))
    assert (case["asked"], case["id"]) == ("IL-0003", "IL-0002")
    assert "IL-0003 was merged into IL-0002" in case["note"]
    assert case["record"]["aliases"] == ["IL-0003"] and case["sources"][0]["archived"]

    # similar cases: the checkpoint stall for a described hang, with what it shares and the passage
    text = "Our training run hung: every rank waited in an all-reduce and the NCCL watchdog fired after 30 minutes."
    similar = _data(await client.call_tool("similar_cases", {"text": text}))
    assert similar["results"][0]["id"] == "IL-0002"
    assert "nccl" in similar["results"][0]["shared_components"]
    assert "IL-0003" not in [hit["id"] for hit in similar["results"]]  # withdrawn: never offered
    assert similar["results"][0]["passage"]["text"]

    # an oversized query, refused in one clear line
    refused = await client.call_tool("search_cases", {"query": "word " * 200})
    assert refused.is_error
    message = refused.content[0].text  # type: ignore[union-attr]
    assert "the query is 1,000 characters; at most 500 are taken" in message and "\n" not in message

    # the vocabulary's counts: standing cases only (IL-0003, withdrawn, does not count)
    terms = {t["name"]: t for t in _data(await client.call_tool("list_terms", {"kind": "components"}))["terms"]}
    assert (terms["nccl"]["count"], terms["dns"]["count"], terms["cuda"]["count"]) == (1, 1, 0)
    assert terms["dns"]["label_ko"]

    # a draft never appears
    assert _data(await client.call_tool("search_cases", {"query": "zebrafinch"}))["total"] == 0
    missing = await client.call_tool("get_case", {"id": "IL-0009"})
    assert missing.is_error and "no published case IL-0009" in missing.content[0].text  # type: ignore[union-attr]

    # the resources: a case as JSON, and as its page's text
    read = await client.read_resource("incidentlib://cases/IL-0001")
    assert json.loads(read.contents[0].text)["record"]["id"] == "IL-0001"  # type: ignore[union-attr]
    read = await client.read_resource("incidentlib://cases/IL-0003/text")
    page = read.contents[0].text  # type: ignore[union-attr]
    assert page.startswith("A checkpoint write stalled") and "IL-0003 was merged into IL-0002" in page
    assert "archived: https://web.archive.org/web/" in page

    # the prompt: check a situation, citing by id and archived source
    prompt = await client.get_prompt("check_situation", {"situation": "pods crashloop after an upgrade"})
    said = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "pods crashloop after an upgrade" in said and "archived" in said and "id" in said


def test_stdio_answers_every_tool_resource_and_prompt(library: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "pipeline", "mcp", "--root", str(library)], env=_env(), cwd=library
    )

    async def run() -> None:
        async with Client(params) as client:
            await _check_session(client)

    anyio.run(run)


def test_streamable_http_on_a_loopback_port(library: Path) -> None:
    command = [sys.executable, "-m", "pipeline", "mcp", "--http", "--port", "0", "--root", str(library)]
    with subprocess.Popen(command, env={**os.environ, **_env()}, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()  # said once the socket listens: the handshake follows it
            assert "3 cases indexed" in line, line
            url = line.split("listening on ")[1].split()[0]
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

            async def run() -> None:
                async with Client(url) as client:
                    await _check_session(client)
                async with Client(url) as second:  # another client, the same server
                    found = _data(await second.call_tool("search_cases", {"query": "CoreDNS"}))
                    assert found["results"][0]["id"] == "IL-0001"

            anyio.run(run)
        finally:
            server.terminate()  # leaving the block closes its pipe and waits for it


def test_http_elsewhere_than_loopback_is_refused_unless_allowed(library: Path) -> None:
    command = [sys.executable, "-m", "pipeline", "mcp", "--http", "--host", "0.0.0.0", "--root", str(library)]
    done = subprocess.run(command, env={**os.environ, **_env()}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "0.0.0.0 is not a loopback address" in lines[0] and "mcp_allow_remote" in lines[0]


def test_the_lookup_follows_the_case_files_through_its_cache(library: Path, make_case: Callable[..., Case]) -> None:
    settings = Settings(root=library, _env_file=None)
    store = Store(library)
    assert Lookup.open(store, settings).search_cases("quokka").total == 0
    assert (library / ".incidentlib" / "lookup.pickle").exists()
    changed = dns_case(make_case).model_copy(update={"lessons": _texts("A quokka ate the resolver.", "쿼카.")})
    (library / "cases" / "IL-0001.json").write_bytes(dump_record(changed))
    lookup = Lookup.open(store, settings)
    assert [hit.id for hit in lookup.search_cases("quokka").results] == ["IL-0001"]
    assert lookup.search_cases("quokka").results[0].passage.field == "lessons"  # type: ignore[union-attr]
    (library / "cases" / "IL-0001.json").unlink()
    lookup = Lookup.open(store, settings)
    assert lookup.search_cases("quokka").total == 0 and len(lookup) == 2
    with pytest.raises(Exception, match="limit must be at least 1"):
        lookup.search_cases("checkpoint", limit=0)
    capped = Settings(root=library, mcp_max_results=1, _env_file=None)
    assert len(Lookup.open(store, capped).search_cases("", component="nccl", limit=50).results) == 1


def test_the_quick_start_reads_exactly_the_options_the_command_declares() -> None:
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    declared = {
        opt: not getattr(param, "is_flag", False)
        for param in command.commands["mcp"].params
        for opt in param.opts
        if opt.startswith("--")
    }
    assert declared == mcp_server.OPTIONS
    quick = mcp_server._quick_options
    assert quick(["--http", "--port", "0", "--root=/srv/lib"]) == {"--http": True, "--port": "0", "--root": "/srv/lib"}
    # anything else is the command line's to answer: help, a typo, a value missing or not a number, twice
    for line in (["--help"], ["--htp"], ["--root"], ["--port", "eighty"], ["--http", "--http"], ["--http=yes"]):
        assert quick(line) is None, line


def test_a_line_the_quick_start_leaves_is_answered_by_the_command_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "pipeline", "mcp", "--root", str(tmp_path / "nowhere")]
    done = subprocess.run(command, env={**os.environ, **_env()}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no such folder" in done.stderr and done.stderr.count("\n") == 1
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "mcp", "--help"],
        env={**os.environ, **_env()},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--http" in done.stdout and "Model Context Protocol" in done.stdout
