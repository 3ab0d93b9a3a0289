"""Controllers of kube-controller-manager that need the engine's volume logic (the PV controller).

The engine does not know them: the callers that run a whole cluster pass them to
``new_simulation`` (``manage.py simulate``), as they pass the out-of-tree plugins.
"""
