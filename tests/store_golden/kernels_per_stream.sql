-- fixture: fixtures/dataparallel_2gpu.json
-- Kernels per device and stream of a torch.nn.DataParallel trace (two GPUs, one process): the
-- device and stream ids come from the Kineto "device"/"stream" args of each kernel event.
-- Checked by hand (python3 json over the raw file): 6 kernel events with device 0 summing
-- 10,500 us and 3 with device 1 summing 7,500 us, all on stream 7.
SELECT device_id, stream_id, count(*) AS kernels, sum(dur_ns) AS kernel_ns, min(start_ns) AS first_start_ns,
       max(end_ns) AS last_end_ns
FROM kernel GROUP BY device_id, stream_id ORDER BY device_id, stream_id
