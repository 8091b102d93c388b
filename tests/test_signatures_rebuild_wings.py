"""Every documented result of the judges, spans, human-judgment, mt audit, system comparison and verdict, power,
analysis (delta, stability, top-k, gap, plan), nugget, extrinsic, QARLA and reproduction commands, and the `mt`
runs on score files, is rebuilt from its printed signature alone (issue 41 item 2: "a test: rebuild every
documented example's number from its printed signature alone").

For each page, the examples run in the docs runner's sandbox (the scripts that write the input files are run;
the commands that print a signature are not: tests/test_docs_examples.py pins that they print what the page
shows). For every command that prints a signature, the signature's fields - and nothing else from the command
line - are given to the Python API with the same input files (tests/signature_rebuild.py); the rebuilt result
must print the same signature and the numbers the page shows. A field a signature lacked was added to it.
Correlations, correlation tables and normality: tests/test_signatures_rebuild.py; MT: tests/test_mt_signature_names.py
and tests/test_mt_signatures_report.py.
"""
from __future__ import annotations

import math
import re

import pytest

from signature_rebuild import documented_runs, rebuild_judge, without_version


def _same(shown: str, value: float, digits: int = 3) -> bool:
    """A printed cell (its leading number) is ``value`` at the printed precision."""
    number = shown.split(" ", 1)[0]
    if number in ("n/a", "nan"):
        return math.isnan(value)
    return f"{value:.{digits}f}" == number


def _check_judge(run) -> None:
    f = run.fields
    result = rebuild_judge(f, run.cwd)
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    frame = result.to_frame()
    analysis = f["analysis"]
    if analysis == "judge-rank":
        for row in frame.to_dict("records"):
            cells = run.row(str(row["rank"]))  # rank, system, score, interval, rank range, W-L-T
            assert cells[1] == row["system"] and _same(cells[2], row["score"]), (run.where, cells, row)
            assert cells[4] == f"{row['rank_low']}-{row['rank_high']}", (run.where, cells, row)
            assert cells[5] == f"{row['wins']}-{row['losses']}-{row['ties']}", (run.where, cells, row)
    elif analysis == "judge-agree":
        for row in frame.to_dict("records"):
            cells = run.row(row["judge"])  # judge, rank, keys, accuracy [interval], no ties, kappa, alpha, ...
            assert cells[2] == str(row["keys"]), (run.where, cells, row)
            assert all(_same(c, row[k]) for c, k in zip(cells[3:7], ("accuracy", "accuracy_no_ties", "kappa", "alpha"))), \
                (run.where, cells, row)
            assert cells[1] == row["rank_range"], (run.where, cells, row)
    elif analysis == "judge-alt-test":
        for row in frame.to_dict("records"):
            cells = run.row(row["annotator"])  # annotator, instances, rho judge, rho human, t, p, p (BY), wins
            assert cells[1] == str(row["instances"]), (run.where, cells, row)
            assert _same(cells[2], row["rho_judge"]) and _same(cells[3], row["rho_human"]), (run.where, cells, row)
            assert _same(cells[4], row["t"], 2), (run.where, cells, row)
            assert cells[7] == ("skipped" if not row["tested"] else "yes" if row["rejected"] else "no"), (run.where, cells, row)
    else:
        for row in frame.to_dict("records"):
            cells = run.row(row["judge"])  # judge, comparisons, position consistency, preference fairness, first
            assert cells[1] == str(row["comparisons"]), (run.where, cells, row)
            assert _same(cells[2], row["position_consistency"]) and _same(cells[3], row["preference_fairness"])
            assert _same(cells[4], row["first_rate"]), (run.where, cells, row)


def test_every_documented_judges_result_is_rebuilt_from_its_signature():
    runs = 0
    for run in documented_runs("docs/judges.md", "metaeval judge "):
        _check_judge(run)
        runs += 1
    assert runs >= 7  # rank (a file, scores), agree (scores, two files), alt-test (dataset, file), audit


def _check_spans(run) -> None:
    from signature_rebuild import rebuild_spans

    f = run.fields
    result = rebuild_spans(f, run.cwd)
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    frame = result.to_frame()
    if f["analysis"] == "spans-binary":
        for row in frame.to_dict("records"):
            cells = run.row(row["predictor"])  # name, precision, recall, f1 (two decimals)
            assert all(_same(c, row[k], 2) for c, k in zip(cells[1:4], ("precision", "recall", "f1"))), (cells, row)
        return
    label = "rater" if f["analysis"] == "span-agreement" else "detector"
    for row in frame.to_dict("records"):
        if label == "rater" and row["against"] != "others":
            continue
        cells = run.row(row[label])  # name, precision, recall, f1 (with intervals)
        assert all(_same(c, row[k]) for c, k in zip(cells[1:4], ("precision", "recall", "f1"))), (run.where, cells, row)


def test_every_documented_spans_result_is_rebuilt_from_its_signature():
    runs = 0
    for run in documented_runs("docs/spans.md", "metaeval spans ", python=True):
        _check_spans(run)
        runs += 1
    assert runs >= 5  # compare with a detector file, evaluate, compare with a ceiling, agreement, binary


def _printed_frame(run, frame) -> None:
    """Every line of ``frame`` as the human commands print it (pandas, 4 decimals) is in the documented output."""
    text = frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")
    shown = {line.rstrip() for line in run.output}
    missing = [line for line in text.splitlines() if line.rstrip() not in shown]
    assert not missing, (run.where, missing[:3])


def _check_human(run) -> None:
    from signature_rebuild import rebuild_human

    f = run.fields
    result = rebuild_human(f, run.cwd)
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    text = " ".join(" ".join(run.output).split())  # wrapped lines joined
    statistic = f.get("statistic")
    if f.get("human") == "litepyramid.recall":
        _printed_frame(run, result.summaries.groupby("system", as_index=False)["score"].mean())
    elif statistic == "krippendorff-alpha":
        assert f"Krippendorff's alpha ({result.level}): {result.alpha:.4f} over {result.n_units} units" in text
        if result.mean_alpha is not None:
            assert f"groups: {result.mean_alpha:.4f} ({result.n_skipped} undefined)" in text
    elif "normalization" in f:
        _printed_frame(run, result.details)
    elif statistic in ("weighted-retention", "recall-at-threshold"):
        _printed_frame(run, result.system_scores)
    elif statistic == "document-sample":
        _printed_frame(run, result.table[result.table["selected"]])
    elif statistic == "cross-comprehension-labels":
        o = result.overall
        assert (f"overall relevant {o['relevant']:.1%}, relevant or partial {o['relevant_or_partial']:.1%}, found"
                f" {o['found']:.1%}") in text
    elif statistic == "jackknife":
        _printed_frame(run, result.peers)
    else:
        raise AssertionError(f"{run.where}: no check for {f}")


def test_every_documented_human_judgment_result_is_rebuilt_from_its_signature():
    runs = 0
    for run in documented_runs("docs/human.md", "metaeval human "):
        _check_human(run)
        runs += 1
    assert runs >= 8  # pyramid, agreement (votes, scores), normalize, retention, sample, cross, jackknife


def _check_mt_audit(run) -> None:
    from signature_rebuild import command_data, rebuild_mt_audit

    f = run.fields
    result = rebuild_mt_audit(f, command_data(run.command, f["human"], run.cwd), run.cwd)
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    for m in result.measures:
        # the measures table's row: task, discriminative power [interval], pairs, ranking consistency
        cells = next(c for c in run.rows(m["task"]) if len(c) == 4 and c[2].isdigit())
        assert _same(cells[1], m["discriminative_power"]), (run.where, cells, m)
        assert _same(cells[3], m["consistency"]), (run.where, cells, m)


def test_every_documented_mt_audit_is_rebuilt_from_its_signature():
    """The input files from the command line (the data), everything else from the signature."""
    runs = 0
    for run in documented_runs("docs/mt.md", "metaeval mt audit "):
        _check_mt_audit(run)
        runs += 1
    assert runs >= 1  # three WMT19 language pairs from a packaged dataset (the other audit is a slow example)


@pytest.mark.slow
def test_every_documented_mt_audit_slow_examples_included_is_rebuilt_from_its_signature():
    runs = 0
    for run in documented_runs("docs/mt.md", "metaeval mt audit ", slow=True):
        _check_mt_audit(run)
        runs += 1
    assert runs >= 2  # the WMT20 en-de audit with excluded systems (slow), the WMT19 one


def _check_systems(run) -> bool:
    from signature_rebuild import rebuild_systems

    result = rebuild_systems(run.fields, run.cwd)
    if result is None:
        return False
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    frame = result.to_frame()
    if "scorer" in run.fields:
        for row in frame.to_dict("records"):
            cells = next(c for c in run.rows(row["system_a"]) if c[1] == row["system_b"] and len(c) >= 8)
            assert _same(cells[2], row["score_a"]) and _same(cells[3], row["score_b"]), (run.where, cells, row)
            assert _same(cells[4], row["delta"]), (run.where, cells, row)
            shown = cells[7]
            assert (row["pvalue"] < 0.001) if shown == "< 0.001" else _same(shown, row["pvalue"]), (cells, row)
    elif "--pairs" in run.command:  # one row per system pair: deltas, p-values and every verdict
        for k, (a, b) in enumerate(result.pairs):
            cells = next(c for c in run.rows(a) if c[1] == b)  # a, b, human delta, human p, human, metrics...
            assert _same(cells[2], result.human_deltas[k]), (run.where, cells)
            assert cells[4:] == [str(result.human_verdicts[k]), *(str(v[k]) for v in result.metric_verdicts)], cells
    else:
        for row in frame.to_dict("records"):
            cells = run.row(row["metric"])  # metric, f1, agreement, n_used, n_skipped, confusion
            assert _same(cells[1], row["f1"]) and _same(cells[2], row["agreement"]), (run.where, cells, row)
            assert cells[3] == str(row["n_used"]), (run.where, cells, row)
    return True


def test_every_documented_system_comparison_and_verdict_is_rebuilt_from_its_signature():
    runs = 0
    for page in ("docs/systems.md", "docs/analyses.md", "docs/metrics.md"):  # metrics.md: a corpus NIST comparison
        for prefix in ("metaeval systems ", "metaeval verdicts "):
            for run in documented_runs(page, prefix):
                runs += _check_systems(run)
    # systems (REALSumm, bootstrap; corpus NIST), verdicts (bootstrap, randomization, corpus BLEU pairs)
    assert runs >= 5


def _check_power(run) -> None:
    from signature_rebuild import rebuild_power

    result = rebuild_power(run.fields, run.cwd)
    assert without_version(str(result.signature)) == without_version(run.signature), run.where
    for row in result.frame_rows():
        printed = [c for c in run.rows(row["level"]) if c[1] == row["test"]]
        header = next(line for line in run.output if "p=" in line and "level" in line)  # the first block's columns
        columns = [c.strip() for c in re.split(r"[│┃]", header)[1:-1]][2:]
        if f"p={row['proportion']:g}" in columns:
            assert _same(printed[0][2 + columns.index(f"p={row['proportion']:g}")], row["power"]), (run.where, row)


def test_every_documented_power_simulation_is_rebuilt_from_its_signature():
    runs = 0
    for run in documented_runs("docs/reproductions.md", "metaeval simulate power "):
        _check_power(run)
        runs += 1
    assert runs >= 1  # the 20-trial run (the 200-trial ones are slow examples)


def _printed_numbers_are_rebuilt(run, result) -> int:
    """Every decimal number in the printed tables' rows is a value of the rebuilt result (its frame, its numeric
    fields) at the printed precision; returns how many were checked."""
    import dataclasses

    import numpy as np

    values = [float(v) for v in result.to_frame().select_dtypes("number").to_numpy().ravel()]
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if isinstance(value, (float, np.ndarray)) and np.asarray(value).dtype.kind in "fiu":
            values += np.asarray(value, dtype=float).ravel().tolist()
        elif hasattr(value, "select_dtypes"):  # a table of the result (rates, categories, ...)
            values += value.select_dtypes("number").to_numpy(dtype=float).ravel().tolist()
    values = [v for v in values if math.isfinite(v)]
    checked = 0
    for line in run.output:
        if "│" not in line:
            continue
        for token in re.findall(r"(?<![\w.])-?\d*\.\d+", line):  # not inside a label (NYT1999.0196)
            digits = len(token.split(".")[1])
            shown = float(token)
            assert any(abs(v - shown) <= 0.5 * 10 ** -digits + 1e-12 for v in values), (run.where, line, token)
            checked += 1
    return checked


def test_every_documented_analysis_is_rebuilt_from_its_signature():
    """delta, stability, top-k, gap and plan (normality: tests/test_signatures_rebuild.py)."""
    from signature_rebuild import rebuild_analysis

    runs = 0
    for run in documented_runs("docs/analyses.md", "metaeval "):
        result = rebuild_analysis(run.fields, run.cwd)
        if result is None:
            continue
        assert without_version(str(result.signature)) == without_version(run.signature), run.where
        assert _printed_numbers_are_rebuilt(run, result) > 0, run.where
        runs += 1
    assert runs >= 8  # delta x2, stability x2, top-k, gap x2, plan


def test_every_documented_nugget_and_extrinsic_result_is_rebuilt_from_its_signature():
    from signature_rebuild import rebuild_nuggets_extrinsic

    runs = 0
    for run in documented_runs("docs/nuggets-extrinsic.md", "metaeval "):
        result = rebuild_nuggets_extrinsic(run.fields, run.cwd)
        if result is None:
            continue
        assert without_version(str(result.signature)) == without_version(run.signature), run.where
        assert _printed_numbers_are_rebuilt(run, result) > 0, run.where
        runs += 1
    assert runs >= 4  # nuggets counts and match, extrinsic agreement and correlate


def test_every_documented_qarla_result_is_rebuilt_from_its_signature():
    from signature_rebuild import rebuild_qarla

    runs = 0
    for run in documented_runs("docs/qarla.md", "metaeval qarla "):
        result = rebuild_qarla(run.fields, run.cwd)
        assert without_version(str(result.signature)) == without_version(run.signature), run.where
        assert _printed_numbers_are_rebuilt(run, result) > 0, run.where
        runs += 1
    assert runs >= 1  # SummEval, 5 inputs (the 100-input run is a slow example)


def test_every_documented_reproduction_and_dataset_partition_is_rebuilt_from_its_signature():
    from signature_rebuild import rebuild_dataset_analysis

    runs = 0
    for page in ("docs/reproductions.md", "docs/nuggets-extrinsic.md"):
        for run in documented_runs(page, "metaeval "):
            result = rebuild_dataset_analysis(run.fields, run.cwd)
            if result is None:
                continue
            assert without_version(str(result.signature)) == without_version(run.signature), run.where
            assert _printed_numbers_are_rebuilt(run, result) > 0, run.where
            runs += 1
    assert runs >= 3  # summary-level with and without the paper's filter, the SummEval partitions


def test_every_documented_mt_run_from_score_files_is_rebuilt_from_its_signature():
    """`metaeval mt` on --scores files: the data from the command line, everything else from the signature (read
    back by tests/test_mt_signatures_report.py's reader, the protocol checked by its content hash). Runs on
    corpus statistics or system-level files of mt-metrics-eval are rebuilt there, on their own data; rater waves
    here (the ratings files from the command line, the waves split again from the signed seed)."""
    import metaeval as me
    from signature_rebuild import command_data
    from test_mt_signatures_report import _call_from_signature

    runs = waves = 0
    for run in documented_runs("docs/mt.md", "metaeval mt --scores "):
        f = run.fields
        if f.get("corpus_level", "none") != "none" or "system_level" in f:
            continue
        waved = "rater_waves" in f and re.fullmatch(r".+\.wave\d+", f["human"])  # the waves of the ratings' scorer
        data = command_data(run.command, f["human"].rsplit(".wave", 1)[0] if waved else f["human"], run.cwd)
        call = _call_from_signature(run.signature)
        if "rater_waves" in f:  # the waves split from the seed (its stream (seed, 1), signed in `subset`)
            call["rater_waves"] = int(f["rater_waves"])
            waves += 1
        metrics = [m for m in f["metrics"].split(",") if m not in call["human_baselines"]]
        result = me.mt_evaluate(data, metrics, **call)
        assert without_version(str(result.signature)) == without_version(run.signature), run.where
        assert _printed_numbers_are_rebuilt(run, result) > 0, run.where
        runs += 1
    assert runs >= 3 and waves >= 1  # WMT23-style en-de and zh-en, the WMT25 protocol, WMT23 ratings in rater waves


def test_systems_chosen_in_python_are_signed_and_rebuild_the_comparison():
    """`compare_systems(..., systems=[...])` signed the count only (issue 41 item 2): the names rebuild it."""
    import metaeval as me
    from signature_rebuild import fields

    ds = me.load_dataset("realsumm")
    first = me.compare_systems(ds, "litepyramid.recall", systems=["t5_out_11B", "bart_out"], n_resamples=200, rng=3)
    f = fields(str(first.signature))
    assert f["compared_systems"] == "t5_out_11B,bart_out"
    again = me.compare_systems(ds, f["scorer"], systems=f["compared_systems"].split(","), test=f["test"],
                               n_resamples=int(f["resamples"]), rng=int(f["seed"]))
    assert str(again.signature) == str(first.signature)
    assert again.pvalues.tolist() == first.pvalues.tolist() and again.deltas.tolist() == first.deltas.tolist()


def _p_shown(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}".lstrip("0")


def test_every_documented_correlate_run_on_score_files_is_rebuilt_from_its_signature():
    """`metaeval correlate --scores FILE ...`: the files from the command line (`--scores` paths only), how each was
    read (columns, rows kept, systems renamed and chosen) from the signature's `subset`, every option from its other
    fields; each printed cell (value, interval, p-value) rebuilt by `correlate`/`bootstrap_ci`/`fisher_ci`, and the
    table's signature by `correlation_table`. Corpus metrics (`corpus_level:`) recomputed from the texts the
    signature names (`corpus_texts:`), with the metric's options from the score file's `.signatures.json`."""
    runs = _rebuilt_correlate_runs(("docs/data.md", "docs/nuggets-extrinsic.md", "docs/metrics.md", "docs/mt.md"))
    assert runs >= 6  # mt.md's corpus BLEU, data.md's FRANK partial correlations and two first hours,
    # nuggets-extrinsic.md's automatic and crowd nugget F


@pytest.mark.slow
def test_the_slow_documented_correlate_runs_are_rebuilt_from_their_signatures():
    """docs/metrics.md's corpus NIST and BLEU on SummEval (the texts of 1600 summaries scored first)."""
    assert _rebuilt_correlate_runs(("docs/metrics.md",), slow=True) >= 1


def _rebuilt_correlate_runs(pages, *, slow: bool = False) -> int:
    """How many documented `correlate --scores` runs of ``pages`` were rebuilt (each checked)."""
    import warnings

    import metaeval as me
    from signature_rebuild import (command_files, corpus_statistics, correlate_data, printed_cells,
                                   rebuild_correlation_cell)

    runs = 0
    for page in pages:
        for run in documented_runs(page, "metaeval correlate ", writers=True, markdown=True, slow=slow):
            f = run.fields
            if "--scores" not in run.command:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the join's and the left-out systems' warnings, pinned by the docs
                ds = correlate_data(f, command_files(run.command, run.cwd), run.cwd)
                corpus = corpus_statistics(ds, f, run.cwd)
                cells = printed_cells(run)
                assert cells, run.where
                levels = list(dict.fromkeys(level for level, _, _ in cells))
                metrics = list(dict.fromkeys(metric for _, metric, _ in cells))
                coefficients = list(dict.fromkeys(c for _, _, c in cells))
                options = {}  # 'none': not used by the table, its default passed
                if f["resamples"] != "none":
                    options["n_resamples"] = int(f["resamples"])
                if f["confidence"] != "none":
                    options["confidence_level"] = float(f["confidence"])
                if f["seed"] != "none":
                    options["rng"] = int(f["seed"])
                table = me.correlation_table(ds, f["human"], metrics, levels=levels, coefficients=coefficients,
                                             ci=f["ci"], pvalue_method=f["pvalue"], alternative=f["alternative"],
                                             corpus_statistics=corpus, **options)
                assert without_version(str(table.signature)) == without_version(run.signature), run.where
                for (level, metric, coefficient), shown in cells.items():
                    result = rebuild_correlation_cell(ds, f, metric, level, coefficient, corpus)
                    assert _same(shown[0], float(result.statistic)), (run.where, level, metric, coefficient, shown)
                    for cell in shown[1:]:
                        if cell.startswith("["):
                            low, high = (float(v) for v in cell.strip("[]").split(", "))
                            assert (f"{result.ci[0]:.2f}", f"{result.ci[1]:.2f}") == (f"{low:.2f}", f"{high:.2f}"), \
                                (run.where, level, metric, coefficient, shown)
                        elif re.fullmatch(r"<?\d*\.\d+", cell):
                            assert _p_shown(float(result.pvalue)) == cell, \
                                (run.where, level, metric, coefficient, shown)
                        else:
                            assert re.fullmatch(r"\d+ skipped", cell), cell
            runs += 1
    return runs


def test_rows_kept_by_several_values_are_signed_and_rebuild_the_correlation(tmp_path):
    """`--where split=test --where split=valid` is signed `where split=test+valid` (never with `|`, the separator of
    a signature's fields), a scorer renamed and a layout forced are signed too (`renamed QAGS->qags`, `layout wide`),
    beside a system renamed in both files and one left out; the signature alone reads the files again to the same
    number."""
    import warnings

    from click.testing import CliRunner

    from metaeval.cli.main import cli
    from signature_rebuild import correlate_data, fields, rebuild_correlation_cell

    from pathlib import Path

    frank = Path(__file__).resolve().parent / "data" / "frank"
    files = [str(frank / "human_annotations.json"), str(frank / "baseline_factuality_metrics_outputs.json")]
    argv = ["correlate", "--scores", files[0], "--scores", files[1], "--system-column", "model_name",
            "--input-column", "hash", "--human-column", "Factuality", "--where", "split=test", "--where", "split=valid",
            "--rename", f"{files[1]}=QAGS:qags", "--layout", f"{files[1]}=wide", "--rename-system", "pgn:PGN",
            "--exclude-system", "bus",
            "--metric", "qags", "--level", "global", "--coefficient", "pearson", "--ci", "none", "--format", "json"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the columns set aside, pinned by docs/data.md
        result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    import json

    cell = json.loads(result.output[result.output.index("{"):])["results"][0]
    signature = cell["signature"]
    f = {**fields(signature), "ci": "none"}
    assert f["subset"] == ("columns system=model_name,input=hash,human=Factuality; where split=test+valid; systems"
                           " renamed: pgn->PGN; baseline_factuality_metrics_outputs: layout wide;"
                           " baseline_factuality_metrics_outputs: renamed QAGS->qags; systems=bart,PGN,bert_sum,s2s,"
                           "TranS2S,TConvS2S,PtGen,BERTS2S"), f["subset"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = correlate_data(f, files, tmp_path)
        rebuilt = rebuild_correlation_cell(ds, f, "qags", "global", "pearson")
    assert ds.shape[1] == 40 and "PGN" in ds.systems and "bus" not in ds.systems  # both splits (the test split: 26)
    assert without_version(str(rebuilt.signature)) == without_version(signature)
    assert float(rebuilt.statistic) == cell["statistic"] and float(rebuilt.pvalue) == cell["pvalue"]


def test_every_documented_familywise_run_is_rebuilt_from_its_signature():
    """`metaeval familywise`: the family (``comparisons``, ``systems``), the levels given (``per_comparison``) and the
    target (``alpha``) from the signature; every printed error and level rebuilt by `n_pairwise_comparisons`,
    `familywise_error` and `per_comparison_level` (the command's table has no Python result of its own)."""
    import metaeval as me

    runs = 0
    for run in documented_runs("docs/statistics.md", "metaeval familywise "):
        f = run.fields
        assert f["statistic"] == "familywise", run.where
        k = int(f["comparisons"])
        if f.get("systems", "none") != "none":
            assert me.n_pairwise_comparisons(int(f["systems"])) == k, run.where
        text = " ".join(run.output)
        for p in f["per_comparison"].split(","):
            error = me.familywise_error(float(p), k)
            shown = f"per-comparison level {p}: family-wise error 1 - (1 - {p})^{k} = {error:.4f}"
            assert shown in text, (run.where, p)
        alpha = float(f["alpha"])
        sidak, bonferroni = (me.per_comparison_level(alpha, k, method=m) for m in ("sidak", "bonferroni"))
        assert f"per-comparison level {sidak:.6g} (Sidak, 1 - (1 - {f['alpha']})^(1/{k}))" in text, run.where
        assert f"{bonferroni:.6g}" in text.split("(Sidak", 1)[1], run.where
        runs += 1
    assert runs >= 1


def test_a_corpus_metric_scored_with_other_options_signs_them_and_rebuilds(tmp_path, monkeypatch):
    """`metaeval systems --corpus-metric nist` recomputes NIST with the options its score file's sidecar records
    (here lowercase=true); the signature's `texts` names them (`... with lowercase=True`), so the comparison is
    rebuilt from the signature alone; at the defaults the field is the two file names (docs/metrics.md)."""
    import json
    import warnings

    from click.testing import CliRunner

    from metaeval.cli.main import cli
    from signature_rebuild import fields, rebuild_systems

    from signature_rebuild import SHARED_DATA

    rows = [json.loads(line) for line in open(SHARED_DATA / "summeval" / "texts.jsonl", encoding="utf-8")]
    rows = [r for r in rows if r["system_id"] in {"M0", "M5", "M17"}]
    docs = list(dict.fromkeys(r["doc_id"] for r in rows))[:8]
    rows = [r for r in rows if r["doc_id"] in docs]
    (tmp_path / "out.jsonl").write_text("".join(json.dumps({"system": r["system_id"], "input": r["doc_id"],
                                                            "candidate": r["summary"].upper()}) + "\n" for r in rows))
    (tmp_path / "refs.jsonl").write_text("".join(json.dumps({"input": d, "references": refs}) + "\n"
                                                 for d, refs in {r["doc_id"]: r["references"] for r in rows}.items()))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scored = runner.invoke(cli, ["score", "--candidates", "out.jsonl", "--references", "refs.jsonl", "--metric",
                                     "nist", "--metric-option", "nist.lowercase=true", "--output", "nist.csv",
                                     "--no-progress"])
        assert scored.exit_code == 0, scored.output
        result = runner.invoke(cli, ["systems", "--scores", "nist.csv", "--scorer", "nist", "--corpus-metric", "nist",
                                     "--candidates", "out.jsonl", "--references", "refs.jsonl", "--test",
                                     "randomization", "--n-resamples", "200", "--seed", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output[result.output.index("{"):])
    f = fields(printed["signature"])
    assert f["texts"] == "out.jsonl,refs.jsonl with lowercase=True", f["texts"]
    rebuilt = rebuild_systems(f, tmp_path)
    assert without_version(str(rebuilt.signature)) == without_version(printed["signature"])
    frame = rebuilt.to_frame()
    assert len(printed["pairs"]) == 3
    for row, again in zip(printed["pairs"], frame.to_dict("records")):
        assert (row["system_a"], row["system_b"]) == (again["system_a"], again["system_b"])
        assert math.isclose(row["delta"], again["delta"], rel_tol=1e-12) and row["pvalue"] == again["pvalue"]
