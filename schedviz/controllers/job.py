"""The Job controller: pods until enough succeed, then Complete; too many failures, Failed.

Mirrors pkg/controller/job/job_controller.go: ``syncJob`` (a finished Job, one with a
Complete or Failed condition, is left alone: no new pods), the terminated pods counted once
each into ``status.succeeded`` and ``status.failed`` (what the ``batch.kubernetes.io/
job-tracking`` finalizer guarantees upstream; a dumped Job's counts are where it starts),
``manageJob`` (``wantActive``: parallelism until the first success when completions is unset,
else what is left of completions, at most parallelism; surplus active pods deleted; at most
``MaxPodCreateDeletePerSync`` (500) creations a sync; an Indexed Job's missing indexes, lowest
first), the pod failure backoff (10 s doubling per failure since the last success, at most
10 min, on the virtual clock), ``backoffLimit`` (6 by default: more failures than that and the
Job gets ``FailureTarget`` and ``Failed`` with reason ``BackoffLimitExceeded``, its active pods
deleted) and completion (``SuccessCriteriaMet`` then ``Complete``, reason
``CompletionsReached``, once no pod is active).

A pod finishes by a status patch of its phase (a scenario's) or by its run time
(``kubelet``: ``schedviz.io/run-seconds``). Deliberately different: no activeDeadlineSeconds,
podFailurePolicy, successPolicy, backoffLimitPerIndex, suspend or ttlSecondsAfterFinished;
condition times are not written.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schedviz.controllers.controller_utils import (
    controller_ref,
    is_binding,
    is_pod_active,
    pod_event_matters,
    pods_to_delete,
)
from schedviz.controllers.manager import ControllerContext, claim_orphans, orphan_owners
from schedviz.controllers.workloads import (
    JOB_COMPLETION_INDEX,
    job_finished,
    job_pod,
    job_status_count,
    job_want_active,
)
from schedviz.kube.decode import decode_object
from schedviz.kube.objects import POD_FAILED, POD_SUCCEEDED, Job, Pod

DEFAULT_BACKOFF_LIMIT = 6
POD_FAILURE_BACKOFF_SECONDS = 10.0
MAX_POD_FAILURE_BACKOFF_SECONDS = 600.0
MAX_POD_CREATE_DELETE_PER_SYNC = 500
REASON_COMPLETIONS_REACHED = "CompletionsReached"
MESSAGE_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
MESSAGE_BACKOFF_LIMIT_EXCEEDED = "Job has reached the specified backoff limit"


@dataclass
class _Tracking:
    """What the controller has counted of one Job."""

    succeeded: int = 0
    failed: int = 0
    counted: set[str] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    failures_since_success: int = 0
    last_failure: float = 0.0


def parse_indexes(text: str) -> set[int]:
    """status.completedIndexes ("1,3-5") as a set."""
    indexes: set[int] = set()
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            indexes.update(range(int(first), int(last or first) + 1))
    return indexes


def format_indexes(indexes: set[int]) -> str:
    """The compressed interval list ``completedIndexes`` uses."""
    parts: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def _index(pod: Pod) -> int | None:
    value = pod.annotations.get(JOB_COMPLETION_INDEX, "")
    return int(value) if value.isdigit() else None


def backoff_limit(job: Job) -> int:
    value = job.manifest.get("spec", {}).get("backoffLimit")
    return value if isinstance(value, int) and value >= 0 else DEFAULT_BACKOFF_LIMIT


class JobController:
    name = "job"

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self._adopt: set[str] = set()
        self._tracking: dict[str, _Tracking] = {}

    def keys_for(self, event_type: str, old: Any, new: Any) -> Iterable[str]:
        obj = new if new is not None else old
        if isinstance(obj, Job):
            self._adopt.add(obj.key)
            return [obj.key]
        if not isinstance(obj, Pod) or not pod_event_matters(event_type, old, new):
            return []
        if is_binding(old, new):
            return []  # a Job counts pods that finish, not where they run
        ref = controller_ref(obj)
        if ref is not None:
            return [f"{obj.namespace}/{ref.name}"] if ref.kind == "Job" else []
        if event_type == "DELETED":
            return []
        keys = orphan_owners(self.ctx, "Job", obj)
        self._adopt.update(keys)
        return keys

    def _track(self, job: Job) -> _Tracking:
        tracking = self._tracking.get(job.uid)
        if tracking is None:
            # A Job as given: its status has counted what finished before; its finished pods
            # are among those counts already.
            tracking = _Tracking(
                succeeded=job_status_count(job, "succeeded"),
                failed=job_status_count(job, "failed"),
                counted={p.uid for p in self.ctx.owned_pods(job.uid) if not is_pod_active(p)},
                succeeded_indexes=parse_indexes(
                    str(job.manifest.get("status", {}).get("completedIndexes") or "")
                ),
            )
            self._tracking[job.uid] = tracking
        return tracking

    def sync(self, key: str) -> None:
        ctx = self.ctx
        job = ctx.get("Job", key)
        if not isinstance(job, Job):
            return
        if job_finished(job):
            return
        if key in self._adopt:
            self._adopt.discard(key)
            claim_orphans(ctx, job, "batch/v1", active_only=False)
        tracking = self._track(job)
        pods = ctx.owned_pods(job.uid)
        for pod in pods:
            if pod.uid in tracking.counted or pod.phase not in (POD_SUCCEEDED, POD_FAILED):
                continue
            tracking.counted.add(pod.uid)
            if pod.phase == POD_SUCCEEDED:
                tracking.succeeded += 1
                tracking.failures_since_success = 0
                index = _index(pod)
                if index is not None:
                    tracking.succeeded_indexes.add(index)
            else:
                tracking.failed += 1
                tracking.failures_since_success += 1
                tracking.last_failure = ctx.now()
        active = [pod for pod in pods if is_pod_active(pod)]
        indexed = job.completion_mode == "Indexed"
        succeeded = len(tracking.succeeded_indexes) if indexed else tracking.succeeded
        conditions: list[dict[str, str]] = []
        if tracking.failed > backoff_limit(job):
            for pod in active:
                ctx.delete("Pod", pod.key)
            conditions = self._conditions(
                "FailureTarget",
                "Failed",
                REASON_BACKOFF_LIMIT_EXCEEDED,
                MESSAGE_BACKOFF_LIMIT_EXCEEDED,
            )
            active = []
        elif (job.completions is None and succeeded > 0 and not active) or (
            job.completions is not None and succeeded >= job.completions
        ):
            for pod in active:
                ctx.delete("Pod", pod.key)
            conditions = self._conditions(
                "SuccessCriteriaMet",
                "Complete",
                REASON_COMPLETIONS_REACHED,
                MESSAGE_COMPLETIONS_REACHED,
            )
            active = []
        else:
            active = self._manage(job, tracking, active, succeeded)
        self._write_status(job, tracking, len(active), conditions)

    @staticmethod
    def _conditions(target: str, final: str, reason: str, message: str) -> list[dict[str, str]]:
        return [
            {"type": kind, "status": "True", "reason": reason, "message": message}
            for kind in (target, final)
        ]

    def _manage(
        self, job: Job, tracking: _Tracking, active: list[Pod], succeeded: int
    ) -> list[Pod]:
        """manageJob: the active pods it leaves."""
        ctx = self.ctx
        want = job_want_active(job, succeeded, len(active))
        surplus = len(active) - want
        if surplus > 0:
            surplus = min(surplus, MAX_POD_CREATE_DELETE_PER_SYNC)
            doomed = pods_to_delete(active, active, surplus, ctx.times, ctx.now())
            for pod in doomed:
                ctx.delete("Pod", pod.key)
            gone = {p.key for p in doomed}
            return [p for p in active if p.key not in gone]
        missing = min(want - len(active), MAX_POD_CREATE_DELETE_PER_SYNC)
        if missing <= 0:
            return active
        remaining = self._backoff_remaining(tracking)
        if remaining > 0:
            ctx.after(ctx.now() + remaining, self.name, job.key)
            return active
        created: list[Pod] = []
        if job.completion_mode == "Indexed":
            taken = tracking.succeeded_indexes | {i for p in active if (i := _index(p)) is not None}
            assert job.completions is not None
            free = [i for i in range(job.completions) if i not in taken][:missing]
            pods = [job_pod(job, ctx.names, index) for index in free]
        else:
            pods = [job_pod(job, ctx.names) for _ in range(missing)]
        for pod in pods:
            made = ctx.create(pod)
            if isinstance(made, Pod):
                created.append(made)
        return [*active, *created]

    def _backoff_remaining(self, tracking: _Tracking) -> float:
        """getRemainingTime of the pod failure backoff."""
        if tracking.failures_since_success == 0:
            return 0.0
        delay = POD_FAILURE_BACKOFF_SECONDS * 2 ** (tracking.failures_since_success - 1)
        delay = min(delay, MAX_POD_FAILURE_BACKOFF_SECONDS)
        return max(0.0, tracking.last_failure + float(delay) - self.ctx.now())

    def _write_status(
        self, job: Job, tracking: _Tracking, active: int, conditions: list[dict[str, str]]
    ) -> None:
        manifest = copy.deepcopy(job.manifest)
        status = dict(manifest.get("status") or {})
        status["active"] = active
        status["succeeded"] = tracking.succeeded
        status["failed"] = tracking.failed
        if job.completion_mode == "Indexed":
            status["completedIndexes"] = format_indexes(tracking.succeeded_indexes)
        if conditions:
            status["conditions"] = [*(status.get("conditions") or []), *conditions]
        for name in ("active", "succeeded", "failed"):
            if not status[name]:
                del status[name]
        if status == (job.manifest.get("status") or {}):
            return
        manifest["status"] = status
        updated = decode_object(manifest)
        assert isinstance(updated, Job)
        self.ctx.update(updated)
