"""``python -m rulegauge``: the ``rulegauge`` command, for an environment whose scripts folder
is not on ``PATH`` (``python -m rulegauge run``, ``python -m rulegauge --help``)."""

from rulegauge.cli import main

if __name__ == "__main__":
    main()
