"""A replica's volumes on this machine: ConfigMap and Secret keys as files, empty folders.

ConfigMap and Secret volumes are written under the replica's scratch folder
(items, ``defaultMode`` and ``mode`` honoured; replica names in ConfigMap text
rewritten to addresses, so an MPI hostfile names loopback addresses);
``emptyDir`` is an empty folder there and ``hostPath`` the path itself. Other
kinds are empty folders, and a note says so; an NFS share or a PVC is one folder
shared by every replica that mounts it (under the scratch folder's ``shared/``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.generated import Generated
from trainjobs.local.environment import object_values
from trainjobs.local.hosts import HostMap

__all__ = ["FileSpec", "Volumes", "inside", "mounts_of"]


@dataclass(frozen=True)
class FileSpec:
    """A file to write before the processes start (a mounted ConfigMap or Secret key)."""

    path: Path
    content: bytes
    mode: int = 0o644


def _finding(path: str, message: str, hint: str, value: Any) -> Finding:
    return Finding(code="local.volume", path=path, message=message, hint=hint, value=value)


def inside(relative: str) -> bool:
    """Whether ``relative`` names a place inside a folder: relative, no ``..``, no NUL.

    Kubernetes refuses the rest for a volume's item ``path`` and a mount's ``subPath``;
    run-local refuses it too, so nothing of a job is ever written outside its scratch folder.
    """
    parts = relative.split("/")
    return (
        bool(relative)
        and not relative.startswith("/")
        and ".." not in parts
        and "\0" not in relative
    )


def _mode(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class Volumes:
    """The files of one replica's volumes and where each volume lives locally."""

    def __init__(
        self,
        spec: Mapping[str, Any],
        folder: Path,
        objects: Mapping[tuple[str, str], Manifest],
        hosts: HostMap,
        generate: Callable[[Generated], str],
        path: str,
    ) -> None:
        self._generate = generate
        self.folders: dict[str, Path] = {}
        """Volume name → the local folder it is."""
        self.made: list[Path] = []
        """The folders run-local makes before starting (all but hostPath's): a mount of an
        emptyDir or a claim is an existing, empty folder on a cluster too."""
        self.files: list[FileSpec] = []
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        for i, volume in enumerate(spec.get("volumes") or []):
            name = str(volume.get("name", ""))
            where = f"{path}.volumes[{i}]"
            if not inside(name) or "/" in name or name == ".":
                self.findings.append(
                    _finding(
                        f"{where}.name",
                        "a volume's name must be a DNS label; this one would name a folder "
                        "outside the replica's scratch folder",
                        "name the volume with lowercase letters, digits and '-'",
                        name,
                    )
                )
                continue
            local = folder / "volumes" / name
            self.folders[name] = local
            if "configMap" in volume:
                self._keys("ConfigMap", volume["configMap"], "name", local, objects, hosts, where)
            elif "secret" in volume:
                self._keys("Secret", volume["secret"], "secretName", local, objects, None, where)
            elif "hostPath" in volume:
                self.folders[name] = Path(str(volume["hostPath"].get("path", "/")))
            elif "nfs" in volume or "persistentVolumeClaim" in volume:
                # Shared storage: every replica that mounts the same share sees one folder.
                source = volume.get("nfs") or volume.get("persistentVolumeClaim") or {}
                key = "-".join(str(v).strip("/").replace("/", "_") for v in source.values())
                self.folders[name] = folder.parent / "shared" / (key or name)
                self.notes.append(f"volume {name!r} is a folder shared by the replicas here")
            elif "emptyDir" not in volume:
                kind = next((k for k in volume if k != "name"), "?")
                self.notes.append(f"volume {name!r} ({kind}) is an empty folder here: {local}")
            if "hostPath" not in volume:
                self.made.append(self.folders[name])

    def _keys(
        self,
        kind: str,
        source: Mapping[str, Any],
        name_key: str,
        local: Path,
        objects: Mapping[tuple[str, str], Manifest],
        hosts: HostMap | None,
        where: str,
    ) -> None:
        name = str(source.get(name_key, ""))
        manifest = objects.get((kind, name))
        if manifest is None:
            if not source.get("optional"):
                self.findings.append(
                    _finding(
                        f"{where}.{kind[0].lower() + kind[1:]}",
                        f"the {kind} {name!r} is not part of the job, so run-local cannot mount it",
                        f"render the {kind} with the job, or mark the volume optional",
                        name,
                    )
                )
            return
        values = object_values(manifest, self._generate)
        mode = _mode(source.get("defaultMode"), 0o644)
        items = source.get("items")
        chosen = (
            [
                (str(i["key"]), str(i.get("path", i["key"])), _mode(i.get("mode"), mode))
                for i in items
            ]
            if items
            else [(key, key, mode) for key in values]
        )
        for index, (key, rel, file_mode) in enumerate(chosen):
            if not inside(rel):
                field = f"items[{index}].path" if items else f"data.{key}"
                self.findings.append(
                    _finding(
                        f"{where}.{kind[0].lower() + kind[1:]}.{field}",
                        f"the {kind} key's file must stay inside the volume: a relative path "
                        "without '..' (Kubernetes refuses it too)",
                        "give a relative path such as 'config/app.yaml'",
                        rel,
                    )
                )
                continue
            if key not in values:
                if not source.get("optional"):
                    self.findings.append(
                        _finding(
                            f"{where}.items",
                            f"the {kind} {name!r} has no key {key!r}",
                            "fix the key",
                            key,
                        )
                    )
                continue
            content = values[key]
            if hosts is not None:  # a hostfile names replicas; a Secret never does
                content = hosts.rewrite(content.decode(errors="replace")).encode()
            self.files.append(FileSpec(local / rel, content, file_mode))


def mounts_of(container: Mapping[str, Any], volumes: Volumes) -> list[tuple[str, str]]:
    """(mount path, local folder or file) of each of the container's volume mounts."""
    mounts: list[tuple[str, str]] = []
    for mount in container.get("volumeMounts") or []:
        folder = volumes.folders.get(str(mount.get("name", "")))
        if folder is None:
            continue
        sub = str(mount.get("subPath") or "")
        if sub and not inside(sub):
            continue  # Kubernetes refuses such a subPath; never point a process outside
        mounts.append((str(mount.get("mountPath", "")), str(folder / sub if sub else folder)))
    return mounts
