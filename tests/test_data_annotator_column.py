"""When a column named `annotator` is the annotator axis and when it is a scorer (issue 22 item 5).

Regression: a numeric column named `annotator` silently became the annotator axis and its scores
vanished. The rule (docs/data.md): in the wide shape the column is the annotator axis when some
(system, input) cell has several rows or a label is not a number, or when the caller maps it
(``columns={'annotator': ...}``, ``--annotator-column``); a column of numbers with one row per cell is a
scorer called 'annotator', with a DataWarning saying how to map it instead.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import DataWarning

API_WARNING = ("{path}: the column 'annotator' holds one number per (system, input) row, so it is read as a scorer"
               " named 'annotator' (annotator labels give several rows per cell); to read it as annotator labels,"
               " map it: {hint}.")


@pytest.fixture(scope="module")
def summeval():
    return me.load_dataset("summeval")


def _wide(ds, path, columns: dict[str, str], fmt: str) -> None:
    """SummEval system x input rows with the given {file column: scorer} (annotators averaged)."""
    rows = []
    for i, system in enumerate(ds.systems):
        for j, item in enumerate(ds.inputs):
            row = {"system": system, "input": item}
            row.update({name: float(ds.matrix(scorer)[i, j]) for name, scorer in columns.items()})
            rows.append(row)
    if fmt == "csv":
        names = list(rows[0])
        path.write_text(",".join(names) + "\n" + "".join(",".join(repr(r[n]) if isinstance(r[n], float) else r[n]
                                                                    for n in names) + "\n" for r in rows))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_numeric_annotator_column_is_a_scorer(summeval, tmp_path, fmt):
    path = tmp_path / f"scores.{fmt}"
    _wide(summeval, path, {"annotator": "rouge-1.recall", "relevance": "expert.relevance"}, fmt)
    with pytest.warns(DataWarning) as caught:
        ds = me.read_scores(path, humans=["relevance"])
    assert [str(w.message) for w in caught] == [API_WARNING.format(path=path, hint="columns['annotator'] = 'annotator'")]
    assert ds.scorers == ("annotator", "relevance") and ds.n_annotators("relevance") == 1
    assert np.array_equal(ds.matrix("annotator"), summeval.matrix("rouge-1.recall"))
    ours = me.correlate(ds, "annotator", "relevance", level="system", pvalue_method="none")
    theirs = me.correlate(summeval, "rouge-1.recall", "expert.relevance", level="system", pvalue_method="none")
    assert ours.statistic == theirs.statistic


def test_the_cli_reads_it_as_a_scorer_and_says_how_to_map_it(summeval, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    _wide(summeval, path, {"annotator": "rouge-1.recall", "relevance": "expert.relevance"}, "csv")
    argv = ["correlate", "--scores", str(path), "--human", "relevance", "--metric", "annotator", "--level", "system",
            "--ci", "none", "--pvalue-method", "none"]
    assert main(argv) == 0
    _, err = capsys.readouterr()
    assert err == "metaeval: warning: " + API_WARNING.format(path=path, hint="--annotator-column annotator") + "\n"
    assert main(argv + ["--annotator-column", "annotator"]) == 2  # mapped: labels, and no scorer 'annotator'
    _, err = capsys.readouterr()
    assert err.startswith("metaeval: error: ") and "'annotator'" in err and len(err.splitlines()) == 1


def test_a_mapped_numeric_column_is_the_axis(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("system,input,annotator,human\na,d1,1,0.5\nb,d1,2,0.7\nc,d1,1,0.1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = me.read_scores(path, columns={"annotator": "annotator"})
    assert ds.scorers == ("human",)  # no scorer 'annotator', no warning: the caller said so


def test_numeric_labels_with_several_rows_per_cell_are_the_axis(summeval, tmp_path):
    """The layout write_scores gives (annotators 1, 2, 3; the per-cell row has an empty annotator) reads back."""
    small = summeval.subset(systems=list(summeval.systems[:4]), inputs=list(summeval.inputs[:5]))
    path = tmp_path / "round.csv"
    me.write_scores(small, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = me.read_scores(path, humans=list(small.humans))
    assert back.n_annotators("expert.relevance") == 3 and "annotator" not in back.scorers
    assert np.array_equal(back.matrix("expert.relevance"), small.matrix("expert.relevance"), equal_nan=True)


def test_text_labels_one_row_per_cell_stay_labels(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("system,input,annotator,human\na,d1,ann1,0.5\nb,d1,ann2,0.7\nc,d1,ann1,0.1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = me.read_scores(path)
    assert ds.scorers == ("human",) and "annotator" not in ds.scorers
