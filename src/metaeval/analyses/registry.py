"""The registry of the literature's analyses: one entry per analysis feeds every place that shows it.

Each :class:`Analysis` names, as import paths (so that reading the registry imports nothing heavy and no
layer imports upwards):

- ``module``: where the API functions and result classes live; every name of ``api`` is exported as
  ``metaeval.<name>`` (:mod:`metaeval` builds its lazy exports from here);
- ``command``: the CLI command (``metaeval <name>``), as ``module:attribute`` under :mod:`metaeval.cli`;
  its terminal table is the command module's own layout, and every output format
  (:data:`metaeval.vocabulary.OUTPUT_FORMATS`) comes from :func:`metaeval.report.render.render_text`;
- ``summary``: the one line of ``metaeval --help`` (checked against the command's own help by the tests),
  given by the first entry of a command that several analyses share (``stability``, ``simulate``);
- ``section``: whether the HTML report has a section for it (its spec in
  :data:`metaeval.report.analysis_sections.SECTIONS`, under the same name).

Adding an analysis (about five files):

1. ``analyses/<name>.py``: the function (validate, compute on arrays with :mod:`metaeval.stats`, return a
   frozen result dataclass inheriting :class:`metaeval.serialization.ResultMixin`, with a signature);
2. an entry in :data:`ANALYSES` below;
3. ``cli/<name>_command.py``: options from :mod:`metaeval.cli.common` / :mod:`metaeval.cli.analysis_output`
   and a terminal table, output through ``analysis_output.render``;
4. optionally a report section in ``report/analysis_sections.py`` (and ``section=True`` here);
5. a page or paragraph in ``docs/`` and ``tests/test_analyses_<name>.py``.
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
    command: str
    summary: str = ""
    section: bool = False

    @property
    def function(self) -> str:
        """The main API function (the first name of ``api``)."""
        return self.api[0]


ANALYSES: tuple[Analysis, ...] = (
    Analysis("delta", "metaeval.analyses.delta", ("delta_correlations", "DeltaCorrelationResult"),
             "delta_command:delta",
             "Kendall tau over the system pairs whose metric gap lies in [l, u] (Deutsch et...", section=True),
    Analysis("stability", "metaeval.analyses.stability", ("ranking_stability", "RankingStabilityResult"),
             "stability_command:stability",
             "How stable are system rankings under another sample of inputs? (Deutsch et al.", section=True),
    Analysis("variance", "metaeval.analyses.variance", ("score_variance", "ScoreVarianceResult"),
             "stability_command:stability"),
    Analysis("topk", "metaeval.analyses.topk", ("topk_correlations", "TopKResult"), "topk_command:topk",
             "System-level correlation over the k best systems by human score (Bhandari et al.", section=True),
    Analysis("verdicts", "metaeval.analyses.verdicts", ("system_verdicts", "SystemVerdictsResult"),
             "verdicts_command:verdicts",
             "Pairwise system verdicts (better / worse / tie) of humans and metrics;...", section=True),
    Analysis("normality", "metaeval.analyses.normality", ("normality", "NormalityResult"),
             "normality_command:normality", "Are system scores and per-input scores normal? (Deutsch et al.",
             section=True),
    Analysis("gap", "metaeval.analyses.gap", ("gap_agreement", "GapAgreementResult"), "gap_command:gap",
             "How often do humans confirm a metric gain of a given size? (smoothed over all..."),
    Analysis("plan", "metaeval.analyses.planning", ("plan_annotation", "AnnotationPlanResult"), "plan_command:plan",
             "Simulate interval width and power against the number of judged inputs and..."),
    Analysis("systems", "metaeval.analyses.systems", ("compare_systems", "SystemComparisonResult", "CorpusScores"),
             "systems_command:systems",
             "Compare every pair of systems under one scorer (Koehn 2004; Riezler & Maxwell..."),
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
             "nuggets_command:nuggets", "Nugget F(beta) of answers and summaries (Lin & Demner-Fushman 2005)."),
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
