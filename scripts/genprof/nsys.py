"""Nsight Systems SQLite export writer (nsys 2026.2.1 / export schema 3.25.0 table layout).

Only tables that have rows are created, as nsys 2026 does. Column names, order and types follow the
3.25.0 listing in shared/reference/nsys_sqlite_schemas.md; TARGET_INFO_GPU uses the 2026.1 column
set (a 2026.2 container capture would omit it; here the GPU identity is kept on purpose).
globalPid = (1 << 48) | (pid << 24), globalTid = globalPid | tid (the vmId=1 high bits nsys writes).
"""

import hashlib
import os
import sqlite3

from .sim import OP, RT, KER, CPY, SET, SYNC, MEM, FLOW, GANN, NVTX, RT_API, CPY_KINDS, INVALID

VM = 1 << 48

DDL = {
    "StringIds": """CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.
    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
)""",
    "ThreadNames": """CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
)""",
    "PROCESSES": """CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
)""",
    "CUPTI_ACTIVITY_KIND_KERNEL": """CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER,                               -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
    qmdBulkReleaseDone          INTEGER,                               -- QMD bulk release done timestamp from CWD events.
    qmdPreexitDone              INTEGER,                               -- QMD pre-exit done timestamp from CWD events.
    qmdLastCtaDone              INTEGER,                               -- QMD last CTA done timestamp from CWD events.
    graphId                     INTEGER,                               -- Kernel graph ID.
    clusterX                    INTEGER,                               -- Cluster X dimension.
    clusterY                    INTEGER,                               -- Cluster Y dimension.
    clusterZ                    INTEGER,                               -- Cluster Z dimension.
    clusterSchedulingPolicy     INTEGER,                               -- Cluster scheduling policy.
    maxPotentialClusterSize     INTEGER,                               -- Maximum potential cluster size.
    maxActiveClusters           INTEGER,                               -- Maximum active clusters.
    sharedMemoryRequestedPercentage   INTEGER,                         -- Shared memory requested percentage.
    tensorSizeMinusOneElements   TEXT      NOT NULL                    -- TMA descriptor tensor size minus one elements array.
)""",
    "CUPTI_ACTIVITY_KIND_RUNTIME": """CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
)""",
    "CUPTI_ACTIVITY_KIND_MEMCPY": """CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER,                               -- Virtual base address of the page/s being transferred.
    copyCount                   INTEGER                                -- The total number of memcopy operations traced in this record.
)""",
    "CUPTI_ACTIVITY_KIND_MEMSET": """CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
)""",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": """CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- Correlation ID of the synchronization API to which this result is associated.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    deprecatedSyncType          INTEGER,                               -- Deprecated, use syncType instead.
    syncType                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    eventId                     INTEGER   NOT NULL,                    -- Event ID for which the synchronization API is called.
    eventSyncId                 INTEGER                                -- CUDA Event Sync ID to link the synchronization API to associated event record API.
)""",
    "NVTX_EVENTS": """CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
)""",
    # The nsys 2022.2 layout (export schema 2.9.1), the only one a real export shows: a node's
    # creation by a host call (a captured launch, cudaGraphAdd*Node, or the clone made when the
    # graph is instantiated, which names its original).
    "CUDA_GRAPH_EVENTS": """CREATE TABLE CUDA_GRAPH_EVENTS (
    start                       INTEGER   NOT NULL,                    -- When the node was created (ns).
    end                         INTEGER   NOT NULL,                    -- End of the creating call (ns).
    eventClass                  INTEGER   NOT NULL,                    -- Event class of the creating call.
    globalTid                   INTEGER,                               -- Serialized GlobalId of the creating thread.
    nameId                      INTEGER   NOT NULL   REFERENCES StringIds(id), -- The creating call's name.
    graphNodeId                 INTEGER   NOT NULL   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId), -- The node's id.
    originalGraphNodeId         INTEGER                                -- The node this one was cloned from, if a clone.
)""",
    "TARGET_INFO_GPU": """CREATE TABLE TARGET_INFO_GPU (
    vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
    l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
    pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT,
    ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER,
    maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER,
    maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm INTEGER,
    maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER,
    maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,
    computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER
)""",
    "TARGET_INFO_CUDA_DEVICE": """CREATE TABLE TARGET_INFO_CUDA_DEVICE (
    gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, numMultiprocessors INTEGER
)""",
    "TARGET_INFO_CUDA_STREAM": """CREATE TABLE TARGET_INFO_CUDA_STREAM (
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    hwId                        INTEGER   NOT NULL,                    -- Hardware ID.
    vmId                        INTEGER   NOT NULL,                    -- VM ID.
    processId                   INTEGER   NOT NULL,                    -- Process ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    priority                    INTEGER   NOT NULL,                    -- Priority of the stream.
    flag                        INTEGER   NOT NULL                     -- REFERENCES ENUM_CUPTI_STREAM_TYPE(id)
)""",
    "TARGET_INFO_SESSION_START_TIME": """CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,                               -- UTC Epoch timestamp at start of the capture (ns).
    utcTime                     TEXT,                                  -- Start of the capture in UTC.
    localTime                   TEXT,                                  -- Start of the capture in local time of target.
    systemClockNs               INTEGER                                -- Target system clock timestamp at start of the capture (ns).
)""",
    "TARGET_INFO_SYSTEM_ENV": """CREATE TABLE TARGET_INFO_SYSTEM_ENV (
    globalVid                   INTEGER,                               -- Serialized GlobalId.
    devStateName                TEXT      NOT NULL,                    -- Device state name.
    name                        TEXT      NOT NULL,                    -- Property name.
    nameEnum                    INTEGER   NOT NULL,                    -- Property enum value.
    value                       TEXT      NOT NULL                     -- Property value.
)""",
    "ANALYSIS_DETAILS": """CREATE TABLE ANALYSIS_DETAILS (
    -- Details about the analysis session.
    globalVid                   INTEGER   NOT NULL,                    -- Serialized GlobalId.
    duration                    INTEGER   NOT NULL,                    -- The total time span of the entire trace (ns).
    startTime                   INTEGER   NOT NULL,                    -- Trace start timestamp in nanoseconds.
    stopTime                    INTEGER   NOT NULL                     -- Trace stop timestamp in nanoseconds.
)""",
    "META_DATA_CAPTURE": """CREATE TABLE META_DATA_CAPTURE (
    -- information about nsys capture parameters
    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
)""",
    "META_DATA_EXPORT": """CREATE TABLE META_DATA_EXPORT (
    -- information about nsys export process
    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
)""",
}

ENUM_DDL = """CREATE TABLE %s (
    -- %s
    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
)"""

ENUMS = {
    "ENUM_CUDA_MEMCPY_OPER": ("CUDA memcpy operation labels", [
        (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"), (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
        (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"), (3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"),
        (4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"), (5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"),
        (6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"), (7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"),
        (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"), (9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"),
        (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"), (11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"),
        (12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"), (13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device")]),
    "ENUM_CUDA_MEM_KIND": ("CUDA memory kind labels", [
        (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"), (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
        (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"), (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
        (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"), (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
        (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"), (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown")]),
    "ENUM_CUPTI_SYNC_TYPE": ("CUPTI synchronization type labels", [
        (0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
        (1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"),
        (2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"),
        (3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"),
        (4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync")]),
    "ENUM_CUDA_KERNEL_LAUNCH_TYPE": ("CUDA kernel launch type labels", [
        (0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"), (1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"),
        (2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
        (3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device")]),
    "ENUM_CUDA_FUNC_CACHE_CONFIG": ("CUDA function cache config labels", [
        (0, "CU_FUNC_CACHE_PREFER_NONE", "None"), (1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"),
        (2, "CU_FUNC_CACHE_PREFER_L1", "L1"), (3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal")]),
    "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG": ("CUDA shared memory limit config labels", [
        (0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"), (1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in")]),
    "ENUM_CUPTI_STREAM_TYPE": ("CUPTI stream type labels", [
        (0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown stream type"),
        (1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"),
        (2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"),
        (3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream")]),
    "ENUM_CUDA_UNIF_MEM_MIGRATION": ("CUDA unified memory migration cause labels", [
        (0, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN", "Unknown"),
        (1, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_USER", "User prefetch"),
        (2, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE", "Page fault"),
        (3, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH", "Speculative prefecth"),
        (4, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION", "Eviction"),
        (5, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS", "Access counters")]),
    "ENUM_NSYS_EVENT_TYPE": ("Nsys event type labels", [
        (i, n, n) for i, n in [
            (0, "Unknown"), (32, "NvtxEvents"), (33, "NvtxCategory"), (34, "NvtxMark"), (35, "NvtxPushRange"),
            (36, "NvtxPopRange"), (37, "NvtxStartRange"), (38, "NvtxEndRange"), (39, "NvtxThread"),
            (59, "NvtxPushPopRange"), (60, "NvtxStartEndRange"), (64, "NvtxtCategory"), (65, "NvtxtMark"),
            (66, "NvtxtPushRange"), (67, "NvtxtPopRange"), (68, "NvtxtStartRange"), (69, "NvtxtEndRange"),
            (70, "NvtxtPushPopRange"), (71, "NvtxtStartEndRange"), (72, "NvtxtMetaThread"), (73, "NvtxtMetaProcess"),
            (74, "NvtxtMetaFileDisplay"), (75, "NvtxDomainCreate"), (76, "NvtxDomainDestroy"),
            (97, "NvtxNameCudaDevice"), (98, "NvtxNameCudaContext"), (99, "NvtxNameCudaStream")]]),
    "ENUM_NSYS_EVENT_CLASS": ("Nsys event class labels", [
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"), (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (6, "TRACE_PROCESS_EVENT_NVTX_START", "NVTX start"), (7, "TRACE_PROCESS_EVENT_NVTX_FINISH", "NVTX finish"),
        (10, "TRACE_PROCESS_EVENT_CUDA_START", "CUDA start"), (11, "TRACE_PROCESS_EVENT_CUDA_FINISH", "CUDA finish"),
        (26, "TRACE_PROCESS_EVENT_CUDA_API", "CUDA API"), (27, "TRACE_PROCESS_EVENT_OS_RUNTIME", "OSRT runtime"),
        (28, "TRACE_PROCESS_EVENT_CUDNN", "cuDNN"), (29, "TRACE_PROCESS_EVENT_CUBLAS", "cuBLAS")]),
}

K_COLS = 40


class NsysWriter:
    def __init__(self, path, cfg, gpu, sims):
        self.cfg = cfg
        self.gpu = gpu
        self.sims = sims
        if os.path.exists(path):
            os.remove(path)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA page_size=4096")
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("BEGIN")
        self.strings = {}
        self.created = set()
        self.count = 0
        self.counts = {}
        self.grid_id = {s.rank: 40 + s.rank * 7 for s in sims}
        self.rt_ids = [self.sid(x[2]) for x in RT_API]
        self.nvtx_on = cfg.nvtx_emit

    def sid(self, s):
        i = self.strings.get(s)
        if i is None:
            i = self.strings[s] = len(self.strings) + 1
        return i

    def _table(self, name):
        if name not in self.created:
            self.created.add(name)
            self.db.execute(DDL[name])

    def _insert(self, name, rows):
        if not rows:
            return
        self._table(name)
        rows.sort(key=lambda r: r[0])
        n = len(rows[0])
        self.db.executemany("INSERT INTO %s VALUES (%s)" % (name, ",".join("?" * n)), rows)
        self.counts[name] = self.counts.get(name, 0) + len(rows)
        self.count += len(rows)

    def _kids(self, ks):
        c = ks.cache.get("nsys")
        if c is None:
            from . import kernels as K
            c = ks.cache["nsys"] = (self.sid(K.nsys_demangled(ks.name)), self.sid(K.short_name(ks.name)),
                                    self.sid(K.mangled(ks.name)))
        return c

    def write(self, recs, sim):
        gpid = VM | (sim.pid << 24)
        ctx = sim.rank + 1
        kern, rt, cpy, mset, sync, nvtx = [], [], [], [], [], []
        rt_ids = self.rt_ids
        gid = self.grid_id[sim.rank]
        local_mem = 0xEF00000 + 0x100000 * (sim.rank % 4)
        emit = self.nvtx_on
        # CUDA_VISIBLE_DEVICES per process: each process calls the one GPU it sees device 0.
        per_process = getattr(self.cfg, "per_process_ids", False)
        for r in recs:
            k = r[0]
            if k == OP:
                if emit:
                    _, tid, cat, o, s, e, ext, seq, bwd = r
                    if seq >= 0:
                        text = "%s, seq = %d, op_id = %d%s" % (o.name, seq, ext, o.sizes)
                    else:
                        text = "%s, op_id = %d%s" % (o.name, ext, o.sizes)
                    nvtx.append((s, e, 59, None, None, None, text, gpid | tid, None, None, 0,
                                 None, None, None, None, None, None, None, None, None))
            elif k == RT:
                _, tid, code, s, e, corr, ext = r
                rt.append((s, e, 0, gpid | tid, corr, rt_ids[code], 0, None))
            elif k == KER:
                _, dev, st, s, e, corr, ext, ks = r
                dev = 0 if per_process else dev
                dn, sn, mn = self._kids(ks)
                gx, gy, gz = ks.grid
                bx, by, bz = ks.block
                gid += 1
                kern.append((s, e, dev, ctx, 0, st, corr, gpid, dn, sn, mn, 1, 0, ks.regs, gx, gy, gz, bx, by, bz,
                             ks.smem_static, ks.smem_dyn, 0, local_mem, gid,
                             max(8192, (ks.smem_static + ks.smem_dyn + 8191) // 8192 * 8192) if ks.smem_dyn or ks.smem_static else 0,
                             None, 0, None, None, None, None, 0, 0, 0, 0, 0, 0, None, "[]"))
            elif k == CPY:
                _, dev, st, s, e, corr, ext, kind, nb = r
                dev = 0 if per_process else dev
                _, ck, sk, dk = CPY_KINDS[kind]
                cpy.append((s, e, dev, ctx, 0, st, corr, gpid, nb, ck, None, sk, dk,
                            None, None, None, None, None, None, None, 1))
            elif k == SET:
                _, dev, st, s, e, corr, ext, nb = r
                dev = 0 if per_process else dev
                mset.append((s, e, dev, ctx, 0, st, corr, gpid, 0, nb, None, 2))
            elif k == SYNC:
                _, dev, st, s, e, corr, stype = r
                dev = 0 if per_process else dev
                sync.append((s, e, dev, ctx, None, st, corr, gpid, None, stype, INVALID, 0))
            elif k == NVTX:
                _, tid, s, e, text = r
                nvtx.append((s, e, 59, None, None, None, text, gpid | tid, None, None, 0,
                             None, None, None, None, None, None, None, None, None))
        self.grid_id[sim.rank] = gid
        self._insert("CUPTI_ACTIVITY_KIND_KERNEL", kern)
        self._insert("CUPTI_ACTIVITY_KIND_RUNTIME", rt)
        self._insert("CUPTI_ACTIVITY_KIND_MEMCPY", cpy)
        self._insert("CUPTI_ACTIVITY_KIND_MEMSET", mset)
        self._insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", sync)
        self._insert("NVTX_EVENTS", nvtx)

    def finish(self, t_start, t_end, streams):
        cfg, gpu, db = self.cfg, self.gpu, self.db
        # processes and threads
        procs = []
        threads = []
        for s in self.sims:
            gpid = VM | (s.pid << 24)
            procs.append((gpid, s.pid, "python3"))
            threads.append((self.sid("python3"), 20, gpid | s.main.tid))
            threads.append((self.sid("pt_autograd_%d" % s.rank), 20, gpid | s.bwdth.tid))
            threads.append((self.sid("cuda-EvtHandlr"), 20, gpid | (s.pid + 9)))
            threads.append((self.sid("CUPTI worker thread"), 10, gpid | (s.pid + 11)))
        if len(self.sims) > 1:
            lp = self.sims[0].pid - 40
            procs.append((VM | (lp << 24), lp, "torchrun"))
            threads.append((self.sid("torchrun"), 20, VM | (lp << 24) | lp))
        self._table("PROCESSES")
        db.executemany("INSERT INTO PROCESSES VALUES (?,?,?)", procs)
        self._table("ThreadNames")
        db.executemany("INSERT INTO ThreadNames VALUES (?,?,?)", threads)
        # GPUs
        self._table("TARGET_INFO_GPU")
        h = hashlib.sha1(("%s" % cfg.seed).encode()).hexdigest()
        rows = []
        for i in range(max(cfg.gpus, cfg.visible_gpus)):
            u = hashlib.sha1(("%s-gpu-%d" % (h, i)).encode()).hexdigest()
            uuid = "%s-%s-%s-%s-%s" % (u[:8], u[8:12], u[12:16], u[16:20], u[20:32])
            rows.append((VM, i, gpu.name, "0000:%02x:00.0" % (7 + 0x10 * i), 1, gpu.l2, gpu.mem, int(gpu.bw), gpu.clock_hz,
                         gpu.sms, 0, uuid, 0, gpu.chip, i, None, None, 161, 0, 65536, 4, 65536, 49152, gpu.smem_optin,
                         gpu.smem_sm, 65536, 32, 2 if gpu.cc >= (8, 0) else 6, gpu.max_thr_sm // 32,
                         32 if gpu.cc >= (8, 0) else 16, 1024, 1024, 1024, 64, 2147483647, 65535, 65535,
                         gpu.cc[0], gpu.cc[1], gpu.cc[0], gpu.cc[1]))
        db.executemany("INSERT INTO TARGET_INFO_GPU VALUES (%s)" % ",".join("?" * 41), rows)
        if getattr(cfg, "per_process_ids", False):
            # One row per (GPU, process) as nsys 2026.1 writes it: the process's CUDA id of the GPU.
            self._table("TARGET_INFO_CUDA_DEVICE")
            db.executemany("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?,?,?,?,?)",
                           [(s.rank, 0, s.pid, rows[s.rank][11], gpu.sms) for s in self.sims])
        self._table("TARGET_INFO_CUDA_STREAM")
        srows = []
        for s in self.sims:
            for st in sorted(streams):
                srows.append((st, 0, 1, s.pid, s.rank + 1, 0 if st == 7 else 4294967295, 2))
        db.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?,?,?,?,?,?,?)", srows)
        # session / analysis
        sess0 = cfg.t0_ns - 2_400_000_000
        epoch0 = cfg.epoch_base_ns + sess0
        import time as _t
        tm = _t.gmtime(epoch0 // 1_000_000_000)
        stamp = "%04d-%02d-%02dT%02d:%02d:%02d" % tm[:6]
        self._table("TARGET_INFO_SESSION_START_TIME")
        db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?,?,?,?)", (epoch0, stamp, stamp, sess0))
        self._table("ANALYSIS_DETAILS")
        stop = t_end + 250_000_000
        db.execute("INSERT INTO ANALYSIS_DETAILS VALUES (?,?,?,?)", (VM, stop - sess0, sess0, stop))
        self._table("TARGET_INFO_SYSTEM_ENV")
        env = [("CpuCores", 1, "32"), ("CpuArchitecture", 3, "x86_64"), ("HasDiscreteGpu", 203, "1"),
               ("NvDriverVersion", 205, "570.124.06"), ("HardwarePlatform", 600, "x86_64"), ("SoftwarePlatform", 601, "L4X"),
               ("OsDescription", 605, "Ubuntu 22.04.4 LTS"), ("CudaDriverVersion", 611, "12080"),
               ("HasNvtxEvents", 809, "1" if self.counts.get("NVTX_EVENTS") else "0"), ("HasCudaEvents", 812, "1"),
               ("GpuInfo", 0, "{}"), ("SupportsNCCL", 0, "1")]
        db.executemany("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?,?,?,?,?)",
                       [(VM, "Local (CLI)", n, e, v) for n, e, v in env])
        self._table("META_DATA_EXPORT")
        meta = [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2026.2.1.210"),
                ("EXPORT_PRODUCT_DATE", "2026.2"), ("EXPORT_SCHEMA_VERSION", "3.25.0"),
                ("EXPORT_SCHEMA_VERSION_MAJOR", "3"), ("EXPORT_SCHEMA_VERSION_MINOR", "25"),
                ("EXPORT_SCHEMA_VERSION_MICRO", "0"), ("EXPORT_PLATFORM", "linux-desktop"), ("EXPORT_ARCH", "x64"),
                ("EXPORT_TIME_UTC", stamp), ("EXPORT_PARAM_EXPORT_TYPE", "SQLite"),
                ("EXPORT_PARAM_INPUT_FILE", "train.nsys-rep"), ("EXPORT_PARAM_OUTPUT_FILE", "train.sqlite"),
                ("EXPORT_PARAM_TIME_NORMALIZE", "false"), ("EXPORT_PARAM_INCLUDE_JSON", "false"),
                ("GENERATED_BY", "proflint scripts/gen_profile.py (synthetic)"),
                ("GENERATED_ARGS", cfg.argline)]
        db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?,?)", meta)
        self._table("META_DATA_CAPTURE")
        cap = [("DEVICE_TYPE", "Linux"), ("CUDA_TRACE_SCOPE", "ProcessTree"), ("INCLUDE_CHILDREN", "true"),
               ("PROCESS_0:COMMAND", "python3"), ("PROCESS_0:COLLECT_NVTX_TRACE", "true"),
               ("PROCESS_0:COLLECT_CUDA_TRACE", "true"), ("PROCESS_0:PID", str(self.sims[0].pid))]
        db.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?,?)", cap)
        for name, (desc, vals) in ENUMS.items():
            db.execute(ENUM_DDL % (name, desc))
            db.executemany("INSERT INTO %s VALUES (?,?,?)" % name, vals)
        self._table("StringIds")
        db.executemany("INSERT INTO StringIds VALUES (?,?)", [(i, s) for s, i in self.strings.items()])
        db.execute("COMMIT")
        db.execute("VACUUM")
        db.close()


class ScriptedExport:
    """A hand-timed export of one process (genprof/graph_scenarios.py): rows are added call by call
    in microseconds from the session start and written with the same table layouts as NsysWriter."""

    def __init__(self, gpu, pid=4242):
        self.gpu = gpu
        self.pid = pid
        self.gpid = VM | (pid << 24)
        self.gtid = self.gpid | pid
        self.strings = {}
        self.corr = 100
        self.grid = 500
        self.rows = {"CUPTI_ACTIVITY_KIND_RUNTIME": [], "CUPTI_ACTIVITY_KIND_KERNEL": [], "NVTX_EVENTS": [],
                     "CUDA_GRAPH_EVENTS": []}

    def sid(self, s):
        i = self.strings.get(s)
        if i is None:
            i = self.strings[s] = len(self.strings) + 1
        return i

    @staticmethod
    def ns(us):
        return 1_000_000_000 + int(round(us * 1000))

    def runtime(self, name, ts_us, dur_us):
        """A CUDA runtime call on the main thread; returns its correlation id."""
        self.corr += 1
        self.rows["CUPTI_ACTIVITY_KIND_RUNTIME"].append(
            (self.ns(ts_us), self.ns(ts_us + dur_us), 0, self.gtid, self.corr, self.sid(name), 0, None))
        return self.corr

    def nvtx(self, text, ts_us, dur_us):
        """A push/pop range on the main thread (emit_nvtx op ranges or user ranges)."""
        self.rows["NVTX_EVENTS"].append((self.ns(ts_us), self.ns(ts_us + dur_us), 59, None, None, None, text, self.gtid, None,
                                         None, 0, None, None, None, None, None, None, None, None, None))

    def kernel(self, name, start_us, dur_us, corr, stream=7, graph_id=None, node=None):
        self.grid += 1
        n = self.sid(name)
        self.rows["CUPTI_ACTIVITY_KIND_KERNEL"].append(
            (self.ns(start_us), self.ns(start_us + dur_us), 0, 1, 0, stream, corr, self.gpid, n, n, None, 1, 0, 64,
             108, 1, 1, 256, 1, 1, 0, 0, 0, 0, self.grid, 0, node, 0, None, None, None, graph_id, 0, 0, 0, 0, 0, 0, None,
             "[]"))

    def graph_node(self, call, ts_us, dur_us, node, original=None):
        """The creation of CUDA graph node `node` by `call` on the main thread (a clone names its original)."""
        self.rows["CUDA_GRAPH_EVENTS"].append(
            (self.ns(ts_us), self.ns(ts_us + dur_us), 0, self.gtid, self.sid(call), node, original))

    def write(self, path):
        if os.path.exists(path):
            os.remove(path)
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA page_size=4096")
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("BEGIN")
        count = 0
        for name, rows in self.rows.items():
            if not rows:
                continue
            db.execute(DDL[name])
            rows.sort(key=lambda r: (r[0], r[1]))
            db.executemany("INSERT INTO %s VALUES (%s)" % (name, ",".join("?" * len(rows[0]))), rows)
            count += len(rows)
        db.execute(DDL["PROCESSES"])
        db.execute("INSERT INTO PROCESSES VALUES (?,?,?)", (self.gpid, self.pid, "python3"))
        db.execute(DDL["ThreadNames"])
        db.execute("INSERT INTO ThreadNames VALUES (?,?,?)", (self.sid("python3"), 20, self.gtid))
        g = self.gpu
        db.execute(DDL["TARGET_INFO_GPU"])
        db.execute("INSERT INTO TARGET_INFO_GPU VALUES (%s)" % ",".join("?" * 41),
                   (VM, 0, g.name, "0000:07:00.0", 1, g.l2, g.mem, int(g.bw), g.clock_hz, g.sms, 0,
                    "00000000-0000-0000-0000-000000000000", 0, g.chip, 0, None, None, 161, 0, 65536, 4, 65536, 49152,
                    g.smem_optin, g.smem_sm, 65536, 32, 2, g.max_thr_sm // 32, 32, 1024, 1024, 1024, 64, 2147483647,
                    65535, 65535, g.cc[0], g.cc[1], g.cc[0], g.cc[1]))
        db.execute(DDL["META_DATA_EXPORT"])
        db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?,?)", [
            ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"), ("EXPORT_PRODUCT_VERSION", "2026.2.1.210"),
            ("EXPORT_SCHEMA_VERSION", "3.25.0"), ("GENERATED_BY", "proflint scripts/gen_profile.py graphs (synthetic)")])
        for name, (desc, vals) in ENUMS.items():
            db.execute(ENUM_DDL % (name, desc))
            db.executemany("INSERT INTO %s VALUES (?,?,?)" % name, vals)
        db.execute(DDL["StringIds"])
        db.executemany("INSERT INTO StringIds VALUES (?,?)", [(i, s) for s, i in self.strings.items()])
        db.execute("COMMIT")
        db.execute("VACUUM")
        db.close()
        return count
