"""supermemory: local, offline long-term memory for coding agents."""

__version__ = "0.1.0"
