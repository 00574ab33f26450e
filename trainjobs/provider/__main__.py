"""``python -m trainjobs.provider ENGINE_ADDRESS``: what ``pulumi-resource-trainjobs`` runs."""

import sys

from trainjobs.components.lean_sdk import lighten
from trainjobs.provider.host import serve

# The components' objects are registered here, as in the stack program: no per-resource
# debug calls, and no stack traces of this process's frames (a program in YAML,
# TypeScript or Go registers the components itself, untouched).
lighten()
serve(sys.argv[1:])
