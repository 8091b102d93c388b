"""Text-generation metrics: exact ROUGE-1.5.5 (:class:`Rouge`), BLEU / chrF / TER through sacrebleu, METEOR,
JS-2, WER / PER, NIST, the MT preprocessing options (:class:`MtPreprocessing`), the embedding metrics
BERTScore and MoverScore (optional extra ``embed``), and the syntactic metrics STM / HWCM / DSTM over
user-supplied parse trees (Liu & Gildea 2005).

:data:`METRICS` registers every scorer by name (see :mod:`.registry` and ``docs/metrics.md``).
"""
from .bertscore import BertScore
from .error_rates import Per, Wer
from .jensen_shannon import JensenShannon
from .meteor import Meteor
from .mt_preprocessing import MtPreprocessing
from .moverscore import MoverScore
from .nist import Nist
from .registry import METRICS, CorpusScorer, MetricResourceError, Scorer, flatten_scores, get_scorer
from .rouge import Rouge
from .rouge_counts import RougeCounts, RougeStatistics
from .sacrebleu_metrics import Bleu, Chrf, Ter
from .syntactic import Dstm, Hwcm, Stm

__all__ = [
    "BertScore",
    "Bleu",
    "Chrf",
    "CorpusScorer",
    "Dstm",
    "Hwcm",
    "JensenShannon",
    "METRICS",
    "Meteor",
    "MetricResourceError",
    "MoverScore",
    "MtPreprocessing",
    "Nist",
    "Per",
    "Rouge",
    "RougeCounts",
    "RougeStatistics",
    "Scorer",
    "Stm",
    "Ter",
    "Wer",
    "flatten_scores",
    "get_scorer",
]
