"""``proflint.compare``: the regression gate (docs/compare.md) from Python."""

from __future__ import annotations

import html
import json
import shutil
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._engine import PathLike, Progress, Scratch, as_paths, load_flags, rule_flags, run

_METRIC_COLUMNS = ["name", "scope", "unit", "baseline", "candidate", "delta", "relative", "status", "gating",
                   "budget", "p_value", "reason"]


class Comparison:
    """The result of :func:`compare`: ``proflint compare --format json`` (docs/compare.md)."""

    def __init__(self, text: str, args: List[str], log: List[str]) -> None:
        self._text = text
        self._args = args
        #: The whole JSON document (``"schema": "proflint-compare/1"``).
        self.data: Dict[str, Any] = json.loads(text)
        #: ``pass``, ``improvement``, ``regression`` or ``inconclusive``.
        self.verdict: str = self.data["verdict"]
        #: The CLI's exit code: 1 for a regression (or inconclusive with ``strict``), else 0.
        self.exit_code: int = int(self.data["exit_code"])
        #: One sentence: the verdict and its main reason.
        self.headline: str = self.data.get("headline", "")
        #: Limits of what the captures can tell (few steps, one run per side, ...).
        self.caveats: List[str] = list(self.data.get("caveats", []))
        #: Findings new in the candidate or gone from it (dicts as in the JSON).
        self.findings: List[Dict[str, Any]] = list(self.data.get("findings", []))
        #: stderr lines of the engine.
        self.log = log

    @property
    def metrics(self) -> "Any":
        """Every compared metric as a pandas DataFrame, in the CLI's order (most significant first):
        name, scope, unit, baseline, candidate, delta, relative, status, gating, budget (text),
        p_value and reason."""
        import pandas as pd

        rows = []
        for m in self.data.get("metrics", []):
            stats = m.get("statistics") or {}
            rows.append({
                "name": m["name"], "scope": m.get("scope", ""), "unit": m.get("unit"),
                "baseline": m.get("baseline"), "candidate": m.get("candidate"), "delta": m.get("delta"),
                "relative": m.get("relative"), "status": m.get("status"), "gating": m.get("gating"),
                "budget": (m.get("budget") or {}).get("text"), "p_value": stats.get("p_value"),
                "reason": m.get("reason", ""),
            })
        return pd.DataFrame(rows, columns=_METRIC_COLUMNS)

    def to_json(self) -> str:
        """The engine's JSON text, exactly as ``proflint compare --format json`` writes it."""
        return self._text

    def to_html(self, path: Optional[PathLike] = None) -> str:
        """The HTML page of ``proflint compare --format html`` (runs the comparison again)."""
        scratch = Scratch()
        try:
            out = scratch.file("compare.html")
            run(["compare", *self._args, "--format", "html", "-o", out], accept=(0, 1))
            if path is not None:
                shutil.copyfile(out, path)
            with open(out, encoding="utf-8") as f:
                return f.read()
        finally:
            scratch.cleanup()

    def __bool__(self) -> bool:
        """True when the gate passes (exit code 0)."""
        return self.exit_code == 0

    def _repr_html_(self) -> str:
        changed = [m for m in self.data.get("metrics", []) if m.get("status") in ("regression", "improvement")]
        rows = "".join(
            f"<tr><td><code>{html.escape(m['name'])}</code></td><td>{html.escape(m.get('scope', ''))}</td>"
            f"<td>{html.escape(str(m.get('baseline')))}</td><td>{html.escape(str(m.get('candidate')))}</td>"
            f"<td>{html.escape(str(m.get('status')))}</td></tr>" for m in changed)
        table = ("<table><thead><tr><th>metric</th><th>scope</th><th>baseline</th><th>candidate</th><th>status</th>"
                 "</tr></thead><tbody>" + rows + "</tbody></table>") if changed else ""
        return f"<p><b>proflint compare</b>: {html.escape(self.headline)}</p>{table}"

    def __repr__(self) -> str:
        return f"<proflint.Comparison {self.verdict} (exit {self.exit_code}): {self.headline}>"


Side = Union[PathLike, Sequence[PathLike], Any]


def compare(
    baseline: Side,
    candidate: Side,
    *,
    config: Optional[PathLike] = None,
    rules: Union[PathLike, Sequence[PathLike]] = (),
    strict: bool = False,
    history: bool = False,
    key_node: Optional[str] = None,
    iter_range: Optional[Tuple[int, int]] = None,
    progress: Progress = False,
) -> Comparison:
    """Is the candidate slower or worse than the baseline? ``proflint compare`` from Python.

    Each side is a profile, a saved store, a :class:`~proflint.Store`, a folder of profiles, or a
    list of those (repeated runs or the ranks of one job). ``history=True`` judges the candidate
    against a folder of past runs (``--baseline DIR CANDIDATE``). ``strict`` makes
    ``inconclusive`` fail too; ``progress`` as for :func:`~proflint.analyze` (the CLI shows the
    baseline's import). A regression is a result, not an exception: read ``verdict`` or
    ``exit_code``.

    >>> c = proflint.compare("fixtures/sample_train.json.gz", "fixtures/sample_amp.json.gz")
    >>> c.verdict, c.exit_code
    ('improvement', 0)
    """
    base, cand = as_paths(baseline), as_paths(candidate)
    if history:
        if len(cand) != 1:
            raise ValueError("history mode compares one candidate")
        sides = ["--baseline", *base]
        positional = cand
    elif len(base) == 1 and len(cand) == 1:
        sides, positional = [], [*base, *cand]
    else:
        sides, positional = ["--baseline", *base, "--candidate", *cand], []
    args = [*positional, *sides, *load_flags(config=config, key_node=key_node, iter_range=iter_range),
            *rule_flags(rules)]
    if strict:
        args.append("--strict")
    scratch = Scratch()
    try:
        out = scratch.file("compare.json")
        _, log = run(["compare", *args, "--format", "json", "-o", out], accept=(0, 1), progress=progress)
        with open(out, encoding="utf-8") as f:
            text = f.read()
    finally:
        scratch.cleanup()
    return Comparison(text, args, log)
