"""The in-tree plugins, one module (or package) each, as under pkg/scheduler/framework/plugins."""
