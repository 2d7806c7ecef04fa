"""supermemory: local, offline long-term memory for coding agents."""
import os as _os

__version__ = "0.1.0"

# Every process that may import onnxruntime (server, CLI, bench, reindex, hooks) imports this
# package first; the variable must be set before onnxruntime is imported (see runtime.py).
_os.environ["ORT_DISABLE_TELEMETRY"] = "1"
