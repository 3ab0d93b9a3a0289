"""The review of a real cluster's scheduler: its logs, its events and a dump, reconciled with a
replay by the engine (docs/review.md).

``logs`` reads kube-scheduler's klog text and JSON output, ``events`` the events lists,
``timeline`` turns both into every attempt of every pod, ``replay`` runs the engine's cycle for
each attempt on the state the dump gives (carried forward by the log's own decisions), and
``reconcile`` says, attempt by attempt, where the replay agrees and why not where it does not.
``review`` ties them together for ``manage.py review``, the API and the review page.
"""
