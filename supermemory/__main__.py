"""`python3 -m supermemory` runs the CLI."""
import sys

from supermemory.cli import main

sys.exit(main())
