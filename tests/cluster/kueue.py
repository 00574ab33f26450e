"""Kueue's manager (sigs.k8s.io/kueue, built by ``tests/cluster/build.sh kueue``) on a
running :class:`~tests.cluster.control_plane.ControlPlane`, through its public API.

What an install applies beside the manager, done the loopback way: every Kueue CRD (the
release's own files, copied next to the binary by the build), a configuration file (no
leader election, no metrics, our serving certificate instead of its cert rotator, the
integrations of the kinds trainjobs queues), and its webhook configurations registered
by URL (``https://127.0.0.1:<port><path>``: no Service routes to loopback).

Scope, the one departure from the release's install: the session's control plane is
shared with every other proof, and a Kueue webhook with ``failurePolicy: Fail`` on every
Pod, Job and JobSet would make those depend on it. So each webhook of a job kind matches
only namespaces labelled :data:`MANAGED_LABEL`, Kueue's ``managedJobsNamespaceSelector``
says the same, and :meth:`Kueue.stop` deletes the webhook configurations before the
manager stops. Kueue's own objects (ClusterQueue, ResourceFlavor, Workload …) keep their
webhooks unscoped.

``python -m tests.cluster.kueue`` starts a control plane with Kueue and waits for Ctrl-C.
"""

from __future__ import annotations

import base64
import copy
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.control_plane import ControlPlane, StartupError, free_ports
from trainjobs.sandbox.pki import issue, make_ca
from trainjobs.sandbox.programs import Program, wait_for

BUILD_SH = Path(__file__).resolve().parent / "build.sh"

__all__ = ["FRAMEWORKS", "MANAGED_LABEL", "NAMESPACE", "Kueue", "kueue_bin_dir"]

NAMESPACE = "kueue-system"
MANAGED_LABEL = {"trainjobs.test/kueue": "managed"}
"""Namespaces whose jobs Kueue manages here (see the module docstring)."""

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
"""The webhooks of the enabled integrations (scoped to :data:`MANAGED_LABEL`)."""
_OWN_KINDS = ("clusterqueue", "resourceflavor", "workload", "cohort", "localqueue")


def kueue_bin_dir(build: bool = True) -> Path:
    """Kueue's bin folder; built first when ``build`` and its binary is missing (a
    built one is used as it is: build.sh's lock may be held by another build)."""
    out = subprocess.run(
        [str(BUILD_SH), "--print-dir", "kueue"], check=True, capture_output=True, text=True
    )
    folder = Path(out.stdout.strip())
    if build and not os.access(folder / "kueue", os.X_OK):
        print(f"building kueue with {BUILD_SH} (once per machine)", file=sys.stderr)
        subprocess.run([str(BUILD_SH), "kueue"], check=True, stdout=sys.stderr)
    if not os.access(folder / "kueue", os.X_OK):
        raise StartupError("not built: kueue; run `tests/cluster/build.sh kueue`")
    return folder


def _webhooks(bin_dir: Path, port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """The release's webhook configurations, for the enabled integrations and Kueue's
    own kinds, by URL, scoped as the module docstring says."""
    configs = []
    bundle = base64.b64encode(ca_pem).decode()
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
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
            if not own:
                hook["namespaceSelector"] = {"matchLabels": dict(MANAGED_LABEL)}
            hooks.append(hook)
        config["webhooks"] = hooks
        configs.append(config)
    return configs


@dataclass
class Kueue:
    """Kueue's manager on ``cluster``: ``start()`` (ready when it returns), ``stop()``."""

    cluster: ControlPlane
    bin_dir: Path = field(default_factory=kueue_bin_dir)
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
        certs.mkdir(exist_ok=True)
        ca = make_ca("kueue-webhook-ca")
        server = issue(ca, "kueue-webhook", dns=["localhost"], ips=["127.0.0.1"], server=True)
        server.write(certs / "tls.crt", certs / "tls.key")
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": NAMESPACE,
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
            "managedJobsNamespaceSelector": {"matchLabels": dict(MANAGED_LABEL)},
            "integrations": {"frameworks": list(FRAMEWORKS)},
            # Its on-demand visibility API would need an APIService and a port of its
            # own (8082, fixed); nothing here reads it.
            "featureGates": {"VisibilityOnDemand": False},
        }
        _metrics_certificate(ca)
        path = cluster.workdir / "kueue-config.yaml"
        path.write_text(yaml.safe_dump(config))
        for hook_config in _webhooks(self.bin_dir, webhook, ca.cert_pem):
            plural = hook_config["kind"].lower() + "s"
            cluster.client.create(f"/apis/admissionregistration.k8s.io/v1/{plural}", hook_config)
            self.webhook_configs.append((plural, hook_config["metadata"]["name"]))
        self.program = Program(
            "kueue",
            [str(self.bin_dir / "kueue"), f"--config={path}", "--zap-log-level=2"],
            cluster.logs / "kueue.log",
            {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
        )
        # In the plane's list: its log joins a failing test's report.
        cluster.programs.append(self.program)
        self.program.start()
        wait_for(
            "kueue /readyz (webhook server, integrations)",
            lambda: _http_ok(health, "/readyz"),
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


METRICS_CERTS = Path("/etc/kueue/metrics/certs")
"""Where Kueue v0.19 reads its metrics certificate whenever its own cert management is
off: a fixed path (cmd/kueue/main.go), read even with metrics disabled, and the process
exits without it."""


def _metrics_certificate(ca: Any) -> None:
    """A certificate where Kueue insists on one (:data:`METRICS_CERTS`), unless one is
    there: what the kubelet would mount. Nothing serves with it (metrics are off)."""
    if (METRICS_CERTS / "tls.crt").exists() and (METRICS_CERTS / "tls.key").exists():
        return
    METRICS_CERTS.mkdir(parents=True, exist_ok=True)
    issue(ca, "kueue-metrics", dns=["localhost"], server=True).write(
        METRICS_CERTS / "tls.crt", METRICS_CERTS / "tls.key"
    )


def _http_ok(port: int, path: str) -> bool:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def main() -> int:
    """A control plane with Kueue, until Ctrl-C."""
    import contextlib
    import tempfile
    import time

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
