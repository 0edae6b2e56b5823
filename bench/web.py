"""How fast the reviewer's web page answers on a large library: the queue and a draft page.

Builds a data root of `--drafts` drafts (5,000): the demo's three bundled postmortems drafted
as the crawl drafts them (2 to 6 KB of text, 16 to 26 evidence entries each, their sources
captured), copied under new URLs, ids, titles and organisations, and taken through the review
to a spread of states (half extracted, the rest written, changes requested, approved or
rejected, each with its history). Adds one reviewer and serves the page with `incidentlib web`
in a child process, as a person runs it (uvicorn, one worker). Signs in through the sign-in
form with httpx for the session cookie, asks once for the queue (the first request reads every
draft: `cold_queue_s`) and warms up, then `--clients` clients (8) at once ask for the queue page
`/` and for pages of random drafts `/drafts/{id}`, shuffled together: `--queue` (200) and
`--draft` (400) requests in all. Prints one JSON line:

    {"drafts": 5000, "text_kb_mean": ..., "evidence_mean": ..., "clients": 8, "build_s": ...,
     "cold_queue_s": ..., "queue": {"requests": 200, "p50_ms": ..., "p95_ms": ..., "max_ms": ...,
     "target_p95_ms": 300, "met": true}, "draft": {... "target_p95_ms": 150 ...},
     "requests_per_s": ..., "errors": 0}

Latencies are each request's own, sent to answered, as a client sees them while the seven
others keep the server busy; `requests_per_s` is every measured request over the wall time;
`errors` counts answers other than 200. The server and the clients share the machine.
`--queue 0` measures draft pages alone (then `queue` is null), and `--clients 1` one person.
A sign-in the page refuses stops the bench with the page's answer.

Usage: python bench/web.py [--drafts 5000] [--clients 8] [--queue 200] [--draft 400] [--seed 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

import httpx
import yaml

from pipeline import review
from pipeline.draft import apply_extraction, new_draft
from pipeline.extract import extract
from pipeline.ids import canonical_url, slugify
from pipeline.models import ArchiveState, Draft, DraftSource, Origin, SourceEntry
from pipeline.precedence import Hints, Said
from pipeline.records import dump_record
from pipeline.reviewers import add_reviewer
from pipeline.store import Store

TARGET_P95_MS = {"queue": 300.0, "draft": 150.0}
NAME, PASSWORD = "bench", "a long bench password"
LANGUAGES = ["en"]
# Of every 20 drafts: 10 extracted, 4 written, 2 with changes requested, 2 approved, 2 rejected.
STATES = ["extracted"] * 10 + ["written"] * 4 + ["changes_requested"] * 2 + ["approved"] * 2 + ["rejected"] * 2


def drafted_samples() -> list[Draft]:
    """The demo's postmortems drafted from their public URLs, as the crawl drafts them."""
    folder = resources.files("pipeline.demo").joinpath("samples")
    entries = yaml.safe_load(folder.joinpath("samples.yaml").read_text(encoding="utf-8"))
    drafts = []
    for sample in entries:
        url, text = sample["url"], folder.joinpath(sample["file"]).read_text(encoding="utf-8")
        entry = SourceEntry(url=url, org=sample["org"], kind=sample["kind"])
        extraction = extract(
            text.encode(), url, "text/markdown; charset=utf-8", hints=Hints(registry=Said.hint(org=sample["org"]))
        )
        origin = Origin(url=url, canonical_url=canonical_url(url), final_url=url, format=extraction.format)
        drafts.append(apply_extraction(new_draft(entry), entry, extraction, origin))
    return drafts


def captured(url: str, kind: str) -> DraftSource:
    return DraftSource(
        url=url,
        kind=kind,
        archived=f"https://web.archive.org/web/20260101000000/{url}",
        archive=ArchiveState(status="captured", confirmed=True),
    )


def build(root: Path, count: int, rng: random.Random) -> tuple[list[str], float, float]:
    """`count` drafts in `root`, written as the store writes them: their ids, the mean KB of text
    and the mean number of evidence entries."""
    for folder in ("sources", "drafts", "cases"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    samples = drafted_samples()
    ids = []
    text_bytes = evidence = 0
    for n in range(count):
        sample = samples[n % len(samples)]
        org = f"{sample.org} {n % 97}"
        url = f"https://{slugify(org)}.example.org/postmortems/{n}"
        title = {"en": f"{(sample.title or {}).get('en', '')} (#{n})"}
        draft = sample.model_copy(
            update={
                "id": new_draft(SourceEntry(url=url)).id,
                "origin": Origin(url=url, canonical_url=canonical_url(url), final_url=url, format="markdown"),
                "sources": [captured(url, sample.sources[0].kind)],
                "org": org,
                "org_slug": slugify(org),
                "title": title,
            }
        )
        state = rng.choice(STATES)
        if state != "extracted" and state != "rejected":
            draft = review.write(draft, f"writer-{n % 7}", LANGUAGES, "ready")
        if state == "changes_requested":
            draft = review.request_changes(draft, "reviewer", "the impact needs numbers")
        elif state == "approved":
            draft = review.approve(draft, "reviewer", LANGUAGES)
        elif state == "rejected":
            draft = review.reject(draft, "reviewer", "not an incident report")
        (root / "drafts" / f"{draft.id}.json").write_bytes(dump_record(draft))
        ids.append(draft.id)
        text_bytes += len((draft.text or "").encode())
        evidence += len(draft.evidence)
    add_reviewer(Store(root), NAME, PASSWORD)
    return ids, text_bytes / 1024 / count, evidence / count


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(base: str, server: subprocess.Popen[bytes], log: Path, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=base, timeout=2.0) as client:
        while True:
            if server.poll() is not None:
                said = log.read_text(errors="replace").strip().splitlines()[-5:]
                sys.exit(f"the web page's server stopped at start-up (exit {server.returncode}): {said}")
            try:
                if client.get("/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                sys.exit(f"the web page's server did not answer within {timeout_s:.0f} s")
            time.sleep(0.05)


def sign_in(base: str) -> httpx.Cookies:
    """The session cookie of the bench's reviewer, signed in through the form as a browser does."""
    with httpx.Client(base_url=base, timeout=30.0) as client:
        form = client.get("/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
        if token is None:
            sys.exit("no CSRF token on /login")
        answer = client.post("/login", data={"name": NAME, "password": PASSWORD, "csrf_token": token.group(1)})
        if answer.status_code != 303:
            said = re.findall(r'class="problem"[^>]*>([^<]*)<', answer.text)
            sys.exit(f"sign-in refused: POST /login answered {answer.status_code} {said}")
        return client.cookies


async def run_clients(
    base: str, cookies: httpx.Cookies, work: list[tuple[str, str]], clients: int
) -> tuple[dict[str, list[float]], int, float]:
    """Each (kind, path) of `work` asked once, by `clients` clients at once; latencies (ms) by kind, errors, wall s."""
    latencies: dict[str, list[float]] = {kind: [] for kind in TARGET_P95_MS}
    errors = 0
    pending = iter(work)

    async def client() -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=30.0) as http:
            for kind, path in pending:  # one shared iterator: each request is taken by one client
                start = time.perf_counter()
                answer = await http.get(path)
                latencies[kind].append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    errors += 1

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors, time.perf_counter() - start


def figures(kind: str, values: list[float]) -> dict[str, object] | None:
    if len(values) < 2:
        return None
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    p95 = cuts[94]
    return {
        "requests": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(max(values), 1),
        "target_p95_ms": TARGET_P95_MS[kind],
        "met": p95 < TARGET_P95_MS[kind],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=5_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--queue", type=int, default=200, help="queue requests measured")
    parser.add_argument("--draft", type=int, default=400, help="draft page requests measured")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="incidentlib-bench-web-") as tmp:
        root = Path(tmp) / "library"
        start = time.perf_counter()
        ids, text_kb, evidence = build(root, args.drafts, rng)
        build_s = time.perf_counter() - start

        port = free_port()
        base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "pipeline", "web", "--root", str(root), "--port", str(port)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("INCIDENTLIB_")}
        log = Path(tmp) / "server.log"
        with log.open("wb") as said:
            server = subprocess.Popen(command, cwd=tmp, env=env, stdout=said, stderr=subprocess.STDOUT)
        try:
            wait_until_up(base, server, log)
            cookies = sign_in(base)
            with httpx.Client(base_url=base, cookies=cookies, timeout=120.0) as http:
                cold = time.perf_counter()
                if http.get("/").status_code != 200:
                    sys.exit("the queue page did not answer 200")
                cold_queue_s = time.perf_counter() - cold
            warm_up = [("queue", "/")] * args.clients + [("draft", f"/drafts/{rng.choice(ids)}")] * args.clients
            asyncio.run(run_clients(base, cookies, warm_up, args.clients))
            work = [("queue", "/")] * args.queue + [("draft", f"/drafts/{rng.choice(ids)}") for _ in range(args.draft)]
            rng.shuffle(work)
            latencies, errors, wall_s = asyncio.run(run_clients(base, cookies, work, args.clients))
        finally:
            server.terminate()
            server.wait(10)

    print(
        json.dumps(
            {
                "drafts": len(ids),
                "text_kb_mean": round(text_kb, 1),
                "evidence_mean": round(evidence, 1),
                "clients": args.clients,
                "build_s": round(build_s, 1),
                "cold_queue_s": round(cold_queue_s, 2),
                "queue": figures("queue", latencies["queue"]),
                "draft": figures("draft", latencies["draft"]),
                "requests_per_s": round(len(work) / wall_s, 1),
                "errors": errors,
            }
        )
    )


if __name__ == "__main__":
    main()
