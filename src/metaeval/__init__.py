"""metaeval: meta-evaluation of automatic evaluation metrics for text generation."""
from ._version import __version__

__all__ = ["__version__"]
