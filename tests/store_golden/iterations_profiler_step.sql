-- fixture: fixtures/sample_train.json.gz
-- Iterations from ProfilerStep#N ranges, with their host span and the GPU span of the work they
-- launched. Checked by hand (python3 over the raw events): the user_annotation ProfilerStep#2 has
-- ts 1453816987.883 us, dur 198037.483 us; its gpu_user_annotation starts at 1453889843.684 us and
-- lasts 125165.128 us, so gpu_end_ns = 1454015008812.
SELECT * FROM iteration ORDER BY trace_id, iteration
