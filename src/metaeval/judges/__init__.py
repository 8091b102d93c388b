"""Judges and pairwise preferences: comparisons as data, Bradley-Terry rankings with intervals, agreement
of judges with humans, judge audits and the Alternative Annotator Test (docs/judges.md)."""
from __future__ import annotations

from .agreement import JudgeAgreementResult, judge_agreement
from .alt_test import AltTestResult, alt_test
from .audit import JudgeAuditResult, judge_audit
from .comparisons import Comparisons, comparisons_from_scores, make_comparisons
from .ranking import RankingResult, rank_systems
from .reader import read_comparisons

__all__ = ["AltTestResult", "Comparisons", "JudgeAgreementResult", "JudgeAuditResult", "RankingResult", "alt_test",
           "comparisons_from_scores", "judge_agreement", "judge_audit", "make_comparisons", "rank_systems",
           "read_comparisons"]
