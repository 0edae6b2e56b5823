"""Commands for whoever runs the library as a service: schedules, workers, status, settings."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Annotated

import typer
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline import lifeline
from pipeline import server as prefect_server
from pipeline.cli.common import (
    JsonOption,
    RootOption,
    app,
    cell,
    echo,
    load_settings,
    print_table,
    read_settings,
    use_known_server,
    verbosity,
)
from pipeline.errors import SettingsError
from pipeline.prefect_env import prefect_environment
from pipeline.settings import SETTINGS_FILE, Settings, settings_files
from pipeline.status import Status
from pipeline.status import status as library_status
from pipeline.store import Store


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@app.command()
def serve(
    root: RootOption = None,
    web: Annotated[
        str | None, typer.Option(metavar="HOST:PORT", help="Serve the reviewer's web page beside, e.g. 127.0.0.1:8000.")
    ] = None,
) -> None:
    """Run the seven flows on their schedules until stopped (Ctrl-C): discover, crawl, archive, refresh, promote,
    site, learn.

    Uses the Prefect server PREFECT_API_URL names; with none, starts one here (SQLite under
    the data root's .incidentlib/prefect/), prints its UI address and stops it on exit.
    Schedules stay active across a restart. With --web, the review page runs beside them.
    """
    settings = load_settings(root)
    if web:
        _serve_web(settings, web)
    store = Store.from_settings(settings)
    # Prefect's runner stops on KeyboardInterrupt. A service manager stops with SIGTERM: taken as
    # Ctrl-C from here on, so that the server this starts is stopped too, even while it is still
    # starting, and a stop at any moment (while Prefect is imported, while the deployments are
    # applied) ends as one.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with prefect_server.running_server(store, settings) as server:
            # Before Prefect is imported below. A service's log: every source of every scheduled run,
            # one line each, here and in the UI.
            prefect_environment(api_url=server.api_url, logging_level="DEBUG" if verbosity() >= 2 else "INFO")
            from pipeline import deployments as flows

            echo(f"Prefect UI: {server.ui_url}  (API {server.api_url})")
            for name in flows.DEPLOYMENT_FLOWS:
                echo(f"  {name}/{flows.DEPLOYMENT}: {flows.schedule_of(settings, name) or 'on demand'}")
            # One serve runs per data root: whatever runs of its deployments are still held (a serve
            # killed mid-submission left them) hold the deployments' slots, and no schedule would go on.
            for line in flows.clear_stuck_runs(str(settings.root)):
                echo(f"  cleared {line}")
            os.environ[lifeline.SERVE_ENV] = str(os.getpid())  # the runs started here follow this process
            ready = "serving; Ctrl-C stops" + ("" if server.pid is None else " (and stops the server)")
            flows.serve(settings, on_ready=lambda: echo(ready))
    except KeyboardInterrupt:
        pass
    echo("stopped")


@app.command()
def deploy(
    pool: Annotated[str, typer.Option("--pool", help="The Prefect work pool whose workers run the flows.")],
    root: Annotated[
        Path | None,
        typer.Option(
            "--root", help="Data root every run uses; left out, each worker's own INCIDENTLIB_ROOT.", file_okay=False
        ),
    ] = None,
) -> None:
    """Create the seven deployments, with their schedules, on a work pool of the server PREFECT_API_URL names.

    Workers (`prefect worker start --pool NAME`) on any machine with incidentlib installed
    then run them. With INCIDENTLIB_CAPTURE_LIMIT set here (where deploy runs, as well as on
    the workers), that global concurrency limit is created too, for the workers' captures to
    share one rate. Run deploy again after turning it on or changing a schedule.
    """
    settings = read_settings(root)
    api_url = os.environ.get("PREFECT_API_URL")
    if not api_url:
        raise SettingsError(
            "PREFECT_API_URL: set it to the Prefect server the workers use (deploy needs a server)",
            name="PREFECT_API_URL",
        )
    if not prefect_server.healthy(api_url, timeout=10.0):
        raise SettingsError(f"PREFECT_API_URL={api_url}: no Prefect server answers there", name="PREFECT_API_URL")
    prefect_environment(api_url=api_url)
    from pipeline import deployments as flows

    flows.deploy(settings, pool, str(settings.root) if root is not None else None)
    for name in flows.DEPLOYMENT_FLOWS:
        echo(f"{name}/{flows.DEPLOYMENT} on pool {pool}: {flows.schedule_of(settings, name) or 'on demand'}")
    if settings.capture_limit:
        echo(f"global concurrency limit {settings.capture_limit}: {settings.captures_per_minute:g} captures a minute")


@app.command()
def status(root: RootOption = None, as_json: JsonOption = False) -> None:
    """What is scheduled, how each flow last ran, the review queue, captures waiting, links gone."""
    settings = load_settings(root)
    store = Store.from_settings(settings)
    api_url = use_known_server(settings)
    served = None
    if api_url:
        from pipeline.deployments import served_deployments

        try:
            served = served_deployments(str(settings.root))
        except Exception as exc:  # the rest of the status stands without the server
            echo(f"{api_url}: the Prefect server did not answer ({type(exc).__name__}); schedules unknown", err=True)
    report = library_status(store, settings, api_url, served)
    if as_json:
        echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        return
    # Paths, schedules and run errors are printed as text, never read as Rich markup.
    console = Console()
    console.print(cell(f"data root {settings.root}"))
    console.print(
        Text(f"Prefect server: {api_url or 'none known (nothing runs on a schedule; see incidentlib serve)'}")
    )
    table = Table(title="flows")
    for column in Status.ROW:
        table.add_column(column)
    for flow in report.flows:
        table.add_row(*(cell(text) for text in flow.row()))
    console.print(table)
    print_table("library", report.library(), unit="count")
    for note in report.notes():
        echo(note)


@app.command()
def config(root: RootOption = None, as_json: JsonOption = False) -> None:
    """Print the effective settings (environment, the data root's incidentlib.env, the working folder's,
    defaults), each with where it came from, secrets masked."""
    settings = read_settings(root)
    values = {}
    for name, value in settings:
        if isinstance(value, SecretStr):
            value = "********" if value.get_secret_value() else None
        values[name] = str(value) if isinstance(value, Path) else value
    values["prefect_api_url"] = prefect_server.api_url_for(Store.from_settings(settings))
    if as_json:
        echo(json.dumps(values, indent=2))
        return
    # NAME=value lines, as the environment and incidentlib.env spell them, each with its origin.
    fields = type(settings).model_fields
    files = _settings_file_names(settings.root)
    for name, value in values.items():
        env = f"INCIDENTLIB_{name.upper()}" if name in fields else "PREFECT_API_URL"
        if name == "root" and root is not None:
            origin = "--root"
        elif env in os.environ:
            origin = "environment"
        elif name in settings.model_fields_set:
            origin = next((label for label, names in files if env in names), SETTINGS_FILE)
        elif name in fields:
            origin = "default"
        else:
            origin = "a running `incidentlib serve`" if value else "not set"
        shown = "" if value is None else json.dumps(value) if isinstance(value, list) else str(value)
        echo(f"{env}={shown}  # {origin}")


def _settings_file_names(root: Path) -> list[tuple[str, set[str]]]:
    """The settings files read, the one that wins first, each as `config` names it (the working
    folder's as incidentlib.env, the data root's by its path) with the names it sets, in capitals."""
    from dotenv import dotenv_values

    here = Path(SETTINGS_FILE).resolve()
    return [
        (SETTINGS_FILE if path == here else str(path), {key.upper() for key in dotenv_values(path)})
        for path in settings_files(root)
        if path.is_file()
    ]


def _serve_web(settings: Settings, where: str) -> None:
    """The review page in a thread of this process, stopped with it."""
    import threading

    import uvicorn

    from pipeline.cli.web import say_how_to_sign_in
    from pipeline.web import create_app
    from pipeline.web.security import forwarded_from

    host, _, port = where.rpartition(":")
    if not port.isdigit():
        raise typer.BadParameter(f"--web: expected HOST:PORT, not {where!r}")
    proxy_headers, allowed = forwarded_from(settings)
    config = uvicorn.Config(
        create_app(settings),
        host=host or "127.0.0.1",
        port=int(port),
        log_level="warning",
        proxy_headers=proxy_headers,
        forwarded_allow_ips=allowed,
    )
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, name="web", daemon=True).start()
    echo(f"review page: http://{host or '127.0.0.1'}:{port}/")
    say_how_to_sign_in(settings)
