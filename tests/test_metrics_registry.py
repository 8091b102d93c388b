"""The metric registry and the scorer protocol."""
from __future__ import annotations

import pytest

import metaeval.metrics as metrics
from metaeval.errors import ParameterError
from metaeval.metrics import METRICS, Scorer, flatten_scores, get_scorer


def test_exports_sorted():
    assert metrics.__all__ == sorted(metrics.__all__)
    for name in metrics.__all__:
        assert hasattr(metrics, name)


def test_registry_names_match_classes():
    assert list(METRICS) == ["rouge", "bleu", "chrf", "ter", "meteor", "js-2", "wer", "per", "bertscore", "moverscore",
                             "nist"]
    for name in METRICS:
        cls = METRICS[name]
        assert cls.name == name
        assert callable(getattr(cls, "score"))
    assert "bleu" in METRICS and "foo" not in METRICS and len(METRICS) == 11


def test_unknown_metric_message():
    with pytest.raises(ParameterError) as info:
        get_scorer("rouge-x")
    assert str(info.value) == (
        "`metric` must be one of 'rouge', 'bleu', 'chrf', 'ter', 'meteor', 'js-2', 'wer', 'per', 'bertscore', "
        "'moverscore', 'nist'; got 'rouge-x'."
    )


def test_rouge_is_registered_with_its_flags():
    rouge = get_scorer("rouge", n=2, stem=True)
    assert isinstance(rouge, metrics.Rouge) and isinstance(rouge, Scorer) and rouge.name == "rouge"
    assert str(rouge.signature).startswith("metric:rouge-1.5.5|flags:-n 2 -m -f A -p 0.5 -t 0|rounding:none|")
    assert METRICS["rouge"].from_flags("-n 1").name == "rouge"


def test_flatten_scores():
    assert flatten_scores({"rouge-2": {"recall": 0.5, "f1": 0.25}, "bleu": 21}) == {
        "rouge-2.recall": 0.5, "rouge-2.f1": 0.25, "bleu": 21.0,
    }
    with pytest.raises(ParameterError) as info:
        flatten_scores({"bleu": "high"})
    assert str(info.value) == "`bleu` must be a number; got 'high'."
