"""What a job's own pods listen on for each other, without a password of their own.

Some operators put a server inside the job (the PaddlePaddle EDL master pod's etcd and
task master): nothing but the job's own pods should reach it. A framework names such a
listener once; the render turns it into a NetworkPolicy (``trainjobs.platform.network``)
on every target, since the pods carry the same labels whether the operator or trainjobs
made them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Listener"]


@dataclass(frozen=True)
class Listener:
    """A server in one role's pods, reachable only from the job's own pods.

    ``server_label``: the label whose value is the job's name on the listening pods.
    ``ports``: the TCP ports the job's pods use. ``client_labels``: labels whose value is
    the job's name on the pods admitted (the listening pods talk to themselves over
    loopback, which no NetworkPolicy sees). ``suffix``: the policy is named
    ``<job>-<suffix>``.
    """

    server_label: str
    ports: tuple[int, ...]
    client_labels: tuple[str, ...]
    suffix: str
