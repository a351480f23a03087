"""``proflint.on_trace_ready``: analyse each torch.profiler capture as soon as it is written."""

from __future__ import annotations

import os
import socket
import sys
import time
from typing import Any, List, Optional, Sequence, TextIO, Union

from ._analysis import Analysis, analyze
from ._engine import PathLike


class TraceHandler:
    """The handler :func:`on_trace_ready` returns; torch.profiler calls it with the profiler
    whenever a capture cycle ends. ``analyses`` holds every :class:`~proflint.Analysis` so far,
    ``traces`` the trace files written (``analysis`` is the latest)."""

    def __init__(self, dir_name: PathLike, worker_name: Optional[str], use_gzip: bool, fail_on: Optional[str],
                 rules: Union[PathLike, Sequence[PathLike]], print_findings: bool, file: Optional[TextIO],
                 analyze_options: dict) -> None:
        self.dir_name = os.fspath(dir_name)
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self.fail_on = fail_on
        self.rules = rules
        self.print_findings = print_findings
        self.file = file
        self.analyze_options = analyze_options
        self.analyses: List[Analysis] = []
        self.traces: List[str] = []

    @property
    def analysis(self) -> Optional[Analysis]:
        """The analysis of the latest capture (None before the first)."""
        return self.analyses[-1] if self.analyses else None

    def trace_path(self) -> str:
        """Where the next trace goes: ``DIR/WORKER.MILLISECONDS.pt.trace.json[.gz]``, the names
        ``torch.profiler.tensorboard_trace_handler`` gives (TensorBoard's profiler plugin reads
        the folder)."""
        if not self.worker_name:
            self.worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{self.worker_name}.{int(time.time() * 1000)}.pt.trace.json"
        return os.path.join(self.dir_name, name + (".gz" if self.use_gzip else ""))

    def __call__(self, prof: Any) -> None:
        os.makedirs(self.dir_name, exist_ok=True)
        path = self.trace_path()
        prof.export_chrome_trace(path)
        self.traces.append(path)
        from ._engine import FindingsError

        try:
            result = analyze(path, rules=self.rules, fail_on=self.fail_on, **self.analyze_options)
        except FindingsError as e:
            self.analyses.append(e.analysis)  # type: ignore[arg-type]
            if self.print_findings:
                self._print(e.analysis, path)  # type: ignore[arg-type]
            raise
        self.analyses.append(result)
        if self.print_findings:
            self._print(result, path)

    def _print(self, result: Analysis, path: str) -> None:
        out = self.file or sys.stdout
        n = len(result.findings)
        print(f"proflint: {path}: {n} finding{'' if n == 1 else 's'}", file=out)
        for rank, f in enumerate(result.findings, start=1):
            share = f" ({f.savings_share:.1%} of wall time)" if f.savings_share else ""
            print(f"  {rank}. [{f.severity}] {f.id}: {f.title} — saves ~{f.estimate_ms:.1f} ms{share}", file=out)
            print(f"     {f.problem}", file=out)
            print(f"     fix: {f.fix}", file=out)
        for d in result.diagnostics:
            print(f"  note: {d.id}: {d.title}", file=out)


def on_trace_ready(
    dir_name: PathLike,
    *,
    fail_on: Optional[str] = None,
    rules: Union[PathLike, Sequence[PathLike]] = (),
    print_findings: bool = True,
    worker_name: Optional[str] = None,
    use_gzip: bool = False,
    file: Optional[TextIO] = None,
    **analyze_options: Any,
) -> TraceHandler:
    """A handler for ``torch.profiler.profile(on_trace_ready=...)``: writes each capture into
    ``dir_name`` as ``tensorboard_trace_handler`` does (same file names), analyses it at once
    and prints the ranked findings (to ``file``, default stdout).

    With ``fail_on`` (``"high"``, ``"medium"`` or ``"low"``) a finding of at least that
    severity raises :class:`~proflint.FindingsError` from the profiler's step, so a training
    script or a test can gate on it; the exception carries the analysis and the trace path.
    Other keyword arguments go to :func:`~proflint.analyze` (``config``, ``key_node``, ...).

    >>> handler = proflint.on_trace_ready("traces", worker_name="mlp")
    >>> with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
    ...                             on_trace_ready=handler) as prof:
    ...     for step in range(5):
    ...         train_step(); prof.step()
    proflint: traces/mlp.1795645315201.pt.trace.json: 0 findings
      note: no-gpu-activity: The profile has no GPU activity to analyse
    >>> handler.analysis.summary["traces"][0]["iterations"]["count"]
    3
    """
    if fail_on is not None and fail_on not in ("high", "medium", "low"):
        raise ValueError(f"fail_on must be 'high', 'medium' or 'low', got {fail_on!r}")
    return TraceHandler(dir_name, worker_name, use_gzip, fail_on, rules, print_findings, file, analyze_options)
