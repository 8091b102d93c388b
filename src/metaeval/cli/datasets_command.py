"""`metaeval datasets [list|show|export]`: the packaged datasets.

Bare `metaeval datasets` lists them (exit 0). `show NAME` prints a readable summary (citation, design,
human scorers, metric scorers grouped by family, options); `--format json` gives the full manifest entry
and the ScoreSet description (the old output), `csv` / `latex` / `markdown` the scorers table.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from ..data.datasets import dataset_info, list_datasets, load_dataset
from ..data.writers import write_scores
from ..report.render import render_text
from .common import Group, emit, option, output_options, output_width, say
from .source import parse_dataset_options


class _DatasetList:
    """The packaged datasets as a result (for every output format)."""

    signature = None

    def __init__(self, rows: list[tuple[str, str]]):
        self.rows = rows

    def to_dict(self) -> dict[str, Any]:
        return {"datasets": [{"name": n, "description": d} for n, d in self.rows]}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=["name", "description"])


class _DatasetSummary:
    """One dataset's manifest entry and ScoreSet description, as a result (for every output format)."""

    signature = None

    def __init__(self, name: str, info: dict[str, Any], described: dict[str, Any]):
        self.name, self.info, self.described = name, info, described

    def to_dict(self) -> dict[str, Any]:
        return {**self.info, "scoreset": self.described}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.described["scorers"])


@click.group(cls=Group, invoke_without_command=True)
@click.pass_context
def datasets(context: click.Context) -> None:
    """List, describe and export the packaged datasets."""
    if context.invoked_subcommand is None:
        context.invoke(list_)


@datasets.command("list")
@output_options
def list_(format: str = "table", output: str | None = None) -> None:
    """The packaged datasets, one per row."""
    result = _DatasetList(list_datasets())

    def table(result):
        out = Table("name", "description", title="Packaged datasets (metaeval datasets show NAME for one)",
                    title_justify="left")
        for name, description in result.rows:
            out.add_row(name, description)
        return out

    emit(render_text(result, format, terminal=table, width=output_width(output)), output)


def _family(scorer: str) -> str:
    """'rouge-1.recall' -> 'rouge-1': scorers grouped by the part before the first dot."""
    return scorer.split(".", 1)[0]


def _grouped(scorers: list[str]) -> list[str]:
    groups: OrderedDict[str, list[str]] = OrderedDict()
    for scorer in scorers:
        groups.setdefault(_family(scorer), []).append(scorer)
    lines = []
    for family, members in groups.items():
        if len(members) == 1 and members[0] == family:
            lines.append(family)
        else:
            lines.append(f"{family}: {', '.join(m.split('.', 1)[1] if '.' in m else m for m in members)}")
    return lines


def _summary(result: _DatasetSummary) -> list[Any]:
    info, described = result.info, result.described
    annotators = info.get("annotators") or {}
    table = Table(show_header=False, title=f"{result.name}", title_justify="left")
    table.add_column("field", style="cyan", no_wrap=True)
    table.add_column("value")
    table.add_row("description", info.get("description", ""))
    table.add_row("design", f"{described['systems']} systems x {described['inputs']} inputs"
                            f" (aggregation of several annotators: {described.get('aggregation')})")
    humans = [f"{h}{' (default)' if h == info.get('default_human') else ''}"
              f"{f', {annotators[h]} annotators' if annotators.get(h) else ''}" for h in info.get("humans", [])]
    table.add_row(f"human scorers ({len(humans)})", "\n".join(humans))
    metrics = list(info.get("metrics", []))
    table.add_row(f"metric scorers ({len(metrics)})", "\n".join(_grouped(metrics)) or "none")
    missing = [s for s in described.get("scorers", []) if s.get("missing_cells")]
    if missing:
        table.add_row("missing cells", "\n".join(f"{s['scorer']}: {s['missing_cells']}" for s in missing))
    options = info.get("options") or {}
    if options:
        table.add_row("options", "\n".join(
            f"{key}: default {spec.get('default')}; choices {', '.join(map(str, spec.get('choices', [])))}"
            for key, spec in options.items()))
    for key in ("notes",):
        notes = info.get(key) or []
        if notes:
            table.add_row(key, "\n".join(f"- {note}" for note in (notes if isinstance(notes, list) else [notes])))
    for key in ("source", "licence", "attribution"):
        if info.get(key):
            table.add_row(key, str(info[key]))
    return [table, Text("--format json: the full manifest entry and per-scorer details", style="dim")]


@datasets.command()
@click.argument("name")
@option("dataset_option")
@output_options
def show(name: str, dataset_option: tuple[str, ...], format: str, output: str | None) -> None:
    """Citation, design, human and metric scorers and options of one dataset."""
    ds = load_dataset(name, **parse_dataset_options(dataset_option))
    result = _DatasetSummary(name, dict(dataset_info(name)), ds.describe())
    if format == "json":
        import json

        emit(json.dumps(result.to_dict(), indent=2, default=str) + "\n", output)
        return
    emit(render_text(result, format, terminal=_summary, width=output_width(output)), output)


@datasets.command()
@click.argument("name")
@option("output", required=True, help="CSV, TSV, JSONL or Parquet file (by extension), in the generic wide format.")
@option("dataset_option")
def export(name: str, output: str, dataset_option: tuple[str, ...]) -> None:
    """Write a dataset's scores in the generic format that `--scores` reads."""
    ds = load_dataset(name, **parse_dataset_options(dataset_option))
    write_scores(ds, output)
    from ..runtime.output_sets import commit_pending

    commit_pending()  # written now: the line below says so
    say(f"wrote {output}: {len(ds.systems)} systems x {len(ds.inputs)} inputs, {len(ds.scorers)} scorers")
