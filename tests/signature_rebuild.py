"""Rebuilding a documented result from its printed signature alone (issue 41 item 2), for the tests.

The library never parses a signature back (docs/dev/ARCHITECTURE.md): this module does, for the tests only.
:func:`documented_runs` runs the examples of one page in the docs runner's sandbox up to each command that
prints a signature (the commands that print none - the scripts that write the input files - are run, the
others not: their output is already pinned by tests/test_docs_examples.py) and yields the command, what the
page says it prints, the signature and the sandbox. :func:`fields` splits a signature into its fields; the
``rebuild_*`` functions call the public Python API with nothing but those fields and the same input files.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _runner():
    if "doc_examples" not in sys.modules:
        spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["doc_examples"] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["doc_examples"]


@dataclass
class Run:
    """One documented command that prints a signature."""

    where: str
    command: str
    output: list[str]
    signature: str
    cwd: Path

    @property
    def fields(self) -> dict[str, str]:
        return fields(self.signature)

    def rows(self, label: str) -> list[list[str]]:
        """The cells of every printed table row whose first cell is ``label`` (rich's box characters)."""
        out = []
        for line in self.output:
            cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
            if cells and cells[0] == label:
                out.append(cells)
        return out

    def row(self, label: str) -> list[str]:
        """The cells of the first printed table row whose first cell is ``label``."""
        found = self.rows(label)
        assert found, f"{self.where}: no row {label!r} in the output of {self.command!r}"
        return found[0]


def printed_signature(lines: list[str], *, markdown: bool = False) -> str | None:
    """The signature a command printed (``signature: ...`` and its wrapped, two-space indented lines joined), or
    None; with ``markdown`` also a Markdown table's caption (``Correlation with X. signature: a:b\\|...``)."""
    for line in lines if markdown else ():
        m = re.match(r"[A-Z][^|]*\. signature: ([a-z_]+:.*)$", line)
        if m:
            return m[1].replace("\\|", "|").replace("\\_", "_")
    for k, line in enumerate(lines):
        if line.startswith("signature:"):  # `signature: a:b|...` or `signature:` and the fields on the next line
            first = line[len("signature:"):].strip()
            if not first and k + 1 < len(lines):
                first, k = lines[k + 1].strip(), k + 1
            parts = [first]
            for more in lines[k + 1:]:  # wrapped at a `|` or after a comma (report.render.SignatureLines)
                if not more.startswith("  ") or more[2:3] in ("", " "):
                    break
                parts.append(more[2:].rstrip())
            return "".join(parts)
    return None


def fields(signature: str) -> dict[str, str]:
    """``{key: value}`` of a signature's ``key:value|...`` fields (a value may hold ':' but never '|')."""
    return dict(part.split(":", 1) for part in signature.split("|"))


def without_version(signature: str) -> str:
    return signature.rsplit("|version:", 1)[0]


def documented_runs(page: str, prefix: str, *, python: bool = False, slow: bool = False,
                    writers: bool = False, markdown: bool = False) -> Iterator[Run]:
    """Every command of ``page`` (a path from the repository's root) that starts with ``prefix`` and prints a
    signature, with the sandbox as the examples before it left it (files written, scripts run, and with
    ``python`` the Python sessions run); with ``slow`` the examples marked slow too; with ``writers`` the
    ``metaeval`` commands that print no signature and write an ``--output`` run too (the files a later
    command reads); with ``markdown`` the signatures of Markdown tables too."""
    runner = _runner()
    globs: dict = {"__name__": "__main__"}
    with runner.sandbox() as cwd:
        for example in runner.examples(page):
            if "skip" in example.marks or ("slow" in example.marks and not slow):
                continue
            if example.kind == "file":
                (cwd / example.marks["file"]).write_text("\n".join(example.lines) + "\n", encoding="utf-8")
                continue
            if example.kind == "python" and python:  # a session may write the files a command reads
                runner.run_python(example, cwd, globs)
                continue
            if example.kind == "bash":  # a script that writes the inputs
                assert runner.run_bash(example, cwd).ok, example.where
                continue
            if example.kind != "console":
                continue
            for command, expected in runner.console_commands(example):
                signature = printed_signature(expected, markdown=markdown)
                if signature is None:
                    if any(line.startswith("metaeval: error:") for line in expected):
                        continue  # an example of a refusal
                    if not command.startswith("metaeval ") or (writers and "--output" in command):  # writes inputs
                        code, output = runner.run_command(command, cwd)
                        assert code == 0, output
                    continue
                if command.startswith(prefix):
                    yield Run(f"{page}:{example.start + 1}", command, expected, signature, cwd)


# -- reading the values of fields back ------------------------------------------------------------------------

def listed(value: str, candidates) -> list[str]:
    """A list field (``a,b,c`` or, shortened, ``a,b,c,...N more (sha256:D)``) as the names it stands for:
    the shortened form is the first three names then the N remaining ``candidates`` in order, checked against
    the digest of them all."""
    m = re.fullmatch(r"(.*),\.\.\.(\d+) more \(sha256:([0-9a-f]+)\)", value)
    if m is None:
        return value.split(",")
    shown = m[1].split(",")
    rest = [c for c in candidates if c not in shown]
    names = [*shown, *rest]
    assert len(rest) == int(m[2]), (value, names)
    assert hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:12] == m[3], (value, names)
    return names


def mapping(value: str | None, *, tuples: bool = False) -> dict | None:
    """``k=v,k2=v2+v3`` (a reading-option field) as a dict; values with ``+`` as tuples when ``tuples``."""
    if value is None:
        return None
    out = {}
    for item in value.split(","):
        key, _, v = item.partition("=")
        out[key] = tuple(v.split("+")) if tuples else v
    return out


def scores(name: str, cwd: Path):
    """The ScoreSet a ``dataset:`` field names: a packaged dataset, else the score file ``<name>.*`` in ``cwd``."""
    import metaeval as me
    from metaeval.data.datasets import list_datasets

    if name in {n for n, _ in list_datasets()}:
        return me.load_dataset(name)
    found = sorted(p for p in cwd.iterdir() if p.name.split(".", 1)[0] == name and not p.name.endswith(".json"))
    assert found, f"no score file {name}.* in the sandbox"
    return me.read_scores(found[0])


# -- judges -----------------------------------------------------------------------------------------------------

def comparisons(f: dict[str, str], cwd: Path):
    """The comparisons a judges signature describes (its ``source`` and the fields after it)."""
    import metaeval as me
    from metaeval import defaults

    source = f["source"]
    if source.startswith("scores:"):
        ds = scores(f["dataset"], cwd)
        if "aggregation" in f:
            ds = ds.with_aggregation(f["aggregation"])
        if f.get("instances") == "outputs":  # alt-test on the ratings themselves
            return ds
        return me.comparisons_from_scores(ds, source[len("scores:"):].split(","), annotators=f["annotators"] == "yes",
                                          tie_tolerance=float(f.get("tie_tolerance", defaults.TIE_TOLERANCE)))
    paths = source.split("+")  # as the command named them, from its working directory (the caller's)
    return me.read_comparisons(paths[0] if len(paths) == 1 else paths, format=f.get("format"),
                               columns=mapping(f.get("columns"), tuples=True), where=mapping(f.get("where"), tuples=True),
                               judge=f.get("judge"), verdict_map=mapping(f.get("verdict_map")))


def _seed(f):
    return None if f.get("seed", "none") == "none" else int(f["seed"])


def rebuild_judge(f: dict[str, str], cwd: Path):
    """The judges result a signature describes (rank, agree, alt-test or audit)."""
    import warnings

    import metaeval as me

    with warnings.catch_warnings(), contextlib.chdir(cwd):
        warnings.simplefilter("ignore")  # the documented run printed them; the numbers are the point here
        c = comparisons(f, cwd)
        analysis = f["analysis"]
        if analysis == "judge-rank":
            judges = None if f["judges"] == "all" else listed(f["judges"], c.judges)
            return me.rank_systems(c, judges=judges, ties=f["ties"], resampling=f["resampling"],
                                   n_resamples=int(f["n_resamples"]), confidence_level=float(f["confidence_level"]),
                                   regularization=float(f["regularization"]), rng=_seed(f))
        if analysis == "judge-agree":
            humans = listed(f["humans"], c.judges)
            return me.judge_agreement(c, listed(f["judges"], [j for j in c.judges if j not in humans]), humans=humans,
                                      ties=f["ties"], n_resamples=int(f["n_resamples"]),
                                      n_permutations=int(f["n_permutations"]),
                                      confidence_level=float(f["confidence_level"]), correction=f["correction"],
                                      alpha=float(f["alpha"]), even_split=f.get("even_split", "half"), rng=_seed(f))
        if analysis == "judge-alt-test":
            from metaeval.judges.alt_test import RatingTable

            raters = c.judges if isinstance(c, me.Comparisons) else RatingTable(c).judges
            humans = listed(f["humans"], [j for j in raters if j != f["judge"]])
            return me.alt_test(c, f["judge"], humans=humans, epsilon=float(f["epsilon"]), alpha=float(f["alpha"]),
                               min_instances=int(f["min_instances"]), alignment=f["alignment"])
        if analysis == "judge-audit":
            families = None if "families" not in f else {
                judge: tuple(systems.split("+")) for judge, _, systems in
                (item.partition("=") for item in f["families"].split(";"))}
            return me.judge_audit(c, None if f["judges"] == "all" else listed(f["judges"], c.judges),
                                  n_resamples=int(f["n_resamples"]), confidence_level=float(f["confidence_level"]),
                                  families=families, rng=_seed(f))
    raise AssertionError(f"not a judges signature: {analysis!r}")


# -- spans -------------------------------------------------------------------------------------------------------

SHARED_DATA = ROOT.parent / "shared" / "data"


def gold_file(name: str, cwd: Path) -> Path:
    """The MQM ratings file a ``gold_file:`` field names (its file name): in the sandbox, else in the shared data."""
    for folder in (cwd, SHARED_DATA / "wmt" / "mqm_ratings"):
        if (folder / name).is_file():
            return folder / name
    raise AssertionError(f"no MQM ratings file {name!r}")


def _spec(f):
    return {k: f[k] for k in ("measure", "averaging", "matching", "severity", "macro", "critical") if k in f}


def _detectors(f, gold, cwd):
    from metaeval.spans import read_detector_spans

    if "detectors" not in f:
        return []
    offsets, _, end = f["offsets"].partition("-")
    out = []
    for item in f["detectors"].split(","):
        name, _, file = item.rpartition("=")
        out.append(read_detector_spans(cwd / file, gold.targets, name=name or None, sources=gold.sources,
                                       offsets=offsets, end=end))
    return out


def rebuild_spans(f: dict[str, str], cwd: Path):
    """The spans result a signature describes (``spans``, ``span-agreement`` or ``spans-binary``)."""
    import warnings

    import metaeval as me
    from metaeval.spans import gold_from_ratings
    from metaeval.spans.agreement import span_agreement
    from metaeval.spans.binary import evaluate_binary

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the documented run printed them; the numbers are the point here
        ratings = me.read_mqm_ratings(gold_file(f["gold_file"], cwd))
        method = f["ci"].removeprefix("boot-")
        common = dict(method=method, n_resamples=int(f["n_resamples"]), confidence_level=float(f["confidence_level"]),
                      rng=_seed(f))
        raters = None if f.get("gold_raters", "all") == "all" else f["gold_raters"].split(",")
        excluded = f["exclude_system"].split(",") if "exclude_system" in f else ()
        if f["analysis"] == "span-agreement":
            return span_agreement(ratings, **_spec(f), errors=f["errors"], source_spans=f["source_spans"] == "yes",
                                  pairwise=f["pairwise"] == "yes", gold_raters=raters, exclude_systems=excluded,
                                  **common)
        gold = gold_from_ratings(ratings, raters=raters, errors=f["errors"], source_spans=f["source_spans"] == "yes")
        detectors = _detectors(f, gold, cwd)
        if f["analysis"] == "spans":
            fair = f.get("ceiling") in ("leave-one-rater-out", "others-against-gold-raters")
            compare = f["test"] != "none"
            return me.evaluate_spans(ratings if fair else gold, detectors, **_spec(f),
                                     errors=f["errors"] if fair else None,
                                     source_spans=(f["source_spans"] == "yes") if fair else None,
                                     gold_raters=raters if fair else None,
                                     exclude_systems=excluded,
                                     compare=compare, correction=f["correction"] if compare else "holm",
                                     alpha=float(f.get("alpha", 0.05)),
                                     baselines=True if "baselines" not in f else [b for b in f["baselines"].split(",")
                                                                                   if b != "none"],
                                     baselines_in_family=f.get("family") == "all-pairs", fair_ceiling=fair,
                                     allow_missing="missing" in f, **common)
        if f["analysis"] == "spans-binary":
            test = f["test"].split(":")
            return evaluate_binary(ratings.scores, f["human"], task=f["task"], gold=gold,
                                   gold_rule=f.get("gold_rule", "both"), human_threshold=float(f["human_threshold"]),
                                   detectors=detectors, metrics=f["metrics"].split(",") if "metrics" in f else (),
                                   labels=f["labels"].split(",") if "labels" in f else (), n_folds=int(f["folds"]),
                                   groups=ratings.documents if f["folds_by"] == "document" else None,
                                   folds_by=f["folds_by"], compare=test[0] != "none",
                                   test_measure=test[-1] if test[0] != "none" else "f1",
                                   baselines=f.get("baselines") != "none", exclude_systems=excluded, **common)
    raise AssertionError(f"not a spans signature: {f['analysis']!r}")


# -- human judgments -------------------------------------------------------------------------------------------

def _dataset(f, cwd):
    """The ScoreSet of a ``dataset:``, ``subset:`` (none, or the systems kept) and ``aggregation:`` signature."""
    subset = f.get("subset", "none")
    ds = scores(f["dataset"], cwd)
    options = _dataset_options(f["dataset"], subset)
    if options:  # a packaged dataset's reproduction option (e.g. paper_mix_duplicate_bart=true)
        import metaeval as me

        ds, subset = me.load_dataset(f["dataset"], **options), "none"
    if subset.startswith("systems=") and ";" not in subset:
        ds = ds.subset(systems=subset[len("systems="):].split(","))
    else:
        assert subset == "none", f"a subset is not rebuilt here: {subset!r}"
    return ds if f.get("aggregation", ds.aggregation) == ds.aggregation else ds.with_aggregation(f["aggregation"])


def _annotations(source, cwd):
    from metaeval.human import read_realsumm_annotations

    kind, _, folder = source.partition(":")
    assert kind == "realsumm", source
    return read_realsumm_annotations(SHARED_DATA / "realsumm" / folder)


def rebuild_human(f: dict[str, str], cwd: Path):
    """The human-judgment result a signature describes (pyramid, agreement, normalization, retention, sample,
    cross-comprehension labels, jackknife)."""
    import warnings

    from metaeval import human
    from metaeval.metrics import Rouge

    with warnings.catch_warnings(), contextlib.chdir(cwd):
        warnings.simplefilter("ignore")  # the documented run printed them; the numbers are the point here
        statistic = f.get("statistic")
        if f.get("human") == "litepyramid.recall":
            return human.litepyramid(_annotations(f["source"], cwd), worker_filter=f["worker_filter"], ties=f["ties"])
        if statistic == "krippendorff-alpha":
            if f["source"].startswith("realsumm:"):
                return human.agreement(_annotations(f["source"], cwd), level=f["level"], by=f["by"],
                                       worker_filter=f["worker_filter"])
            return human.agreement(_dataset(f, cwd), f["source"], level=f["level"], by=f["by"])
        if "normalization" in f:
            return human.normalize(_dataset(f, cwd), f["scorers"], method=f["normalization"],
                                   aggregation=f["aggregation"])
        if statistic in ("weighted-retention", "recall-at-threshold"):
            return human.weighted_retention(human.read_coverage(f["source"]),
                                            threshold=None if f["threshold"] == "none" else float(f["threshold"]))
        if statistic == "document-sample":
            return human.sample_documents(_dataset(f, cwd), f["metrics"].split(","), int(f["n"]),
                                          mean_bins=int(f["mean_bins"]), std_bins=int(f["std_bins"]), rng=_seed(f))
        if statistic == "cross-comprehension-labels":
            from metaeval.human.cross import read_cross_judgments

            return human.cross_comprehension_labels(read_cross_judgments(f["source"]))
        if statistic == "jackknife":
            scorer = dict(item.split("=", 1) for item in re.findall(r"\w+=(?:[^=]+?)(?= \w+=|$)", f["scorer"]))
            assert scorer["metric"] == "rouge-1.5.5", f["scorer"]
            texts = next(p for p in (cwd / f["texts"], SHARED_DATA / "summeval" / f["texts"]) if p.is_file())
            n = None if f["n_documents"] == "none" else int(f["n_documents"])
            candidates, references = human.read_summary_texts(texts, n_documents=n)
            result = human.jackknife_scores(candidates, references, scorer=Rouge.from_flags(scorer["flags"]),
                                            measure=f["measure"])
            from dataclasses import replace

            # the texts file is the CLI's field: the library sees only the texts (as the CLI adds it)
            return replace(result, signature=result.signature.with_fields(texts=f["texts"], n_documents=n))
    raise AssertionError(f"not a human-judgment signature: {f}")


# -- mt audit ----------------------------------------------------------------------------------------------------

def command_data(command: str, human: str, cwd: Path):
    """The input data a documented ``metaeval mt ...`` command names (``--scores LP=FILE``, ``--dataset LP=NAME``),
    read as the command reads them: the input files, not options (those come from the signature)."""
    import shlex

    from metaeval.cli.mt_command import _language_pairs
    from metaeval.cli.source import Reading

    argv = shlex.split(command.replace("\\\n", " "))
    scores = tuple(argv[k + 1] for k, a in enumerate(argv) if a == "--scores")
    datasets = tuple(argv[k + 1] for k, a in enumerate(argv) if a == "--dataset")
    with contextlib.chdir(cwd):
        data, _ = _language_pairs(scores, human, Reading(), None, datasets=datasets, dataset_options=(), golds={},
                                  protocol=None)
    return data


def rebuild_mt_audit(f: dict[str, str], data, cwd: Path):
    """The ``mt audit`` result a signature describes, on ``data`` (the command's input files)."""
    import warnings

    import metaeval as me

    listed_ = lambda key: [] if f.get(key, "none") == "none" else f[key].split(",")  # noqa: E731
    assert "sentinel-length" not in f["sentinels"], "the candidates file is not rebuilt here"
    targets, _, method = f["delta_accuracy"].partition(" ") if f.get("delta_accuracy", "none") != "none" else ("", "", "both")
    with warnings.catch_warnings(), contextlib.chdir(cwd):
        warnings.simplefilter("ignore")
        return me.mt_audit(data, listed_("metrics"), f["human"], tasks=listed_("tasks"), base=f["base"],
                           levels=int(f["levels"]), exclude_systems=listed_("exclude_systems"),
                           n_resamples=int(f["resamples"]),
                           n_consistency=0 if f["consistency"] == "none" else int(f["consistency"].split(" x ")[0]),
                           alpha=float(f["alpha"]), rng=_seed(f),
                           accuracy_targets=tuple(float(t) for t in targets.split(",")) if targets else (),
                           delta_method=method, protocol=f.get("protocol"),
                           human_baselines=listed_("human_baselines"),
                           rater_waves=None if "rater_waves" not in f else int(f["rater_waves"]),
                           **({"tie_tolerance": float(f["tie_tolerance"])} if "tie_tolerance" in f else {}))


# -- systems and verdicts ---------------------------------------------------------------------------------------

def rebuild_systems(f: dict[str, str], cwd: Path):
    """The ``metaeval systems`` (``scorer:``) or ``metaeval verdicts`` (``metrics:``) result a signature
    describes; None for corpus-level statistics (their candidates and references files are not in it)."""
    import warnings

    import metaeval as me

    if f["dataset"] == "corpus":  # compare_systems on the statistics of the texts (the metric at its defaults)
        return _corpus_comparison(f, cwd)
    with warnings.catch_warnings(), contextlib.chdir(cwd):
        warnings.simplefilter("ignore")
        ds = _dataset(f, cwd)
        corpus = None
        if "corpus_level" in f:  # the corpus metric recomputed from the texts the signature names
            from metaeval.cli.source import corpus_statistics_for

            candidates, references = f["corpus_texts"].split(",")
            corpus = corpus_statistics_for(ds, f["corpus_level"].split(","), candidates, references)
        if "scorer" in f:
            return me.compare_systems(ds, f["scorer"], test=f["test"], n_resamples=int(f["resamples"]),
                                      alternative=f["alternative"], confidence_level=float(f["confidence"]),
                                      correction=f["correction"], exact=f["exact"] == "yes", rng=_seed(f))
        return me.system_verdicts(ds, f["metrics"].split(","), f["human"],
                                  systems=f["compared_systems"].split(",") if "compared_systems" in f else None,
                                  test=f["test"], confidence_level=float(f["confidence"]),
                                  n_resamples=int(f["resamples"]), rng=_seed(f), corpus_statistics=corpus)


def _corpus_comparison(f: dict[str, str], cwd: Path):
    """``compare_systems`` on a corpus metric's statistics of the texts ``texts:`` names (every system of the
    candidates file, in file order, which the signature's ``systems`` count checks; the metric's options other
    than its defaults after `` with ``, as the score file's sidecar gave them to the command)."""
    import json

    import numpy as np

    import metaeval as me
    from metaeval.scoring.corpus import corpus_statistics
    from metaeval.stats.corpus import CorpusScores

    texts, _, note = f["texts"].partition(" with ")  # a score file's options other than the defaults
    options = _options(note)
    candidates, references = texts.split(",")
    rows = [json.loads(line) for line in (cwd / candidates).read_text(encoding="utf-8").splitlines() if line.strip()]
    systems = list(dict.fromkeys(str(r["system"]) for r in rows))
    inputs = list(dict.fromkeys(str(r["input"]) for r in rows))
    assert (len(systems), len(inputs)) == (int(f["systems"]), int(f["inputs"])), f
    ds = me.ScoreSet.from_matrices({f["scorer"]: np.zeros((len(systems), len(inputs)))}, systems=systems,
                                   inputs=inputs)
    with contextlib.chdir(cwd):
        statistics, aggregate = corpus_statistics(ds, candidates, references, f["scorer"], **options)
    corpus = CorpusScores(statistics, aggregate, f["scorer"], ds.systems, ds.inputs, source=f["texts"])
    return me.compare_systems(corpus, None, test=f["test"], n_resamples=int(f["resamples"]),
                              alternative=f["alternative"], confidence_level=float(f["confidence"]),
                              correction=f["correction"], exact=f["exact"] == "yes", rng=_seed(f))


# -- power -------------------------------------------------------------------------------------------------------

def rebuild_power(f: dict[str, str], cwd: Path):
    """The ``simulate power`` result a signature describes: the dataset's packaged texts (in the shared data,
    as ``--texts-dir``) are its input files."""
    import warnings

    from metaeval.analyses.power import load_texts, simulate_power

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        candidates, references = load_texts(f["dataset"], directory=SHARED_DATA)
        return simulate_power(_dataset(f, cwd), f["human"], candidates=candidates, references=references,
                              proportions=[float(p) for p in f["proportions"].split(",")],
                              tests=f["tests"].split(","), levels=f["levels"].split(","), coefficient=f["coefficient"],
                              n_trials=int(f["trials"]), n_resamples=int(f["resamples"]), alpha=float(f["alpha"]),
                              tokenizer=f["tokenizer"], rouge_variant=f["rouge_variant"],
                              x_metric=None if f["x"] == "recomputed" else f["x"], rng=_seed(f),
                              **({"tie_tolerance": float(f["tie_tolerance"])} if "tie_tolerance" in f else {}))


# -- the analyses of the literature --------------------------------------------------------------------------------

def _numbers(value: str, kind=float) -> list:
    return [kind(v) for v in value.split(",")]


def rebuild_analysis(f: dict[str, str], cwd: Path):
    """The analysis a signature describes (``analysis:delta|stability|topk|gap|plan``); None for another."""
    import warnings

    import metaeval as me

    analysis = f.get("analysis")
    if analysis not in ("delta", "stability", "topk", "gap", "plan") or "corpus_level" in f:
        return None
    extra = {"tie_tolerance": float(f["tie_tolerance"])} if "tie_tolerance" in f else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = _dataset(f, cwd)
        fts = f.get("full_test_set") == "yes"
        if analysis == "delta":
            spacing = {"fractions": _numbers(f["fractions"])} if "fractions" in f else {"edges": _numbers(f["edges"])}
            return me.delta_correlations(ds, f["metrics"].split(","), f["human"], **spacing, boundary=f["boundary"],
                                         min_pairs=int(f["min_pairs"]), full_test_set=fts,
                                         n_resamples=int(f["resamples"]), confidence_level=float(f["confidence"]),
                                         rng=_seed(f), **extra)
        if analysis == "stability":
            scorers = [s for s in f["scorers"].split(",") if s != f["human"]]
            return me.ranking_stability(ds, scorers, f["human"], sizes=_numbers(f["sizes"], int),
                                        n_repetitions=int(f["repetitions"]), sampling=f["sampling"],
                                        coefficient=f["coefficient"], full_test_set=fts, rng=_seed(f), **extra)
        if analysis == "topk":
            return me.topk_correlations(ds, f["metrics"].split(","), f["human"], ks=_numbers(f["ks"], int),
                                        coefficient=f["coefficient"], full_test_set=fts,
                                        n_resamples=int(f["resamples"]), confidence_level=float(f["confidence"]),
                                        rng=_seed(f), **extra)
        if analysis == "gap":
            return me.gap_agreement(ds, f["metrics"].split(","), f["human"], deltas=_numbers(f["deltas"]),
                                    grid_points=int(f["grid_points"]), n_bins=int(f["bins"]), full_test_set=fts,
                                    n_resamples=int(f["resamples"]), confidence_level=float(f["confidence"]),
                                    rng=_seed(f), **extra)
        method = f["ci"].removeprefix("boot-")
        return me.plan_annotation(ds, f["metric"], f["human"], metric_b=None if f["metric_b"] == "none" else f["metric_b"],
                                  n_inputs=_numbers(f["n_inputs"], int), n_systems=_numbers(f["n_systems"], int),
                                  level=f["level"], coefficient=f["coefficient"], method=method,
                                  test="permutation" if f.get("test", "none").startswith("perm") else "bootstrap",
                                  alternative=f["alternative"], alpha=float(f["alpha"]),
                                  n_repetitions=int(f["repetitions"]), n_resamples=int(f["resamples"]),
                                  confidence_level=float(f["confidence"]),
                                  target_width=None if f["target_width"] == "none" else float(f["target_width"]),
                                  target_power=float(f["target_power"]), rng=_seed(f), **extra)


# -- nuggets and extrinsic evaluation ------------------------------------------------------------------------------

def rebuild_nuggets_extrinsic(f: dict[str, str], cwd: Path):
    """The nugget F or extrinsic result a signature describes (None for another kind)."""
    import warnings

    import metaeval as me
    from metaeval.analyses.partition import extrinsic_correlation

    analysis = f.get("analysis")
    with warnings.catch_warnings(), contextlib.chdir(cwd):
        warnings.simplefilter("ignore")
        if analysis == "nuggets" and f["source"] == "counts":
            return me.nugget_scores(_find(f["counts"], cwd), beta=float(f["beta"]), allowance=float(f["allowance"]))
        if analysis == "nuggets" and f["source"] == "matcher":
            return me.match_nuggets(_find(f["nuggets"], cwd), _find(f["texts"], cwd), beta=float(f["beta"]),
                                    allowance=float(f["allowance"]), match=f["match"],
                                    **({"threshold": float(f["threshold"])} if f.get("threshold", "none") != "none"
                                       else {}), stem=f["stem"] == "yes")
        if analysis == "extrinsic-agreement":
            return me.relevance_agreement(_find(f["source"], cwd), full_text=f["full_text"],
                                          metrics=() if f.get("metrics", "none") == "none" else f["metrics"].split(","),
                                          by_group=f["by_group"] == "yes")
        if analysis == "partition-correlation" and "source" in f:
            return extrinsic_correlation(_find(f["source"], cwd), metric=f["metric"], measures=f["measures"].split(","),
                                         unit=f["unit"], full_text=f["full_text"], sizes=_numbers(f["sizes"], int),
                                         n_partitions=int(f["partitions"]),
                                         confidence_level=float(f["confidence_level"]), rng=_seed(f))
    return None


def _find(name: str, cwd: Path) -> Path:
    """A file a signature names: in the sandbox, or among the repository's test data."""
    found = [p for p in (cwd / name, *sorted((ROOT / "tests" / "data").rglob(name))) if p.is_file()]
    assert found, f"no file {name!r}"
    return found[0]


# -- QARLA -------------------------------------------------------------------------------------------------------

def rebuild_qarla(f: dict[str, str], cwd: Path):
    """The QARLA result a signature describes: the texts file (in the sandbox or the shared data) and the
    dataset of the human scores it names."""
    import warnings

    import metaeval as me
    from metaeval.analyses.qarla import qarla, qarla_similarities, read_qarla_texts

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = next(p for p in (cwd / f["texts"], *sorted(SHARED_DATA.glob(f"*/{f['texts']}"))) if p.is_file())
        candidates, references, sources = read_qarla_texts(texts)
        inputs = f["input_labels"].split(",") if "input_labels" in f else int(f["inputs"])
        sims = qarla_similarities(candidates, references, similarities=f["similarities"].split(","), inputs=inputs,
                                  sources=sources)
        ds = me.load_dataset(f["dataset"]) if "dataset" in f else None
        result = qarla(sims, metric_sets=[s.split("+") for s in f["metric_sets"].split(";")], ds=ds,
                       human=None if f.get("human", "none") == "none" else f["human"])
    from dataclasses import replace

    # the texts file is the CLI's field (the library sees the texts only)
    return replace(result, signature=result.signature.with_fields(texts=f["texts"]))


def _dataset_options(name: str, subset: str) -> dict:
    """``{option: value}`` when ``subset`` is a packaged dataset's ``option=value`` (the description its loader
    gives an option, as ``--dataset-option`` passes it: a string); checked by loading it."""
    import metaeval as me
    from metaeval.data.datasets import list_datasets

    if name not in {n for n, _ in list_datasets()} or not re.fullmatch(r"\w+=\w+", subset):
        return {}
    key, _, value = subset.partition("=")
    try:
        loaded = me.load_dataset(name, **{key: value})
    except Exception:  # not an option of the dataset
        return {}
    return {key: value} if loaded.description == subset else {}


# -- reproductions and the extrinsic partitions of a ScoreSet --------------------------------------------------------

def rebuild_dataset_analysis(f: dict[str, str], cwd: Path):
    """``reproduce summary-level`` (``analysis:paper-summary-level``) or ``extrinsic partition`` on a dataset
    (``analysis:partition-correlation`` with ``dataset:``); None for another."""
    import warnings

    import metaeval as me
    from metaeval.analyses.paper import paper_summary_level
    from metaeval.analyses.partition import scoreset_partition_correlation

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if f.get("analysis") == "paper-summary-level":
            extra = {"tie_tolerance": float(f["tie_tolerance"])} if "tie_tolerance" in f else {}
            flt = f["document_filter"]
            return paper_summary_level(_dataset(f, cwd), f["human"], f["metrics"].split(","),
                                       coefficient=f["coefficient"], significant_documents_only=flt != "none",
                                       **({"alpha": float(flt.removeprefix("p<="))} if flt != "none" else {}), **extra)
        if f.get("analysis") == "partition-correlation" and "dataset" in f:
            return scoreset_partition_correlation(_dataset(f, cwd), f["metrics"].split(","), f["human"],
                                                  sizes=_numbers(f["sizes"], int), n_partitions=int(f["partitions"]),
                                                  confidence_level=float(f["confidence_level"]), rng=_seed(f))
    return None


# -- correlate on score files -----------------------------------------------------------------------------------

def command_files(command: str, cwd: Path) -> list[str]:
    """The ``--scores`` paths of a documented command (``NAME=PATH`` as PATH when the whole argument is no file of
    ``cwd``, the command's rule), in order: the input files, not options (those come from the signature)."""
    import shlex

    def path(item: str) -> str:
        name, sep, rest = item.partition("=")
        return rest if sep and name and rest and not (cwd / item).exists() and (cwd / rest).exists() else item

    argv = shlex.split(command.replace("\\\n", " "))
    return [path(argv[k + 1]) for k, a in enumerate(argv) if a == "--scores"]


def _file_name(path: str) -> str:
    """The name ``read_scores`` gives a file (its base name without the score file's extension)."""
    base = Path(path).name
    base = base[:-3] if base.lower().endswith(".gz") else base
    stem, dot, extension = base.rpartition(".")
    return stem if dot and extension.lower() in ("csv", "tsv", "jsonl", "json", "ndjson", "parquet") else base


def _reading(value: str, kind: str) -> dict:
    """``system=model,input=doc`` (columns) or ``lp=en-de+en-ru,split=test`` (where) as a read_scores option."""
    out = {}
    for item in value.split(","):
        key, _, v = item.partition("=")
        out[key] = v if kind == "columns" else tuple(v.split("+"))
    return out


def _chosen_systems(part: str, systems: tuple[str, ...]) -> list[str] | None:
    """The systems a subset part keeps (``systems=a,b`` or ``N of M systems (sha1 D)``, the excluded ones found
    by the digest of the names kept), or None when the part is not a choice of systems."""
    import itertools

    if part.startswith("systems="):
        return part[len("systems="):].split(",")
    m = re.fullmatch(r"(\d+) of (\d+) systems \(sha1 ([0-9a-f]+)\)", part)
    if m is None:
        return None
    kept, total = int(m[1]), int(m[2])
    assert total == len(systems), (part, systems)
    assert total - kept <= 3, f"{part}: too many systems left out to find them by their digest"
    for out in itertools.combinations(systems, total - kept):
        names = [s for s in systems if s not in out]
        if hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()[:10] == m[3]:
            return names
    raise AssertionError(f"{part}: no choice of the systems {systems} has this digest")


def correlate_data(f: dict[str, str], files: list[str], cwd: Path):
    """The ScoreSet a ``correlate``/``report`` signature describes: its ``dataset`` (packaged datasets and the
    command's ``--scores`` files joined, in order), each file read with the columns and rows its ``subset`` names
    (prefixed by the file's name, or shared by every file), the systems renamed and chosen as it says."""
    import metaeval as me
    from metaeval.data.datasets import list_datasets

    by_name = {_file_name(p): p for p in files}
    subset = f.get("subset", "none")
    parts = [] if subset == "none" else subset.split("; ")
    shared: dict[str, dict] = {}
    own: dict[str, dict[str, dict]] = {}
    renamed: dict[str, str] = {}
    later = []
    allow = False
    for part in parts:
        m = re.fullmatch(r"(?:(?P<file>[^:;]+): )?(?P<kind>columns|where|layout|format|scorer|renamed) (?P<value>.+)",
                         part)
        if m is not None and (m["file"] is None or m["file"] in by_name):
            target = shared if m["file"] is None else own.setdefault(m["file"], {})
            value = m["value"]
            if m["kind"] in ("columns", "where"):
                value = _reading(value, m["kind"])
            elif m["kind"] == "renamed":
                value = dict(item.split("->", 1) for item in value.split(","))
            target[m["kind"]] = value
        elif part.startswith("systems renamed: "):
            renamed.update(item.split("->", 1) for item in part[len("systems renamed: "):].split(","))
        elif part == "join:unmatched-allowed":
            allow = True
        elif part.startswith("without unscored systems "):
            continue  # the library's own rule, made again by the call
        else:
            later.append(part)
    packaged = {n for n, _ in list_datasets()}
    ds = None
    with contextlib.chdir(cwd):
        for name in f["dataset"].split("+"):
            if name in packaged and name not in by_name:
                part = me.load_dataset(name)
            else:
                reading = {**shared, **own.get(name, {})}
                part = me.read_scores(by_name[name], columns=reading.get("columns"), where=reading.get("where"),
                                      layout=reading.get("layout", "auto"), format=reading.get("format"),
                                      scorer=reading.get("scorer"), rename=reading.get("renamed"),
                                      shared_mapping=len(by_name) > 1)  # a shared part: not every file has each column
                mine = {o: n for o, n in renamed.items() if o in part.systems}
                if mine:
                    part = part.with_system_names(mine)
            ds = part if ds is None else ds.merge(part, allow_unmatched=allow)
    for part in later:
        chosen = _chosen_systems(part, ds.systems)
        assert chosen is not None, f"subset part {part!r}: not a reading option this rebuild knows"
        ds = ds.subset(systems=chosen)
    if f.get("aggregation", ds.aggregation) != ds.aggregation:
        ds = ds.with_aggregation(f["aggregation"])
    return ds


def printed_cells(run: Run) -> dict[tuple[str, str, str], list[str]]:
    """``{(level, metric, coefficient): [value, interval/p-value rows...]}`` of the tables a ``correlate`` run
    prints (a title ``<level>-level ...`` before each table, its header the coefficients; or one Markdown table
    whose header names ``<level> <coefficient>`` per column)."""
    out: dict = {}
    header = next((line for line in run.output if line.startswith("| metric |")), None)
    if header is not None:
        columns = [c.strip().split(" ", 1) for c in header.strip("|").split("|")[1:]]
        for line in run.output:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and line != header and len(cells) == len(columns) + 1:
                for (level, coefficient), cell in zip(columns, cells[1:]):
                    out[(level, cells[0], coefficient)] = [cell]
        return out
    level = coefficients = metric = None
    for line in run.output:
        m = re.match(r"([a-z]+)-level\b", line)
        if m:
            level, coefficients = m[1], None
            continue
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if not cells:
            continue
        if cells[0] == "metric" and "┃" in line:
            coefficients = cells[1:]
            continue
        if coefficients is None:
            continue
        if cells[0]:
            metric = cells[0]
        for coefficient, cell in zip(coefficients, cells[1:]):
            if cell:
                out.setdefault((level, metric, coefficient), []).append(cell)
    return out


def corpus_statistics(ds, f: dict[str, str], cwd: Path) -> dict | None:
    """``{metric: CorpusScores}`` of the ``corpus_level`` metrics, recomputed from the ``corpus_texts`` files (with
    the options the score file's ``.signatures.json`` records, as the command does), or None."""
    if f.get("corpus_level", "none") == "none":
        return None
    from metaeval.scoring.corpus import corpus_statistics as statistics_of
    from metaeval.stats.corpus import CorpusScores

    texts = f["corpus_texts"].split(";")  # one per set of texts and options; one set for every metric here
    assert len(texts) == 1, f["corpus_texts"]
    files, _, note = texts[0].partition(" with ")  # a score file's options other than the defaults
    options = _options(note)
    candidates, references = files.split(",")
    out = {}
    with contextlib.chdir(cwd):
        for metric in f["corpus_level"].split(","):
            statistics, aggregate = statistics_of(ds, candidates, references, metric, **options)
            out[metric] = CorpusScores(statistics, aggregate, metric, ds.systems, ds.inputs, source=texts[0])
    return out


def _options(note: str) -> dict:
    """``lowercase=True,max_ngram_order=3`` (a corpus metric's options signed after its texts) as keywords."""
    return {k: json.loads(v.lower()) if v in ("True", "False") else int(v) if v.lstrip("-").isdigit() else v
            for k, _, v in (item.partition("=") for item in note.split(",") if note)}


def rebuild_correlation_cell(ds, f: dict[str, str], metric: str, level: str, coefficient: str, corpus=None):
    """One cell of a ``correlate`` table: ``correlate``, ``bootstrap_ci`` or ``fisher_ci`` with the signature's
    options (``corpus``: the corpus metrics' statistics)."""
    import metaeval as me

    common = dict(corpus_statistics=corpus or None, level=level, coefficient=coefficient,
                  undefined=f.get("undefined", "skip"),
                  full_test_set=f.get("full_test_set") == "yes", pvalue_method=f.get("pvalue", "none"),
                  alternative=f.get("alternative", "two-sided"))
    for key in ("tie_tolerance", "tie_threshold"):
        if key in f:
            common[key] = float(f[key])
    if common["pvalue_method"] == "permutation":
        common["n_resamples"] = int(f["pvalue_resamples"])
    if f.get("seed", "none") != "none":
        common["rng"] = int(f["seed"])
    ci = f.get("ci", "none")
    if ci == "none":
        return me.correlate(ds, metric, f["human"], **common)
    if ci == "fisher":
        return me.fisher_ci(ds, metric, f["human"], confidence_level=float(f["confidence"]), **common)
    common.pop("n_resamples", None)
    return me.bootstrap_ci(ds, metric, f["human"], method=ci[len("boot-"):], n_resamples=int(f["resamples"]),
                           confidence_level=float(f["confidence"]), interval=f.get("interval", "percentile"), **common)
