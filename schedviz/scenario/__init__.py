"""Scenarios over time (KEP-140): operations step by step on the engine, every write recorded.

- ``spec``: a Scenario document read and checked (KEP-140's form and schedviz's timed form);
- ``patch``: strategic merge, merge (RFC 7386) and JSON (RFC 6902) patches;
- ``manifests``: objects as a GET returns them now, and the pod update rules;
- ``runner``: the run, its timeline (``status.scenarioResult.timeline``) and status;
- ``figures``: the per-step figures beside the timeline;
- ``compare``: one scenario under several configurations, and where they part;
- ``table``: the text rendering of ``manage.py scenario --output table``.

Above the simulation, beside the benchmark and the review: no Django.
"""
