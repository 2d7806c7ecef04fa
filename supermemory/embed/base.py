"""The embedding provider protocol: `EmbeddingProvider` (one abstract `embed_batch`) and L2 normalising."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Callable, Sequence

from supermemory.errors import InvalidInputError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class EmbeddingProvider(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    provider_id: str = ""
    semantic: bool = True        # False: cosines of its vectors carry words, not meaning (feature hashing)
    model_id: str = ""
    dimensions: int = 0
    batch_size: int = 32
    checksum: str = ""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> "np.ndarray":
        """Embed one batch; returns float32 array of shape (len(texts), dimensions)."""

    def embed_query(self, text: str, *, instructed: bool = False) -> "np.ndarray":
        """Embed a search query; `instructed` asks for the provider's retrieval instruction, if it has one."""
        return self.embed_batch([text])[0]

    def embed_multi(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> "np.ndarray":
        """Embed any number of documents in batches of `batch_size`.

        Texts are batched in length order (less padding: several times faster on mixed lengths)
        and returned in the caller's order.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            index = order[start:start + self.batch_size]
            out[index] = self.embed_batch([texts[i] for i in index])
            if progress:
                progress(min(start + self.batch_size, len(texts)), len(texts))
        return out

    def fingerprint(self) -> dict:
        """What gets pinned in the database on first use."""
        return {"provider": self.provider_id, "model": self.model_id,
                "dimensions": self.dimensions, "checksum": self.checksum}


def normalise(matrix) -> "np.ndarray":
    """Rows scaled to unit L2 length as float32 (all-zero rows stay zero)."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def validate_vectors(matrix, dimensions: int) -> None:
    """Guard against providers returning malformed output.

    Raises:
        InvalidInputError: `matrix` is not of shape (n, dimensions).
    """
    if getattr(matrix, "ndim", 0) != 2 or matrix.shape[1] != dimensions:
        raise InvalidInputError(f"embedder returned shape {getattr(matrix, 'shape', None)}, expected (n, {dimensions})")
