"""A syrupy extension that stores each snapshot as one readable ``.yaml`` file."""

from __future__ import annotations

from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class YamlSnapshot(SingleFileSnapshotExtension):
    """Snapshots are rendered YAML text, reviewed as plain files in pull requests."""

    file_extension = "yaml"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return str(data)
