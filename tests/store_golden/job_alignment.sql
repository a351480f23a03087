-- fixture: fixtures/jobs/ddp4_compute_r2/rank0.json.gz fixtures/jobs/ddp4_compute_r2/rank1.json.gz fixtures/jobs/ddp4_compute_r2/rank2.json.gz fixtures/jobs/ddp4_compute_r2/rank3.json.gz
-- A 4-rank DDP job recognised from distributedInfo, its clocks aligned on the collectives. The
-- generator's truth.json plants clock offsets 0, 24742114, 67228945, 55648616 ns; checked by hand:
-- the offsets found below differ from them by 35, 517 and 35 ns, under each rank's residual.
SELECT j.source, j.world_size, j.ranks_present, j.aligned, r.rank, r.trace_id, r.device_id, r.clock_offset_ns,
       r.offset_residual_ns
FROM job j JOIN job_rank r USING (job_id) ORDER BY r.rank
