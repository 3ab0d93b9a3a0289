"""Controllers of kube-controller-manager whose writes decide what the scheduler sees."""
