-- fixture: fixtures/sample_train.json.gz
-- Derived kernel columns of the FP32 sample: category (from the kernel name), is_tensor_core,
-- and the links made by derivation (launching API call, attributed op, iteration).
-- FP32 on an A100 without TF32: no Tensor Core kernel (is_tensor_core 0 everywhere).
SELECT category, is_tensor_core, count(*) AS kernels, sum(dur_ns) AS kernel_ns, count(api_call_id) AS with_launch,
       count(op_id) AS with_op, count(iteration) AS in_iteration, count(tc_eligible_op_id) AS in_tc_eligible_op
FROM kernel GROUP BY category, is_tensor_core ORDER BY category, is_tensor_core
