-- fixture: fixtures/ddp2_per_process_ids.nsys.sqlite
-- Two DDP processes in one nsys export, each calling its GPU "device 0": the importer keeps the
-- GPUs apart (device table) and the two processes form a job (job_rank.pid).
SELECT 'device' AS what, device_id AS id, name AS detail, has_activity AS value FROM device
UNION ALL
SELECT 'job_rank', rank, 'pid ' || pid || ' device ' || device_id, clock_offset_ns FROM job_rank
UNION ALL
SELECT 'job', job_id, source, ranks_present FROM job
ORDER BY 1, 2
