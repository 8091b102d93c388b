"""The registry of the literature's analyses: one line per analysis feeds every place that shows it.

Each :class:`Analysis` names, as import paths (so that reading the registry imports nothing heavy and no
layer imports upwards):

- ``module``: where the API functions, the result classes and the declarations of its command and report
  section live (``CLI`` and ``REPORT``, see :mod:`metaeval.analyses.interface`); every name of ``api`` is
  exported as ``metaeval.<name>`` (:mod:`metaeval` builds its lazy exports from here);
- ``summary``: the one line of ``metaeval --help``, a whole sentence (it opens the command's help);
- ``section``: whether the HTML report has a section for it (the module's ``REPORT``);
- ``command``: left empty, the CLI builds ``metaeval <name>`` from the module's ``CLI``
  (:mod:`metaeval.cli.analysis_commands`); a command with subcommands or inputs of its own is written
  by hand and named here as ``module:attribute`` under :mod:`metaeval.cli` (its first entry gives the
  summary when several analyses share it: ``stability``, ``simulate``).

Adding an analysis: ``analyses/<name>.py`` (the function, validating and then computing on arrays with
:mod:`metaeval.stats`, a frozen result dataclass inheriting :class:`metaeval.serialization.ResultMixin`
with a signature, and its ``CLI`` and optionally ``REPORT`` declarations) and its line in
:data:`ANALYSES` below; then a page or paragraph in ``docs/`` and ``tests/test_analyses_<name>.py``.
docs/dev/ARCHITECTURE.md shows an example.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANALYSES", "Analysis", "analysis", "commands", "exports"]


@dataclass(frozen=True)
class Analysis:
    """One analysis: its API names, CLI command, report section (see the module docstring)."""

    name: str
    module: str
    api: tuple[str, ...]
    command: str = ""
    summary: str = ""
    section: bool = False

    def __post_init__(self) -> None:
        if not self.command:  # built from the module's CLI declaration
            object.__setattr__(self, "command", f"analysis_commands:{self.name}")

    @property
    def declared(self) -> bool:
        """Whether the command is built from the module's ``CLI`` declaration."""
        return self.command == f"analysis_commands:{self.name}"

    @property
    def function(self) -> str:
        """The main API function (the first name of ``api``)."""
        return self.api[0]


ANALYSES: tuple[Analysis, ...] = (
    Analysis("delta", "metaeval.analyses.delta", ("delta_correlations", "DeltaCorrelationResult"),
             summary="Kendall tau over the system pairs whose metric gap lies in [l, u].", section=True),
    Analysis("stability", "metaeval.analyses.stability", ("ranking_stability", "RankingStabilityResult"),
             "stability_command:stability",
             "How stable are system rankings under another sample of inputs?", section=True),
    Analysis("variance", "metaeval.analyses.variance", ("score_variance", "ScoreVarianceResult"),
             "stability_command:stability"),
    Analysis("topk", "metaeval.analyses.topk", ("topk_correlations", "TopKResult"),
             summary="System-level correlation over the k best systems by human score.", section=True),
    Analysis("verdicts", "metaeval.analyses.verdicts", ("system_verdicts", "SystemVerdictsResult"),
             summary="Pairwise system verdicts of humans and metrics, and their weighted F1.", section=True),
    Analysis("normality", "metaeval.analyses.normality", ("normality", "NormalityResult"),
             summary="Are system scores and per-input scores normal?", section=True),
    Analysis("gap", "metaeval.analyses.gap", ("gap_agreement", "GapAgreementResult"),
             summary="How often do humans confirm a metric gain of a given size?"),
    Analysis("plan", "metaeval.analyses.planning", ("plan_annotation", "AnnotationPlanResult"),
             summary="How many inputs and systems to judge, simulated from a pilot."),
    Analysis("systems", "metaeval.analyses.systems", ("compare_systems", "SystemComparisonResult", "CorpusScores"),
             summary="Compare every pair of systems under one scorer."),
    Analysis("coverage", "metaeval.analyses.simulations", ("simulate_coverage", "CoverageResult"),
             "simulate_command:simulate",
             "Coverage of confidence intervals and power of tests, simulated on real data."),
    Analysis("power", "metaeval.analyses.power", ("simulate_power", "PowerResult", "load_texts"),
             "simulate_command:simulate"),
    Analysis("paper", "metaeval.analyses.paper", ("paper_summary_level", "PaperSummaryLevelResult"),
             "reproduce_command:reproduce",
             "Reproduce published numbers with procedures metaeval does not recommend."),
    Analysis("nuggets", "metaeval.analyses.nuggets",
             ("nugget_scores", "NuggetScoresResult", "match_nuggets", "litepyramid_nuggets", "realsumm_nugget_tables"),
             "nuggets_command:nuggets", "Nugget F(beta) of answers and summaries."),
    Analysis("extrinsic", "metaeval.analyses.extrinsic", ("relevance_agreement", "RelevanceAgreementResult"),
             "extrinsic_command:extrinsic",
             "Extrinsic evaluation: Relevance-Prediction, LDC-Agreement, partition-averaged r."),
    Analysis("partition", "metaeval.analyses.partition",
             ("partition_correlation", "PartitionCorrelationResult", "scoreset_partition_correlation",
              "extrinsic_correlation"), "extrinsic_command:extrinsic"),
    Analysis("qarla", "metaeval.analyses.qarla", ("qarla", "QarlaResult", "qarla_similarities", "QarlaSimilarities",
                                                     "read_qarla_texts"),
             "qarla_command:qarla",
             "QARLA: QUEEN, KING and JACK of similarity-metric sets, without human judgments."),
)
"""Every analysis, in the order of the report's sections and the docs."""


def analysis(name: str) -> Analysis:
    """The registry entry called ``name``."""
    for entry in ANALYSES:
        if entry.name == name:
            return entry
    raise KeyError(name)


def exports() -> dict[str, str]:
    """Public name -> module, for :mod:`metaeval`'s lazy exports."""
    return {name: entry.module for entry in ANALYSES for name in entry.api}


def commands() -> dict[str, tuple[str, str, str]]:
    """CLI command name -> (module under metaeval.cli, attribute, one-line help), one per distinct command."""
    out: dict[str, tuple[str, str, str]] = {}
    for entry in ANALYSES:
        module, attribute = entry.command.split(":")
        if entry.summary:
            out.setdefault(attribute, (module, attribute, entry.summary))
    return out
