"""Plugins built outside kube-scheduler's tree, registered the way a custom scheduler build
registers them (``app.WithPlugin``): their own registry, merged with the in-tree one."""
