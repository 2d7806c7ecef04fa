"""Embedding providers (`onnx` bge-small-en-v1.5, `hash`, `openai`), their registry and model provisioning.

Modules: `base` (the `EmbeddingProvider` ABC, `normalise`), `onnx`, `hashing`, `openai`, `registry`
(`PROVIDERS`, `get_provider`, `resolve_provider`) and `provisioning` (install, status, lock file,
vocabulary). numpy, onnxruntime and tokenizers are imported on first use, inside methods, so
`--help`, the SessionStart hook and `initialize` never pay for them.
"""
from __future__ import annotations

from supermemory.embed.base import EmbeddingProvider, normalise, validate_vectors
from supermemory.embed.hashing import HashProvider
from supermemory.embed.onnx import BGE_QUERY_INSTRUCTION, OnnxProvider
from supermemory.embed.openai import OpenAIProvider
from supermemory.embed.provisioning import (HUB_FILES, HUB_REPO, KNOWN_SHA256, LOCK_FILE, MODEL_FILES, MODEL_ID,
                                            WHEEL_PREFIX, WHEEL_SPEC, install_model, model_status, read_lock,
                                            sha256_file, vocabulary_words)
from supermemory.embed.registry import PROVIDERS, get_provider, resolve_provider

__all__ = [
    "BGE_QUERY_INSTRUCTION", "HUB_FILES", "HUB_REPO", "KNOWN_SHA256", "LOCK_FILE", "MODEL_FILES", "MODEL_ID",
    "PROVIDERS", "WHEEL_PREFIX", "WHEEL_SPEC", "EmbeddingProvider", "HashProvider", "OnnxProvider",
    "OpenAIProvider", "get_provider", "install_model", "model_status", "normalise", "read_lock",
    "resolve_provider", "sha256_file", "validate_vectors", "vocabulary_words",
]
