"""A Kubernetes control plane on loopback, made of the real programs.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake nodes that
"run" pods), the Kubeflow Training Operator v1, the MPI Operator, the JobSet controller
and Kubeflow Trainer v2's controller manager, each a process of its own in its own
process group, as controller-runtime's envtest starts them: no containers, no kubelet.
Binaries come from :func:`trainjobs.sandbox.binaries.binaries`. Everything else —
certificates, ports, kubeconfig, logs, etcd's data — lives in one folder given to
:class:`ControlPlane`.
"""

from __future__ import annotations

import base64
import concurrent.futures
import copy
import os
import ssl
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import yaml

from trainjobs.k8s.crds import crd_files
from trainjobs.sandbox.api import Api, ApiError, http_ok, https_ok
from trainjobs.sandbox.binaries import binaries
from trainjobs.sandbox.installs import (
    CRD_PREFERRED,
    OPERATOR_GROUPS,
    WEBHOOK_SECRET,
    by_url,
    shipped_runtimes,
    trainer_webhooks,
    training_operator_webhooks,
)
from trainjobs.sandbox.kwok import KWOK_ANNOTATION, KWOK_STAGES
from trainjobs.sandbox.operators import OperatorRun, Operators
from trainjobs.sandbox.pki import Issued, issue, make_ca, signing_key_pair
from trainjobs.sandbox.programs import (
    Program,
    StartupError,
    free_ports,
    port_free,
    tail,
    wait_for,
)

__all__ = [
    "KUBE_CONTROLLERS",
    "MIN_FREE_BYTES",
    "MPI_OPERATOR_HEALTH_PORT",
    "PORT_NAMES",
    "ControlPlane",
    "controller_config",
]

KUBE_CONTROLLERS = (
    "job-controller",
    "replicaset-controller",
    "deployment-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "ttl-after-finished-controller",
    "persistentvolume-binder-controller",
    "persistentvolumeclaim-protection-controller",
    "persistentvolume-protection-controller",
)
"""What the tests need of kube-controller-manager: batch Jobs (DatasetJob), Deployments
and ReplicaSets (backends, operators), owner-reference garbage collection, namespace
deletion, each namespace's default ServiceAccount, and binding a PersistentVolumeClaim to
a PersistentVolume (the PVC a JobSet's volumeClaimPolicies creates), and letting a
deleted claim or volume go once nothing uses it (their protection finalizers)."""

MPI_OPERATOR_HEALTH_PORT = 8080
"""The MPI Operator's health port: fixed in its code, on every address."""

MIN_FREE_BYTES = 1 << 30
"""The least free disk the control plane starts with, and keeps: etcd exits at its first
write to a full disk, and the API server then answers every request with a timeout."""

NO_MPI_OPERATOR = (
    f"the MPI Operator is not running: port {MPI_OPERATOR_HEALTH_PORT}, which it always "
    "binds, is taken (another sandbox, or a test session?); MPIJobs stay unreconciled"
)

PORT_NAMES = (
    "etcd-client",
    "etcd-peer",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "training-operator-webhook",
    "training-operator-metrics",
    "training-operator-health",
    "jobset-webhook",
    "jobset-health",
    "trainer-webhook",
    "trainer-health",
)
"""The loopback ports a control plane listens on, in the order it picks them."""


@dataclass
class ControlPlane:
    """etcd, the Kubernetes control plane, kwok and the Kubeflow operators on loopback.

    ``with ControlPlane(workdir) as cp:`` starts everything (or stops what started and
    raises :class:`StartupError` with the failing program's log) and stops it all on
    exit, whatever happened. ``workdir`` holds certificates, the kubeconfig, etcd's
    data and one log per program (``<workdir>/logs/<program>.log``).
    """

    workdir: Path
    bins: dict[str, Path] = field(default_factory=dict)
    """The binaries to run, by name (:data:`BINARIES`); default :func:`binaries`."""
    context: str = "trainjobs-test"
    """The kubeconfig's context (and cluster) name."""
    detached: bool = False
    """True: the programs outlive this process (``trainjobs sandbox up``); False: they
    die with it (a test session)."""
    mpi_operator: Literal["yes", "no", "if-port-free"] = "yes"
    """Whether the MPI Operator runs. It binds port 8080 on every address (its health
    port is fixed in its code), so one runs per machine: ``if-port-free`` skips it, with
    a note in :attr:`notes`, when that port is taken."""
    operators: Operators = field(default_factory=Operators)
    """Which operators run, where and how (:mod:`trainjobs.sandbox.operators`): default
    the built-in ones."""
    programs: list[Program] = field(default_factory=list)
    api: Api | None = None
    kubeconfig: Path = field(init=False)
    logs: Path = field(init=False)
    started_in: float = 0.0
    ports: dict[str, int] = field(default_factory=dict)
    """The loopback port of each listener, by name (apiserver, etcd-client …)."""
    notes: list[str] = field(default_factory=list)
    """What the start left out, and why (for people)."""
    webhook_configs: list[str] = field(default_factory=list)
    """Names of the webhook configurations registered here (by URL, on loopback): a
    render's objects of the same name would merge into them."""
    training_operator_namespace: str = field(default="kubeflow", init=False)
    """Where the Training Operator runs (set by :meth:`start`)."""
    mpi_namespace: str = field(default="mpi-operator", init=False)
    """The MPI Operator's lock namespace (set by :meth:`start`)."""

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.logs = self.workdir / "logs"
        self.logs.mkdir(exist_ok=True)
        self.kubeconfig = self.workdir / "kubeconfig"

    # lifecycle

    def __enter__(self) -> ControlPlane:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start every program in dependency order and wait until each is ready."""
        began = time.monotonic()
        if short := self.disk_short():
            raise StartupError(short)
        if not self.bins:
            self.bins = binaries()
        operators = self.operators
        run_mpi = operators.mpi_operator is not None and (
            self.mpi_operator == "yes"
            or (self.mpi_operator == "if-port-free" and port_free(MPI_OPERATOR_HEALTH_PORT))
        )
        if operators.mpi_operator is not None and not run_mpi:
            self.notes.append(NO_MPI_OPERATOR)
        pki = self.workdir / "pki"
        pki.mkdir(exist_ok=True)
        (
            etcd_client,
            etcd_peer,
            apiserver,
            kcm,
            scheduler,
            webhook,
            to_metrics,
            to_health,
            jobset_webhook,
            jobset_health,
            trainer_webhook,
            trainer_health,
        ) = ports = free_ports(12)
        self.ports = dict(zip(PORT_NAMES, ports, strict=True))
        if run_mpi:
            self.ports["mpi-operator-health"] = MPI_OPERATOR_HEALTH_PORT
        self.apiserver_port = apiserver

        # Certificates: one CA for serving and clients; the service-account signing key.
        ca = make_ca(f"{self.context}-ca")
        ca.write(pki / "ca.crt", pki / "ca.key")
        serving = issue(
            ca,
            "kube-apiserver",
            dns=["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
            ips=["127.0.0.1", "10.0.0.1"],
            server=True,
        )
        serving.write(pki / "apiserver.crt", pki / "apiserver.key")
        admin = issue(ca, "trainjobs-admin", organization="system:masters", client=True)
        admin.write(pki / "admin.crt", pki / "admin.key")
        sa_private, sa_public = signing_key_pair()
        (pki / "sa.key").write_bytes(sa_private)
        (pki / "sa.key").chmod(0o600)
        (pki / "sa.pub").write_bytes(sa_public)
        self._write_kubeconfig(apiserver)
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self.api = Api(apiserver, context)

        etcd = self._spawn(
            "etcd",
            [
                str(self.bins["etcd"]),
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_client}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_client}",
                f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}",
                f"--initial-cluster=default=http://127.0.0.1:{etcd_peer}",
                "--unsafe-no-fsync=true",  # test data: speed over durability
                "--log-level=warn",
            ],
        )
        wait_for("etcd", lambda: http_ok(etcd_client, "/health"), 30, alive=etcd.check_alive)

        kube_apiserver = self._spawn(
            "kube-apiserver",
            [
                str(self.bins["kube-apiserver"]),
                f"--etcd-servers=http://127.0.0.1:{etcd_client}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={apiserver}",
                f"--cert-dir={pki}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                "--authorization-mode=RBAC",
                # As envtest: no ServiceAccount admission, so a dry run of a stack need
                # not have created the ServiceAccounts its pods name. No TaintNodesByCondition:
                # its not-ready taint on a new Node is lifted by the node lifecycle
                # controller, which does not run here (kwok's nodes need no heartbeat).
                # PodSecurity (on by default) stays: proof 4 relies on it.
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                f"--service-account-issuer=https://127.0.0.1:{apiserver}/",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--endpoint-reconciler-type=none",
                "--profiling=false",
            ],
        )
        wait_for(
            "kube-apiserver /readyz",
            self.api.ready,
            60,
            every=0.2,
            alive=kube_apiserver.check_alive,
        )

        kcm_program = self._spawn(
            "kube-controller-manager",
            [
                *self._kube_component("kube-controller-manager", kcm, pki / "kcm"),
                "--use-service-account-credentials=false",
                f"--controllers={','.join(KUBE_CONTROLLERS)}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--service-account-private-key-file={pki / 'sa.key'}",
            ],
        )
        scheduler_program = self._spawn(
            "kube-scheduler", self._kube_component("kube-scheduler", scheduler, pki / "scheduler")
        )
        stages = self.workdir / "kwok-stages.yaml"
        stages.write_text(KWOK_STAGES)
        kwok = self._spawn(
            "kwok",
            [
                str(self.bins["kwok"]),
                f"--kubeconfig={self.kubeconfig}",
                f"--config={stages}",
                f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
                "--cidr=10.244.0.0/16",
                "--node-ip=10.96.0.1",
            ],
        )

        # What the operators need before they start: their namespaces, every CRD
        # trainjobs ships, the Training Operator's webhook certificate and config.
        runs = (operators.training_operator, operators.mpi_operator)
        for run in (*runs, operators.jobset, operators.trainer):
            if run is not None:
                self.ensure_namespace(run.namespace)
        # The operators' own CRDs first (they watch them from the start); the rest
        # install in the background while the operators start.
        crds = self.shipped_crds()
        mine = {n: c for n, c in crds.items() if c["spec"]["group"] in OPERATOR_GROUPS}
        self.install_crds(mine.values())
        rest = concurrent.futures.ThreadPoolExecutor(1)
        others = rest.submit(self.install_crds, [c for n, c in crds.items() if n not in mine])
        training_operator = None
        if operators.training_operator is not None:
            training_operator = self._start_training_operator(
                operators.training_operator, pki, webhook, to_metrics, to_health
            )
        mpi_operator = None
        if run_mpi:
            assert operators.mpi_operator is not None
            self.mpi_namespace = operators.mpi_operator.namespace
            mpi_operator = self._spawn(
                "mpi-operator",
                [
                    str(self.bins["mpi-operator"]),
                    f"--kubeConfig={self.kubeconfig}",
                    f"--lock-namespace={self.mpi_namespace}",
                    *operators.mpi_operator.args,
                    "--threadiness=2",
                    "--kube-api-qps=50",
                    "--kube-api-burst=100",
                ],
                env={"KUBECONFIG": str(self.kubeconfig)},
            )

        jobset = trainer = None
        if operators.jobset is not None:
            config = self._jobset_config(operators.jobset, jobset_webhook, jobset_health)
            jobset = self._spawn_configured("jobset", config)
        if operators.trainer is not None:
            config = self._trainer_config(operators.trainer, trainer_webhook, trainer_health)
            # controller-runtime's webhook server: $TMPDIR/k8s-webhook-server/serving-certs.
            trainer = self._spawn_configured(
                "trainer-controller-manager", config, TMPDIR=str(self.workdir / "trainer-tmp")
            )

        # Each program's readiness: (what, probe, timeout, the program, poll interval).
        waits: list[tuple[str, Callable[[], bool], float, Program | None, float]] = [
            (
                "kube-controller-manager /healthz",
                lambda: https_ok(kcm, "/healthz"),
                60,
                kcm_program,
                0.1,
            ),
            (
                "kube-scheduler /healthz",
                lambda: https_ok(scheduler, "/healthz"),
                60,
                scheduler_program,
                0.1,
            ),
            (
                "training-operator /readyz (certificates and webhook server)",
                lambda: http_ok(to_health, "/readyz"),
                90,
                training_operator,
                0.1,
            ),
            # Ready is not yet serving: on a busy machine its validating webhook answered
            # 404 for a while after /readyz said ok, and a TFJob applied then was refused.
            (
                "training-operator's webhook to validate a TFJob (a dry run)",
                self._tfjob_webhook_answers,
                90,
                training_operator,
                0.5,
            ),
            (
                "jobset /readyz (webhook server)",
                lambda: http_ok(jobset_health, "/readyz"),
                90,
                jobset,
                0.1,
            ),
            (
                "trainer-controller-manager /readyz (webhook server)",
                lambda: http_ok(trainer_health, "/readyz"),
                90,
                trainer,
                0.1,
            ),
        ]
        for what, probe, timeout, program, every in waits:
            if program is not None:
                wait_for(what, probe, timeout, every=every, alive=program.check_alive)
        if trainer is not None:
            self._install_runtimes()
        if mpi_operator is not None:
            try:
                wait_for(
                    f"mpi-operator to lead (Lease {self.mpi_namespace}/mpi-operator)",
                    self._mpi_operator_leads,
                    60,
                    alive=mpi_operator.check_alive,
                )
            except StartupError:
                # Another MPI Operator took port 8080 between the check and the start.
                if self.mpi_operator == "yes" or "address already in use" not in tail(
                    mpi_operator.log
                ):
                    raise
                mpi_operator.stop()  # reaps it
                self.programs.remove(mpi_operator)
                self.ports.pop("mpi-operator-health", None)
                self.notes.append(NO_MPI_OPERATOR)
        kwok.check_alive()
        others.result()
        rest.shutdown()
        self.started_in = time.monotonic() - began

    def stop(self) -> None:
        """Stop every program, newest first (operators before the API server before etcd)."""
        for program in reversed(self.programs):
            program.stop()

    def alive(self) -> None:
        """Raise :class:`StartupError` when a program has died since it started."""
        for program in self.programs:
            program.check_alive()

    def broken(self) -> str | None:
        """Why the control plane can serve no more requests, or None: etcd or the API
        server has exited (the end of its log follows), or the disk is all but full."""
        for program in self.programs:
            if program.name in ("etcd", "kube-apiserver") and not program.running():
                try:
                    program.check_alive()
                except StartupError as exc:
                    return str(exc)
        return self.disk_short()

    def disk_short(self) -> str | None:
        """A sentence when the disk under :attr:`workdir` has less than
        :data:`MIN_FREE_BYTES` free, else None."""
        stat = os.statvfs(self.workdir)
        free = stat.f_bavail * stat.f_frsize
        if free >= MIN_FREE_BYTES:
            return None
        return (
            f"only {free / (1 << 20):.0f} MiB free on the disk of {self.workdir} "
            f"(the control plane needs {MIN_FREE_BYTES >> 20} MiB: etcd exits at its first "
            "write to a full disk); free some space and start again"
        )

    def log_tails(self, lines: int = 30) -> str:
        """The end of every program's log, for a failing test's report."""
        parts = []
        for program in self.programs:
            state = "running" if program.running() else "EXITED"
            parts.append(f"--- {program.name} ({state}) {program.log}\n{tail(program.log, lines)}")
        return "\n".join(parts)

    # helpers for tests

    @property
    def client(self) -> Api:
        assert self.api is not None, "control plane not started"
        return self.api

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the real kubectl (the cluster's own version) against this control plane."""
        result = subprocess.run(
            [str(self.bins["kubectl"]), f"--kubeconfig={self.kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise ApiError(
                "kubectl",
                " ".join(args),
                result.returncode,
                {"message": (result.stderr or result.stdout).strip()},
            )
        return result

    def ensure_namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        """Create a namespace unless it exists (labels only on create)."""
        if self.client.get(f"/api/v1/namespaces/{name}") is None:
            meta: dict[str, Any] = {"name": name}
            if labels:
                meta["labels"] = labels
            self.client.create(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
            )

    def shipped_crds(self) -> dict[str, dict[str, Any]]:
        """Every CRD trainjobs ships, by name (one file per name: see CRD_PREFERRED)."""
        chosen: dict[str, dict[str, Any]] = {}
        preferred_files = {**CRD_PREFERRED, "mpijobs.kubeflow.org": self.operators.mpijob_crd}
        for path in crd_files():
            crd = yaml.safe_load(path.read_text())
            if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                continue
            name = crd["metadata"]["name"]
            preferred = preferred_files.get(name)
            if preferred is None or str(path).endswith(preferred):
                chosen[name] = crd
        return dict(sorted(chosen.items()))

    def install_crds(self, crds: Iterable[dict[str, Any]]) -> None:
        """Create the CRDs (replacing any of another shape) and wait until each is Established."""
        # Concurrently: the API server builds each CRD's OpenAPI and handlers, seconds
        # apiece for the large ones, and can work on several at once.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(self.put_crd, crds))

    def put_crd(self, crd: dict[str, Any], *, wait: bool = True) -> None:
        """Create the CRD, or replace it (deleting the old one) when it differs in versions."""
        name = crd["metadata"]["name"]
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
        current = self.client.get(path)
        body = copy.deepcopy(crd)
        body.pop("status", None)
        if current is not None:
            have = [v["name"] for v in current["spec"]["versions"]]
            want = [v["name"] for v in body["spec"]["versions"]]
            if have == want:
                return
            self.client.delete(path)
            wait_for(f"CRD {name} deleted", lambda: self.client.get(path) is None, 60)
        self.client.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
        if wait:
            self.wait_established(name)

    def wait_established(self, name: str, timeout: float = 120) -> None:
        # Generous: on a busy 2-core machine (a Go build beside it) the API server took
        # over 30 s to establish the large CRDs while building their OpenAPI.
        path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"

        def established() -> bool:
            crd = self.client.get(path) or {}
            conditions = (crd.get("status") or {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        wait_for(f"CRD {name} Established", established, timeout, every=0.05)

    # internals

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Program:
        full_env = None
        if env is not None:
            full_env = dict(os.environ)
            full_env.update(env)
        program = Program(name, argv, self.logs / f"{name}.log", full_env, self.detached)
        self.programs.append(program)
        program.start()
        return program

    def _write_kubeconfig(self, port: int) -> None:
        pki = self.workdir / "pki"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.context,
                    "cluster": {
                        "server": f"https://127.0.0.1:{port}",
                        "certificate-authority": str(pki / "ca.crt"),
                    },
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate": str(pki / "admin.crt"),
                        "client-key": str(pki / "admin.key"),
                    },
                }
            ],
            "contexts": [
                {
                    "name": self.context,
                    "context": {"cluster": self.context, "user": "admin"},
                }
            ],
            "current-context": self.context,
        }
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        self.kubeconfig.chmod(0o600)

    def _spawn_configured(self, name: str, config: Path, **env: str) -> Program:
        """A controller-runtime manager that reads its configuration file (JobSet, Trainer)."""
        return self._spawn(
            name,
            [str(self.bins[name]), f"--config={config}", "--zap-log-level=info"],
            env={"KUBECONFIG": str(self.kubeconfig), **env},
        )

    def _kube_component(self, name: str, port: int, cert_dir: Path) -> list[str]:
        """The flags kube-controller-manager and kube-scheduler share here."""
        return [
            str(self.bins[name]),
            f"--kubeconfig={self.kubeconfig}",
            "--profiling=false",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={cert_dir}",
            "--leader-elect=false",
        ]

    def _start_training_operator(
        self, run: OperatorRun, pki: Path, webhook: int, metrics: int, health: int
    ) -> Program:
        """The Training Operator in ``run.namespace`` with the install's flags."""
        self.training_operator_namespace = run.namespace
        self._training_operator_webhook(run, webhook)
        return self._spawn(
            "training-operator",
            [
                str(self.bins["training-operator"]),
                *run.args,
                f"--metrics-bind-address=127.0.0.1:{metrics}",
                f"--health-probe-bind-address=127.0.0.1:{health}",
                f"--webhook-server-port={webhook}",
                "--zap-log-level=info",
                "--zap-devel=false",
            ],
            env={
                "KUBECONFIG": str(self.kubeconfig),
                "MY_POD_NAMESPACE": run.namespace,
                # controller-runtime's webhook server reads its certificate from
                # $TMPDIR/k8s-webhook-server/serving-certs: a folder of our own.
                "TMPDIR": str(self.workdir / "training-operator-tmp"),
            },
        )

    def _training_operator_webhook(self, run: OperatorRun, port: int) -> None:
        """Our certificate in the operator's Secret and folder, and its webhook config.

        The operator's certificate rotator keeps a certificate it finds valid in the
        Secret (CA valid for ``training-operator-ca``, server certificate valid for
        ``training-operator.<namespace>.svc``); ours also names 127.0.0.1, where the API
        server reaches the webhook by URL since no Service can route to loopback. The
        webhook configuration is the stack's install's when it has one, else the built-in.
        """
        namespace = run.namespace
        ca = make_ca(
            "training-operator-ca",
            organization="training-operator",
            dns=["training-operator-ca"],
            use_rsa=True,
        )
        server = issue(
            ca,
            f"training-operator.{namespace}.svc",
            dns=[f"training-operator.{namespace}.svc", "localhost"],
            ips=["127.0.0.1"],
            server=True,
        )

        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode()

        self.client.create(
            f"/api/v1/namespaces/{namespace}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": WEBHOOK_SECRET, "namespace": namespace},
                "data": {
                    "ca.crt": b64(ca.cert_pem),
                    "ca.key": b64(ca.key_pem),
                    "tls.crt": b64(server.cert_pem),
                    "tls.key": b64(server.key_pem),
                },
            },
        )
        # What the kubelet would mount from that Secret.
        certs = self.workdir / "training-operator-tmp" / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        server.write(certs / "tls.crt", certs / "tls.key")
        (certs / "ca.crt").write_bytes(ca.cert_pem)
        # The rotator also waits for /tmp/k8s-webhook-server/serving-certs/tls.crt to
        # exist (a path it hard-codes, apart from the server's $TMPDIR): it only checks
        # that the file is there, so an empty file will do when there is none.
        fixed = Path("/tmp/k8s-webhook-server/serving-certs")
        fixed.mkdir(parents=True, exist_ok=True)
        (fixed / "tls.crt").touch(exist_ok=True)

        if run.webhooks:
            for config in run.webhooks:
                self._put_webhook_configuration(by_url(config, port, ca.cert_pem))
        else:
            self._put_webhook_configuration(training_operator_webhooks(port, ca.cert_pem))

    def serving_certs(self, folder: Path, name: str) -> Issued:
        """A CA and a serving certificate for 127.0.0.1 in ``folder`` (tls.crt, tls.key,
        ca.crt): what the kubelet would mount from the install's webhook Secret."""
        ca = make_ca(f"{name}-ca")
        server = issue(ca, name, dns=["localhost"], ips=["127.0.0.1"], server=True)
        folder.mkdir(parents=True, exist_ok=True)
        server.write(folder / "tls.crt", folder / "tls.key")
        (folder / "ca.crt").write_bytes(ca.cert_pem)
        return ca

    def _jobset_config(self, run: OperatorRun, webhook: int, health: int) -> Path:
        """JobSet's configuration file (see :func:`controller_config`) and its webhooks,
        registered by URL."""
        certs = self.workdir / "pki" / "jobset"
        ca = self.serving_certs(certs, "jobset-webhook")
        config = controller_config(
            "config.jobset.x-k8s.io/v1alpha1", webhook, health, cert_dir=certs
        )
        self._controller_webhooks(run, "jobset", webhook, ca.cert_pem)
        return self.write_config("jobset-config.yaml", config)

    def _trainer_config(self, run: OperatorRun, webhook: int, health: int) -> Path:
        """The Trainer's configuration file (as _jobset_config) and its webhooks."""
        certs = self.workdir / "trainer-tmp" / "k8s-webhook-server" / "serving-certs"
        ca = self.serving_certs(certs, "trainer-webhook")
        config = controller_config(
            "config.trainer.kubeflow.org/v1alpha1", webhook, health, cert_key="certManagement"
        )
        self._controller_webhooks(run, "trainer", webhook, ca.cert_pem)
        return self.write_config("trainer-config.yaml", config)

    def _controller_webhooks(self, run: OperatorRun, which: str, port: int, ca: bytes) -> None:
        """The install's webhook configurations (the stack's, else the built-in), by URL."""
        if run.webhooks:
            configs = [by_url(c, port, ca) for c in run.webhooks]
        else:
            configs = trainer_webhooks(which, port, ca)
        for config in configs:
            self._put_webhook_configuration(config)

    def write_config(self, name: str, config: dict[str, Any]) -> Path:
        """Write a program's configuration file into the work folder; its path."""
        path = self.workdir / name
        path.write_text(yaml.safe_dump(config))
        return path

    def _put_webhook_configuration(self, config: dict[str, Any]) -> None:
        plural = config["kind"].lower() + "s"
        self.client.create(f"/apis/admissionregistration.k8s.io/v1/{plural}", config)
        self.webhook_configs.append(config["metadata"]["name"])

    def _install_runtimes(self) -> None:
        """The ClusterTrainingRuntimes trainjobs' Trainer install ships (as upstream's
        install does by default), so a TrainJob may name them as on a real cluster."""
        for runtime in shipped_runtimes():
            self.client.create(
                "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes", runtime
            )

    def _tfjob_webhook_answers(self) -> bool:
        probe = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": "webhook-probe", "namespace": self.training_operator_namespace},
            "spec": {
                "tfReplicaSpecs": {
                    "Worker": {
                        "replicas": 1,
                        "template": {
                            "spec": {"containers": [{"name": "tensorflow", "image": "probe"}]}
                        },
                    }
                }
            },
        }
        answer = self.client.request(
            "POST",
            f"/apis/kubeflow.org/v1/namespaces/{self.training_operator_namespace}/tfjobs?dryRun=All",
            probe,
            ok=range(400, 600),
        )
        return "failed calling webhook" not in str(answer.get("message", ""))

    def _mpi_operator_leads(self) -> bool:
        lease = self.client.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{self.mpi_namespace}/leases/mpi-operator"
        )
        return bool(lease and lease.get("spec", {}).get("holderIdentity"))


def controller_config(
    api_version: str,
    webhook: int,
    health: int,
    *,
    cert_dir: Path | None = None,
    cert_key: str = "internalCertManagement",
    **extra: Any,
) -> dict[str, Any]:
    """A controller-runtime manager's configuration file as the sandbox runs it (JobSet,
    Trainer, Kueue): no leader election, no metrics, its webhook server on loopback with
    our certificate instead of its own cert rotator (``cert_key`` names that switch),
    health on loopback; ``extra`` adds the program's own keys."""
    server: dict[str, Any] = {"host": "127.0.0.1", "port": webhook}
    if cert_dir is not None:
        server["certDir"] = str(cert_dir)
    return {
        "apiVersion": api_version,
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        cert_key: {"enable": False},
        "webhook": server,
        "metrics": {"bindAddress": "0"},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        **extra,
    }
