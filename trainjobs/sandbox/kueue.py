"""Kueue's manager (sigs.k8s.io/kueue, the version the project pins) on a running
:class:`~trainjobs.sandbox.control_plane.ControlPlane`.

What an install applies beside the manager, done the loopback way: every Kueue CRD (the
release's own files, copied next to the binary by the build), a configuration file (no
leader election, no metrics, our serving certificate instead of its cert rotator, the
integrations of the kinds trainjobs queues), and its webhook configurations registered
by URL (``https://127.0.0.1:<port><path>``: no Service routes to loopback).

``managed``: a namespace label that limits Kueue to the namespaces carrying it — its job
webhooks' namespace selector and its ``managedJobsNamespaceSelector`` (a shared control
plane, as the tests', must not make every other job depend on Kueue). None: as the
release installs it, every namespace but kube-system and Kueue's own. Kueue's own
objects (ClusterQueue, ResourceFlavor, Workload …) keep their webhooks unscoped.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trainjobs.errors import TrainjobsError
from trainjobs.sandbox.api import http_ok
from trainjobs.sandbox.binaries import binaries
from trainjobs.sandbox.control_plane import ControlPlane, controller_config
from trainjobs.sandbox.installs import by_url
from trainjobs.sandbox.pki import Issued, issue
from trainjobs.sandbox.programs import Program, free_ports, wait_for

__all__ = [
    "FRAMEWORKS",
    "KUEUE_BINARIES",
    "METRICS_CERTS",
    "NAMESPACE",
    "Kueue",
    "KueueUnavailable",
    "kueue_bin_dir",
]

NAMESPACE = "kueue-system"
KUEUE_BINARIES = {"kueue": "kueue"}
"""Kueue's binary and its build-script program (built on demand, not by ``up``)."""

FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/jaxjob",
    "jobset.x-k8s.io/jobset",
    "trainer.kubeflow.org/trainjob",
    "pod",
)
"""Kueue's integrations enabled here: the v1 kinds, MPIJob (v2beta1: Kueue v0.19 has no
integration of the v1 MPIJob), JobSet, TrainJob, batch Jobs and plain Pods."""

_JOB_PATHS = (
    "/mutate-batch-v1-job",
    "/validate-batch-v1-job",
    "/mutate--v1-pod",
    "/validate--v1-pod",
    "/mutate-jobset-x-k8s-io-v1alpha2-jobset",
    "/validate-jobset-x-k8s-io-v1alpha2-jobset",
    "/mutate-trainer-kubeflow-org-v1alpha1-trainjob",
    "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
    "/mutate-kubeflow-org-v2beta1-mpijob",
    "/validate-kubeflow-org-v2beta1-mpijob",
    *(
        f"/{verb}-kubeflow-org-v1-{kind}"
        for kind in ("pytorchjob", "tfjob", "xgboostjob", "paddlejob", "jaxjob")
        for verb in ("mutate", "validate")
    ),
)
"""The webhooks of the enabled integrations."""
_OWN_KINDS = ("clusterqueue", "resourceflavor", "workload", "cohort", "localqueue")

METRICS_CERTS = Path("/etc/kueue/metrics/certs")
"""Where Kueue v0.19 reads its metrics certificate whenever its own cert management is
off: a fixed path (cmd/kueue/main.go), read even with metrics disabled, and the process
exits without it."""


class KueueUnavailable(TrainjobsError):
    """Kueue cannot run here: not built, or its fixed certificate path is not writable."""


def kueue_bin_dir(build: bool = True) -> Path:
    """Kueue's bin folder (the binary, the release's CRDs and webhooks); built first when
    ``build`` and missing. :class:`~trainjobs.sandbox.binaries.MissingBinaries` otherwise."""
    return binaries(KUEUE_BINARIES, build=build)["kueue"].parent


def _webhooks(
    bin_dir: Path, port: int, ca_pem: bytes, managed: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    """The release's webhook configurations of the enabled integrations and Kueue's own
    kinds, by URL, scoped to ``managed`` (see the module doc)."""
    configs = []
    for doc in yaml.safe_load_all((bin_dir / "kueue-webhooks.yaml").read_text()):
        if not isinstance(doc, dict):
            continue
        config = copy.deepcopy(doc)
        config["metadata"] = {"name": f"kueue-{doc['metadata']['name']}"}
        hooks = []
        for hook in config["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            own = any(f"kueue-x-k8s-io-v1beta2-{kind}" in path for kind in _OWN_KINDS)
            if path not in _JOB_PATHS and not own:
                continue
            if managed is not None and not own:
                hook["namespaceSelector"] = {"matchLabels": dict(managed)}
            hooks.append(hook)
        config["webhooks"] = hooks
        configs.append(by_url(config, port, ca_pem))
    return configs


@dataclass
class Kueue:
    """Kueue's manager on ``cluster``: ``start()`` (ready when it returns), ``stop()``."""

    cluster: ControlPlane
    bin_dir: Path = field(default_factory=kueue_bin_dir)
    managed: Mapping[str, str] | None = None
    """A namespace label Kueue is limited to (see the module doc); None: every namespace."""
    program: Program | None = None
    webhook_configs: list[tuple[str, str]] = field(default_factory=list)

    def start(self) -> None:
        cluster = self.cluster
        cluster.ensure_namespace(NAMESPACE)
        crds = [
            yaml.safe_load(path.read_text())
            for path in sorted(self.bin_dir.glob("kueue-crd-*.yaml"))
        ]
        cluster.install_crds(crds)
        webhook, health = free_ports(2)
        certs = cluster.workdir / "kueue-certs"
        ca = cluster.serving_certs(certs, "kueue-webhook")
        extra: dict[str, Any] = {
            "namespace": NAMESPACE,
            "integrations": {"frameworks": list(FRAMEWORKS)},
            # Its on-demand visibility API would need an APIService and a port of its
            # own (8082, fixed); nothing here reads it.
            "featureGates": {"VisibilityOnDemand": False},
        }
        if self.managed is not None:
            extra["managedJobsNamespaceSelector"] = {"matchLabels": dict(self.managed)}
        config = controller_config(
            "config.kueue.x-k8s.io/v1beta2", webhook, health, cert_dir=certs, **extra
        )
        _metrics_certificate(ca)
        path = cluster.write_config("kueue-config.yaml", config)
        for hook_config in _webhooks(self.bin_dir, webhook, ca.cert_pem, self.managed):
            plural = hook_config["kind"].lower() + "s"
            cluster.client.create(f"/apis/admissionregistration.k8s.io/v1/{plural}", hook_config)
            self.webhook_configs.append((plural, hook_config["metadata"]["name"]))
        self.program = Program(
            "kueue",
            [str(self.bin_dir / "kueue"), f"--config={path}", "--zap-log-level=2"],
            cluster.logs / "kueue.log",
            {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
            cluster.detached,
        )
        # In the plane's list: stopped with it, and its log joins a failure's report.
        cluster.programs.append(self.program)
        self.program.start()
        wait_for(
            "kueue /readyz (webhook server, integrations)",
            lambda: http_ok(health, "/readyz"),
            120,
            alive=self.program.check_alive,
        )

    def stop(self) -> None:
        """Delete the webhook configurations (nothing may call a stopped webhook), then
        stop the manager."""
        for plural, name in self.webhook_configs:
            self.cluster.client.delete(f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}")
        self.webhook_configs.clear()
        if self.program is not None:
            self.program.stop()
            if self.program in self.cluster.programs:
                self.cluster.programs.remove(self.program)
            self.program = None


def _metrics_certificate(ca: Issued) -> None:
    """A certificate where Kueue insists on one (:data:`METRICS_CERTS`), unless one is
    there: what the kubelet would mount. Nothing serves with it (metrics are off)."""
    if (METRICS_CERTS / "tls.crt").exists() and (METRICS_CERTS / "tls.key").exists():
        return
    try:
        METRICS_CERTS.mkdir(parents=True, exist_ok=True)
        issue(ca, "kueue-metrics", dns=["localhost"], server=True).write(
            METRICS_CERTS / "tls.crt", METRICS_CERTS / "tls.key"
        )
    except OSError as exc:
        raise KueueUnavailable(
            f"Kueue reads a certificate from {METRICS_CERTS} (a path fixed in its code) and "
            f"that folder cannot be written ({exc.strerror}); fix: create it once, e.g. "
            f"`sudo mkdir -p {METRICS_CERTS} && sudo chown $USER {METRICS_CERTS}`"
        ) from exc
