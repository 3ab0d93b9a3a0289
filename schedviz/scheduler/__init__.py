"""The kube-scheduler port: pure Python, no Django. Module names follow pkg/scheduler."""
