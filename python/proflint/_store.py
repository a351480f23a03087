"""``proflint.load`` and ``proflint.query``: SQL over the fact store (docs/schema.md)."""

from __future__ import annotations

import json
import shutil
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._engine import PathLike, Progress, Scratch, as_paths, load_flags, run


def _query_file(source: str, sql: str, flags: Sequence[str]) -> "Any":
    """``proflint query SOURCE SQL --format json`` read into a DataFrame. The JSON keeps each
    value's SQLite type, so SQL NULL and an empty string stay apart (CSV could not tell them)."""
    import pandas as pd

    scratch = Scratch()
    try:
        out = scratch.file("query.json")
        run(["query", source, sql, "--format", "json", "-o", out, *flags])
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    finally:
        scratch.cleanup()
    frame = pd.DataFrame(result["rows"], columns=result["columns"])
    # pandas makes an integer column with a NULL float64; a column of integers alone stays int64.
    return frame.infer_objects()


class Store:
    """Profiles imported and derived once (``proflint ingest``), for many queries and analyses
    without parsing them again. Made by :func:`load`; the store file is temporary unless
    :meth:`save` keeps a copy. Usable wherever a profile path is (``analyze``, ``query``,
    ``compare``)."""

    def __init__(self, paths: List[str], flags: List[str], log: List[str], scratch: Scratch) -> None:
        #: The profiles in this store.
        self.paths = paths
        #: ``ingest`` lines the engine printed: counts per trace.
        self.log = log
        self._flags = flags
        self._scratch: Optional[Scratch] = scratch
        self._finalizer = weakref.finalize(self, scratch.cleanup)

    def _store_path(self) -> str:
        if self._scratch is None:
            raise ValueError("this Store is closed")
        return self._scratch.file("store.pflt")

    @property
    def path(self) -> str:
        """The saved store (SQLite, docs/schema.md); any proflint command reads it."""
        return self._store_path()

    def query(self, sql: str) -> "Any":
        """One read-only SQL statement over the store, as a pandas DataFrame (see :func:`query`)."""
        return _query_file(self._store_path(), sql, self._flags)

    def summary(self) -> Dict[str, Any]:
        """``proflint summary --format json`` of the store (docs/output-json.md)."""
        out = self._scratch.file("summary.json") if self._scratch else self._store_path()
        run(["summary", self._store_path(), "--format", "json", "-o", out, *self._flags])
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def save(self, path: PathLike) -> None:
        """Copies the store to ``path`` (for ``proflint compare --baseline HISTORY/`` and the like)."""
        shutil.copyfile(self._store_path(), path)

    def close(self) -> None:
        """Removes the temporary store now rather than when the object is collected."""
        self._finalizer()
        self._scratch = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<proflint.Store of {', '.join(self.paths)}>"


def load(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    config: Optional[PathLike] = None,
    key_node: Optional[str] = None,
    iter_range: Optional[Tuple[int, int]] = None,
    job_by: Optional[str] = None,
    progress: Progress = False,
) -> Store:
    """Imports and derives profiles once (``proflint ingest``) and returns the :class:`Store`.
    ``progress`` as for :func:`~proflint.analyze`.

    >>> store = proflint.load("fixtures/sample_train.json.gz")
    >>> store.log[0]
    'ingested fixtures/sample_train.json.gz: 1188 kernels, 18 memcpy, 1266 API calls, 4830 ops, 6 iterations'
    >>> store.query("SELECT name, count(*) AS n, sum(dur_ns) AS ns FROM kernel GROUP BY name ORDER BY ns DESC LIMIT 2")
                                          name   n         ns
    0  void cudnn::cnn::wgrad_alg0_engine<f...  60  131219853
    1  sm80_xmma_wgrad_implicit_gemm_f32f32...  60  108621721
    """
    words = as_paths(paths)
    flags = load_flags(config=config, key_node=key_node, iter_range=iter_range, job_by=job_by)
    scratch = Scratch()
    try:
        _, log = run(["ingest", *words, "--db", scratch.file("store.pflt"), *flags], progress=progress)
    except BaseException:
        scratch.cleanup()
        raise
    return Store(words, flags, log, scratch)


def query(
    profile_or_store: Union[PathLike, Store, Any],
    sql: str,
    *,
    config: Optional[PathLike] = None,
    key_node: Optional[str] = None,
    iter_range: Optional[Tuple[int, int]] = None,
) -> "Any":
    """Runs one read-only SQL statement (SELECT or WITH; the CLI's ``proflint query`` rules) over
    the fact store of a profile, a saved store, a :class:`Store` or an :class:`~proflint.Analysis`
    and returns a pandas DataFrame, columns named as in the statement.

    Values keep their SQLite types: integers as int64 columns (float64 where a NULL is among
    them, as NaN), reals as float64, text as str with SQL NULL as ``None`` and an empty string
    as ``""``.

    >>> proflint.query("fixtures/sample_train.json.gz", "SELECT count(*) AS n FROM kernel")
          n
    0  1188

    A statement that writes, or SQL that does not parse, raises :class:`~proflint.InputError`.
    """
    if isinstance(profile_or_store, Store) or hasattr(profile_or_store, "_store_path"):
        if any(v is not None for v in (config, key_node, iter_range)):
            raise ValueError("config, key_node and iter_range are fixed when the store is made: give them to load()")
        return profile_or_store.query(sql)
    words = as_paths(profile_or_store)
    if len(words) != 1:
        raise ValueError("query takes one profile or store; load() several profiles into one Store first")
    return _query_file(words[0], sql, load_flags(config=config, key_node=key_node, iter_range=iter_range))
