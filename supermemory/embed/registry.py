"""Which provider runs: the name → builder table (`PROVIDERS`), `get_provider` and the `hash` fallback rule."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from supermemory.embed.base import EmbeddingProvider
from supermemory.embed.hashing import HashProvider
from supermemory.embed.onnx import BGE_QUERY_INSTRUCTION, OnnxProvider
from supermemory.embed.openai import OpenAIProvider
from supermemory.errors import EmbeddingUnavailableError, UnknownProviderError

if TYPE_CHECKING:  # pragma: no cover
    from supermemory.config import Config


def _onnx(config: "Config", settings: dict) -> EmbeddingProvider:
    try:
        return OnnxProvider(config.model_dir, threads=settings["threads"],
                            query_instruction=settings["query_instruction"],
                            query_blend=bool(settings["query_blend"]))
    except EmbeddingUnavailableError as exc:   # `model install` does not fill a folder the variable names
        if config.model_dir_override is None:
            raise
        raise EmbeddingUnavailableError(
            f"SUPERMEMORY_MODEL_DIR={config.model_dir_override} holds no embedding model (model.onnx, "
            "tokenizer.json): unset it, or point it at a folder that holds them") from exc


def _hash(config: "Config", settings: dict) -> EmbeddingProvider:
    return HashProvider()


def _openai(config: "Config", settings: dict) -> EmbeddingProvider:
    key = os.environ.get(settings.get("openai_api_key_env") or "SUPERMEMORY_EMBED_API_KEY", "")
    return OpenAIProvider(base_url=settings["openai_base_url"], model=settings["openai_model"],
                          api_key=key, dimensions=settings["openai_dimensions"])


# Provider name (`embedder.provider`) → a builder given the config and its `embedder` section.
PROVIDERS: dict[str, Callable[["Config", dict], EmbeddingProvider]] = {
    "onnx": _onnx,
    "hash": _hash,
    "openai": _openai,
}


def get_provider(config: "Config", name: str | None = None) -> EmbeddingProvider:
    """Build the configured provider.

    :param name: override the configured provider name.
    Raises:
        UnknownProviderError: no such provider.
        EmbeddingUnavailableError: the provider cannot run here (e.g. the model is missing).
    """
    settings = config.section("embedder")
    name = name or settings["provider"]
    build = PROVIDERS.get(name)
    if build is None:
        *others, last = PROVIDERS
        raise UnknownProviderError(f"unknown embedding provider {name!r}; choose {', '.join(others)} or {last}")
    return build(config, settings)


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
