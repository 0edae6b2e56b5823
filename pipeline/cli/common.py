"""What every command shares: the app, its options, settings and the data root, and output.

Options used by several commands are defined here once, so a flag means the same
everywhere (`--root`, `--json`, `--by`).
"""

from __future__ import annotations

import inspect
import logging
import os
import shlex
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from pipeline import __version__, gate, interrupt
from pipeline import server as prefect_server
from pipeline.errors import Fault, IncidentlibError, SettingsError
from pipeline.prefect_env import prefect_environment
from pipeline.settings import Settings
from pipeline.store import Store, data_root_problem

__all__ = [
    "ALL_FAILED",
    "COMMAND_ORDER",
    "SOME_FAILED",
    "ByOption",
    "Command",
    "Commands",
    "DraftArgument",
    "JsonOption",
    "RootOption",
    "Typer",
    "app",
    "cell",
    "count",
    "echo",
    "flow_progress",
    "flow_server",
    "load_settings",
    "open_store",
    "outcome_status",
    "print_faults",
    "print_table",
    "read_settings",
    "reflowed",
    "use_known_server",
    "verbosity",
]


# The commands in the order a newcomer meets them, as `incidentlib --help` lists them: make a library
# (or try the demo), fill it, run the flows, review, publish, serve; the rest after. A command not named
# here comes last, in the order it was defined.
COMMAND_ORDER = (
    "init",
    "demo",
    "add",
    "discover",
    "candidates",
    "crawl",
    "archive",
    "queue",
    "show",
    "edit",
    "set",
    "take-suggestion",
    "dismiss-suggestion",
    "assist",
    "write",
    "approve",
    "request-changes",
    "reject",
    "reopen",
    "merge",
    "relate",
    "dismiss",
    "similar",
    "promote",
    "withdraw",
    "site",
    "mcp",
    "reviewer",
    "web",
    "serve",
    "status",
    "refresh",
    "links",
    "learn",
    "validate",
    "fmt",
    "extract",
    "schema",
    "config",
    "deploy",
    "stand-in",
)


def _plain_metavar(param: Any) -> None:
    """Show a switch or a counted flag (`--json`, `-v`) with no type, where typer 0.29 prints `<bool>`
    and `<int>` though it takes none."""
    if param.metavar is None and isinstance(param, TyperOption) and (param.is_flag or param.count):
        param.metavar = ""


def _usage_pieces(command: Any, ctx: Any) -> list[str]:
    """The usage line after the command's name, click's way: `[OPTIONS] URL [FOLDER]`, each argument by its
    name in capitals (typer 0.29 prints `{url}`), one that may be left out in brackets, one that repeats
    followed by `...`. (Beside its help, an argument keeps its name as it is: `url`.)"""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = (param.metavar or param.name.upper()) + ("..." if param.nargs != 1 else "")
            pieces.append(name if param.required else f"[{name}]")
        else:
            pieces += param.get_usage_pieces(ctx)
    return pieces


def reflowed(text: str | None) -> str | None:
    """A help text as the terminal should wrap it: each paragraph (blank-line separated) one line, its
    docstring's hard line breaks made spaces. typer 0.29's rich mode keeps them in the commands' list of a
    group's help and in every paragraph after a command's first, so a line broke where the source did
    ("each drafted field's / evidence"), mid-sentence, before the terminal's width. A paragraph that
    begins with click's `\\b` keeps its lines."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


class Command(TyperCommand):
    """A command: its help names its arguments and flags as the manual does (`_usage_pieces`,
    `_plain_metavar`), re-flowed whole (`reflowed`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help, self.short_help = reflowed(self.help), reflowed(self.short_help)

    def get_params(self, ctx: Any) -> list[Any]:  # click's Context and Parameter, which typer vendors privately
        params = super().get_params(ctx)
        for param in params:
            _plain_metavar(param)
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage_pieces(self, ctx)


class Commands(TyperGroup):
    """A group of commands: help as `Command`'s, the commands in COMMAND_ORDER, and an error incidentlib
    raises on purpose is one line on stderr and exit 1."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help, self.short_help = reflowed(self.help), reflowed(self.short_help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            _plain_metavar(param)
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*_usage_pieces(self, ctx), self.subcommand_metavar]

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        known = [name for name in COMMAND_ORDER if name in names]
        return known + [name for name in names if name not in known]

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except IncidentlibError as exc:
            echo(f"Error: {exc}", err=True)
            raise typer.Exit(1) from None
        except interrupt.Interrupted as exc:
            echo(exc.summary, err=True)
            raise typer.Exit(exc.exit_status) from None


class Typer(typer.Typer):
    """typer.Typer whose commands are `Command`s and whose groups are `Commands` (every group of the
    command line is made with it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=Commands, **kwargs)

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(name, cls=cls or Command, **kwargs)


app = Typer(
    name="incidentlib",
    help="Turn public postmortems into a curated, reviewed library of incident cases.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Data root holding sources/, drafts/ and cases/.",
        file_okay=False,
        show_default="INCIDENTLIB_ROOT, else the current folder",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print one JSON document for scripts instead of text.", show_default="off")
]
ByOption = Annotated[
    str | None,
    typer.Option("--by", help="Who does it.", show_default="git's user.name"),
]
DraftArgument = Annotated[str, typer.Argument(help="The draft's id (its file name in drafts/ without .json).")]

# How much a run prints: 0 a progress bar and one line per problem, 1 one line per source, 2 debugging.
_verbosity = 0


def verbosity() -> int:
    return _verbosity


def _print_version(asked: bool) -> None:
    if asked:
        echo(f"incidentlib {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="-v: one line per source as it ends; -vv: debugging too.")
    ] = 0,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit.", show_default=False
        ),
    ] = False,
) -> None:
    # The signals were taken before the command line was loaded (pipeline.main).
    global _verbosity
    _verbosity = verbose
    # Whichever command imports Prefect (after this), it is quiet offline and logs at this level;
    # an operator's own level stands without -v.
    level = ("WARNING", "INFO", "DEBUG")[min(verbose, 2)]
    prefect_environment(logging_level=level if verbose or "PREFECT_LOGGING_LEVEL" not in os.environ else None)
    if verbose:
        handler = logging.StreamHandler()
        handler.setFormatter(_TerminalFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
        logging.getLogger("pipeline").addHandler(handler)
        logging.getLogger("pipeline").setLevel(logging.INFO if verbose == 1 else logging.DEBUG)


def read_settings(root: Path | None) -> Settings:
    """The settings of data root `root` (the environment, its incidentlib.env, the working folder's,
    the defaults: pipeline.settings), a bad value as one line naming it."""
    try:
        return Settings(root=root) if root is not None else Settings()
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        name = "INCIDENTLIB_" + str(error["loc"][0]).upper() if error["loc"] else "settings"
        # pydantic prefixes a validator's own words with "Value error, "; the reader needs only the words.
        message = str(error["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{name}: {message}", name=name) from None


def load_settings(root: Path | None) -> Settings:
    """The settings of a command that reads or writes a data root; outside one, one line and exit 2.

    A folder without sources/, drafts/ or cases/ is not taken for an empty library: `validate`
    would pass it and `queue` list nothing, which looks like success in the wrong folder.
    """
    settings = read_settings(root)
    problem = data_root_problem(settings.root)
    if problem:
        make = f"incidentlib init {shlex.quote(str(settings.root))}"
        echo(f"Error: {settings.root}: {problem}; make one with `{make}`, or give --root or INCIDENTLIB_ROOT", err=True)
        raise typer.Exit(2)
    return settings


def open_store(root: Path | None) -> Store:
    return Store.from_settings(load_settings(root))


# The exit statuses of every command (docs/commands.md tells them). 0: done, or nothing to do; 1: an error
# stopped it (one `Error:` line); 2: not a data root, or a command line that click refused; 130 and 143: a
# signal stopped it (pipeline.interrupt). A run over many sources, feeds or drafts that went through but
# not for all of them: 3 when some failed and others went through, 4 when every one it tried failed.
SOME_FAILED = 3
ALL_FAILED = 4


def outcome_status(outcomes: Iterable[str], failed: Collection[str], untried: Collection[str] = ()) -> int:
    """The exit status of a run from its items' outcomes: 0 when none failed (none tried included), else
    SOME_FAILED, or ALL_FAILED when every item tried failed. `untried` outcomes (deferred, not due,
    waiting) were not tried this time: they count neither way."""
    tried = [outcome for outcome in outcomes if outcome not in untried]
    failures = sum(1 for outcome in tried if outcome in failed)
    if not failures:
        return 0
    return ALL_FAILED if failures == len(tried) else SOME_FAILED


class _TerminalFormatter(logging.Formatter):
    """Log lines on the terminal (`-v`) escaped as `echo` escapes: a message may quote a crawled page."""

    def format(self, record: logging.LogRecord) -> str:
        return gate.for_terminal(super().format(record))


def echo(message: str = "", *, err: bool = False, nl: bool = True, bold: bool = False) -> None:
    """Print a line as every command prints: each control character, bidirectional control and carriage
    return made visible (`\\e[2J`, `\\u202e`), never obeyed, for a title from a crawled page may hold them
    (pipeline.gate). The one way the commands write to the terminal; `bold` styles after escaping."""
    shown = gate.for_terminal(message)
    typer.echo(typer.style(shown, bold=True) if bold else shown, err=err, nl=nl)


def cell(text: str) -> Text:
    """A table cell of page or person text: escaped for the terminal, and never read as rich's markup."""
    return Text(gate.for_terminal(text))


def count(n: int, plural: str) -> str:
    return f"{n} {plural[:-1] if n == 1 else plural}"


def print_table(title: str, rows: list[tuple[str, int]], unit: str = "sources") -> None:
    table = Table(title=title)
    table.add_column("what")
    table.add_column(unit, justify="right")
    for name, n in rows:
        table.add_row(cell(name), str(n))
    Console().print(table)


def print_faults(faults: list[Fault]) -> None:
    for fault in faults:
        echo(str(fault))


def _rate(done: int, elapsed: float) -> str:
    if not done or elapsed <= 0:
        return ""
    per_second = done / elapsed
    return f"{per_second:.1f}/s" if per_second >= 1 else f"{per_second * 60:.1f}/min"


@contextmanager
def flow_progress(show: bool) -> Iterator[None]:
    """A progress bar on stderr for each flow this process runs: done/total, rate, time left."""
    if not show:
        yield
        return
    from pipeline import artifacts

    started: dict[str, float] = {}
    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description:<8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:>10}"),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    ) as bar:

        def listen(flow_name: str, done: int, total: int) -> None:
            if flow_name not in tasks:
                started[flow_name] = time.monotonic()
                tasks[flow_name] = bar.add_task(flow_name, total=total or None, rate="")
            rate = _rate(done, time.monotonic() - started[flow_name])
            bar.update(tasks[flow_name], completed=done, total=total or None, rate=rate)

        artifacts.progress_listeners.append(listen)
        try:
            yield
        finally:
            artifacts.progress_listeners.remove(listen)


def use_known_server(settings: Settings) -> str | None:
    """The Prefect server this data root's commands use (PREFECT_API_URL, else the one a running
    `serve` started), made the one Prefect talks to; None when none is known. For commands that
    only ask a server something (status, approve); flow commands use `flow_server`.

    Call before Prefect is first imported (pipeline.prefect_env).
    """
    store = Store.from_settings(settings)
    api_url = prefect_server.api_url_for(store)
    prefect_environment(api_url=api_url, home=prefect_server.prefect_home(store))
    return api_url


@contextmanager
def flow_server(settings: Settings) -> Iterator[str]:
    """What a command that runs flows needs around them: a Prefect server (pipeline.server) that
    never outlives the command. (SIGTERM and Ctrl-C stop the work in flight within seconds: the
    entry point took them, and each flow body takes them back from Prefect's engine.) Enter it
    before Prefect is first imported."""
    with prefect_server.command_server(Store.from_settings(settings), settings) as url:
        yield url
