"""A Kubernetes control plane on loopback, made of the real programs.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake nodes that
"run" pods), the Kubeflow Training Operator v1, the MPI Operator, the JobSet controller
and Kubeflow Trainer v2's controller manager, each a process
of its own in its own process group, as controller-runtime's envtest starts them: no
containers, no kubelet. Binaries come from ``tests/cluster/build.sh`` (cached under
``~/.cache/trainjobs``; built on first use). Everything else — certificates, ports,
kubeconfig, logs, etcd's data — lives in one folder given to :class:`ControlPlane`.

This is a plain module (no pytest): ``tests/cluster/conftest.py`` wraps it in a
session fixture, and ``python -m tests.cluster.control_plane`` starts one by hand and
prints its kubeconfig until Ctrl-C.
"""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import copy
import datetime
import http.client
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from trainjobs.k8s.crds import crd_files

__all__ = [
    "BINARIES",
    "ApiError",
    "ControlPlane",
    "StartupError",
    "binaries",
]

HERE = Path(__file__).resolve().parent
BUILD_SH = HERE / "build.sh"

BINARIES: dict[str, str] = {
    "etcd": "etcd",
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "kubectl": "kubernetes",
    "kwok": "kwok",
    "training-operator": "training-operator",
    "mpi-operator": "mpi-operator",
    "jobset": "jobset",
    "trainer-controller-manager": "trainer",
}
"""Each binary the control plane runs, and the build.sh program that builds it."""

TRAINING_OPERATOR_NAMESPACE = "kubeflow"
TRAINING_OPERATOR_SCHEMES = ("tfjob", "pytorchjob", "xgboostjob", "paddlejob", "jaxjob")
"""--enable-scheme of the Training Operator: every v1.9 kind but MPIJob, whose CRD name
(mpijobs.kubeflow.org) the MPI Operator's v2beta1 MPIJob holds in this cluster."""
MPI_OPERATOR_LOCK_NAMESPACE = "mpi-operator"
WEBHOOK_SECRET = "training-operator-webhook-cert"
WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"
TRAINER_NAMESPACE = "kubeflow-system"
"""Where the Trainer and JobSet installs run (upstream's namespace for both)."""
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
"""Nodes carrying ``kwok.x-k8s.io/node: fake`` are the ones kwok runs."""

CRD_PREFERRED = {"mpijobs.kubeflow.org": "mpi-operator-v0.8/kubeflow.org_mpijobs.yaml"}
"""CRD names that two shipped files declare, and the file installed here. Otherwise the
last file in sorted order wins (training-operator-v1.9.4 over v1.8.1)."""

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


class StartupError(RuntimeError):
    """A program did not start or become ready; the message names it and its log."""


class ApiError(RuntimeError):
    """The API server answered a request with an error status."""

    def __init__(self, method: str, path: str, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        message = body.get("message", json.dumps(body)[:500])
        super().__init__(f"{method} {path}: {status} {message}")


# --- binaries -------------------------------------------------------------------------


def _bin_dir(program: str) -> Path:
    out = subprocess.run(
        [str(BUILD_SH), "--print-dir", program], check=True, capture_output=True, text=True
    )
    return Path(out.stdout.strip())


def binaries(build: bool = True) -> dict[str, Path]:
    """The path of every binary in :data:`BINARIES`; builds the missing programs first.

    The first build on a machine takes many minutes (Go builds Kubernetes); its
    progress goes to stderr. With ``build=False`` a missing binary is an error.
    """
    dirs = {program: _bin_dir(program) for program in sorted(set(BINARIES.values()))}
    paths = {name: dirs[program] / name for name, program in BINARIES.items()}
    missing = sorted(
        {BINARIES[name] for name, path in paths.items() if not os.access(path, os.X_OK)}
    )
    if missing and build:
        print(f"building {', '.join(missing)} with {BUILD_SH} (once per machine)", file=sys.stderr)
        subprocess.run([str(BUILD_SH), *missing], check=True, stdout=sys.stderr)
        missing = sorted(
            {BINARIES[name] for name, path in paths.items() if not os.access(path, os.X_OK)}
        )
    if missing:
        raise StartupError(
            f"not built: {', '.join(missing)}; run `tests/cluster/build.sh {' '.join(missing)}`"
        )
    return paths


# --- certificates ---------------------------------------------------------------------

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
VALIDITY = datetime.timedelta(days=730)
"""Two years: the Training Operator's certificate rotator replaces a server certificate
that expires within 90 days, and ours must be the one it keeps."""


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key, PEM-encoded."""

    cert: x509.Certificate
    key: PrivateKey

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        # PKCS#1 for RSA: the certificate rotator parses its CA key only in that form.
        fmt = (
            serialization.PrivateFormat.TraditionalOpenSSL
            if isinstance(self.key, rsa.RSAPrivateKey)
            else serialization.PrivateFormat.PKCS8
        )
        return self.key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())

    def write(self, cert_path: Path, key_path: Path) -> None:
        cert_path.write_bytes(self.cert_pem)
        key_path.write_bytes(self.key_pem)
        key_path.chmod(0o600)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attrs)


def make_ca(
    common_name: str,
    *,
    organization: str | None = None,
    dns: Sequence[str] = (),
    use_rsa: bool = False,
) -> Issued:
    """A self-signed certificate authority."""
    key: PrivateKey = (
        rsa.generate_private_key(65537, 2048)
        if use_rsa
        else ec.generate_private_key(ec.SECP256R1())
    )
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organization))
        .issuer_name(_name(common_name, organization))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    return Issued(builder.sign(key, hashes.SHA256()), key)


def issue(
    ca: Issued,
    common_name: str,
    *,
    organization: str | None = None,
    dns: Sequence[str] = (),
    ips: Sequence[str] = (),
    server: bool = False,
    client: bool = False,
) -> Issued:
    """A leaf certificate signed by ``ca`` for a server (names and IPs) and/or a client."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organization))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    )
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


# --- processes ------------------------------------------------------------------------


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together while chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _die_with_parent() -> None:
    # Linux: the kernel kills the child when the test process dies, even by SIGKILL,
    # so a crashed or killed pytest leaves no control plane behind.
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


@dataclass
class Program:
    """One running program: its own process group, its output in ``log``."""

    name: str
    argv: list[str]
    log: Path
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = None
    _log_handle: IO[bytes] | None = None

    def start(self) -> None:
        self._log_handle = self.log.open("ab")
        self._log_handle.write(f"$ {' '.join(self.argv)}\n".encode())
        self._log_handle.flush()
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log_handle,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise StartupError(
                f"{self.name} exited with code {self.process.returncode}; "
                f"its log ({self.log}) ends:\n{tail(self.log)}"
            )

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the whole process group, SIGKILL what is left after ``grace`` seconds."""
        if self.process is None:
            return
        pgid = self.process.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(grace)
        # The group may hold children the leader started; nothing may outlive the fixture.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self._log_handle is not None:
            self._log_handle.close()
            self._log_handle = None


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file (empty when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def wait_for(
    what: str,
    probe: Callable[[], bool],
    timeout: float,
    *,
    every: float = 0.1,
    alive: Callable[[], None] | None = None,
) -> None:
    """Poll ``probe`` until it is true; :class:`StartupError` naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            if probe():
                return
        except (OSError, ApiError, http.client.HTTPException) as exc:
            last = exc
        time.sleep(every)
    raise StartupError(
        f"timed out after {timeout:.0f}s waiting for {what}" + (f" ({last})" if last else "")
    )


# --- the API client -------------------------------------------------------------------


@dataclass
class Api:
    """A small JSON client of the API server (client-certificate auth).

    Enough for the fixture and the tests' waits; applying manifests goes through the
    real kubectl (:meth:`ControlPlane.kubectl`).
    """

    port: int
    context: ssl.SSLContext

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        ok: Sequence[int] = (),
    ) -> dict[str, Any]:
        """Send one request; the decoded JSON answer. Statuses >= 400 not in ``ok`` raise."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=30)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Accept": "application/json"}
            if data is not None:
                headers["Content-Type"] = content_type
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        finally:
            conn.close()
        try:
            decoded = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            decoded = {"message": raw.decode(errors="replace")}
        if not isinstance(decoded, dict):
            decoded = {"value": decoded}
        if response.status >= 400 and response.status not in ok:
            raise ApiError(method, path, response.status, decoded)
        if response.status >= 400:
            decoded["_status"] = response.status
        return decoded

    def get(self, path: str) -> dict[str, Any] | None:
        """The object at ``path``, or None when it does not exist."""
        found = self.request("GET", path, ok=(404,))
        return None if found.get("_status") == 404 else found

    def items(self, path: str) -> list[dict[str, Any]]:
        """The items of a list ``path`` (e.g. ``/api/v1/namespaces/x/pods``)."""
        listed = self.request("GET", path)
        items: list[dict[str, Any]] = listed.get("items", [])
        return items

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, obj)

    def delete(self, path: str) -> None:
        self.request("DELETE", path, {"propagationPolicy": "Background"}, ok=(404,))

    def ready(self) -> bool:
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.context, timeout=5)
        try:
            conn.request("GET", "/readyz")
            return conn.getresponse().status == 200
        finally:
            conn.close()


# --- kwok stages ----------------------------------------------------------------------

# Our own minimal stages: a fake node becomes Ready with the capacity it was created
# with; a scheduled pod becomes Running (and Ready) at once; a pod being deleted is
# removed (no kubelet would ever finish a graceful delete); a pod annotated
# trainjobs.dev/kwok-succeed completes with exit code 0.
KWOK_STAGES = """\
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: trainjobs-node-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Ready, status: "True", reason: KwokReady, message: "kwok runs this node",
         lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}}
      addresses:
      - {type: InternalIP, address: {{ NodeIP | Quote }}}
      - {type: Hostname, address: {{ NodeName | Quote }}}
      allocatable:
      {{ with .status.allocatable }}
      {{ YAML . 1 }}
      {{ else }}
        {cpu: "64", memory: 512Gi, pods: "110"}
      {{ end }}
      capacity:
      {{ with .status.capacity }}
      {{ YAML . 1 }}
      {{ else }}
        {cpu: "64", memory: 512Gi, pods: "110"}
      {{ end }}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: fake
        kubeProxyVersion: fake
        containerRuntimeVersion: kwok
        kernelVersion: kwok
        osImage: kwok
        machineID: ""
        bootID: ""
        systemUUID: ""
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: trainjobs-pod-running}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.phase, operator: In, values: [Pending]}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: PodScheduled, status: "True", lastTransitionTime: {{ $now | Quote }}}
      containerStatuses:
      {{ range .spec.containers }}
      - {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: true, started: true,
         restartCount: 0, state: {running: {startedAt: {{ $now | Quote }}}}}
      {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      {{ end }}
      {{ with PodIPsWith .spec.nodeName false ( or .metadata.uid "" )
         ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      podIP: {{ index . 0 | Quote }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: trainjobs-pod-succeeded}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .status.phase, operator: In, values: [Running]}
    - {key: '.metadata.annotations["trainjobs.dev/kwok-succeed"]', operator: Exists}
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Ready, status: "False", reason: PodCompleted, lastTransitionTime: {{ $now | Quote }}}
      containerStatuses:
      {{ range .spec.containers }}
      - {name: {{ .name | Quote }}, image: {{ .image | Quote }}, ready: false, started: false,
         restartCount: 0, state: {terminated: {exitCode: 0, reason: Completed,
         startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}}}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: trainjobs-pod-delete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
  next:
    delete: true
"""


# --- the control plane ----------------------------------------------------------------


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
    programs: list[Program] = field(default_factory=list)
    api: Api | None = None
    kubeconfig: Path = field(init=False)
    logs: Path = field(init=False)
    started_in: float = 0.0
    webhook_configs: list[str] = field(default_factory=list)
    """Names of the webhook configurations registered here (by URL, on loopback): a
    render's objects of the same name would merge into them."""

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
        if not self.bins:
            self.bins = binaries()
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
        ) = free_ports(12)
        self.apiserver_port = apiserver

        # Certificates: one CA for serving and clients; the service-account signing key.
        ca = make_ca("trainjobs-test-ca")
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
        sa_key = ec.generate_private_key(ec.SECP256R1())
        (pki / "sa.key").write_bytes(
            sa_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        (pki / "sa.pub").write_bytes(
            sa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        self._write_kubeconfig(ca, admin, apiserver)
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
        wait_for("etcd", lambda: _http_ok(etcd_client, "/health"), 30, alive=etcd.check_alive)

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

        common = [f"--kubeconfig={self.kubeconfig}", "--profiling=false"]
        kcm_program = self._spawn(
            "kube-controller-manager",
            [
                str(self.bins["kube-controller-manager"]),
                *common,
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={kcm}",
                f"--cert-dir={pki / 'kcm'}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                f"--controllers={','.join(KUBE_CONTROLLERS)}",
                f"--root-ca-file={pki / 'ca.crt'}",
                f"--service-account-private-key-file={pki / 'sa.key'}",
            ],
        )
        scheduler_program = self._spawn(
            "kube-scheduler",
            [
                str(self.bins["kube-scheduler"]),
                *common,
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={scheduler}",
                f"--cert-dir={pki / 'scheduler'}",
                "--leader-elect=false",
            ],
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
        for namespace in (
            TRAINING_OPERATOR_NAMESPACE,
            MPI_OPERATOR_LOCK_NAMESPACE,
            TRAINER_NAMESPACE,
        ):
            self.ensure_namespace(namespace)
        # The operators' own CRDs first (they watch them from the start); the rest
        # install in the background while the operators start.
        crds = self.shipped_crds()
        mine = {n: c for n, c in crds.items() if c["spec"]["group"] in OPERATOR_GROUPS}
        self.install_crds(mine.values())
        rest = concurrent.futures.ThreadPoolExecutor(1)
        others = rest.submit(self.install_crds, [c for n, c in crds.items() if n not in mine])
        self._training_operator_webhook(pki, webhook)

        operator_tmp = self.workdir / "training-operator-tmp"
        training_operator = self._spawn(
            "training-operator",
            [
                str(self.bins["training-operator"]),
                *(f"--enable-scheme={s}" for s in TRAINING_OPERATOR_SCHEMES),
                f"--metrics-bind-address=127.0.0.1:{to_metrics}",
                f"--health-probe-bind-address=127.0.0.1:{to_health}",
                f"--webhook-server-port={webhook}",
                "--zap-log-level=info",
                "--zap-devel=false",
            ],
            env={
                "KUBECONFIG": str(self.kubeconfig),
                "MY_POD_NAMESPACE": TRAINING_OPERATOR_NAMESPACE,
                # controller-runtime's webhook server reads its certificate from
                # $TMPDIR/k8s-webhook-server/serving-certs: a folder of our own.
                "TMPDIR": str(operator_tmp),
            },
        )
        mpi_operator = self._spawn(
            "mpi-operator",
            [
                str(self.bins["mpi-operator"]),
                f"--kubeConfig={self.kubeconfig}",
                f"--lock-namespace={MPI_OPERATOR_LOCK_NAMESPACE}",
                "--threadiness=2",
                "--kube-api-qps=50",
                "--kube-api-burst=100",
            ],
            env={"KUBECONFIG": str(self.kubeconfig)},
        )

        jobset = self._spawn(
            "jobset",
            [
                str(self.bins["jobset"]),
                f"--config={self._jobset_config(pki, jobset_webhook, jobset_health)}",
                "--zap-log-level=info",
            ],
            env={"KUBECONFIG": str(self.kubeconfig)},
        )
        trainer_tmp = self.workdir / "trainer-tmp"
        trainer = self._spawn(
            "trainer-controller-manager",
            [
                str(self.bins["trainer-controller-manager"]),
                f"--config={self._trainer_config(trainer_webhook, trainer_health)}",
                "--zap-log-level=info",
            ],
            env={
                "KUBECONFIG": str(self.kubeconfig),
                # controller-runtime's webhook server: $TMPDIR/k8s-webhook-server/serving-certs.
                "TMPDIR": str(trainer_tmp),
            },
        )

        wait_for(
            "kube-controller-manager /healthz",
            lambda: _https_ok(kcm, "/healthz"),
            60,
            alive=kcm_program.check_alive,
        )
        wait_for(
            "kube-scheduler /healthz",
            lambda: _https_ok(scheduler, "/healthz"),
            60,
            alive=scheduler_program.check_alive,
        )
        wait_for(
            "training-operator /readyz (certificates and webhook server)",
            lambda: _http_ok(to_health, "/readyz"),
            90,
            alive=training_operator.check_alive,
        )
        wait_for(
            "mpi-operator to lead (Lease mpi-operator/mpi-operator)",
            self._mpi_operator_leads,
            60,
            alive=mpi_operator.check_alive,
        )
        wait_for(
            "jobset /readyz (webhook server)",
            lambda: _http_ok(jobset_health, "/readyz"),
            90,
            alive=jobset.check_alive,
        )
        wait_for(
            "trainer-controller-manager /readyz (webhook server)",
            lambda: _http_ok(trainer_health, "/readyz"),
            90,
            alive=trainer.check_alive,
        )
        self._install_runtimes()
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
        for path in crd_files():
            crd = yaml.safe_load(path.read_text())
            if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                continue
            name = crd["metadata"]["name"]
            preferred = CRD_PREFERRED.get(name)
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

    def wait_established(self, name: str, timeout: float = 30) -> None:
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
        program = Program(name, argv, self.logs / f"{name}.log", full_env)
        self.programs.append(program)
        program.start()
        return program

    def _write_kubeconfig(self, ca: Issued, admin: Issued, port: int) -> None:
        pki = self.workdir / "pki"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "trainjobs-test",
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
                    "name": "trainjobs-test",
                    "context": {"cluster": "trainjobs-test", "user": "admin"},
                }
            ],
            "current-context": "trainjobs-test",
        }
        del ca, admin
        self.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))
        self.kubeconfig.chmod(0o600)

    def _training_operator_webhook(self, pki: Path, port: int) -> None:
        """Our certificate in the operator's Secret and folder, and its webhook config.

        The operator's certificate rotator keeps a certificate it finds valid in the
        Secret (CA valid for ``training-operator-ca``, server certificate valid for
        ``training-operator.kubeflow.svc``); ours also names 127.0.0.1, where the API
        server reaches the webhook by URL since no Service can route to loopback.
        """
        ca = make_ca(
            "training-operator-ca",
            organization="training-operator",
            dns=["training-operator-ca"],
            use_rsa=True,
        )
        server = issue(
            ca,
            f"training-operator.{TRAINING_OPERATOR_NAMESPACE}.svc",
            dns=[f"training-operator.{TRAINING_OPERATOR_NAMESPACE}.svc", "localhost"],
            ips=["127.0.0.1"],
            server=True,
        )

        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode()

        self.client.create(
            f"/api/v1/namespaces/{TRAINING_OPERATOR_NAMESPACE}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": WEBHOOK_SECRET, "namespace": TRAINING_OPERATOR_NAMESPACE},
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

        self._put_webhook_configuration(training_operator_webhooks(port, ca.cert_pem))

    def _serving_certs(self, folder: Path, name: str) -> Issued:
        """A CA and a serving certificate for 127.0.0.1 in ``folder`` (tls.crt, tls.key,
        ca.crt): what the kubelet would mount from the install's webhook Secret."""
        ca = make_ca(f"{name}-ca")
        server = issue(ca, name, dns=["localhost"], ips=["127.0.0.1"], server=True)
        folder.mkdir(parents=True, exist_ok=True)
        server.write(folder / "tls.crt", folder / "tls.key")
        (folder / "ca.crt").write_bytes(ca.cert_pem)
        return ca

    def _jobset_config(self, pki: Path, webhook: int, health: int) -> Path:
        """JobSet's configuration file (no leader election, no metrics, our certificate
        instead of its cert rotator) and its webhooks, registered by URL."""
        certs = pki / "jobset"
        ca = self._serving_certs(certs, "jobset-webhook")
        config = {
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": webhook, "certDir": str(certs)},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        }
        for hook_config in trainer_webhooks("jobset", webhook, ca.cert_pem):
            self._put_webhook_configuration(hook_config)
        path = self.workdir / "jobset-config.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    def _trainer_config(self, webhook: int, health: int) -> Path:
        """The Trainer's configuration file (as _jobset_config) and its webhooks."""
        certs = self.workdir / "trainer-tmp" / "k8s-webhook-server" / "serving-certs"
        ca = self._serving_certs(certs, "trainer-webhook")
        config = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
            "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "certManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": webhook},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{health}"},
        }
        for hook_config in trainer_webhooks("trainer", webhook, ca.cert_pem):
            self._put_webhook_configuration(hook_config)
        path = self.workdir / "trainer-config.yaml"
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

    def _mpi_operator_leads(self) -> bool:
        lease = self.client.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{MPI_OPERATOR_LOCK_NAMESPACE}/leases/mpi-operator"
        )
        return bool(lease and lease.get("spec", {}).get("holderIdentity"))


def training_operator_webhooks(port: int, ca_pem: bytes) -> dict[str, Any]:
    """trainjobs' own ValidatingWebhookConfiguration for the Training Operator, by URL.

    Taken from what trainjobs renders for a ``TrainingOperator`` with the enabled
    schemes (so the rules are the ones trainjobs installs), with each webhook's
    Service reference replaced by ``https://127.0.0.1:<port><path>``.
    """
    from trainjobs.check import run
    from trainjobs.spec import parse_documents

    kinds = {
        "tfjob": "TFJob",
        "pytorchjob": "PyTorchJob",
        "xgboostjob": "XGBoostJob",
        "paddlejob": "PaddleJob",
        "jaxjob": "JAXJob",
    }
    doc = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "TrainingOperator",
        "metadata": {"name": "training-operator", "namespace": TRAINING_OPERATOR_NAMESPACE},
        "spec": {"enabledSchemes": [kinds[s] for s in TRAINING_OPERATOR_SCHEMES]},
    }
    rendering = run(parse_documents([doc], source="<control plane>"))
    (config,) = [m for m in rendering.manifests if m["kind"] == "ValidatingWebhookConfiguration"]
    return _by_url(config, port, ca_pem)


def _by_url(config: dict[str, Any], port: int, ca_pem: bytes) -> dict[str, Any]:
    """A copy of the webhook configuration with each webhook's Service reference replaced
    by ``https://127.0.0.1:<port><path>``: no Service routes to loopback."""
    config = copy.deepcopy(config)
    for hook in config["webhooks"]:
        path = hook["clientConfig"]["service"]["path"]
        hook["clientConfig"] = {
            "url": f"https://127.0.0.1:{port}{path}",
            "caBundle": base64.b64encode(ca_pem).decode(),
        }
    return config


OPERATOR_GROUPS = ("kubeflow.org", "trainer.kubeflow.org", "jobset.x-k8s.io")
"""The API groups of the CRDs the controllers here watch from their start."""


def _trainer_install(install_runtimes: bool) -> list[dict[str, Any]]:
    """What trainjobs renders for a ``Trainer`` install in the control plane's namespace."""
    from trainjobs.check import run
    from trainjobs.spec import parse_documents

    doc = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "Trainer",
        "metadata": {"name": "trainer", "namespace": TRAINER_NAMESPACE},
        "spec": {"installRuntimes": install_runtimes},
    }
    return [dict(m) for m in run(parse_documents([doc], source="<control plane>")).manifests]


def shipped_runtimes() -> list[dict[str, Any]]:
    """The ClusterTrainingRuntimes trainjobs' Trainer install ships."""
    return [m for m in _trainer_install(True) if m["kind"] == "ClusterTrainingRuntime"]


def trainer_webhooks(which: str, port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """trainjobs' own webhook configurations of the Trainer install — ``which`` is
    ``trainer`` (defaulter/validator.trainer.kubeflow.org) or ``jobset`` (JobSet's) —
    registered by URL (:func:`_by_url`)."""
    configs = []
    for manifest in _trainer_install(False):
        if not manifest["kind"].endswith("WebhookConfiguration"):
            continue
        if manifest["metadata"]["name"].startswith("jobset") != (which == "jobset"):
            continue
        configs.append(_by_url(manifest, port, ca_pem))
    assert configs, f"the Trainer install renders no webhook configuration of {which}"
    return configs


def _http_ok(port: int, path: str) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    finally:
        conn.close()


def _https_ok(port: int, path: str) -> bool:
    # The component's own self-signed serving certificate: only liveness is asked.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    finally:
        conn.close()


@contextlib.contextmanager
def started(workdir: Path) -> Iterator[ControlPlane]:
    """``with started(dir) as cp``: a running control plane, stopped on exit."""
    with ControlPlane(workdir) as cp:
        yield cp


def main() -> int:
    """Start a control plane in a temporary folder and keep it until Ctrl-C."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="trainjobs-cluster-") as tmp, started(Path(tmp)) as cp:
        print(f"control plane ready in {cp.started_in:.1f}s", flush=True)
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        print(f"logs: {cp.logs}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(1)
                cp.alive()
    return 0


if __name__ == "__main__":
    sys.exit(main())
