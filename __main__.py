"""The Pulumi program of this project: `pulumi up` reads stacks/Pulumi.<stack>.yaml.

Run as ``python -m trainjobs`` from the folder above a clone named ``trainjobs/``,
Python takes the clone itself for the package and runs this file instead of the
CLI. Then it hands over to the CLI of the clone's own package.
"""

import os
import sys

if __spec__ is not None and __spec__.name == "trainjobs.__main__":
    # The clone was imported as a namespace package `trainjobs`: forget it, put the clone
    # (which holds the real package) first on the path, and run the command line.
    _clone = os.path.dirname(os.path.abspath(__file__))
    _above = os.path.dirname(_clone)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _above]
    sys.path.insert(0, _clone)
    for _name in [m for m in sys.modules if m == "trainjobs" or m.startswith("trainjobs.")]:
        if _name != "trainjobs.__main__":
            del sys.modules[_name]
    from trainjobs.cli import main

    raise SystemExit(main())

from trainjobs.components import program
from trainjobs.components.lean_sdk import lighten

lighten()
program()
