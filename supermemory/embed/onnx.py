"""The default `onnx` provider: BAAI bge-small-en-v1.5 run with onnxruntime and tokenizers, loaded on first use."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from supermemory.embed.base import EmbeddingProvider, normalise
from supermemory.embed.provisioning import MODEL_ID, read_lock
from supermemory.errors import EmbeddingUnavailableError
from supermemory.runtime import import_onnx

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

# The model card's instruction for short queries against passages.
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


class OnnxProvider(EmbeddingProvider):
    """BAAI bge-small-en-v1.5 via onnxruntime: CLS pooling, L2 norm, truncation at 512."""

    provider_id = "onnx"
    model_id = MODEL_ID
    dimensions = 384
    # One text per run: the INT8 export quantises activations per batch, so a batch-mate changes a
    # vector (cos ≈ 0.997). Alone, a bulk-imported memory gets exactly the vector `remember` gives it,
    # and there is no padding waste (measured: 12% slower on short texts, 25% faster on long ones).
    batch_size = 1

    def __init__(self, model_dir: Path, *, threads: int = 2, query_instruction: str = BGE_QUERY_INSTRUCTION,
                 query_blend: bool = False):
        self.model_dir = Path(model_dir)
        self.threads = max(1, int(threads))
        self.query_instruction = query_instruction
        self.query_blend = query_blend
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()
        lock = read_lock(self.model_dir)
        missing = [f for f in ("model.onnx", "tokenizer.json") if not (self.model_dir / f).is_file()]
        if missing:
            raise EmbeddingUnavailableError(
                f"embedding model files missing in {self.model_dir} ({', '.join(missing)}); "
                "run `supermemory model install`")
        self.checksum = (lock or {}).get("files", {}).get("model.onnx", "") or "unverified"

    def load(self) -> None:
        """Load the tokenizer and the ONNX session (idempotent, thread-safe).

        numpy, onnxruntime and tokenizers come through `runtime.import_onnx`: one lock for every
        first import in the process, onnxruntime's telemetry off.

        Raises:
            EmbeddingUnavailableError: the runtime is not installed or the model does not load.
        """
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            try:
                ort, tokenizers = import_onnx()
                Tokenizer = tokenizers.Tokenizer
            except ImportError as exc:
                raise EmbeddingUnavailableError(f"onnxruntime/tokenizers not installed: {exc}") from exc
            try:
                tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=512)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                session = ort.InferenceSession(str(self.model_dir / "model.onnx"), options,
                                               providers=["CPUExecutionProvider"])
            except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own zoo of errors
                raise EmbeddingUnavailableError(
                    f"cannot load the embedding model from {self.model_dir}: {exc}; "
                    "run `supermemory model install --force`") from exc
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def embed_batch(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np

        self.load()
        encodings = self._tokenizer.encode_batch([t if t.strip() else "[empty]" for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            hidden = self._session.run(None, feeds)[0]
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingUnavailableError(f"embedding failed: {exc}") from exc
        return normalise(hidden[:, 0, :])

    def embed_query(self, text: str, *, instructed: bool = False) -> "np.ndarray":
        """The query vector, `instructed` with bge's retrieval instruction (it helps questions that
        share few words with their answer, and costs keyword-like queries); with `query_blend`, the
        mean of the plain and the instructed vector."""
        if not instructed or not self.query_instruction:
            return self.embed_batch([text])[0]
        if self.query_blend:
            both = self.embed_batch([text, self.query_instruction + text])
            return normalise(both.mean(axis=0, keepdims=True))[0]
        return self.embed_batch([self.query_instruction + text])[0]
