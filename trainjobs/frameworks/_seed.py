"""Helpers shared by the seed frameworks (Caffe2Job, both MSJobs).

Their operators predate kubeflow/common: they stamp a random run id on every job
and check little of what they are given. trainjobs derives the id from the job
instead, and reports what the API server would have refused later.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from trainjobs.errors import Finding, Rule

__all__ = ["compact_json", "mount_findings", "stable_base36", "stable_digits"]

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


MOUNT_PATH = Rule(
    "template.mount_path",
    "the container already mounts a volume at this path",
    hint="mount one of the two volumes elsewhere, or drop one",
)
VOLUME_MOUNT = Rule(
    "template.volume_mount",
    "the mount names a volume the pod does not declare",
    hint="add a volume named {name!r} to spec.volumes or remove the mount",
)


def _digest(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16)


def stable_digits(key: str, width: int = 10) -> str:
    """``width`` decimal digits, the first never 0, derived from ``key`` alone.

    Upstream used the Unix time in seconds, which has 10 digits today; this
    looks the same but is the same on every render.
    """
    low = 10 ** (width - 1)
    return str(low + _digest(key) % (9 * low))


def stable_base36(key: str, width: int = 4) -> str:
    """``width`` characters of ``[0-9a-z]`` derived from ``key`` alone."""
    value = _digest(key)
    out = ""
    for _ in range(width):
        value, digit = divmod(value, 36)
        out = _BASE36[digit] + out
    return out


def compact_json(value: Any) -> str:
    """JSON the way Go's ``json.Marshal`` writes it: no spaces, keys in the given order."""
    return json.dumps(value, separators=(",", ":"))


def mount_findings(template: Mapping[str, Any], path: str) -> list[Finding]:
    """A finding for every volumeMount naming a volume the pod does not declare, and
    for every mount path a container uses twice.

    The API server refuses such a pod, so the operator would have failed to
    create it; trainjobs says so before anything is applied.
    """
    spec = template.get("spec") or {}
    declared = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    findings = []
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(kind) or []):
            if not isinstance(container, dict):
                continue
            paths: set[Any] = set()
            for j, mount in enumerate(container.get("volumeMounts") or []):
                if not isinstance(mount, dict):
                    continue
                name, where = mount.get("name"), mount.get("mountPath")
                # A mount without a name or path is the schema check's to report.
                entry = f"{path}.spec.{kind}[{i}].volumeMounts[{j}]"
                if where is not None and where in paths:
                    findings.append(MOUNT_PATH.at(f"{entry}.mountPath", where))
                paths.add(where)
                if name is not None and name not in declared:
                    findings.append(VOLUME_MOUNT.at(f"{entry}.name", name, name=name))
    return findings
