"""Background runs with progress: an anonymization and its report run in a thread while the
page polls their state (a run of Adult takes seconds to minutes; a request must not wait)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kerckhoffs.errors import KerckhoffsError

Progress = Callable[[str, float], None]


@dataclass
class Job:
    """One background run: its number, what it does, its state (``running``, ``done``,
    ``failed``), the step it is on with the fraction done, and its result or error line."""

    id: int
    label: str
    state: str = "running"
    step: str = "starting"
    fraction: float = 0.0
    result: Any = None
    error: str = ""
    config: dict[str, Any] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        """The state the page polls (no result: it is shown by the page itself)."""
        return {
            "id": self.id,
            "state": self.state,
            "step": self.step,
            "percent": round(100 * self.fraction),
            "error": self.error,
        }


class Jobs:
    """The runs of this process, by number (kept in memory while the app runs)."""

    def __init__(self) -> None:
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()

    def start(self, label: str, work: Callable[[Progress], Any], config: dict[str, Any]) -> Job:
        """Run ``work(progress)`` in a daemon thread, after the runs started before it; its
        return value becomes the result, a library error its one-line message (any other
        exception says it is a bug)."""
        with self._lock:
            job = Job(next(self._ids), label, config=config)
            self._jobs[job.id] = job

        def progress(step: str, fraction: float) -> None:
            job.step, job.fraction = step, min(max(fraction, 0.0), 1.0)

        def run() -> None:
            job.step = "waiting for the run before it"
            try:
                with self._one_at_a_time:  # the runs share the machine and pyplot's state
                    job.result = work(progress)
                job.step, job.fraction, job.state = "done", 1.0, "done"
            except KerckhoffsError as exc:
                job.error, job.state = str(exc), "failed"
            except Exception as exc:  # a bug: say so, as the command line does
                job.error = f"internal error ({type(exc).__name__}: {exc}); this is a bug"
                job.state = "failed"

        threading.Thread(target=run, name=f"kerckhoffs-app-job-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: int) -> Job | None:
        """The job with this number, or None."""
        return self._jobs.get(job_id)

    def finished(self) -> list[Job]:
        """The runs that finished with a result, in order."""
        return [j for j in self._jobs.values() if j.state == "done"]

    def all(self) -> list[Job]:
        """Every run, in order."""
        return list(self._jobs.values())
