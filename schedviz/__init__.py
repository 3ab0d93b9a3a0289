"""schedviz: see every decision the Kubernetes scheduler makes."""
