"""Host activity for generated Nsight Systems exports: OS runtime calls (OSRT_API) and CPU samples
with call chains (COMPOSITE_EVENTS + SAMPLING_CALLCHAINS), in the column sets of nsys 2024.5
(reference/nsys_sqlite_schemas.md), added to an export written by gen_profile.py --format nsys.

The rows are placed from the export's own GPU and CUDA rows, so what a detector should find is
known by construction:
  io    the main (launching) thread reads its input in every GPU-idle gap: open64 + read calls fill
        the gap's host time outside CUDA calls; the GPU has nothing to run meanwhile.
  cpu   the main thread is sampled running in every GPU-idle gap, mostly in an image-resize
        function of PIL called from the interpreter (a CPU hot spot on the launch path).
  quiet the same kinds of rows, but only where they must not count: reads while the GPU is busy,
        ioctl/poll inside CUDA calls (the driver's waits), waits on a thread that launches nothing,
        main-thread samples only while the GPU is busy or inside CUDA calls, the hot image code on
        a thread that launches nothing.
Every kind also writes the rows a real export has that no detector may count: the two OSRT
'profiling started/finished' markers (eventClass 31/32), a worker thread blocked in
pthread_cond_timedwait, ioctl calls inside cudaStreamSynchronize. Reads, opens and the worker's wait
carry OS call backtraces (OSRT_CALLCHAINS, OSRT_CHAINS below); the ioctl calls have none.
"""

import sqlite3

VM = 1 << 48

OSRT_DDL = """CREATE TABLE OSRT_API (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    nestingLevel                INTEGER,                               -- Zero-base level of the nested OS runtime calls.
    callchainId                 INTEGER                                -- REFERENCES OSRT_CALLCHAINS(id)
)"""
OSRT_CALLCHAINS_DDL = """CREATE TABLE OSRT_CALLCHAINS (
    id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER,
    unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER, unwindMethod INTEGER, stackDepth INTEGER NOT NULL,
    PRIMARY KEY (id, stackDepth)
)"""
COMPOSITE_DDL = """CREATE TABLE COMPOSITE_EVENTS (
    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID of the composite event.
    start                       INTEGER   NOT NULL,                    -- Composite event timestamp (ns).
    cpu                         INTEGER,                               -- CPU ID.
    threadState                 INTEGER,                               -- Thread state.
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    cpuCycles                   INTEGER   NOT NULL                     -- Value of Cycles counter.
)"""
SAMPLING_DDL = """CREATE TABLE SAMPLING_CALLCHAINS (
    id                          INTEGER   NOT NULL,                    -- Part of PRIMARY KEY (id, stackDepth).
    symbol                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    module                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Module name
    kernelMode                  INTEGER,                               -- True if kernel mode.
    thumbCode                   INTEGER,                               -- True if thumb code.
    unresolved                  INTEGER,                               -- True if the symbol was not resolved.
    specialEntry                INTEGER,                               -- True if artifical entry added during processing callchain.
    originalIP                  INTEGER,                               -- Instruction pointer value.
    unwindMethod                INTEGER,                               -- REFERENCES ENUM_STACK_UNWIND_METHOD(id)
    stackDepth                  INTEGER   NOT NULL,                    -- Zero-base index of the given function in call stack.
    PRIMARY KEY (id, stackDepth)
)"""

# Call chains, innermost first: (function, module).
PY = ("_PyEval_EvalFrameDefault", "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")
RESIZE = [("ImagingResampleHorizontal_8bpc", "/usr/lib/python3/dist-packages/PIL/_imaging.cpython-311-x86_64-linux-gnu.so"),
          ("ImagingResample", "/usr/lib/python3/dist-packages/PIL/_imaging.cpython-311-x86_64-linux-gnu.so"), PY, PY]
COPY = [("__memmove_avx_unaligned_erms", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
        ("ImagingCopy", "/usr/lib/python3/dist-packages/PIL/_imaging.cpython-311-x86_64-linux-gnu.so"), PY, PY]
LAUNCH = [("cudaLaunchKernel", "/usr/local/cuda/lib64/libcudart.so.12"),
          ("at::native::addmm_out_cuda_impl", "/opt/torch/lib/libtorch_cuda.so"), PY, PY]
INTERP = [PY, PY, PY]

# OS call backtraces (OSRT_CALLCHAINS), innermost (the called function) first: (function, module);
# None marks an address nsys could not resolve. The caller proflint names is the first resolved
# frame above the call outside the C runtime libraries: ShardReader::next_record for the reads,
# _io_FileIO___init__ for the opens, none for the worker's wait.
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
SHARDS = "/opt/venv/lib/python3.11/site-packages/shardio/_reader.cpython-311-x86_64-linux-gnu.so"
OSRT_CHAINS = {
    "read": [("__libc_read", LIBC), ("ShardReader::next_record()", SHARDS), ("ShardReader::fill(unsigned long)", SHARDS),
             PY, PY],
    "open64": [("__libc_open64", LIBC), ("_io_FileIO___init__", PY[1]), PY, PY],
    "pthread_cond_timedwait": [("pthread_cond_timedwait@@GLIBC_2.3.2", LIBC), None, ("start_thread", LIBC),
                               ("__clone3", LIBC)],
}


def _union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def _subtract(a, b):
    out = []
    for s, e in a:
        t = s
        for bs, be in b:
            if be <= t or bs >= e:
                continue
            if bs > t:
                out.append((t, bs))
            t = max(t, be)
        if t < e:
            out.append((t, e))
    return out


class _Strings:
    def __init__(self, db):
        self.db = db
        self.ids = {v: i for i, v in db.execute("SELECT id, value FROM StringIds")}
        self.next = max(self.ids.values() or [0]) + 1

    def id(self, s):
        i = self.ids.get(s)
        if i is None:
            i = self.ids[s] = self.next
            self.next += 1
            self.db.execute("INSERT INTO StringIds VALUES (?, ?)", (i, s))
        return i


def add(path, kind):
    """Adds OSRT_API, OSRT_CALLCHAINS, COMPOSITE_EVENTS and SAMPLING_CALLCHAINS rows of `kind`
    ('io', 'cpu' or 'quiet') to the export at `path`. Returns the number of rows added."""
    if kind not in ("io", "cpu", "quiet"):
        raise SystemExit("gen_profile.py host-activity: --kind must be io, cpu or quiet")
    db = sqlite3.connect(path)
    st = _Strings(db)
    main_gtid = db.execute("SELECT globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId "
                           "WHERE s.value = 'python3' ORDER BY globalTid LIMIT 1").fetchone()[0]
    pid_bits = main_gtid & ~0xFFFFFF
    worker_gtid = pid_bits | ((main_gtid & 0xFFFFFF) + 11)  # the CUPTI worker thread: launches nothing
    busy = _union([(s, e) for s, e in db.execute(
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY")])
    api = _union([(s, e) for s, e in db.execute(
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = ?", (main_gtid,))])
    syncs = [(s, e) for s, e in db.execute(
        "SELECT r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE r.globalTid = ? AND s.value LIKE 'cudaStreamSynchronize%' ORDER BY r.start", (main_gtid,))]
    first, last = busy[0][0], busy[-1][1]
    gaps = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1) if busy[i + 1][0] - busy[i][1] >= 100_000]
    host_free_in_gaps = _subtract(gaps, api)

    osrt = []  # (start, end, eventClass, globalTid, nameId, returnValue, nestingLevel, callchainId)
    osrt.append((first - 2_000_000, first - 2_000_000, 31, main_gtid, st.id("OS runtime libraries profiling started"),
                 0, None, None))
    osrt.append((last + 1_000_000, last + 1_000_000, 32, main_gtid, st.id("OS runtime libraries profiling finished"),
                 0, None, None))
    # Every kind: the driver's waits inside synchronizations, a worker thread's timed wait.
    for s, e in syncs:
        osrt.append((s + 2_000, max(s + 3_000, e - 2_000), 27, main_gtid, st.id("ioctl"), 0, 0, None))
    chain_id = {name: i + 1 for i, name in enumerate(sorted(OSRT_CHAINS))}
    osrt.append((first, last, 27, worker_gtid, st.id("pthread_cond_timedwait"), 0, 0,
                 chain_id["pthread_cond_timedwait"]))
    if kind == "io":
        for s, e in host_free_in_gaps:
            if e - s < 20_000:
                continue
            osrt.append((s + 1_000, s + 6_000, 27, main_gtid, st.id("open64"), 3, 0, chain_id["open64"]))
            t, n = s + 8_000, 0
            while t + 4_000 < e - 2_000:
                d = min(60_000, e - 2_000 - t)
                osrt.append((t, t + d, 27, main_gtid, st.id("read"), 65536, 0, chain_id["read"]))
                t += d + 1_000
                n += 1
    elif kind == "quiet":
        # Reads while the GPU is busy (prefetched input): no GPU-idle time inside them.
        for s, e in _subtract(_subtract(busy, api), []):
            if e - s > 30_000:
                osrt.append((s + 2_000, s + 12_000, 27, main_gtid, st.id("read"), 65536, 0, chain_id["read"]))
        for s, e in syncs:  # poll inside a synchronization: the driver's, not the program's
            osrt.append((s + 1_000, s + 1_500, 27, main_gtid, st.id("poll"), 1, 1, None))
    osrt.sort()
    db.execute(OSRT_DDL)
    db.executemany("INSERT INTO OSRT_API VALUES (?,?,?,?,?,?,?,?)", osrt)
    db.execute(OSRT_CALLCHAINS_DDL)
    frames = []
    for name, chain in sorted(OSRT_CHAINS.items()):
        for depth, frame in enumerate(chain):
            if frame is None:
                frames.append((chain_id[name], st.id("0x7f3a2c41d11e"), st.id("[Unknown]"), 0, 0, 1, 0,
                               0x7f3a2c41d11e, 7, depth))
            else:
                frames.append((chain_id[name], st.id(frame[0]), st.id(frame[1]), 0, 0, 0, 0,
                               0x7f0000100000 + 64 * depth + chain_id[name], 7, depth))
    db.executemany("INSERT INTO OSRT_CALLCHAINS VALUES (?,?,?,?,?,?,?,?,?,?)", frames)

    # CPU samples of the main thread every 50 us over the GPU window (nsys --sampling-frequency
    # raised), with the chain by where the sample falls.
    period = 50_000
    idle = _subtract([(first, last)], busy)
    def in_any(t, iv):
        return any(s <= t < e for s, e in iv)
    blocked = [(s, e) for s, e, c, g, *_ in osrt if c == 27 and g == main_gtid and e > s]
    samples, chains = [], []
    sid = 1
    t = first
    k = 0
    while t < last:
        if not in_any(t, blocked):
            thread = main_gtid
            if in_any(t, api):
                chain = LAUNCH
            elif in_any(t, idle):
                chain = (RESIZE if k % 5 else COPY) if kind != "io" else INTERP
                k += 1
                if kind == "quiet":  # the hot code runs on a thread that launches nothing
                    thread = worker_gtid
            else:
                chain = INTERP
            samples.append((sid, t, 3, 1, thread, 2_000_000 + t % 997))
            for depth, (fn, mod) in enumerate(chain):
                chains.append((sid, st.id(fn), st.id(mod), 0, 0, 0, 0, 0x7f0000000000 + depth * 64 + sid, 7, depth))
            sid += 1
        t += period
    db.execute(COMPOSITE_DDL)
    db.executemany("INSERT INTO COMPOSITE_EVENTS VALUES (?,?,?,?,?,?)", samples)
    db.execute(SAMPLING_DDL)
    db.executemany("INSERT INTO SAMPLING_CALLCHAINS VALUES (?,?,?,?,?,?,?,?,?,?)", chains)
    db.commit()
    db.close()
    return len(osrt) + len(samples) + len(chains)
