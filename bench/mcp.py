"""How `incidentlib mcp` starts and answers on a large library.

Generates a data root of N published cases (default 10,000, bench/site.py's generator: the same seeded
library), with the Korean stems cache a site build leaves (`site/search-stems.json`), then starts the
server over stdio (`python -m pipeline mcp`, driven by the official SDK's client) twice:

- `cold_start_s`: from the process's start until the handshake is done, with no lookup cache (the index
  made from the case files), and `cold_index_s` the part the index took (as the server says on stderr);
- `start_s`, `index_s`: the same on the second start, from the lookup cache (`lookup.pickle`);
- `start_cpu_s`, `cold_start_cpu_s`: the CPU time the server process spent until the handshake was done,
  what its start costs whatever else the machine runs (`load_average` says how busy it was);
- `command_import_s`: what `python -m pipeline --help` takes, the command line's own start-up, in both;

and on the second server, each tool's round trips through the client, `--calls` times over varied
arguments: `search_p50_ms`, `search_p95_ms` (English and Korean queries of one to three words, a third
with a filter; the first search apart, `first_search_ms`), `similar_p50_ms`, `similar_p95_ms` (a
described situation of 20 to 60 words), `get_case_p50_ms`, `get_case_p95_ms`, `list_terms_p50_ms`,
`list_terms_p95_ms`; and `rss_mb`, the server's resident memory after them (`VmRSS`), `peak_rss_mb` its
peak (`VmHWM`).

Prints one JSON line with the targets beside the figures: start ≤ 2 s, search p95 ≤ 100 ms, similar
p95 ≤ 300 ms.

    python bench/mcp.py [--cases N] [--calls K] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

# Run as a script, this file's folder comes first on the path, and this file is named as the SDK is: the
# folder is left out while the SDK loads.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from pipeline.site import search  # noqa: E402
from pipeline.store import Store  # noqa: E402


def _site_bench() -> ModuleType:
    """bench/site.py, its generator (loaded by path: `site` is also the standard library's module)."""
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))  # bench/site.py imports bench/hugo_site.py
    spec = importlib.util.spec_from_file_location("bench_site", here / "site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


site_bench = _site_bench()

TARGETS = {"start_s": 2.0, "search_p95_ms": 100.0, "similar_p95_ms": 300.0}
REPO = Path(__file__).resolve().parent.parent


def make_root(root: Path, count: int) -> None:
    site_bench.make_library(root, count)
    for folder in ("sources", "drafts"):
        (root / folder).mkdir(exist_ok=True)
    site_bench.backdate(root)
    store = Store(root)
    stems = search.Stems()
    stems.analyse(search.korean_words(store.cases()))
    store.state.write("site/search-stems.json", stems.dump(), durable=False)  # as `incidentlib site` keeps it


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


def _server_pid(root: Path) -> int | None:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in line and str(root).encode() in line and int(entry.name) != os.getpid():
                return int(entry.name)
    return None


def _memory(pid: int | None) -> tuple[float, float]:
    if pid is None:
        return 0.0, 0.0
    status = Path(f"/proc/{pid}/status").read_text()
    found = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(VmRSS|VmHWM):\s+(\d+) kB", status, re.M)}
    return round(found.get("VmRSS", 0) / 1024, 1), round(found.get("VmHWM", 0) / 1024, 1)


def _cpu_seconds(pid: int | None) -> float | None:
    """The process's CPU time so far (user and system): its start-up's cost whatever else the machine runs."""
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def _queries(rng: random.Random) -> list[dict[str, Any]]:
    en = [w.lower() for w in site_bench._EN_WORDS if len(w) > 3]
    ko = [search.strip_particles(w) + rng.choice(["에서", "은", "를", ""]) for w in site_bench._KO_WORDS]
    components = ["nccl", "storage", "dns", "kubelet", "cuda", "checkpointing"]
    out: list[dict[str, Any]] = []
    for i in range(300):
        korean = i % 2 == 1
        words = rng.sample(ko if korean else en, rng.randint(1, 3))
        args: dict[str, Any] = {"query": " ".join(words), "lang": "ko" if korean else "en", "limit": 10}
        if i % 3 == 0:
            args["component"] = rng.choice(components)
        out.append(args)
    return out


async def _session(root: Path, calls: int, seed: int, cases: int) -> dict[str, Any]:
    errlog = tempfile.TemporaryFile("w+")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pipeline", "mcp", "--root", str(root)],
        env={"PYTHONPATH": str(REPO)},
        cwd=root,
    )
    rng = random.Random(seed)
    started = time.perf_counter()
    figures: dict[str, Any] = {}
    async with Client(stdio_client(params, errlog=errlog)) as client:
        figures["start_s"] = round(time.perf_counter() - started, 2)
        figures["start_cpu_s"] = _cpu_seconds(_server_pid(root))
        if calls:
            timings: dict[str, list[float]] = {"search": [], "similar": [], "get_case": [], "list_terms": []}
            queries = _queries(rng)
            t = time.perf_counter()
            await client.call_tool("search_cases", {"query": "checkpoint"})  # the first call's lazy loads, apart
            figures["first_search_ms"] = round((time.perf_counter() - t) * 1000, 1)
            words = site_bench._EN_WORDS
            for i in range(calls):
                call = [
                    ("search", "search_cases", queries[i % len(queries)]),
                    ("similar", "similar_cases", {"text": " ".join(rng.choices(words, k=rng.randint(20, 60)))}),
                    ("get_case", "get_case", {"id": f"IL-{rng.randint(1, cases):05d}"}),
                    ("list_terms", "list_terms", {"kind": rng.choice(["components", "symptoms", "root_causes"])}),
                ]
                for name, tool, arguments in call:
                    t = time.perf_counter()
                    result = await client.call_tool(tool, arguments)
                    timings[name].append(time.perf_counter() - t)
                    if result.is_error:
                        raise SystemExit(f"{tool} {arguments}: {result.content}")
            for name, values in timings.items():
                figures[f"{name}_p50_ms"] = _p(values, 0.5)
                figures[f"{name}_p95_ms"] = _p(values, 0.95)
            figures["search_median_hits"] = statistics.median(
                [(await client.call_tool("search_cases", q)).structured_content["total"] for q in queries[:20]]
            )
            figures["rss_mb"], figures["peak_rss_mb"] = _memory(_server_pid(root))
    errlog.seek(0)
    said = re.search(r"indexed in ([0-9.]+) s", errlog.read())
    figures["index_s"] = float(said.group(1)) if said else None
    return figures


def _index_seconds(root: Path) -> float:
    """The lookup opened in a process of its own: what the server's start-up line says it took."""
    code = (
        "import time,sys;from pathlib import Path;t=time.perf_counter();"
        "from pipeline.lookup import Lookup;from pipeline.settings import Settings;from pipeline.store import Store;"
        "s=Settings(root=Path(sys.argv[1]),_env_file=None);t=time.perf_counter();Lookup.open(Store(s.root),s);"
        "print(time.perf_counter()-t)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    return round(float(done.stdout.strip()), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="make the library here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch) / "data"
        root.mkdir(parents=True, exist_ok=True)
        make_root(root, args.cases)
        cold = anyio.run(_session, root, 0, 1, args.cases)
        warm = anyio.run(_session, root, args.calls, 2, args.cases)
        warm_index = _index_seconds(root)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pipeline", "--help"], capture_output=True, check=True, cwd=root)
        command_import = round(time.perf_counter() - started, 2)
    figures = {
        "cases": args.cases,
        "calls": args.calls,
        "cold_start_s": cold["start_s"],
        "cold_index_s": cold["index_s"],
        "cold_start_cpu_s": cold["start_cpu_s"],
        **warm,
        "index_s": warm_index,
        "command_import_s": command_import,
        "load_average": round(os.getloadavg()[0], 1),  # the machine's, when the figures were taken
        "targets": TARGETS,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
