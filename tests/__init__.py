"""mafialab's test suite (``python -m pytest``; README.md)."""

import os

# pytest imports readline early (its capture plugin does), and GNU readline writes the
# terminal's size into the process environment as COLUMNS and LINES (80 and 24 without a
# terminal). pytest-xdist's workers start with that environment, and a Rich console created
# while COLUMNS is set keeps that width for good: the CLI's console (made when mafialab.cli is
# imported, here before any test) would print at 80 columns whatever width a test asks for
# with CliRunner(env={"COLUMNS": ...}). Without COLUMNS, Rich reads it at each print, as it
# does in a single pytest process (a COLUMNS exported in the user's shell is dropped too).
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
