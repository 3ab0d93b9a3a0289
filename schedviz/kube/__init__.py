"""Kubernetes objects as the scheduler reads them: quantities, typed views, loading, validation."""
