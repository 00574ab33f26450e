"""Shared test helpers: repository paths, Pulumi mocks, YAML snapshots."""
