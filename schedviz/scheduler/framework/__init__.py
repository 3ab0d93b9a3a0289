"""The scheduling framework: statuses, cycle state, node infos, extension points, runtime."""
