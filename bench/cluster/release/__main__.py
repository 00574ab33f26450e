"""One registered resource for a whole job: the floor part 2 of issue 35 aims at.

A Helm release (``kubernetes:helm.sh/v3:Release``, served by the same Kubernetes provider
as the other sides) of a local chart whose one template prints the objects ``trainjobs
render`` prints. The bench writes the chart beside this file: the objects go in the
chart's ``files/`` and the template includes them as they are, so Helm never parses
them as a template; the Namespace is the release's own (``create_namespace``). Not a
design for trainjobs — a release's preview shows the chart changed, not which object
does what — but it measures what the engine costs when a pod set is one step.
"""

from pathlib import Path

import pulumi_kubernetes as k8s

k8s.helm.v3.Release(
    "job",
    name="job",
    chart="chart",
    namespace=Path("namespace.txt").read_text().strip(),
    create_namespace=True,
    skip_await=True,
    max_history=1,
)
