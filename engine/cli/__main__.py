"""``python -m engine.cli``: the same command as the ``engine`` script."""

from engine.cli.main import main

main()
