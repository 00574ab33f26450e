"""``python -m trainjobs.provider ENGINE_ADDRESS``: what ``pulumi-resource-trainjobs`` runs."""

import sys

from trainjobs.provider.host import serve

serve(sys.argv[1:])
