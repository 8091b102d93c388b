"""The packaged datasets: SummEval, REALSumm, WMT20 MQM and WMT19 system-level DA.

The score matrices ship inside the package as compressed ``.npz`` files (numbers and labels only,
never texts; read with ``numpy.load(allow_pickle=False)``) next to ``manifest.json``, which describes
every dataset: scorers, humans, the default human, options, source and licence. Both are produced by
``scripts/build_datasets.py`` from the public files in ``../shared/data``; see ``docs/data.md``.
"""
from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import PaperProcedureWarning, ParameterError, check_choice
from .scoreset import ScoreSet

#: REALSumm's reproduction option (never a default): the mix set with BART twice, as the REALSumm notebook.
PAPER_MIX_DUPLICATE_BART = "paper_mix_duplicate_bart"
#: The label of the second BART row (the abstractive ``bart_out``, an exact copy of the extractive one).
DUPLICATE_BART_LABEL = "bart_out_abs"
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
DEFAULT_GROUP = "all"
_SEPARATOR = ":"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def _packaged_dir():
    return resources.files("metaeval.data").joinpath("packaged")


@lru_cache(maxsize=1)
def _manifest() -> dict[str, Any]:
    text = _packaged_dir().joinpath(MANIFEST).read_text(encoding="utf-8")
    return json.loads(text)


def _datasets() -> dict[str, dict[str, Any]]:
    return _manifest()["datasets"]


def list_datasets() -> list[tuple[str, str]]:
    """The packaged datasets as ``(name, description)`` pairs, in a stable order.

    Examples
    --------
    >>> [name for name, _ in list_datasets()]  # doctest: +NORMALIZE_WHITESPACE
    ['summeval', 'realsumm', 'realsumm-abs', 'realsumm-ext', 'wmt20-mqm-ende', 'wmt20-mqm-zhen', 'wmt19-da-sys']
    """
    return [(name, entry["description"]) for name, entry in _datasets().items()]


def dataset_info(name: str) -> dict[str, Any]:
    """The manifest entry of dataset ``name`` (a copy): what :func:`load_dataset` will return.

    Returns
    -------
    dict
        ``description``, ``shape`` ([N, M]; for datasets with options, ``shapes`` per option value),
        ``scorers``, ``humans``, ``metrics``, ``default_human``, ``annotators`` (scorer -> count, for
        scorers with several annotators), ``options`` (name -> ``{"default", "choices"}``),
        ``notes``, ``source``, ``licence``, ``attribution``, and ``file`` / ``systems`` (the
        packaged file and, for a subset of it, its system labels).

    Raises
    ------
    ParameterError
        If ``name`` is not a packaged dataset (the message lists them).
    """
    check_choice("name", name, _datasets())
    return json.loads(json.dumps(_datasets()[name]))


def load_dataset(name: str, **options: Any) -> ScoreSet:
    """A packaged dataset as a :class:`~metaeval.data.scoreset.ScoreSet`.

    Parameters
    ----------
    name : str
        One of the names :func:`list_datasets` gives.
    **options
        Dataset options: ``wmt19-da-sys`` has ``language_pair`` (default ``"de-en"``); ``realsumm`` has the
        reproduction option ``paper_mix_duplicate_bart`` (default False): True adds a second copy of
        ``bart_out`` (labelled ``bart_out_abs``), giving the 25-system mix of the REALSumm notebook
        (Bhandari et al. 2020), whose abstractive ``bart_out`` is a copy of the extractive one (upstream
        bug). A duplicated system is not a system: it weighs BART twice in every correlation. metaeval's
        mix keeps BART once (24 systems); the option exists only to reproduce the published numbers and
        warns (:class:`~metaeval.errors.PaperProcedureWarning`). See ``docs/reproductions.md``.

    Returns
    -------
    ScoreSet
        Named ``name``; the first human scorer is the dataset's default human (also
        ``dataset_info(name)["default_human"]``); annotators are aggregated by the mean unless the
        caller chooses otherwise (:meth:`ScoreSet.with_aggregation`). Options are recorded in the
        ScoreSet's description (e.g. ``"language_pair=de-en"``), hence in signatures.

    Raises
    ------
    ParameterError
        For an unknown dataset, an unknown option or an option value not offered.

    Examples
    --------
    >>> ds = load_dataset("summeval")
    >>> ds.shape, ds.humans[0]
    ((16, 100), 'expert.relevance')
    >>> load_dataset("wmt19-da-sys", language_pair="zh-en").shape
    (15, 1)
    """
    info = dataset_info(name)
    options = dict(options)
    duplicate_bart = name == "realsumm" and _flag(PAPER_MIX_DUPLICATE_BART, options.pop(PAPER_MIX_DUPLICATE_BART, False))
    group, description = _group(name, info, options)
    arrays = _arrays(info["file"], group)
    systems = [str(s) for s in arrays[_key(group, "systems")]]
    scorers = [str(s) for s in arrays[_key(group, "scorers")]]
    scores = {scorer: arrays[_key(group, str(k))] for k, scorer in enumerate(scorers)}
    rows = None
    if info.get("systems"):
        index = {s: i for i, s in enumerate(systems)}
        rows = [index[s] for s in info["systems"]]
        systems = list(info["systems"])
        scores = {scorer: array[rows] for scorer, array in scores.items()}
    if duplicate_bart:
        scores, systems, description = _duplicate_bart(scores, systems)
    return ScoreSet(
        scores,
        systems=systems,
        inputs=[str(x) for x in arrays[_key(group, "inputs")]],
        humans=info["humans"],
        name=name,
        description=description,
    )


def _flag(param: str, value: Any) -> bool:
    """A boolean option given as a bool or as a CLI string (true/false, 1/0, yes/no)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise ParameterError(f"`{param}` must be true or false; got {value!r}.")


def _duplicate_bart(scores: dict[str, np.ndarray], systems: list[str]):
    """REALSumm's notebook mix: ``bart_out`` a second time (as ``bart_out_abs``), with a warning."""
    row = systems.index("bart_out")
    warnings.warn(f"{PAPER_MIX_DUPLICATE_BART}=true holds BART twice (25 systems, as the REALSumm notebook): "
                  "a reproduction option, not a dataset; BART weighs twice in every correlation.",
                  PaperProcedureWarning, stacklevel=3)
    scores = {scorer: np.concatenate([array, array[row:row + 1]]) for scorer, array in scores.items()}
    return scores, systems + [DUPLICATE_BART_LABEL], f"{PAPER_MIX_DUPLICATE_BART}=true"


def _group(name: str, info: dict[str, Any], options: Mapping[str, Any]) -> tuple[str, str | None]:
    offered = info.get("options", {})
    for key in options:
        if key not in offered:
            listed = ", ".join(repr(k) for k in offered) or "none"
            raise ParameterError(f"options of dataset {name!r} must be among ({listed}); got {key!r}.")
    if not offered:
        return DEFAULT_GROUP, None
    (option, spec), = offered.items()
    value = check_choice(option, options.get(option, spec["default"]), spec["choices"])
    return value, f"{option}={value}"


def _key(group: str, field: str) -> str:
    return f"{group}{_SEPARATOR}{field}"


def _arrays(file: str, group: str) -> dict[str, np.ndarray]:
    """The arrays of ``group`` in a packaged file (never unpickled)."""
    with _packaged_dir().joinpath(file).open("rb") as handle:
        data = handle.read()
    prefix = _key(group, "")
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files if key.startswith(prefix)}


def write_packaged_file(path: str | Path, groups: Mapping[str, ScoreSet]) -> None:
    """Write ScoreSets (one per group, e.g. per language pair) to a packaged ``.npz`` file.

    Each group stores ``<group>:systems``, ``<group>:inputs``, ``<group>:scorers`` (unicode arrays)
    and ``<group>:<k>``, the stored array of the k-th scorer (annotator axis kept). The zip entries
    carry a fixed date, so the same scores always give the same bytes. Used by
    ``scripts/build_datasets.py``.
    """
    entries: dict[str, np.ndarray] = {}
    for group, scoreset in groups.items():
        entries[_key(group, "systems")] = np.array(scoreset.systems, dtype=str)
        entries[_key(group, "inputs")] = np.array(scoreset.inputs, dtype=str)
        entries[_key(group, "scorers")] = np.array(scoreset.scorers, dtype=str)
        for k, scorer in enumerate(scoreset.scorers):
            entries[_key(group, str(k))] = np.ascontiguousarray(scoreset.annotations(scorer))
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for key, array in entries.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, buffer.getvalue(), compresslevel=9)
    temporary.replace(path)
