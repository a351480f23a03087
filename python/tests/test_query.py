"""proflint.query and proflint.load: read-only SQL over the fact store, as DataFrames."""

import os

import pandas as pd
import proflint
import pytest
from conftest import SAMPLE_TRAIN


def test_query_a_profile():
    df = proflint.query(SAMPLE_TRAIN, "SELECT name, count(*) AS n, sum(dur_ns) AS ns FROM kernel GROUP BY name ORDER BY n DESC, name")
    assert list(df.columns) == ["name", "n", "ns"]
    # By hand (python3 over the raw events): 1188 kernels with 30 distinct names, 120 of the most frequent.
    assert len(df) == 30
    assert df["n"].sum() == 1188 and df["n"].iloc[0] == 120
    assert df["n"].dtype == "int64" and df["name"].dtype == object


def test_a_store_answers_many_queries_like_the_profile():
    with proflint.load(SAMPLE_TRAIN) as store:
        assert any(line.startswith(f"ingested {SAMPLE_TRAIN}: 1188 kernels, 18 memcpy") for line in store.log)
        sql = "SELECT trace_id, count(*) AS n FROM op GROUP BY trace_id"
        assert store.query(sql).equals(proflint.query(SAMPLE_TRAIN, sql))
        # 4830 events of cat "cpu_op" in the raw file.
        assert proflint.query(store, sql)["n"].tolist() == [4830]
        path = store.path
        assert os.path.exists(path)
    assert not os.path.exists(path)  # closing removes the temporary store


def test_store_can_be_saved_for_the_cli(tmp_path):
    store = proflint.load(SAMPLE_TRAIN)
    store.save(tmp_path / "run.pflt")
    assert proflint.query(str(tmp_path / "run.pflt"), "SELECT count(*) AS n FROM kernel")["n"].tolist() == [1188]


def test_null_and_text_that_looks_missing():
    df = proflint.query(SAMPLE_TRAIN, "SELECT NULL AS missing, 'NA' AS text, 1.5 AS x")
    assert pd.isna(df["missing"].iloc[0])
    assert df["text"].iloc[0] == "NA"
    assert df["x"].iloc[0] == 1.5


def test_empty_result_keeps_the_columns():
    df = proflint.query(SAMPLE_TRAIN, "SELECT name, dur_ns FROM kernel WHERE dur_ns < 0")
    assert list(df.columns) == ["name", "dur_ns"] and len(df) == 0


def test_writes_are_refused():
    with proflint.load(SAMPLE_TRAIN) as store:
        with pytest.raises(proflint.InputError, match="query: ") as info:
            store.query("DELETE FROM trace")
        assert info.value.exit_code == 2
        with pytest.raises(proflint.InputError, match="read-only"):
            store.query("ATTACH DATABASE 'x.db' AS x")
        assert store.query("SELECT count(*) AS n FROM trace")["n"].tolist() == [1]


def test_bad_sql_names_the_problem():
    with pytest.raises(proflint.InputError, match="no such table: kernels"):
        proflint.query(SAMPLE_TRAIN, "SELECT * FROM kernels")


def test_one_profile_per_query():
    with pytest.raises(ValueError, match="load"):
        proflint.query([SAMPLE_TRAIN, SAMPLE_TRAIN], "SELECT 1")


def test_null_and_empty_text_stay_apart():
    # SQL NULL, '' and the text 'NA' are three different values; so are an integer column with a NULL
    # (float64 with NaN) and one without (int64).
    df = proflint.query(
        SAMPLE_TRAIN,
        "SELECT NULL AS a, '' AS b, 'NA' AS c, 7 AS n UNION ALL SELECT 'x', 'y', 'z', NULL",
    )
    assert df["a"].tolist() == [None, "x"]
    assert df["b"].tolist() == ["", "y"]
    assert df["c"].tolist() == ["NA", "z"]
    assert df["n"].dtype == "float64" and df["n"].iloc[0] == 7 and df["n"].isna().iloc[1]
    # An empty result still has its columns.
    empty = proflint.query(SAMPLE_TRAIN, "SELECT name AS k FROM kernel WHERE 0")
    assert list(empty.columns) == ["k"] and len(empty) == 0
