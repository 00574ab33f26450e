"""Tiny pure helpers about Kubernetes objects: names, quantities, ordering, YAML."""
