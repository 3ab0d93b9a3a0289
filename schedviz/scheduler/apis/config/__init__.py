"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): types, defaults, validation."""
