"""Every documented correlation is rebuilt from its printed signature alone (issue 41 item 2, last line).

The test reads README.md and docs/*.md, finds every correlation signature an example prints (``dataset:...|
metric:...|human:...|level:...|coefficient:...``, a wrapped one joined again), calls the public API with
nothing but the signature's fields (the dataset, its aggregation, the coefficient and level, the interval,
resamples, confidence, seed, p-value and alternative), and checks that the rebuilt result prints the same
signature and that its number is the one the example shows (at the precision printed in the same block).
The signature is parsed here only: the library never parses a signature back (docs/dev/ARCHITECTURE.md).
Also every documented `correlate --format latex` table (the signature gives the data and the options, the table's
labels its cells; every value and interval rebuilt) and every documented normality analysis (`analysis:normality`).
The MT signatures are rebuilt in tests/test_mt_signature_names.py and tests/test_mt_signatures_report.py.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import metaeval as me

REPO = Path(__file__).resolve().parents[1]
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_SIGNATURE = re.compile(r"(?<![\w|])dataset:[^\s`|]*(?:\|[a-z_]+:[^\s`|]*)+")
_CORRELATION = ("metric", "human", "level", "coefficient")


def _documented() -> list[tuple[str, str, str]]:
    """(file, block text, signature) of every correlation signature printed in an example."""
    out = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in _FENCE.findall(path.read_text(encoding="utf-8")):
            joined = re.sub(r"\n\s+\|", "|", block).replace("\\|", "|").replace("\\_", "_")
            for signature in _SIGNATURE.findall(joined):
                signature = signature.rstrip(".,;)")
                keys = [part.split(":", 1)[0] for part in signature.split("|")]
                if all(k in keys for k in _CORRELATION) and "analysis" not in keys and "statistic" not in keys:
                    out.append((path.name, joined, signature))
    return out


def _fields(signature: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in signature.split("|"))


def _rebuild(fields: dict[str, str]):
    """The result the signature describes, computed from its fields alone (None: not rebuildable here)."""
    from metaeval.data.datasets import list_datasets

    if fields["dataset"] not in {name for name, _ in list_datasets()} or fields.get("subset", "none") != "none":
        return None
    ds = me.load_dataset(fields["dataset"])
    if fields.get("aggregation", ds.aggregation) != ds.aggregation:
        ds = ds.with_aggregation(fields["aggregation"])
    common = dict(level=fields["level"], coefficient=fields["coefficient"], undefined=fields.get("undefined", "skip"),
                  full_test_set=fields.get("full_test_set") == "yes",
                  pvalue_method=fields.get("pvalue", "none"), alternative=fields.get("alternative", "two-sided"))
    if "tie_tolerance" in fields:
        common["tie_tolerance"] = float(fields["tie_tolerance"])
    if "tie_threshold" in fields:
        common["tie_threshold"] = float(fields["tie_threshold"])
    if common["pvalue_method"] == "permutation":
        common["n_resamples"] = int(fields["pvalue_resamples"])
    seed = fields.get("seed")
    if seed not in (None, "none"):
        if not seed.isdigit():
            return None  # 'generator': the one case a signature cannot rebuild (docs/statistics.md)
        common["rng"] = int(seed)
    ci = fields.get("ci", "none")
    args = (ds, fields["metric"], fields["human"])
    if ci == "none":
        return me.correlate(*args, **common)
    if ci == "fisher":
        return me.fisher_ci(*args, confidence_level=float(fields["confidence"]), **common)
    if ci.startswith("boot-"):
        common.pop("n_resamples", None)
        return me.bootstrap_ci(*args, method=ci[5:], n_resamples=int(fields["resamples"]),
                               confidence_level=float(fields["confidence"]),
                               interval=fields.get("interval", "percentile"), **common)
    return None


DOCUMENTED = _documented()


def test_the_docs_print_correlation_signatures():
    assert {where for where, _, _ in DOCUMENTED} >= {"README.md", "statistics.md"}


@pytest.mark.parametrize("where, block, signature", DOCUMENTED, ids=[f"{w}:{i}" for i, (w, _, _) in enumerate(DOCUMENTED)])
def test_a_documented_number_is_rebuilt_from_its_signature(where, block, signature):
    fields = _fields(signature)
    result = _rebuild(fields)
    if result is None:
        pytest.skip(f"{where}: dataset {fields['dataset']!r} with subset {fields.get('subset')!r} is not packaged")
    rebuilt = str(result.signature)
    assert rebuilt.rsplit("|version:", 1)[0] == signature.rsplit("|version:", 1)[0]
    shown_numbers = re.sub(re.escape(signature), "", block)
    if not re.search(r"\d\.\d", shown_numbers):
        return  # the block shows the signature alone (docs/statistics.md): the same signature is the check
    value = float(result.statistic)
    shown = {f"{value:.{d}f}" for d in (2, 3, 4)} | {f"{round(value, d)}" for d in (2, 3, 4)}
    assert any(s in shown_numbers for s in shown), (where, signature, value)


# -- correlation tables and an analysis besides correlations (issue 41 item 2 extended) -------------------------

_LATEX_TABLE = re.compile(r"\$ metaeval correlate (?P<argv>[^\n]*)--format latex\n(?P<body>.*?)\n% correlation with "
                          r"(?P<human>\S+); signature: (?P<signature>\S+)", re.S)


def _documented_tables() -> list[tuple[str, str, str]]:
    """(file, LaTeX body, signature) of every documented `correlate --format latex` table."""
    out = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for block in _FENCE.findall(path.read_text(encoding="utf-8")):
            for m in _LATEX_TABLE.finditer(block.replace("\\textbar{}", "|")):
                out.append((path.name, m["body"], m["signature"].replace("\\_", "_")))
    return out


TABLES = _documented_tables()


def test_the_docs_print_a_correlation_table():
    assert TABLES


@pytest.mark.parametrize("where, body, signature", TABLES, ids=[f"{w}:{i}" for i, (w, _, _) in enumerate(TABLES)])
def test_a_documented_correlation_table_is_rebuilt_from_its_signature(where, body, signature):
    """The signature gives the data and every option; the table's own labels (metrics, levels, coefficients) the
    cells; every printed value and interval is rebuilt."""
    fields = _fields(signature)
    lines = body.splitlines()
    levels = re.findall(r"\\multicolumn\{(\d+)\}\{c\}\{([^}]+)\}", body)
    coefficients = next(line for line in lines if line.startswith("Metric &")).rstrip(" \\").split(" & ")[1:]
    rows = lines[lines.index("\\midrule") + 1:lines.index("\\bottomrule")]
    metrics = [row.split(" & ", 1)[0] for row in rows]
    ds = me.load_dataset(fields["dataset"])
    table = me.correlation_table(ds, fields["human"], metrics, levels=[lv for _, lv in levels],
                                 coefficients=list(dict.fromkeys(coefficients)), ci=fields["ci"],
                                 n_resamples=int(fields["resamples"]), confidence_level=float(fields["confidence"]),
                                 rng=int(fields["seed"]), pvalue_method=fields["pvalue"],
                                 alternative=fields["alternative"])
    assert str(table.signature).rsplit("|version:", 1)[0] == signature.rsplit("|version:", 1)[0]
    columns = list(zip([lv for n, lv in levels for _ in range(int(n))], coefficients))
    assert metrics and len(columns) == len(coefficients) >= 1
    for metric, row in zip(metrics, rows):
        cells = row.rstrip(" \\").split(" & ")[1:]
        assert len(cells) == len(columns), row
        for (level, coefficient), cell in zip(columns, cells):
            value, low, high = map(float, re.findall(r"-?\d+\.\d+", cell))
            result = table.get(metric, level, coefficient)
            assert f"{result.statistic:.3f}" == f"{value:.3f}", (metric, level, coefficient)
            assert tuple(f"{v:.2f}" for v in result.ci) == (f"{low:.2f}", f"{high:.2f}"), (metric, level, coefficient)


def _documented_analyses(name: str) -> list[tuple[str, str, str]]:
    out = []
    for where, block, signature in [(p.name, j, s) for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
                                    for b in _FENCE.findall(p.read_text(encoding="utf-8"))
                                    for j in [re.sub(r"\n\s+\|", "|", b)] for s in _SIGNATURE.findall(j)]:
        if _fields(signature).get("analysis") == name:
            out.append((where, block, signature))
    return out


NORMALITY = _documented_analyses("normality")


@pytest.mark.parametrize("where, block, signature", NORMALITY, ids=[f"{w}:{i}" for i, (w, _, _) in enumerate(NORMALITY)])
def test_a_documented_normality_analysis_is_rebuilt_from_its_signature(where, block, signature):
    fields = _fields(signature)
    assert fields["test"] == "shapiro-wilk"
    ds = me.load_dataset(fields["dataset"])
    result = me.normality(ds, fields["scorers"].split(","), alpha=float(fields["alpha"]))
    assert str(result.signature).rsplit("|version:", 1)[0] == signature.rsplit("|version:", 1)[0]
    for row in result.frame_rows():  # every row the example prints: W, p and the share rejecting
        shown = re.search(rf"│ {re.escape(row['scorer'])} +│ \w+ +│ +([\d.]+) │ +([\d.]+) │ +([\d.]+) │", block)
        assert shown is not None, row["scorer"]
        assert tuple(shown.groups()) == (f"{row['system_w']:.3f}", f"{row['system_pvalue']:.3f}",
                                         f"{row['input_share_rejected']:.3f}")


def test_the_docs_print_a_normality_signature():
    assert NORMALITY
