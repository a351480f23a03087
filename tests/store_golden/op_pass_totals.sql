-- fixture: fixtures/sample_amp.json.gz
-- Ops per pass (fwd, bwd, optimizer, dataloader, other) and iteration: how many, and the GPU
-- time and kernels of the top-level ones (depth 0), whose roll-ups hold their children's.
SELECT iteration, pass, count(*) AS ops, sum(CASE WHEN depth = 0 THEN gpu_time_ns ELSE 0 END) AS top_gpu_time_ns,
       sum(CASE WHEN depth = 0 THEN kernel_count ELSE 0 END) AS top_kernels
FROM op GROUP BY iteration, pass ORDER BY iteration, pass
