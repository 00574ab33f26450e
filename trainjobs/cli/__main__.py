"""``python -m trainjobs.cli``: the same as the ``trainjobs`` command."""

from trainjobs.cli import main

raise SystemExit(main())
