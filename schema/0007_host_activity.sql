-- proflint fact store, schema version 7: what the host threads did besides CUDA calls.
--
-- Nsight Systems traces the calls a process makes into the OS runtime libraries (OSRT_API:
-- read, write, poll, pthread_cond_wait, nanosleep, ioctl, ...) and samples the call stacks of
-- running threads (COMPOSITE_EVENTS + SAMPLING_CALLCHAINS). Importers fill these tables; rows of
-- neither table move the trace's capture window (trace.start_ns/end_ns): OS runtime tracing and
-- sampling cover the whole process, GPU tracing the window that matters.

-- One traced OS runtime library call on a host thread (nsys OSRT_API, eventClass 27; the
-- 'OS runtime libraries profiling started/finished' markers are not calls and are not kept).
CREATE TABLE _os_call (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  pid            INTEGER,           -- process
  tid            INTEGER,           -- OS thread id of the calling thread
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,  -- time inside the call (blocked or working)
  name_id        INTEGER NOT NULL,  -- function name as recorded ('read', 'pthread_cond_timedwait', 'poll')
  return_value   INTEGER,           -- as recorded (nsys writes 0 for most calls)
  nesting_level  INTEGER            -- 0 for a call made by the program, >0 for one made inside another traced call
);
CREATE INDEX os_call_by_thread ON _os_call(trace_id, pid, tid, start_ns);

-- OS calls with their names and a category by name:
--   'io'      reading or writing files, pipes and sockets (read, pread64, fread, write, recv, send,
--             open64, fopen, stat, fsync, ...): a DataLoader waiting for a worker's batch reads a pipe;
--   'wait'    blocking until another thread, process or descriptor is ready (poll, ppoll, select,
--             epoll_wait, futex, pthread_cond_wait/timedwait, pthread_mutex_lock, sem_wait/timedwait,
--             pthread_join, waitpid, ...);
--   'sleep'   sleep, usleep, nanosleep, clock_nanosleep;
--   'driver'  ioctl: how the CUDA driver talks to the GPU (a synchronize shows up here), not input;
--   'memory'  mmap, mmap64, munmap, mremap, brk, madvise;
--   'process' fork, vfork, clone, exec*, pthread_create, system, posix_spawn;
--   'other'   everything else.
CREATE VIEW os_call AS
  SELECT o.id, o.trace_id, o.pid, o.tid, o.start_ns, o.dur_ns, o.start_ns + o.dur_ns AS end_ns,
         s.value AS name, o.name_id,
         CASE
           WHEN s.value IN ('read', 'pread', 'pread64', 'readv', 'preadv', 'preadv2', 'fread', 'fread_unlocked',
                            'fgets', 'getline', 'getdelim', 'write', 'pwrite', 'pwrite64', 'writev', 'pwritev',
                            'fwrite', 'fwrite_unlocked', 'fputs', 'fflush', 'recv', 'recvfrom', 'recvmsg',
                            'recvmmsg', 'send', 'sendto', 'sendmsg', 'sendmmsg', 'sendfile', 'sendfile64',
                            'accept', 'accept4', 'connect', 'open', 'open64', 'openat', 'openat64', 'creat',
                            'fopen', 'fopen64', 'fdopen', 'freopen', 'close', 'fclose', 'stat', 'stat64',
                            'lstat', 'lstat64', 'fstat', 'fstat64', 'fstatat', 'statx', 'access', 'fsync',
                            'fdatasync', 'sync', 'syncfs', 'lseek', 'lseek64', 'ftruncate', 'truncate',
                            'getdents', 'getdents64', 'readdir', 'readdir64', 'opendir', 'closedir', 'unlink',
                            'rename', 'mkdir', 'rmdir', 'copy_file_range', 'splice', 'posix_fadvise') THEN 'io'
           WHEN s.value IN ('poll', 'ppoll', 'select', 'pselect', 'pselect6', 'epoll_wait', 'epoll_pwait',
                            'epoll_pwait2', 'futex', 'pthread_cond_wait', 'pthread_cond_timedwait',
                            'pthread_mutex_lock', 'pthread_mutex_timedlock', 'pthread_rwlock_rdlock',
                            'pthread_rwlock_wrlock', 'pthread_rwlock_timedrdlock', 'pthread_rwlock_timedwrlock',
                            'pthread_spin_lock', 'pthread_barrier_wait', 'pthread_join', 'pthread_timedjoin_np',
                            'sem_wait', 'sem_timedwait', 'sem_clockwait', 'wait', 'waitpid', 'waitid', 'wait3',
                            'wait4', 'sigwait', 'sigwaitinfo', 'sigtimedwait', 'sigsuspend', 'pause', 'msgrcv',
                            'semop', 'semtimedop', 'mq_receive', 'mq_timedreceive', 'flock', 'lockf') THEN 'wait'
           WHEN s.value IN ('sleep', 'usleep', 'nanosleep', 'clock_nanosleep') THEN 'sleep'
           WHEN s.value = 'ioctl' THEN 'driver'
           WHEN s.value IN ('mmap', 'mmap64', 'munmap', 'mremap', 'brk', 'sbrk', 'madvise', 'mprotect',
                            'mlock', 'munlock', 'shm_open', 'shm_unlink') THEN 'memory'
           WHEN s.value IN ('fork', 'vfork', 'clone', 'execve', 'execv', 'execvp', 'execvpe', 'execl', 'execlp',
                            'execle', 'pthread_create', 'system', 'posix_spawn', 'posix_spawnp', 'popen',
                            'pclose') THEN 'process'
           ELSE 'other'
         END AS category,
         o.return_value, o.nesting_level
  FROM _os_call o JOIN string s ON s.id = o.name_id;

-- One CPU sample: a running thread's call stack taken at one instant (nsys COMPOSITE_EVENTS).
CREATE TABLE _cpu_sample (
  id        INTEGER PRIMARY KEY,
  trace_id  INTEGER NOT NULL,
  pid       INTEGER,
  tid       INTEGER,           -- the sampled thread
  ts_ns     INTEGER NOT NULL,  -- when the sample was taken
  cpu       INTEGER,           -- CPU core it ran on, when recorded
  leaf_id   INTEGER            -- string id of the innermost frame's function (NULL: no call chain recorded)
);
CREATE INDEX cpu_sample_by_time ON _cpu_sample(trace_id, ts_ns);

-- The frames of each sample's call chain (nsys SAMPLING_CALLCHAINS), innermost first.
CREATE TABLE _cpu_frame (
  sample_id  INTEGER NOT NULL,  -- cpu_sample.id
  trace_id   INTEGER NOT NULL,
  depth      INTEGER NOT NULL,  -- 0 = the function executing when sampled, 1 = its caller, ...
  name_id    INTEGER NOT NULL,  -- function (symbol) name; an unresolved address reads '0x7fd99b3515d4'
  module_id  INTEGER,           -- string id of the library or executable that holds it, when recorded
  PRIMARY KEY (sample_id, depth)
);

CREATE VIEW cpu_sample AS
  SELECT c.id, c.trace_id, c.pid, c.tid, c.ts_ns, c.cpu, s.value AS leaf, c.leaf_id
  FROM _cpu_sample c LEFT JOIN string s ON s.id = c.leaf_id;

CREATE VIEW cpu_frame AS
  SELECT f.sample_id, f.trace_id, f.depth, s.value AS name, f.name_id, m.value AS module
  FROM _cpu_frame f JOIN string s ON s.id = f.name_id LEFT JOIN string m ON m.id = f.module_id;
