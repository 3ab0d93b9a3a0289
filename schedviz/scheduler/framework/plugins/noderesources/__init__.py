"""NodeResourcesFit and NodeResourcesBalancedAllocation with their scoring strategies.

Mirrors pkg/scheduler/framework/plugins/noderesources.
"""
