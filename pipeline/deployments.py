"""The flows as Prefect deployments: their schedules, `serve` here, `deploy` onto a work pool,
and what the server knows of them (for `status` and for an approval's promotion request).

Every deployment is named `incidentlib` (`crawl/incidentlib`, `archive/incidentlib`, ...) and
runs once at a time; its entry point is a module path, so any machine with incidentlib
installed can run it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast
from uuid import UUID

from prefect import Flow
from prefect.client.orchestration import SyncPrefectClient
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.responses import DeploymentResponse
from prefect.deployments.runner import RunnerDeployment

from pipeline.errors import SettingsError
from pipeline.flows import archive, crawl, discover, learn, promote, refresh, site
from pipeline.settings import Settings, interval_seconds, interval_text

__all__ = [
    "DEPLOYMENT",
    "DEPLOYMENT_FLOWS",
    "clear_stuck_runs",
    "deploy",
    "deployments",
    "request_promotion",
    "schedule_of",
    "serve",
    "served_deployments",
]

DEPLOYMENT = "incidentlib"
_FLOWS: dict[str, Flow[..., Any]] = {
    "discover": discover,
    "crawl": crawl,
    "archive": archive,
    "refresh": refresh,
    "promote": promote,
    "site": site,
    "learn": learn,
}
DEPLOYMENT_FLOWS = tuple(_FLOWS)


def schedule_of(settings: Settings, flow_name: str) -> str | None:
    return getattr(settings, f"{flow_name}_schedule")


def deployments(settings: Settings, root: str | None) -> list[RunnerDeployment]:
    """The seven flows as deployments named `incidentlib`, each with its schedule from the settings.

    Entry points are module paths (`pipeline.flows.crawl`), so any machine with incidentlib
    installed runs them, wherever its checkout lies. `root` is the data root given to
    every run; None leaves it to each worker's own INCIDENTLIB_ROOT.
    """
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.deployments.runner import EntrypointType
    from pydantic import ValidationError

    made = []
    for name, flow_ in _FLOWS.items():
        schedule = schedule_of(settings, name)
        timing: dict[str, Any] = {}
        if schedule:
            seconds = interval_seconds(schedule)
            if not seconds:
                try:  # checked by Prefect's own rules, so that a bad line fails here, named
                    CronSchedule(cron=schedule)
                except ValidationError as exc:
                    message = exc.errors(include_url=False)[0]["msg"]
                    variable = f"INCIDENTLIB_{name.upper()}_SCHEDULE"
                    raise SettingsError(f"{variable}: {schedule!r}: {message}", name=variable) from None
            timing = {"interval": seconds} if seconds else {"cron": schedule}
        deployment = flow_.to_deployment(
            name=DEPLOYMENT,
            parameters={"root": root} if root else {},
            description=(flow_.description or "").split("\n")[0],
            tags=["incidentlib"],
            entrypoint_type=EntrypointType.MODULE_PATH,
            # One run of each at a time, wherever the workers are: two crawls at once would
            # double every host's request rate, two archive runs the capture rate.
            concurrency_limit=1,
            **timing,
        )
        # Called from sync code, Prefect's dispatcher runs the sync variant, not a coroutine.
        made.append(cast(RunnerDeployment, deployment))
    return made


def serve(settings: Settings, on_ready: Callable[[], None] = lambda: None) -> None:
    """Run the deployments here until interrupted: scheduled runs start as processes of their own.

    The deployments are applied to the server first, then `on_ready` is told, then runs are
    served. The schedules stay active when this stops (a restart must not pause them); the
    server keeps the runs that fell due meanwhile and this picks them up when back.
    """
    from prefect.runner import Runner

    runner = Runner(pause_on_shutdown=False)
    for deployment in deployments(settings, str(settings.root)):
        runner.add_deployment(deployment)
    on_ready()
    # Prefect's own serve() does the same, but tells nothing between applying and serving.
    asyncio.run(runner.start())


def deploy(settings: Settings, pool: str, root: str | None) -> list[str]:
    """Create (or update) the deployments on work pool `pool`, for its workers to run.

    With `capture_limit` set, also create that global concurrency limit, paced at the
    capture rate, for the workers' archive runs to share.
    """
    from prefect import deploy as prefect_deploy
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    made = deployments(settings, root)
    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(pool)
        except ObjectNotFound:
            raise SettingsError(
                f"--pool {pool}: no such work pool (prefect work-pool create {pool} --type process)"
            ) from None
    # Called from sync code, Prefect's dispatcher runs the sync variant: a list, not a coroutine.
    ids = cast(
        list[UUID],
        prefect_deploy(
            *made, work_pool_name=pool, build=False, push=False, print_next_steps_message=False, ignore_warnings=True
        ),
    )
    if settings.capture_limit:
        decay = settings.captures_per_minute / 60.0
        with get_client(sync_client=True) as client:
            try:
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=settings.capture_limit, limit=1, slot_decay_per_second=decay)
                )
            except ObjectAlreadyExists:  # kept in step with the rate configured now
                client.update_global_concurrency_limit(
                    settings.capture_limit, GlobalConcurrencyLimitUpdate(limit=1, slot_decay_per_second=decay)
                )
    return [str(i) for i in ids]


def _for_root(deployment: DeploymentResponse, root: str) -> bool:
    """Whether a deployment runs on this data root (one without a root runs on its workers' own)."""
    given = (deployment.parameters or {}).get("root")
    return not given or Path(given).resolve() == Path(root).resolve()


def request_promotion(root: str) -> str | None:
    """Ask the server for a run of the promote deployment now; its flow run's name, or None when
    the server has no such deployment for this data root (nothing is served)."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            deployment = client.read_deployment_by_name(f"promote/{DEPLOYMENT}")
        except ObjectNotFound:
            return None
    if not _for_root(deployment, root):
        return None
    # Called from sync code, Prefect's dispatcher runs the sync variant: a FlowRun, not a coroutine.
    return cast(FlowRun, run_deployment(deployment.id, timeout=0)).name


def _schedule_text(schedule: object) -> str:
    """A schedule as an operator writes it: a cron line (UTC unless the server says otherwise) or an interval."""
    from prefect.client.schemas.schedules import CronSchedule, IntervalSchedule, RRuleSchedule

    if isinstance(schedule, CronSchedule):
        zone = schedule.timezone or "UTC"
        return schedule.cron if zone in ("UTC", "Etc/UTC") else f"{schedule.cron} ({zone})"
    if isinstance(schedule, IntervalSchedule):
        return interval_text(int(schedule.interval.total_seconds()))
    if isinstance(schedule, RRuleSchedule):
        return f"rrule {schedule.rrule}"
    return str(schedule)


def served_deployments(root: str, *, stuck_after: timedelta = timedelta(minutes=5)) -> dict[str, dict[str, Any]]:
    """What the Prefect server knows of each flow's deployment for data root `root`: the schedules
    in force on the server (which may differ from the settings: the last `serve` or `deploy`
    applied them), whether one is active, whether something is there to run it (`ready`: a
    `serve` or a worker polling), its next scheduled run, its work pool (None when served by
    `serve`), and its stuck runs: submitted or pending longer than `stuck_after`, waiting for
    the deployment's slot, late by more than `stuck_after`, or running while nothing serves the
    deployment (a `serve` that was killed)."""
    from prefect.client.orchestration import get_client

    now = datetime.now(UTC)
    found: dict[str, dict[str, Any]] = {}
    with get_client(sync_client=True) as client:
        for name, deployment in _of_root(client, root):
            ready = _polled(deployment, now)
            scheduled = _runs(client, deployment.id, [StateType.SCHEDULED])  # soonest first
            held = _runs(client, deployment.id, _HELD)
            pending = [r for r in held if r.state_type == StateType.PENDING] if ready else []
            orphans = [] if ready else held
            waiting = [r for r in scheduled if _awaiting_slot(r)]
            late = [r for r in scheduled if r.expected_start_time and r.expected_start_time < now - stuck_after]
            stuck = [f"{r.name}: {r.state_name} since {_since(r, now)}" for r in pending if _age(r, now) > stuck_after]
            stuck += [f"{r.name}: waiting for the deployment's slot since {_since(r, now)}" for r in waiting]
            stuck += [f"{r.name}: late by {_since(r, now)}" for r in late if not _awaiting_slot(r)]
            stuck += [f"{r.name}: {r.state_name} since {_since(r, now)}, but nothing serves it" for r in orphans]
            found[name] = {
                "schedules": [
                    _schedule_text(s.schedule) + ("" if s.active else " (paused)") for s in deployment.schedules
                ],
                "active": bool(deployment.schedules)
                and any(s.active for s in deployment.schedules)
                and not deployment.paused,
                "ready": ready,
                "next_run": scheduled[0].expected_start_time.isoformat()
                if scheduled and scheduled[0].expected_start_time
                else None,
                "work_pool": deployment.work_pool_name,
                "stuck": stuck,
            }
    return found


def _polled(deployment: DeploymentResponse, now: datetime) -> bool:
    """Whether something serves `deployment`: the server says READY and, for a deployment of `serve`'s
    (no work pool), it was polled within Prefect's own timeout
    (PREFECT_SERVER_SERVICES_FOREMAN_DEPLOYMENT_LAST_POLLED_TIMEOUT_SECONDS, 60 s by default).

    Prefect's foreman marks such a deployment NOT_READY by the same rule, but only on its own loop, which
    on a loaded server was seen to lag by minutes: a `serve` killed that long ago still read as serving.
    Judged here when asked, the answer is the foreman's without its lag. A worker's deployment is left
    to the server: its readiness also hangs on its work queue's polls, which the client does not see."""
    from prefect.settings.context import get_current_settings

    if str(getattr(deployment.status, "value", deployment.status) or "").upper() != "READY":
        return False
    if deployment.work_pool_name or deployment.last_polled is None:
        return True
    timeout = get_current_settings().server.services.foreman.deployment_last_polled_timeout_seconds
    return now - deployment.last_polled <= timedelta(seconds=timeout)


def clear_stuck_runs(root: str) -> list[str]:
    """Runs a `serve` of this data root left behind when it was stopped or killed, ended, so that the
    schedules go on: every run of its deployments still submitting, pending or running is marked
    Crashed, which frees the deployment's slot. None of them is alive: one `serve` runs per data
    root, and a run stops when the `serve` that started it is gone, SIGKILL included
    (pipeline.lifeline), so a restart cannot run a second crawl beside one still going. Of the
    runs that fell due meanwhile, the newest of each deployment stands for the rest, which are
    cancelled. Runs of workers (`deploy`) are not touched. Each cleared run is named, with what
    became of it."""
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled, Crashed

    now = datetime.now(UTC)
    cleared: list[str] = []
    with get_client(sync_client=True) as client:
        for name, deployment in _of_root(client, root):
            if deployment.work_pool_name:
                continue
            for run in _runs(client, deployment.id, _HELD):
                message = "left by a serve of this data root that stopped; cleared by the next"
                client.set_flow_run_state(run.id, Crashed(message=message), force=True)
                cleared.append(f"{name}: {run.name} was {run.state_name}, now Crashed")
            overdue = _runs(client, deployment.id, [StateType.SCHEDULED], before=now)
            for run in overdue[:-1]:  # sorted by when they fell due: the newest stands for the rest
                client.set_flow_run_state(run.id, Cancelled(message="superseded by a later run"), force=True)
                cleared.append(f"{name}: {run.name} fell due while nothing served it, now Cancelled")
    return cleared


# The states of a run that holds its deployment's slot.
_HELD = [StateType.PENDING, StateType.RUNNING, StateType.CANCELLING]


def _of_root(client: SyncPrefectClient, root: str) -> Iterator[tuple[str, DeploymentResponse]]:
    """Each flow's deployment on the server that runs on data root `root`, by flow name."""
    from prefect.exceptions import ObjectNotFound

    for name in _FLOWS:
        try:
            deployment = client.read_deployment_by_name(f"{name}/{DEPLOYMENT}")
        except ObjectNotFound:
            continue
        if _for_root(deployment, root):
            yield name, deployment


def _runs(
    client: SyncPrefectClient,
    deployment_id: UUID,
    types: list[StateType],
    *,
    before: datetime | None = None,
    limit: int = 200,
) -> list[FlowRun]:
    """Runs of one deployment in these state types (oldest due first), due before `before` if given."""
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterExpectedStartTime,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.sorting import FlowRunSort

    return client.read_flow_runs(
        deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])),
        flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=types)),
            expected_start_time=FlowRunFilterExpectedStartTime(before_=before) if before else None,
        ),
        sort=FlowRunSort.EXPECTED_START_TIME_ASC,
        limit=limit,
    )


def _awaiting_slot(run: FlowRun) -> bool:
    return run.state_name == "AwaitingConcurrencySlot"


def _age(run: FlowRun, now: datetime) -> timedelta:
    since = run.state.timestamp if run.state else run.expected_start_time
    return now - since if since else timedelta(0)


def _since(run: FlowRun, now: datetime) -> str:
    minutes = int(_age(run, now).total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
