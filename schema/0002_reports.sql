-- proflint fact store, schema version 2: what DLProf-style reports need to restate.
--
-- The breakdown and the op aggregates of a trace cover only the iterations selected by
-- --iter-start/--iter-stop; reports (and anyone re-reading a saved store) must know that range
-- to restrict kernels, ops and API calls the same way. It is recorded by derive/ with the rest
-- of the derived facts, so a saved store restates exactly what it was derived with.

-- derived: first iteration (iteration.iteration, inclusive) the aggregates cover; NULL = from the first
ALTER TABLE trace ADD COLUMN iter_start INTEGER;
-- derived: last iteration (inclusive) the aggregates cover; NULL = to the last
ALTER TABLE trace ADD COLUMN iter_stop INTEGER;
