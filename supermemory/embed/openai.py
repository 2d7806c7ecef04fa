"""The opt-in `openai` provider: any OpenAI-compatible `/v1/embeddings` endpoint (text leaves the machine)."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Sequence

from supermemory.embed.base import EmbeddingProvider, normalise
from supermemory.errors import EmbeddingUnavailableError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class OpenAIProvider(EmbeddingProvider):
    """An OpenAI-compatible `/v1/embeddings` endpoint (opt-in: text leaves the machine)."""

    provider_id = "openai"
    batch_size = 64

    def __init__(self, *, base_url: str, model: str, api_key: str = "", dimensions: int = 0, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.model_id = model
        self.api_key = api_key
        self.timeout = timeout
        self.checksum = self.base_url
        self.dimensions = int(dimensions) or 0
        if not self.dimensions:
            self.dimensions = len(self._request(["dimension probe"])[0])

    def _request(self, texts: Sequence[str]) -> list[list[float]]:
        body = json.dumps({"model": self.model_id, "input": list(texts)}).encode("utf-8")
        request = urllib.request.Request(self.base_url + "/embeddings", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                payload = json.loads(response.read().decode("utf-8"))
            data = sorted(payload["data"], key=lambda d: d.get("index", 0))
            return [d["embedding"] for d in data]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbeddingUnavailableError(f"embedding endpoint {self.base_url} failed: {exc}") from exc

    def embed_batch(self, texts: Sequence[str]) -> "np.ndarray":
        vectors = self._request(texts)
        if any(len(v) != self.dimensions for v in vectors):
            raise EmbeddingUnavailableError("embedding endpoint returned vectors of the wrong dimension")
        return normalise(vectors)
