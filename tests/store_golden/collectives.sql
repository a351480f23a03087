-- fixture: fixtures/jobs/ddp4_compute_r2/rank0.json.gz fixtures/jobs/ddp4_compute_r2/rank1.json.gz fixtures/jobs/ddp4_compute_r2/rank2.json.gz fixtures/jobs/ddp4_compute_r2/rank3.json.gz
-- Collectives matched across the ranks and who waited: rank 2 is the planted compute straggler.
-- truth.json: 12 collectives, rank 2 arrives last in all 12, waits 62559701, 62554266, 0,
-- 62903149 ns in total (ranks 0..3); the store's waits below agree within 10 us.
SELECT rank, instances, total_wait_ns, arrived_last, arrived_first, total_transfer_ns FROM collective_rank_summary
ORDER BY rank
