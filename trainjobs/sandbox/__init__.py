"""The sandbox: a local Kubernetes control plane of real programs, to ``pulumi up`` onto.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (fake nodes that
"run" pods) and the operators trainjobs targets (Training Operator, MPI Operator,
JobSet, Trainer), on loopback, built from the versions the project pins. One per folder
(:class:`Sandbox`, state in ``.trainjobs/sandbox``); the tests' control plane is the same
:class:`ControlPlane`. ``trainjobs sandbox up|down|status|kubeconfig`` is its command line.
"""

from trainjobs.sandbox.api import Api, ApiError
from trainjobs.sandbox.binaries import BINARIES, PULUMI_BINARIES, MissingBinaries, binaries
from trainjobs.sandbox.control_plane import ControlPlane
from trainjobs.sandbox.kwok import KWOK_ANNOTATION, kwok_node
from trainjobs.sandbox.programs import StartupError, free_ports
from trainjobs.sandbox.sandbox import (
    CONTEXT,
    STATE_DIR,
    AlreadyRunning,
    NotRunning,
    Sandbox,
    SandboxState,
    Status,
)

__all__ = [
    "BINARIES",
    "CONTEXT",
    "KWOK_ANNOTATION",
    "PULUMI_BINARIES",
    "STATE_DIR",
    "AlreadyRunning",
    "Api",
    "ApiError",
    "ControlPlane",
    "MissingBinaries",
    "NotRunning",
    "Sandbox",
    "SandboxState",
    "StartupError",
    "Status",
    "binaries",
    "free_ports",
    "kwok_node",
]
