-- fixture: fixtures/sample_train.json.gz
-- The time breakdown of the whole trace (iteration -1) by category, and per iteration the sum of
-- its categories against the iteration's length: each iteration's categories add up to its span.
SELECT 'trace' AS part, category, time_ns FROM breakdown WHERE iteration = -1
UNION ALL
SELECT 'iteration ' || b.iteration, 'sum of categories', sum(b.time_ns) FROM breakdown b WHERE b.iteration >= 0
GROUP BY b.iteration
ORDER BY 1, 2
