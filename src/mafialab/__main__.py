"""``python -m mafialab``."""

from mafialab.cli import main

main()
