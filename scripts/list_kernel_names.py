#!/usr/bin/env python3
# scripts/list_kernel_names.py — every distinct GPU kernel name in ../shared/realdata, one per line.
#
# Feeds the reviewed golden file tests/golden/tensor_core_kernels.tsv: the list of names comes from
# here, the is_tc/category columns from proflint's classifier, then a human reviews every line.
# Usage: scripts/list_kernel_names.py [REALDATA_DIR] > names.txt   (default: ../shared/realdata)
import gzip
import json
import os
import sqlite3
import sys


def kineto_names(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        data = json.load(f)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    for e in events:
        if isinstance(e, dict) and str(e.get("cat", "")).lower() == "kernel" and e.get("name"):
            yield e["name"]


def nsys_names(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in tables:
            return
        cols = {r[1] for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
        name_col = "demangledName" if "demangledName" in cols else "shortName"
        sql = (f"SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
               f"JOIN StringIds s ON s.id = k.{name_col}")
        for (value,) in con.execute(sql):
            if value:
                yield value
    finally:
        con.close()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "realdata")
    names = set()
    kineto = os.path.join(root, "kineto")
    nsys = os.path.join(root, "nsys")
    for d, reader, suffixes in ((kineto, kineto_names, (".json", ".json.gz")), (nsys, nsys_names, (".sqlite",))):
        if not os.path.isdir(d):
            continue
        for file in sorted(os.listdir(d)):
            if file.endswith(suffixes):
                names.update(n for n in reader(os.path.join(d, file)) if "\t" not in n and "\n" not in n)
    for n in sorted(names):
        print(n)


if __name__ == "__main__":
    main()
