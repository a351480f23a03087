"""``proflint.analyze``: the ranked findings of ``proflint analyze --format json`` as objects."""

from __future__ import annotations

import html
import json
import shutil
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._engine import FindingsError, PathLike, Progress, Scratch, as_paths, load_flags, rule_flags, run

SEVERITIES = ("info", "low", "medium", "high")


@dataclass(frozen=True)
class Finding:
    """One finding (docs/output-json.md, "A finding"). ``fix`` is the JSON's ``recommendation``,
    ``estimate`` its ``estimated_savings_ns`` (after overlaps with higher-ranked findings);
    ``raw`` keeps every field of the JSON object (``gross_savings_ns``, ``overlaps``,
    ``instances``, ...)."""

    id: str
    severity: str
    title: str
    problem: str
    fix: str
    estimate: int
    savings_share: float
    confidence: float
    evidence: Dict[str, Any]
    scope: Dict[str, Any]
    source: str
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "Finding":
        return cls(
            id=obj["id"],
            severity=obj["severity"],
            title=obj["title"],
            problem=obj.get("problem", ""),
            fix=obj.get("recommendation", ""),
            estimate=int(obj.get("estimated_savings_ns", 0)),
            savings_share=float(obj.get("savings_share", 0.0)),
            confidence=float(obj.get("confidence", 0.0)),
            evidence=obj.get("evidence", {}),
            scope=obj.get("scope", {}),
            source=obj.get("source", "builtin"),
            raw=obj,
        )

    @property
    def estimate_ms(self) -> float:
        """``estimate`` in milliseconds."""
        return self.estimate / 1e6

    def __str__(self) -> str:
        return f"[{self.severity}] {self.id}: {self.title} (~{self.estimate_ms:.1f} ms)"


@dataclass(frozen=True)
class Check:
    """A check that ran and stayed under its threshold (docs/output-json.md, "Checked, below
    threshold")."""

    id: str
    measured: str
    value: float
    threshold: float
    unit: str
    scope: Dict[str, Any]
    source: str
    detail: Optional[str] = None

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "Check":
        return cls(obj["id"], obj.get("measured", ""), obj.get("value", 0.0), obj.get("threshold", 0.0),
                   obj.get("unit", ""), obj.get("scope", {}), obj.get("source", "builtin"), obj.get("detail"))


_COLUMNS = ["rank", "id", "severity", "title", "estimated_savings_ms", "savings_share", "confidence",
            "trace_id", "device_id", "problem", "recommendation", "source"]


class Analysis:
    """The result of :func:`analyze`: what ``proflint analyze --format json`` reports.

    The inputs were parsed once; the derived fact store is kept in a temporary file while this
    object lives, so :attr:`summary`, :meth:`to_html` and :meth:`query` do not parse them again.
    """

    def __init__(self, text: str, exit_code: int, log: List[str], scratch: Optional[Scratch],
                 load: List[str], select: List[str], paths: List[str]) -> None:
        self._text = text
        self.data: Dict[str, Any] = json.loads(text)
        #: 0, or 1 when ``fail_on`` was given and a finding reached it (the CLI's exit code).
        self.exit_code = exit_code
        #: Lines the engine wrote on stderr (warnings, progress lines).
        self.log = log
        #: The profiles analysed.
        self.paths = paths
        #: Ranked problems, largest estimated saving first.
        self.findings: List[Finding] = [Finding.from_json(f) for f in self.data.get("findings", [])]
        #: Findings about the profile itself (severity ``info``).
        self.diagnostics: List[Finding] = [Finding.from_json(f) for f in self.data.get("diagnostics", [])]
        #: Checks that ran and stayed under their thresholds.
        self.below_threshold: List[Check] = [Check.from_json(c) for c in self.data.get("below_threshold", [])]
        #: Skipped detectors, suppressed findings and the like.
        self.notes: List[str] = list(self.data.get("notes", []))
        #: One entry per input trace: path, format, wall time, iterations, devices.
        self.traces: List[Dict[str, Any]] = list(self.data.get("traces", []))
        self._scratch = scratch
        self._load = load  # flags every command on the store needs to derive alike
        self._select = select  # rule folders, --only, --skip: what analyze runs
        self._summary: Optional[Dict[str, Any]] = None
        if scratch is not None:
            weakref.finalize(self, scratch.cleanup)

    def _store_path(self) -> str:
        if self._scratch is None:
            raise ValueError("this Analysis kept no store (analyze(..., keep_store=False))")
        return self._scratch.file("store.pflt")

    @property
    def summary(self) -> Dict[str, Any]:
        """``proflint summary --format json`` of the same inputs (docs/output-json.md): wall time,
        GPU utilization, breakdown and iterations per trace under ``"traces"``."""
        if self._summary is None:
            out = self._scratch.file("summary.json") if self._scratch else None
            if out is None:
                raise ValueError("this Analysis kept no store (analyze(..., keep_store=False))")
            run(["summary", self._store_path(), "--format", "json", "-o", out, *self._load])
            with open(out, encoding="utf-8") as f:
                self._summary = json.load(f)
        return self._summary

    def query(self, sql: str) -> "Any":
        """A read-only SQL query over the fact store of this analysis (docs/schema.md), as a
        pandas DataFrame; see :func:`proflint.query`."""
        from ._store import _query_file

        return _query_file(self._store_path(), sql, self._load)

    def to_json(self) -> str:
        """The engine's JSON text, exactly as ``proflint analyze --format json`` writes it."""
        return self._text

    def to_html(self, path: Optional[PathLike] = None) -> str:
        """The self-contained HTML report of ``proflint analyze --format html`` (docs/html-report.md),
        rendered from the kept store; written to ``path`` too when given."""
        out = self._scratch.file("report.html") if self._scratch else None
        if out is None:
            raise ValueError("this Analysis kept no store (analyze(..., keep_store=False))")
        run(["analyze", self._store_path(), "--format", "html", "-o", out, *self._load, *self._select],
            accept=(0, 1))
        with open(out, encoding="utf-8") as f:
            page = f.read()
        if path is not None:
            shutil.copyfile(out, path)
        return page

    def at_least(self, severity: str) -> List[Finding]:
        """The findings of at least this severity (``high``, ``medium``, ``low``)."""
        if severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, got {severity!r}")
        floor = SEVERITIES.index(severity)
        return [f for f in self.findings if SEVERITIES.index(f.severity) >= floor]

    def to_dataframe(self) -> "Any":
        """The ranked findings as a pandas DataFrame, one row per finding (rank 1 first)."""
        import pandas as pd

        rows = []
        for rank, f in enumerate(self.findings, start=1):
            rows.append({
                "rank": rank, "id": f.id, "severity": f.severity, "title": f.title,
                "estimated_savings_ms": f.estimate_ms, "savings_share": f.savings_share,
                "confidence": f.confidence, "trace_id": f.scope.get("trace_id"),
                "device_id": f.scope.get("device_id"), "problem": f.problem, "recommendation": f.fix,
                "source": f.source,
            })
        return pd.DataFrame(rows, columns=_COLUMNS)

    def _repr_html_(self) -> str:
        head = (f"<p><b>proflint</b>: {len(self.findings)} finding(s), {len(self.diagnostics)} diagnostic(s), "
                f"{len(self.below_threshold)} check(s) below threshold — {html.escape(', '.join(self.paths))}</p>")
        if not self.findings:
            return head
        rows = "".join(
            f"<tr><td>{i}</td><td>{html.escape(f.severity)}</td><td><code>{html.escape(f.id)}</code></td>"
            f"<td>{html.escape(f.title)}</td><td style='text-align:right'>{f.estimate_ms:,.1f}</td>"
            f"<td>{html.escape(f.problem)}</td><td>{html.escape(f.fix)}</td></tr>"
            for i, f in enumerate(self.findings, start=1))
        return (head + "<table><thead><tr><th>#</th><th>severity</th><th>id</th><th>title</th>"
                "<th>saving (ms)</th><th>problem</th><th>fix</th></tr></thead><tbody>" + rows + "</tbody></table>")

    def __repr__(self) -> str:
        return (f"<proflint.Analysis of {', '.join(self.paths)}: {len(self.findings)} findings, "
                f"{len(self.diagnostics)} diagnostics, {len(self.below_threshold)} below threshold>")


def analyze(
    paths: Union[PathLike, Sequence[PathLike], "Any"],
    *,
    config: Optional[PathLike] = None,
    rules: Union[PathLike, Sequence[PathLike]] = (),
    key_node: Optional[str] = None,
    iter_range: Optional[Tuple[int, int]] = None,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    fail_on: Optional[str] = None,
    job_by: Optional[str] = None,
    progress: Progress = False,
    keep_store: bool = True,
) -> Analysis:
    """Analyses profiles (Kineto JSON, Nsight Systems SQLite, saved stores or a
    :class:`~proflint.Store`) as ``proflint analyze`` does and returns the ranked findings.

    ``config`` is a proflint.toml (else ./proflint.toml when present, as for the CLI), ``rules``
    folders of Lua rules, ``key_node`` the op or annotation that marks an iteration,
    ``iter_range`` the (first, last) iteration to aggregate (0-based, inclusive), ``only`` /
    ``skip`` detector or rule ids, ``progress`` True (a tqdm bar per file when tqdm is installed,
    else the engine's lines on stderr) or a callable ``f(file_name, percent)``. With ``fail_on`` (``"high"``, ``"medium"``, ``"low"``) a
    finding of at least that severity raises :class:`~proflint.FindingsError` (the CLI's
    ``--fail-on``). ``keep_store=False`` skips saving the fact store (then ``summary``,
    ``to_html`` and ``query`` are unavailable).

    >>> a = proflint.analyze("fixtures/sample_train.json.gz")
    >>> a
    <proflint.Analysis of fixtures/sample_train.json.gz: 5 findings, 0 diagnostics, 6 below threshold>
    >>> print(a.findings[0])
    [high] dataloader-stall: GPU waits on the input pipeline (~389.2 ms)
    >>> a.summary["traces"][0]["iterations"]["count"]
    6

    Raises :class:`~proflint.InputError` with the CLI's message when an input cannot be read.
    """
    words = as_paths(paths)
    flags = load_flags(config=config, key_node=key_node, iter_range=iter_range, job_by=job_by)
    scratch = Scratch()
    try:
        out = scratch.file("analysis.json")
        args = ["analyze", *words, "--format", "json", "-o", out, *flags, *rule_flags(rules)]
        if only:
            args += ["--only", ",".join(only)]
        if skip:
            args += ["--skip", ",".join(skip)]
        if keep_store:
            args += ["--db", scratch.file("store.pflt")]
        if fail_on is not None:
            args += ["--fail-on", fail_on]
        code, log = run(args, accept=(0, 1), progress=progress)
        with open(out, encoding="utf-8") as f:
            text = f.read()
    except BaseException:
        scratch.cleanup()
        raise
    # The store keeps the whole capture: later commands on it need the same load flags to derive
    # alike, and the same rule folders and --only/--skip to give the same findings.
    select = rule_flags(rules)
    if only:
        select += ["--only", ",".join(only)]
    if skip:
        select += ["--skip", ",".join(skip)]
    result = Analysis(text, code, log, scratch if keep_store else None, flags, select, words)
    if not keep_store:
        scratch.cleanup()
    if code == 1:
        hit = result.at_least(fail_on or "low")
        raise FindingsError(
            f"{len(hit)} finding(s) at or above '{fail_on}' in {', '.join(words)}: "
            + "; ".join(str(f) for f in hit), result, hit, words[0])
    return result
