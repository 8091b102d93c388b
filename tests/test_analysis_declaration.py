"""An analysis is one file plus one registry line: its declarations give it a command and a report section."""
from __future__ import annotations

import io
import json
import sys
import textwrap

import pandas as pd
import pytest

import metaeval as me
from metaeval.analyses import registry
from metaeval.cli.main import main

MODULE = '''
"""A toy analysis: the mean of each metric over the systems, minus the human's."""
from dataclasses import dataclass

from metaeval.analyses.interface import Call, CommandSpec, Option, SectionSpec
from metaeval.serialization import ResultMixin
from metaeval.signature import Signature


@dataclass(frozen=True)
class OffsetResult(ResultMixin):
    metrics: tuple
    offsets: tuple
    signature: Signature

    def frame_rows(self):
        return [{"metric": m, "offset": o} for m, o in zip(self.metrics, self.offsets)]


def mean_offsets(ds, metrics, human, *, scale=1.0):
    base = float(ds.matrix(human).mean())
    offsets = tuple(scale * (float(ds.matrix(m).mean()) - base) for m in metrics)
    return OffsetResult(tuple(metrics), offsets, Signature.of(statistic="offsets", scale=scale))


CLI = CommandSpec(
    lambda call: mean_offsets(call.ds, call.metrics, call.human, scale=call.options["scale"]),
    options=(Option("scale", float, 1.0, "Multiply every offset by this."),),
    inputs=("source",),
    title=lambda result: "mean offsets from the human",
)

REPORT = SectionSpec("mean offsets", lambda ds, human, focus, settings, corpus: mean_offsets(ds, focus, human),
                     question="How far is each metric's mean from the human's?",
                     paragraphs=lambda result: ("The mean over every cell minus the human's mean.",))
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    import metaeval.report.analysis_sections  # noqa: F401  its ANALYSES table built from the real registry first
    # (imported first under the patched registry, it would keep the toy entry for the rest of the process)

    (tmp_path / "toy_offsets.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = registry.Analysis("offsets", "toy_offsets", ("mean_offsets", "OffsetResult"),
                              summary="Each metric's mean offset from the human's.", section=True)
    monkeypatch.setattr(registry, "ANALYSES", registry.ANALYSES + (entry,))
    yield entry
    sys.modules.pop("toy_offsets", None)


def test_a_declared_analysis_gets_a_command(toy, capsys, monkeypatch):
    from metaeval.cli import analysis_commands, main as cli_main

    command = analysis_commands.AnalysisCommand(toy)
    monkeypatch.setitem(cli_main.COMMANDS, "offsets", ("analysis_commands", "offsets", toy.summary))
    monkeypatch.setattr(analysis_commands, "offsets", command, raising=False)
    assert command.get_short_help_str(limit=cli_main.SHORT_HELP_LIMIT) == toy.summary
    assert main(["offsets", "--dataset", "summeval", "--metric", "rouge-1.recall", "--scale", "2", "--format",
                 "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    ds = me.load_dataset("summeval")
    expected = 2 * (ds.matrix("rouge-1.recall").mean() - ds.matrix("expert.relevance").mean())
    assert frame["metric"].tolist() == ["rouge-1.recall"] and frame["offset"].item() == pytest.approx(expected)
    assert main(["offsets", "--dataset", "summeval", "--metric", "rouge-1.recall"]) == 0
    out = capsys.readouterr().out
    assert "mean offsets from the human" in out and "signature: statistic:offsets|scale:1|" in out
    assert main(["offsets", "--help"]) == 0
    assert "--scale FLOAT" in capsys.readouterr().out


def test_a_declared_analysis_gets_a_report_section(toy):
    from metaeval.report import analysis_sections

    spec = analysis_sections._spec(toy)
    ds = me.load_dataset("summeval")
    result = spec.run(ds, "expert.relevance", ("rouge-1.recall", "rouge-2.recall"), {}, {})
    section = spec.section(result, None)
    assert section.title == "Mean offsets" and section.question.startswith("How far")
    assert [row[0].text for row in section.tables[0].rows] == ["rouge-1.recall", "rouge-2.recall"]
    assert spec.headline(result) == "mean offsets" and spec.api == "mean_offsets"


def test_the_built_in_commands_come_from_declarations():
    from metaeval.cli import analysis_commands

    declared = [entry.name for entry in registry.ANALYSES if entry.declared]
    assert {"delta", "topk", "verdicts", "normality", "gap", "plan", "systems"} <= set(declared)
    for name in declared:
        command = getattr(analysis_commands, name)
        assert command.name == name and command.params  # built from the module's CLI on first use
    payload = json.dumps([p.name for p in analysis_commands.topk.params])
    assert '"coefficient"' in payload and '"ks"' in payload
