"""`python3 -m supermemory` runs the CLI, once this Python is known to have its dependencies (`deps`)."""
import sys

from supermemory import deps

_missing = deps.missing()
if _missing:
    sys.stderr.write(deps.advice("supermemory", _missing))
    sys.exit(1)

from supermemory.cli import main  # noqa: E402 - after the check: the CLI's imports need the dependencies

sys.exit(main())
