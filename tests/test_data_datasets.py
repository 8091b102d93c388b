"""Packaged datasets: names, shapes, scorers, options, and equality with the source files.

The packaged ``.npz`` files are converted from ``../shared/data`` by ``scripts/build_datasets.py``; the
tests that compare them with the sources skip (loudly) when that directory is absent.
"""
from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from metaeval.data.datasets import dataset_info, list_datasets, load_dataset
from metaeval.errors import ParameterError

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PACKAGED = Path(__file__).resolve().parents[1] / "src" / "metaeval" / "data" / "packaged"
NAMES = ["summeval", "realsumm", "realsumm-abs", "realsumm-ext", "wmt20-mqm-ende", "wmt20-mqm-zhen", "wmt19-da-sys"]
SHAPES = {"summeval": (16, 100), "realsumm": (24, 100), "realsumm-abs": (14, 100), "realsumm-ext": (11, 100),
          "wmt20-mqm-ende": (10, 1418), "wmt20-mqm-zhen": (10, 2000), "wmt19-da-sys": (16, 1)}
SUMMEVAL_HUMANS = ["expert.relevance", "expert.coherence", "expert.consistency", "expert.fluency",
                   "turker.coherence", "turker.consistency", "turker.fluency", "turker.relevance"]
SUMMEVAL_METRICS = (
    [f"rouge-{n}.{k}" for n in ("1", "2", "3", "4", "l", "su4") for k in ("recall", "precision", "f1")]
    + ["bertscore.precision", "bertscore.recall", "bertscore.f1", "moverscore", "qa-eval.em", "qa-eval.f1",
       "qa-eval.lerc", "s3.pyr", "s3.resp", "meteor", "bewte.precision", "bewte.recall", "bewte.f1",
       "autosummeng", "memog", "npower"]
)
REALSUMM_METRICS = (
    [f"rouge-{n}.{k}" for n in ("1", "2", "l") for k in ("recall", "precision", "f1")]
    + ["js-2", "moverscore", "bertscore.precision", "bertscore.recall", "bertscore.f1", "qa-eval.em", "qa-eval.f1",
       "qa-eval.lerc", "s3.pyr", "s3.resp", "meteor", "bewte.precision", "bewte.recall", "bewte.f1", "autosummeng",
       "memog", "npower"]
)
WMT19_METRICS = ["bleu", "cder", "chrf", "chrf+", "nist", "per", "sacrebleu-bleu", "sacrebleu-chrf", "ter", "wer"]


@pytest.fixture(scope="module")
def shared() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"SKIPPED: the shared data directory {SHARED_DATA} is absent (clone ../shared beside the repo)")
    return SHARED_DATA


def _flat(metrics: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- names, shapes, scorers, options --------------------------------------------------------------
def test_list_datasets_names_and_descriptions():
    listed = list_datasets()
    assert [name for name, _ in listed] == NAMES
    assert all(isinstance(d, str) and len(d) > 40 for _, d in listed)


@pytest.mark.parametrize("name", NAMES)
def test_every_dataset_loads_with_its_manifest_shape_and_scorers(name):
    ds = load_dataset(name)
    info = dataset_info(name)
    assert ds.name == name and ds.shape == SHAPES[name]
    assert list(ds.scorers) == info["scorers"] and list(ds.humans) == info["humans"]
    assert ds.humans[0] == info["default_human"]
    assert info["source"] and info["licence"] and info["attribution"]
    for scorer in ds.scorers:
        assert not ds.annotations(scorer).flags.writeable


def test_summeval_scorers_and_annotators():
    ds = load_dataset("summeval")
    assert list(ds.humans) == SUMMEVAL_HUMANS and list(ds.metrics) == SUMMEVAL_METRICS
    assert {h: ds.n_annotators(h) for h in ds.humans} == {h: 3 if h.startswith("expert") else 5 for h in SUMMEVAL_HUMANS}
    assert dataset_info("summeval")["default_human"] == "expert.relevance"
    assert ds.systems[:4] == ("M0", "M1", "M2", "M5") and len(ds.systems) == 16


def test_realsumm_mix_has_24_systems_and_bart_once():
    mix, abs_, ext = load_dataset("realsumm"), load_dataset("realsumm-abs"), load_dataset("realsumm-ext")
    assert len(set(mix.systems)) == 24 and mix.systems.count("bart_out") == 1
    assert "bart_out" in abs_.systems and "bart_out" in ext.systems
    assert set(abs_.systems) | set(ext.systems) == set(mix.systems)
    assert list(mix.humans) == ["litepyramid.recall"] and list(mix.metrics) == REALSUMM_METRICS
    assert "BART once" in dataset_info("realsumm")["description"]
    assert "extractive copy" in dataset_info("realsumm")["description"]
    row = mix.systems.index("bart_out")
    np.testing.assert_array_equal(abs_.matrix("rouge-2.recall")[abs_.systems.index("bart_out")],
                                  mix.matrix("rouge-2.recall")[row])


def test_wmt_mqm_has_only_the_human_score():
    for name in ("wmt20-mqm-ende", "wmt20-mqm-zhen"):
        ds = load_dataset(name)
        assert ds.scorers == ("mqm",) and ds.humans == ("mqm",)
        assert "No metric scores" in dataset_info(name)["description"]


def test_wmt19_language_pairs():
    info = dataset_info("wmt19-da-sys")
    pairs = info["options"]["language_pair"]["choices"]
    assert len(pairs) == 18 and info["options"]["language_pair"]["default"] == "de-en" and "cs-de" not in pairs
    for pair in pairs:
        ds = load_dataset("wmt19-da-sys", language_pair=pair)
        assert ds.shape == tuple(info["shapes"][pair]) and ds.inputs == ("newstest2019",)
        assert ds.humans == ("da.z",) and list(ds.metrics) == WMT19_METRICS
        assert ds.description == f"language_pair={pair}"
        assert not np.isnan(ds.matrix("da.z")).any() and not np.isnan(ds.matrix("bleu")).any()
    assert load_dataset("wmt19-da-sys").description == "language_pair=de-en"


def test_dataset_errors():
    with pytest.raises(ParameterError) as info:
        load_dataset("summ-eval")
    assert str(info.value) == ("`name` must be one of 'summeval', 'realsumm', 'realsumm-abs', 'realsumm-ext',"
                               " 'wmt20-mqm-ende', 'wmt20-mqm-zhen', 'wmt19-da-sys'; got 'summ-eval'.")
    with pytest.raises(ParameterError) as info:
        dataset_info("nope")
    assert str(info.value).startswith("`name` must be one of 'summeval'")
    with pytest.raises(ParameterError) as info:
        load_dataset("summeval", language_pair="de-en")
    assert str(info.value) == "options of dataset 'summeval' must be among (none); got 'language_pair'."
    with pytest.raises(ParameterError) as info:
        load_dataset("wmt19-da-sys", lp="de-en")
    assert str(info.value) == "options of dataset 'wmt19-da-sys' must be among ('language_pair'); got 'lp'."
    with pytest.raises(ParameterError) as info:
        load_dataset("wmt19-da-sys", language_pair="en-xx")
    assert str(info.value) == (
        "`language_pair` must be one of 'de-cs', 'de-en', 'de-fr', 'en-cs', 'en-de', 'en-fi', 'en-gu', 'en-kk',"
        " 'en-lt', 'en-ru', 'en-zh', 'fi-en', 'fr-de', 'gu-en', 'kk-en', 'lt-en', 'ru-en', 'zh-en'; got 'en-xx'.")


def test_dataset_info_is_a_copy():
    info = dataset_info("summeval")
    info["humans"].clear()
    assert dataset_info("summeval")["humans"] == SUMMEVAL_HUMANS


def test_packaged_files_are_compact_numbers_and_labels_only():
    files = [p for p in PACKAGED.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 5_000_000
    for path in PACKAGED.glob("*.npz"):
        with np.load(path, allow_pickle=False) as npz:
            for key in npz.files:
                array = npz[key]
                assert array.dtype.kind in "fU", (path.name, key)
                if array.dtype.kind == "U":  # labels: system, input and scorer names, never texts
                    assert max(len(s) for s in array.ravel()) <= 64, (path.name, key)


# -- equality with the source files ---------------------------------------------------------------
def test_summeval_equals_every_source_cell(shared):
    ds = load_dataset("summeval")
    rows = {s: i for i, s in enumerate(ds.systems)}
    cols = {x: j for j, x in enumerate(ds.inputs)}
    checked = 0
    for path in sorted((shared / "summeval").glob("*.jsonl")):
        if path.name == "texts.jsonl":
            continue
        for line in _lines(path):
            i, j = rows[line["summarizer_id"]], cols[line["instance_id"]]
            for scorer, value in _flat(line["metrics"]).items():
                stored = ds.annotations(scorer.lower())[i, j]  # the source's names, lower-cased
                assert stored.tolist() == value, (path.name, scorer, line["summarizer_id"], line["instance_id"])
                checked += 1
    assert checked == 1600 * 42


def test_summeval_expert_mean_relevance_and_rouge_scale(shared):
    ds = load_dataset("summeval")
    first = _lines(shared / "summeval" / "relevance.jsonl")[0]  # M11 on dm-test-8764fb95...: experts [2, 1, 2]
    i, j = ds.systems.index(first["summarizer_id"]), ds.inputs.index(first["instance_id"])
    assert first["metrics"]["expert"]["relevance"] == [2, 1, 2]
    assert ds.matrix("expert.relevance")[i, j] == pytest.approx(5 / 3, abs=1e-15)
    rouge = _lines(shared / "summeval" / "rouge.jsonl")[0]  # ROUGE is x100 in the source and in the package
    i, j = ds.systems.index(rouge["summarizer_id"]), ds.inputs.index(rouge["instance_id"])
    assert ds.matrix("rouge-1.recall")[i, j] == 41.026
    assert np.nanmax(ds.matrix("rouge-1.recall")) > 1.0


def test_realsumm_equals_realsumm_scores(shared):
    from metaeval.data.native import REALSUMM_SCORER_NAMES

    sets = {"abs": load_dataset("realsumm-abs"), "ext": load_dataset("realsumm-ext")}
    mix = load_dataset("realsumm")
    checked = 0
    for line in _lines(shared / "realsumm" / "realsumm_scores.jsonl"):
        for ds in (sets[line["split"]], mix):
            i, j = ds.systems.index(line["system_id"]), ds.inputs.index(str(line["doc_id"]))
            for key, value in line["scores"].items():
                assert ds.matrix(REALSUMM_SCORER_NAMES[key])[i, j] == value
                checked += 1
    assert checked == 2500 * 15 * 2


def test_realsumm_extra_metrics_equal_their_files_and_pyramid_bertscore_f1_is_not_used(shared):
    ds = load_dataset("realsumm")
    for name in ("qaeval", "s3", "meteor", "bewte", "autosummeng"):
        for line in _lines(shared / "realsumm" / f"{name}.jsonl")[::7]:
            i, j = ds.systems.index(line["summarizer_id"]), ds.inputs.index(line["instance_id"])
            for scorer, value in _flat(line["metrics"]).items():
                assert ds.matrix(scorer.lower())[i, j] == value
    # pyramid.jsonl repeats bertscore.precision as bertscore.f1; the package keeps realsumm_scores' f1
    line = _lines(shared / "realsumm" / "pyramid.jsonl")[0]
    i, j = ds.systems.index(line["summarizer_id"]), ds.inputs.index(line["instance_id"])
    assert line["metrics"]["bertscore"]["f1"] == line["metrics"]["bertscore"]["precision"]
    assert ds.matrix("bertscore.f1")[i, j] != line["metrics"]["bertscore"]["f1"]
    assert ds.matrix("litepyramid.recall")[i, j] == line["metrics"]["litepyramid"]["recall"]


@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_wmt20_mqm_equals_source(shared, pair):
    ds = load_dataset(f"wmt20-mqm-{pair}")
    lines = (shared / "wmt" / f"mqm_newstest2020_{pair}.avg_seg_scores.tsv").read_text().splitlines()[1:]
    matrix = ds.matrix("mqm")
    for line in lines:
        system, score, segment = line.split()
        value = matrix[ds.systems.index(system), ds.inputs.index(segment)]
        assert np.isnan(value) if score == "None" else value == float(score)
    assert len(lines) == matrix.size


def test_wmt19_equals_source(shared):
    base = shared / "wmt" / "wmt19"
    sets = {pair: load_dataset("wmt19-da-sys", language_pair=pair)
            for pair in dataset_info("wmt19-da-sys")["options"]["language_pair"]["choices"]}
    for line in (base / "DA-syslevel.csv").read_text().splitlines()[1:]:
        pair, value, system = line.split()
        ds = sets[pair]
        assert ds.matrix("da.z")[ds.systems.index(system), 0] == float(value)
    with gzip.open(base / "baselines" / "sacreBLEU-BLEU.sys.score.gz", "rt") as handle:
        rows = [line.split() for line in handle]
    de_en = sets["de-en"]
    for metric, pair, _, system, value in rows:
        if pair == "de-en":
            assert de_en.matrix(metric.lower())[de_en.systems.index(system), 0] == float(value)
    de_cs = sets["de-cs"]  # 'Unsupervised.6929' in the metric file
    value = next(float(r[4]) for r in rows if r[1] == "de-cs" and r[3] == "Unsupervised.6929")
    assert de_cs.matrix("sacrebleu-bleu")[de_cs.systems.index("Unsupervised.de-cs.6929"), 0] == value
    assert "online-B.0" not in sets["gu-en"].systems


def test_build_script_reproduces_the_packaged_files(shared, tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("build_datasets", PACKAGED.parents[3] / "scripts" / "build_datasets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--shared", str(shared), "--output", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    assert "bertscore.f1 differs from realsumm_scores.jsonl in 2400 of 2400 cells" in report
    built = sorted(p.name for p in tmp_path.iterdir())
    assert built == sorted(p.name for p in PACKAGED.iterdir() if p.is_file())
    for name in built:
        assert (tmp_path / name).read_bytes() == (PACKAGED / name).read_bytes(), name
