-- fixture: fixtures/sample_train.json.gz
-- What derivation recognised each annotation as (_range.marker, schema 13): ProfilerStep#N on the
-- host and its GPU-side copy, the optimizer's step and zero_grad, the DataLoader fetch; every other
-- range NULL.
SELECT COALESCE(marker, '-') AS marker, kind, COUNT(*) AS ranges, MIN(name) AS example FROM range
GROUP BY marker, kind ORDER BY marker, kind
