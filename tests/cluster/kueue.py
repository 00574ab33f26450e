"""Kueue on the tests' control plane: :mod:`trainjobs.sandbox.kueue`'s, scoped.

One implementation: the manager, its CRDs, configuration and webhooks by URL are the
sandbox's (``trainjobs/sandbox/kueue.py``, which ``trainjobs simulate`` runs). Here the
session's control plane is shared with every other proof, and a Kueue webhook with
``failurePolicy: Fail`` on every Pod, Job and JobSet would make those depend on it: so
Kueue is limited to namespaces labelled :data:`MANAGED_LABEL` (its job webhooks and its
``managedJobsNamespaceSelector``), and :meth:`Kueue.stop` deletes the webhook
configurations before the manager stops.

``python -m tests.cluster.kueue`` starts a control plane with Kueue and waits for Ctrl-C.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from trainjobs.sandbox import kueue as _kueue
from trainjobs.sandbox.kueue import FRAMEWORKS, NAMESPACE

__all__ = ["FRAMEWORKS", "MANAGED_LABEL", "NAMESPACE", "Kueue", "kueue_bin_dir"]

MANAGED_LABEL = {"trainjobs.test/kueue": "managed"}
"""Namespaces whose jobs Kueue manages here (see the module docstring)."""

kueue_bin_dir = _kueue.kueue_bin_dir


@dataclass
class Kueue(_kueue.Kueue):
    """The sandbox's Kueue, limited to namespaces labelled :data:`MANAGED_LABEL`."""

    managed: Mapping[str, str] | None = field(default_factory=lambda: dict(MANAGED_LABEL))


def main() -> int:
    """A control plane with Kueue, until Ctrl-C."""
    import contextlib
    import tempfile
    import time
    from pathlib import Path

    from tests.cluster.control_plane import started

    with tempfile.TemporaryDirectory(prefix="trainjobs-kueue-") as tmp, started(Path(tmp)) as cp:
        kueue = Kueue(cp)
        kueue.start()
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        try:
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(1)
                    cp.alive()
        finally:
            kueue.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
