"""The flows as Prefect deployments: their schedules, `serve` here, `deploy` onto a work pool,
and what the server knows of them (for `status` and for an approval's promotion request).

Every deployment is named `incidentlib` (`crawl/incidentlib`, `archive/incidentlib`, ...) and
runs once at a time; its entry point is a module path, so any machine with incidentlib
installed can run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast
from uuid import UUID

from prefect import Flow
from prefect.client.schemas.objects import FlowRun
from prefect.client.schemas.responses import DeploymentResponse
from prefect.deployments.runner import RunnerDeployment

from pipeline.errors import SettingsError
from pipeline.flows import archive, crawl, promote, refresh
from pipeline.settings import Settings, interval_seconds

__all__ = [
    "DEPLOYMENT",
    "DEPLOYMENT_FLOWS",
    "deploy",
    "deployments",
    "request_promotion",
    "schedule_of",
    "serve",
    "served_deployments",
]

DEPLOYMENT = "incidentlib"
_FLOWS: dict[str, Flow[..., Any]] = {"crawl": crawl, "archive": archive, "refresh": refresh, "promote": promote}
DEPLOYMENT_FLOWS = tuple(_FLOWS)


def schedule_of(settings: Settings, flow_name: str) -> str | None:
    return getattr(settings, f"{flow_name}_schedule")


def deployments(settings: Settings, root: str | None) -> list[RunnerDeployment]:
    """The four flows as deployments named `incidentlib`, each with its schedule from the settings.

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


def serve(settings: Settings) -> None:
    """Run the deployments here until interrupted: scheduled runs start as processes of their own.

    The schedules stay active when this stops (a restart must not pause them); the
    server keeps the runs that fell due meanwhile and this picks them up when back.
    """
    from prefect import serve as prefect_serve

    prefect_serve(*deployments(settings, str(settings.root)), pause_on_shutdown=False, print_starting_message=False)


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


def served_deployments(root: str) -> dict[str, dict[str, Any]]:
    """What the Prefect server knows of each flow's deployment for data root `root`: whether its
    schedule is active, whether something is there to run it (`ready`: a `serve` or a worker
    polling), its next scheduled run, and its work pool (None when served by `serve`)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.exceptions import ObjectNotFound

    found: dict[str, dict[str, Any]] = {}
    with get_client(sync_client=True) as client:
        for name in _FLOWS:
            try:
                deployment = client.read_deployment_by_name(f"{name}/{DEPLOYMENT}")
            except ObjectNotFound:
                continue
            if not _for_root(deployment, root):
                continue
            scheduled = client.read_flow_runs(
                deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
                ),
                sort=FlowRunSort.EXPECTED_START_TIME_ASC,
                limit=1,
            )
            found[name] = {
                "active": bool(deployment.schedules)
                and any(s.active for s in deployment.schedules)
                and not deployment.paused,
                "ready": str(getattr(deployment.status, "value", deployment.status) or "").upper() == "READY",
                "next_run": scheduled[0].expected_start_time.isoformat()
                if scheduled and scheduled[0].expected_start_time
                else None,
                "work_pool": deployment.work_pool_name,
            }
    return found
