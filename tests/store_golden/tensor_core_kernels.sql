-- fixture: fixtures/sample_amp.json.gz
-- Tensor Core classification by kernel name on the bf16 sample: the 15 kernels with the most GPU
-- time, with their category and whether they use Tensor Cores.
SELECT substr(name, 1, 90) AS name_prefix, category, is_tensor_core, count(*) AS kernels, sum(dur_ns) AS kernel_ns
FROM kernel GROUP BY name ORDER BY kernel_ns DESC, name LIMIT 15
