#!/usr/bin/env python3
"""Split a multi-process Nsight Systems export (gen_profile.py --format nsys --gpus N) into one
export per GPU process, as `srun nsys profile -o rank%q{SLURM_PROCID} …` writes them: each keeps
only its process's rows, records the launcher's variables (RANK, WORLD_SIZE, SLURM_PROCID, …) in
META_DATA_CAPTURE's PROCESS_0:ENVIRONMENT_VARIABLE rows beside a planted secret (which no report may
show), and rank k's timestamps are moved by k x --shift-ms (another host's clock).

    python3 scripts/genprof/nsys_split.py job.sqlite out/rank --shift-ms 1500 [--launcher slurm|torch|mpi|none]

writes out/rank0.sqlite, out/rank1.sqlite, … and prints each rank's shift (ns) as JSON on stdout.
"""
import argparse
import json
import shutil
import sqlite3
import sys

SECRET = "PROFLINT_PLANTED_SECRET=do-not-print-7f3a"
LAUNCHERS = {
    "torch": ("RANK", "WORLD_SIZE"),
    "slurm": ("SLURM_PROCID", "SLURM_NTASKS"),
    "mpi": ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
}


def time_columns(db, table):
    cols = [r[0] for r in db.execute("SELECT name FROM pragma_table_info(?)", (table,))]
    return [c for c in cols if c in ("start", "end", "timestamp", "startTime", "stopTime", "systemClockNs", "utcEpochNs")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("export")
    p.add_argument("prefix")
    p.add_argument("--shift-ms", type=float, default=0.0)
    p.add_argument("--launcher", default="slurm", choices=sorted(LAUNCHERS) + ["none"])
    a = p.parse_args(argv)
    src = sqlite3.connect(a.export)
    pids = [r[0] for r in src.execute("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY globalPid")]
    tables = [r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    src.close()
    shifts = {}
    for rank, gpid in enumerate(pids):
        out = "%s%d.sqlite" % (a.prefix, rank)
        shutil.copyfile(a.export, out)
        db = sqlite3.connect(out)
        proc = gpid >> 24
        for t in tables:
            cols = [r[0] for r in db.execute("SELECT name FROM pragma_table_info(?)", (t,))]
            if "globalPid" in cols:
                db.execute("DELETE FROM %s WHERE globalPid IS NOT NULL AND globalPid >> 24 != ?" % t, (proc,))
            elif "globalTid" in cols:
                db.execute("DELETE FROM %s WHERE globalTid IS NOT NULL AND globalTid >> 24 != ?" % t, (proc,))
            elif t.startswith("TARGET_INFO_") and ("pid" in cols or "processId" in cols):
                # Per-process target rows (CUDA device identity, streams) name the process by its plain pid.
                c = "pid" if "pid" in cols else "processId"
                db.execute('DELETE FROM %s WHERE "%s" IS NOT NULL AND "%s" != (? & 16777215)' % (t, c, c), (proc,))
        shift = int(round(rank * a.shift_ms * 1e6))
        shifts[rank] = shift
        if shift:
            for t in tables:
                if t.startswith("ENUM_") or t in ("StringIds", "META_DATA_CAPTURE", "META_DATA_EXPORT"):
                    continue
                for c in time_columns(db, t):
                    db.execute('UPDATE %s SET "%s" = "%s" + ? WHERE "%s" IS NOT NULL' % (t, c, c, c), (shift,))
        pid = db.execute("SELECT pid FROM PROCESSES WHERE globalPid >> 24 = ?", (proc,)).fetchone()
        db.execute("DELETE FROM META_DATA_CAPTURE WHERE name IN ('PROCESS_0:PID', 'PROCESS_0:ENVIRONMENT_VARIABLE')")
        if pid:
            db.execute("INSERT INTO META_DATA_CAPTURE(name, value) VALUES ('PROCESS_0:PID', ?)", (str(pid[0]),))
        env = ["PATH=/usr/bin:/bin", SECRET, "LOCAL_RANK=%d" % rank]
        if a.launcher != "none":
            r, w = LAUNCHERS[a.launcher]
            env += ["%s=%d" % (r, rank), "%s=%d" % (w, len(pids))]
        for e in env:
            db.execute("INSERT INTO META_DATA_CAPTURE(name, value) VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', ?)", (e,))
        db.commit()
        db.execute("VACUUM")
        db.close()
    json.dump({"ranks": len(pids), "shift_ns": shifts}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
