-- fixture: fixtures/sample_train.json.gz
-- Copies by direction and host memory kind (the planted pageable copies), and the synchronizing
-- runtime calls, each with how many derivation placed in an iteration. Checked by hand (python3
-- over the raw events): 12 "Memcpy HtoD (Pageable -> Device)" moving 462428160 bytes in
-- 54155.805 us, 6 DtoH; 6 cudaDeviceSynchronize calls lasting 664845.947 us in all.
SELECT 'memcpy' AS what, kind || ' ' || src_kind || '->' || dst_kind AS detail, count(*) AS n, sum(bytes) AS bytes,
       sum(dur_ns) AS ns, count(iteration) AS in_iteration
FROM memcpy GROUP BY kind, src_kind, dst_kind
UNION ALL
SELECT 'api_call', name, count(*), NULL, sum(dur_ns), count(iteration) FROM api_call
WHERE name IN ('cudaDeviceSynchronize', 'cudaStreamSynchronize') GROUP BY name
ORDER BY 1, 2
