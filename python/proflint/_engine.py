"""Running the engine: the proflint command line, in this process (``proflint._core``).

Every public function of the package builds a command line (``analyze``, ``query``, ``ingest``,
``summary``, ``compare``), runs it through :func:`run` and reads back what the command wrote: the
JSON of docs/output-json.md and docs/compare.md, or the CSV of ``proflint query``. The engine
does all the work; the Python side only parses, so the results are the CLI's, byte for byte.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]
#: ``progress=``: False (nothing), True (a tqdm bar per file when tqdm is installed, else the
#: engine's own lines on stderr) or a callable ``f(file_name, percent)``.
Progress = Union[bool, Callable[[str, int], None], None]

#: The version of the engine, the same as ``proflint --version`` of the CLI built from this tree.
ENGINE_VERSION: str = _core.__version__


class ProflintError(Exception):
    """An engine call failed. ``message`` is the CLI's error text (without ``proflint: error:``),
    ``exit_code`` the CLI's exit code and ``log`` every line the engine wrote on stderr."""

    def __init__(self, message: str, exit_code: int, log: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.log = list(log)


class InputError(ProflintError):
    """Bad usage or unreadable input: the CLI's exit code 2. The message names the file and the
    place, as the CLI prints it, e.g. ``bad.json: at byte 4096: ...``."""


class FindingsError(ProflintError):
    """Raised when ``fail_on`` is given (``analyze(..., fail_on=...)``,
    ``on_trace_ready(..., fail_on=...)``) and a finding reaches that severity: the CLI's exit code 1
    of ``analyze --fail-on``. ``analysis`` is the whole :class:`~proflint.Analysis`, ``findings``
    the findings at or above the threshold and ``path`` the profile analysed (a trace file
    written by ``on_trace_ready``, or the first input)."""

    def __init__(self, message: str, analysis: "object", findings: Sequence["object"], path: Optional[str]) -> None:
        super().__init__(message, 1)
        self.analysis = analysis
        self.findings = list(findings)
        self.path = path


class ProflintWarning(UserWarning):
    """A warning the engine printed (``proflint: warning: ...``), e.g. a key node that marked no
    iteration."""


def _lines(raw: bytes) -> List[str]:
    return [line for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]


class _Bars:
    """tqdm bars, one per file the engine reads."""

    def __init__(self, tqdm: Callable[..., object]) -> None:
        self._tqdm = tqdm
        self._bars: Dict[str, object] = {}

    def __call__(self, file: str, percent: int) -> None:
        bar = self._bars.get(file)
        if bar is None:
            bar = self._bars[file] = self._tqdm(total=100, desc=file, unit="%")
        bar.update(percent - bar.n)  # type: ignore[attr-defined]

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()  # type: ignore[attr-defined]


def run(args: Sequence[str], *, accept: Iterable[int] = (0,), progress: Progress = False) -> Tuple[int, List[str]]:
    """Runs ``proflint ARGS...`` in-process with the GIL released. Returns the exit code and the
    stderr lines; an exit code outside ``accept`` raises :class:`InputError` (2) or
    :class:`ProflintError` (other codes) carrying the CLI's error line. Warnings on stderr are
    also issued as :class:`ProflintWarning`. ``progress``: see :data:`Progress` (import
    progress comes every 10% of a file)."""
    words = [str(a) for a in args]
    callback: Optional[Callable[[str, int], None]] = None
    bars: Optional[_Bars] = None
    if progress:
        words.append("--progress")
        if callable(progress):
            callback = progress
        else:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                pass  # the engine draws its own progress on stderr
            else:
                callback = bars = _Bars(tqdm)
    try:
        code, _out, err = _core.run_cli(words, callback)
    finally:
        if bars is not None:
            bars.close()
    log = _lines(err)
    for line in log:
        if line.startswith("proflint: warning: "):
            warnings.warn(line[len("proflint: warning: "):], ProflintWarning, stacklevel=3)
    if code in accept:
        return code, log
    errors = [line[len("proflint: error: "):] for line in log if line.startswith("proflint: error: ")]
    if not errors:  # the argument parser's own message ("--fail-on: bogus not in {...}")
        errors = [line for line in log if not line.startswith("Run with --help")]
    message = "\n".join(errors) or f"proflint {' '.join(words[:1])} failed with exit code {code}"
    raise (InputError if code == 2 else ProflintError)(message, code, log)


def as_paths(paths: Union[PathLike, "object", Sequence[Union[PathLike, "object"]]]) -> List[str]:
    """One path, a :class:`~proflint.Store`, or a sequence of them, as command-line words."""
    if isinstance(paths, (str, os.PathLike)) or hasattr(paths, "_store_path"):
        paths = [paths]  # type: ignore[list-item]
    out = []
    for p in paths:  # type: ignore[union-attr]
        out.append(p._store_path() if hasattr(p, "_store_path") else os.fspath(p))
    if not out:
        raise ValueError("give at least one profile")
    return out


def load_flags(
    *,
    config: Optional[PathLike] = None,
    key_node: Optional[str] = None,
    iter_range: Optional[Tuple[int, int]] = None,
    job_by: Optional[str] = None,
) -> List[str]:
    """The CLI flags shared by every command that loads profiles."""
    flags: List[str] = []
    if config is not None:
        flags += ["--config", os.fspath(config)]
    if key_node is not None:
        flags += ["--key-node", key_node]
    if iter_range is not None:
        start, stop = iter_range
        flags += ["--iter-start", str(int(start)), "--iter-stop", str(int(stop))]
    if job_by is not None:
        flags += ["--job-by", job_by]
    return flags


def rule_flags(rules: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    if isinstance(rules, (str, os.PathLike)):
        rules = [rules]
    flags: List[str] = []
    for folder in rules:
        flags += ["--rules", os.fspath(folder)]
    return flags


class Scratch:
    """A temporary folder for the files one engine result reads back; removed with the result."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="proflint-")
        self.path = Path(self._dir.name)

    def file(self, name: str) -> str:
        return str(self.path / name)

    def cleanup(self) -> None:
        self._dir.cleanup()
