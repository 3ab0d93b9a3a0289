"""The cluster: what the API server holds, as Django models, services and selectors."""
