"""``python -m scrydb.cli``."""

from scrydb.cli import main

main()
