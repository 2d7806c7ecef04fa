#!/usr/bin/env python3
"""Run the supermemory CLI straight from a checkout, without installing: `python run.py <args>`."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from supermemory.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
