"""`metaeval mt`: a click group whose default command is `evaluate` (:mod:`.mt_command`), beside `audit`
(:mod:`.mt_audit_command`). `metaeval mt --scores ...` is `metaeval mt evaluate --scores ...`."""
from __future__ import annotations

import click

from .common import Group, summary
from .mt_audit_command import audit
from .mt_command import evaluate

DEFAULT_COMMAND = "evaluate"


class DefaultCommandGroup(Group):
    """A group that runs ``default_command`` when the first argument names none of its commands (an option,
    or nothing): `metaeval mt --scores x` is `metaeval mt evaluate --scores x`; `--help` alone is the
    group's."""

    def __init__(self, *args, default_command: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.default_command = default_command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name + (" (default)" if name == self.default_command else ""), summary(self.commands[name]))
                for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=DefaultCommandGroup, default_command=DEFAULT_COMMAND, invoke_without_command=False)
def mt() -> None:
    """WMT-style tasks per language pair and pooled, ranked into significance clusters.

    `metaeval mt [evaluate] OPTIONS` runs the tasks of a protocol (`metaeval mt evaluate --help`: the
    options); `metaeval mt audit OPTIONS` audits a protocol with sentinel metrics (`metaeval mt audit --help`).
    """


mt.add_command(evaluate)
mt.add_command(audit)
