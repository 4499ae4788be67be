"""``python -m engine.cli``: the same command as the ``engine`` script."""

from engine.cli.entry import main

main()
