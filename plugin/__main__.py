"""The trainjobs component provider, run by Pulumi's Python host (PulumiPlugin.yaml)."""

import sys

from trainjobs.provider.host import serve

serve(sys.argv[1:])
