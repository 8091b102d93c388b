"""`metaeval <analysis>` for every analysis that declares its command (``CLI`` in its module, a
:class:`metaeval.analyses.interface.CommandSpec`): one generic command per registry entry.

Each command here is an :class:`AnalysisCommand` named after its registry entry; it reads its module's
declaration when it is first run or asked for help (listing the commands imports no analysis). The
command loads the scores (:func:`metaeval.cli.source.load_source`), hands the analysis a
:class:`~metaeval.analyses.interface.Call`, and prints the result in every output format: with the
layout of :data:`metaeval.cli.analysis_views.VIEWS` when it has one, else a table of its frame.
"""
from __future__ import annotations

import importlib
from typing import Any

import click

from ..analyses import registry
from ..analyses.interface import Call, CommandSpec, Option
from . import common
from .progress import progress_option


class AnalysisCommand(click.Command):
    """The command of one registry entry; its options, callback and help come from the command built from
    its module's ``CLI`` (:func:`build`) when click first asks for them."""

    def __init__(self, entry: registry.Analysis):
        super().__init__(entry.name, short_help=entry.summary)
        self.__dict__["entry"] = entry

    def built(self) -> click.Command:
        if "_built" not in self.__dict__:
            self.__dict__["_built"] = build(self.__dict__["entry"])
        return self.__dict__["_built"]

    def _get(self, attribute: str) -> Any:
        if "entry" not in self.__dict__:  # during click's __init__
            return self.__dict__.get(f"_initial_{attribute}")
        return getattr(self.built(), attribute)

    def _set(self, attribute: str, value: Any) -> None:
        if "entry" not in self.__dict__:
            self.__dict__[f"_initial_{attribute}"] = value
        else:
            setattr(self.built(), attribute, value)

    params = property(lambda self: self._get("params"), lambda self, value: self._set("params", value))
    callback = property(lambda self: self._get("callback"), lambda self, value: self._set("callback", value))
    help = property(lambda self: self._get("help"), lambda self, value: self._set("help", value))


def _option(item: Option | str) -> Any:
    """The click option of a declared :class:`Option`, or of the shared option named ``item``
    (:data:`metaeval.cli.common.OPTIONS`)."""
    if isinstance(item, str):
        return common.option(item)
    from .analysis_output import NumberList

    spec: dict[str, Any] = {"help": item.help} if item.help or not item.shared else {}
    if item.kind == "flag":
        spec["is_flag"] = True
    elif item.kind in ("integers", "numbers"):
        spec["type"] = NumberList(int if item.kind == "integers" else float)
    elif isinstance(item.kind, tuple):
        spec["type"] = click.Choice(item.kind)
    else:
        spec["type"] = item.kind
    if item.shared:
        if item.kind is str:
            del spec["type"]
        if item.default is not None:
            spec.update(default=item.default, show_default=True)
        return common.option(item.name, **spec)
    if item.multiple:
        spec["multiple"] = True
    elif item.kind != "flag":
        spec["default"] = item.default
        spec["show_default"] = item.default is not None
    return common.declare(item.name, spec)


def build(entry: registry.Analysis) -> click.Command:
    """The click command of ``entry`` from its module's ``CLI`` declaration."""
    spec: CommandSpec = importlib.import_module(entry.module).CLI
    inputs = set(spec.inputs)

    def callback(**values: Any) -> None:
        run(entry, spec, values)

    decorators = []
    if "source" in inputs:
        decorators.append(common.source_options)
    decorators += [_option(item) for item in spec.options]
    if "corpus" in inputs:
        decorators.append(common.corpus_options)
    for name, decorator in (("n_resamples", common.resamples_option), ("seed", common.seed_option),
                            ("tie_tolerance", common.tie_tolerance_option), ("progress", progress_option)):
        if name in inputs:
            decorators.append(decorator)
    decorators.append(common.output_options)
    for decorator in reversed(decorators):
        callback = decorator(callback)
    help_text = entry.summary + (f"\n\n{spec.help}" if spec.help else "")
    return click.command(entry.name, help=help_text, short_help=entry.summary)(callback)


def run(entry: registry.Analysis, spec: CommandSpec, values: dict[str, Any]) -> None:
    """Load the scores, run the analysis, print or write the result."""
    from ..report.render import frame_table, render_text, signature_footer
    from .analysis_views import VIEWS
    from .common import emit, output_width
    from .progress import progress_bar
    from .source import chosen_metrics, corpus_statistics_for, load_source

    source = values.pop("source", None)
    corpus_texts = values.pop("corpus_texts", ((), None, None))
    fmt, output = values["format"], values["output"]
    ds = human = corpus = None
    if source is not None:
        optional = spec.human_optional(values) if spec.human_optional else False
        ds, human = load_source(source, human_optional=optional, n_resamples=values.get("n_resamples"))
        values["metric"] = source.metric
        corpus = corpus_statistics_for(ds, *corpus_texts) if "corpus" in spec.inputs else None
    with progress_bar() as bar:
        def progress(description: str, total: int | None = None):
            return bar.task(description, total=total)

        def choose():
            return chosen_metrics(ds, human, source.metric if source is not None else ())

        result = spec.run(Call(ds, human, values, corpus or None, progress, choose))
    frame = spec.frame(result, values) if spec.frame else result.to_frame()
    view = VIEWS.get(entry.name)
    if view is not None:
        emit(view(result, values, frame, fmt, output), output)
        return

    def table(result):
        title = spec.title(result) if spec.title else None
        return [frame_table(frame, title=title), *signature_footer(result, spec.notes(result) if spec.notes else [])]

    emit(render_text(result, fmt, terminal=table, frame=frame, width=output_width(output)), output)


for _entry in registry.ANALYSES:
    if _entry.declared:
        globals()[_entry.name] = AnalysisCommand(_entry)
