"""The `metaeval` command: parses arguments, calls the public API, renders. Exit codes: 0 ok,
1 an internal error (a bug: please report it), 2 a user error (bad option, bad input file), 130
interrupted (Ctrl-C / SIGINT: one line on stderr; the atomic writer leaves no partial output file), 143
terminated (SIGTERM, handled the same way).
Every message line goes through :func:`metaeval.report.escape.safe_line` (no terminal control characters).

Subcommands load on first use (:class:`LazyGroup`): `metaeval --help` imports click and this module
only, so it answers without numpy, pandas or matplotlib; `metaeval <command>` imports that command's
module and the library it calls.
"""
from __future__ import annotations

import importlib
import re
import signal
import sys
import threading
import warnings

import click

from .._version import __version__
from ..analyses import registry as analysis_registry
from ..errors import MetaevalError, MetaevalWarning
from ..report.escape import safe_line
from .guards import guarded
from .help import Context, fitted

# command -> (module of metaeval.cli, attribute, the line shown by `metaeval --help`: the first sentence of
# the command's help, whole); the analyses' commands come from their registry. tests/test_cli.py checks each
# line against the command's own short help (SHORT_HELP_LIMIT: long enough never to shorten a sentence).
SHORT_HELP_LIMIT = 10_000
COMMANDS = {
    "compare": ("correlation_commands", "compare",
                "Test every pair of metrics; print the significance matrix and cluster ranks."),
    "correlate": ("correlation_commands", "correlate",
                  "Correlate metrics with the human score, with confidence intervals and p-values."),
    "datasets": ("datasets_command", "datasets", "List, describe and export the packaged datasets."),
    "familywise": ("familywise_command", "familywise",
                   "Family-wise error of k comparisons; the Sidak level for a target."),
    "human": ("human_command", "human", "Build human scores from raw annotations and say how reliable they are."),
    "judge": ("judge_command", "judge", "Rank systems from pairwise comparisons; judges against humans, audits, alt-test."),
    "mt": ("mt_group", "mt", "WMT-style tasks per language pair and pooled, ranked into significance clusters."),
    "report": ("report_command", "report", "The meta-evaluation report as one self-contained HTML page."),
    "score": ("score_command", "score", "Score system outputs against references with one or more metrics."),
    "spans": ("spans_command", "spans", "Error-span detectors and binary segment decisions against MQM ratings."),
    **analysis_registry.commands(),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported when they are run or asked for help."""

    context_class = Context

    def __init__(self, *args, lazy: dict[str, tuple[str, str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attribute, _ = self.lazy[name]
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            self.add_command(guarded(fitted(command), name), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy[name][2] if name in self.lazy else self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metaeval")
def cli() -> None:
    """Meta-evaluation of automatic evaluation metrics against human judgments."""


EXIT_INTERRUPTED = 130


class Interrupted(BaseException):
    """SIGINT or SIGTERM during a command (raised by the CLI's handler; click does not catch it, unlike
    KeyboardInterrupt, so the message stays one line). ``signum`` is the signal."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum, frame) -> None:
    raise Interrupted(signum)


EXIT_TERMINATED = 128 + signal.SIGTERM


def _say(text: str) -> None:
    """One line on stderr, terminal-safe."""
    click.echo(safe_line(text), err=True)


_CONTEXT = re.compile(r"^metric .+?, [a-z-]+ level, [a-z-]+: ")
"""The context prefix of a warning about one table cell (``correlation.table.cell_prefix``)."""


def _show_warnings(caught) -> None:
    """Each distinct warning once; warnings that differ only in their cell context (metric, level,
    coefficient) are folded into the first, followed by "(and N more like this)"."""
    groups: dict[str, list[str]] = {}
    for warning in caught:
        text = str(warning.message)
        texts = groups.setdefault(_CONTEXT.sub("", text), [])
        if text not in texts:
            texts.append(text)
    for texts in groups.values():
        more = f" (and {len(texts) - 1} more like this)" if len(texts) > 1 else ""
        _say(f"metaeval: warning: {texts[0]}{more}")


def _show_click_error(error: click.ClickException) -> None:
    """One line: click's message, then where the help is (click's own form takes four lines)."""
    message = error.format_message().rstrip(".")
    message = message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message
    ctx = getattr(error, "ctx", None)
    where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    _say(f"metaeval: error: {message}{where}")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print one line and exit 2, Ctrl-C prints one line and exits 130."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:  # SIGTERM (kill, a scheduler's timeout) is handled like Ctrl-C: outputs stay whole
        for sig in handlers:
            signal.signal(sig, _interrupt)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MetaevalWarning)
            cli.main(args=argv, prog_name="metaeval", standalone_mode=False)
        _show_warnings(caught)
    except (Interrupted, KeyboardInterrupt) as error:
        if getattr(error, "signum", signal.SIGINT) == signal.SIGTERM:
            _say("metaeval: terminated")
            return EXIT_TERMINATED
        _say("metaeval: interrupted")
        return EXIT_INTERRUPTED
    except click.exceptions.Abort as error:
        if isinstance(error.__cause__, KeyboardInterrupt):
            _say("metaeval: interrupted")
            return EXIT_INTERRUPTED
        _say("metaeval: aborted")
        return 1
    except click.ClickException as error:
        _show_click_error(error)
        return 2
    except MetaevalError as error:
        _say(f"metaeval: error: {error}")  # a data error names its file (cli.source.located)
        return 2
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _say(f"metaeval: error: {where}{error.strerror or error}")
        return 2
    finally:
        if in_main_thread:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
