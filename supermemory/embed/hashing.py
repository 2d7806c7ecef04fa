"""The offline `hash` provider: feature-hashed vectors over the tokenizer's tokens (no model)."""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Sequence

from supermemory.embed.base import EmbeddingProvider, normalise
from supermemory.text.tokenizer import TOKENIZER_VERSION

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class HashProvider(EmbeddingProvider):
    """Offline feature-hashed vectors over our tokens: deterministic, no model, weak semantics."""

    provider_id = "hash"
    semantic = False
    # The vectors hash `text.tokenize` output, so they change with the tokenizer: the model id names
    # its version, and a database pinned under another one is refused until `supermemory reindex`.
    model_id = f"feature-hash-v1+tokenizer-{TOKENIZER_VERSION}"
    dimensions = 384
    batch_size = 256
    checksum = "builtin"

    def embed_batch(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np

        from supermemory.text import tokenize

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dimensions] += 1.0 if (value >> 32) & 1 else -1.0
        out = np.sign(out) * np.sqrt(np.abs(out))
        return normalise(out)
