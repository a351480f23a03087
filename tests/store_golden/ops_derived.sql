-- fixture: fixtures/sample_train.json.gz
-- Derived op columns (op_type, pass, depth, path, iteration, tc_eligible, GPU time and kernel
-- counts rolled up from the kernels, including children) by op name in iteration 2, the 15 names
-- with the most GPU time; one example path each.
SELECT name, op_type, pass, min(depth) AS min_depth, max(depth) AS max_depth, count(*) AS calls,
       sum(tc_eligible) AS tc_eligible_calls, sum(gpu_time_ns) AS gpu_time_ns, sum(kernel_count) AS kernels,
       sum(tc_time_ns) AS tc_time_ns, min(path) AS first_path
FROM op WHERE iteration = 2 GROUP BY name, op_type, pass ORDER BY gpu_time_ns DESC, name LIMIT 15
