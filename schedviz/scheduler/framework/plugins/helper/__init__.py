"""Helpers shared by the in-tree plugins (mirrors pkg/scheduler/framework/plugins/helper)."""
