"""`metaeval datasets list|show|export`: the packaged datasets."""
from __future__ import annotations

import json

import click
from rich.table import Table

from ..data.datasets import dataset_info, list_datasets, load_dataset
from ..data.writers import write_scores
from ..report.escape import console
from .common import parse_dataset_options, say


@click.group()
def datasets() -> None:
    """List, describe and export the packaged datasets."""


@datasets.command("list")
def list_() -> None:
    """The packaged datasets, one per line."""
    table = Table("name", "description")
    for name, description in list_datasets():
        table.add_row(name, description)
    console().print(table)


@datasets.command()
@click.argument("name")
@click.option("--dataset-option", "dataset_options", multiple=True, metavar="KEY=VALUE")
def show(name: str, dataset_options: tuple[str, ...]) -> None:
    """Shape, scorers, humans and source of one dataset."""
    ds = load_dataset(name, **parse_dataset_options(dataset_options))
    info = dict(dataset_info(name))
    info["scoreset"] = ds.describe()
    click.echo(json.dumps(info, indent=2, default=str))


@datasets.command()
@click.argument("name")
@click.option("--output", required=True, type=click.Path(dir_okay=False),
              help="CSV, TSV, JSONL or Parquet file (by extension), in the generic wide format.")
@click.option("--dataset-option", "dataset_options", multiple=True, metavar="KEY=VALUE")
def export(name: str, output: str, dataset_options: tuple[str, ...]) -> None:
    """Write a dataset's scores in the generic format that `--scores` reads."""
    ds = load_dataset(name, **parse_dataset_options(dataset_options))
    write_scores(ds, output)
    say(f"wrote {output}: {len(ds.systems)} systems x {len(ds.inputs)} inputs, {len(ds.scorers)} scorers")
