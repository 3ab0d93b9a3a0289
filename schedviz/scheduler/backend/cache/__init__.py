"""The scheduler's cache of nodes and pods, and the snapshot each cycle reads."""
