"""A corpus metric recomputed from texts with the options its segment scores were computed with.

``metaeval score`` records each metric's signature beside the score file. A command that rebuilds a
metric's corpus scores from the texts (``--corpus-metric``) must use the same options, or the corpus
scores are of another metric: NIST recomputed with its default tokenization beside segment scores made
with ``--mt-preprocessing leusch-best`` gave a system score of 5.919 where the scores' own options give
6.164. :func:`recorded_options` reads the options back from a recorded signature (the MT preprocessing,
the part that ``--mt-preprocessing`` sets); :func:`option_differences` names what still differs, which the
caller refuses.
"""
from __future__ import annotations

from typing import Any

from ..errors import ParameterError
from .mt_preprocessing import MtPreprocessing

__all__ = ["option_differences", "parse_signature", "recorded_options"]

#: Signature fields that may differ between the scores and the recomputation: the version, and NIST's
#: information weights (the corpus digest of the references a call sees).
_FREE = ("version", "info_weights")


def parse_signature(text: str) -> dict[str, str]:
    """``key:value|key:value`` -> dict; values may hold ``|`` and ``:`` inside parentheses."""
    fields: dict[str, str] = {}
    depth, start = 0, 0
    for position, char in enumerate(text + "|"):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            part = text[start:position]
            key, sep, value = part.partition(":")
            if sep:
                fields[key] = value
            start = position + 1
    return fields


def _preprocessing(description: str) -> dict[str, Any]:
    """:meth:`MtPreprocessing.describe` read back into its fields."""
    parts = dict(item.split(":", 1) for item in description.strip("()").split(",") if ":" in item)
    yes = {"yes": True, "no": False}
    try:
        options = {"tokenize": parts["tok"], "lowercase": yes[parts["lc"]],
                   "remove_punctuation": {"remove": True, "keep": False}[parts["punct"]],
                   "contractions": yes[parts["contractions"]], "abbreviations": yes[parts["abbreviations"]],
                   "boundaries": parts["boundaries"]}
    except KeyError:
        raise ParameterError(f"the recorded MT preprocessing must be one metaeval writes; got {description!r}.") from None
    MtPreprocessing(**options)  # the same checks as any preprocessing
    return options


#: Signature field -> (constructor parameter, reader) of the plain options carried over when the scorer takes
#: them (NIST's, the syntactic metrics'); sacrebleu's own options sit inside ``sacrebleu:(...)`` and are compared.
_PLAIN = {"tok": ("tokenize", str), "lowercase": ("lowercase", {"yes": True, "no": False}.__getitem__),
          "max_ngram_order": ("max_ngram_order", int), "ref_length": ("ref_length", str), "depth": ("depth", int)}


def recorded_options(signature: str, takes: Any = ()) -> dict[str, Any]:
    """The scorer options that a recorded ``signature`` states: the MT preprocessing
    (``{'preprocessing': {...}}``) and the plain options among ``takes`` (the scorer's parameter names)."""
    fields = parse_signature(signature)
    options: dict[str, Any] = {}
    for key, (parameter, read) in _PLAIN.items():
        if key in fields and parameter in takes:
            try:
                options[parameter] = read(fields[key])
            except (KeyError, ValueError):
                continue  # not one of ours: the comparison names it
    if "preprocessing" in fields:
        options["preprocessing"] = _preprocessing(fields["preprocessing"])
        options.pop("tokenize", None)  # the preprocessing tokenizes
    return options


def option_differences(recorded: str, recomputed: str) -> list[str]:
    """``'key: recorded vs recomputed'`` for each signature field that differs (the version and NIST's
    corpus digest aside)."""
    a, b = parse_signature(recorded), parse_signature(recomputed)
    return [f"{key}: {a.get(key, '(none)')} in the scores, {b.get(key, '(none)')} here"
            for key in dict.fromkeys([*a, *b]) if key not in _FREE and a.get(key) != b.get(key)]
