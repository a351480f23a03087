-- proflint fact store, schema version 14: the _source lookups by API call and by range index only
-- the rows that have one.
--
-- Nearly every _source row belongs to an op (431,520 of 431,640 on the x20 tiled ResNet trace);
-- API calls outside any op and DataLoader ranges are the few others. The full indexes on
-- api_call_id and range_id held an entry for each NULL too and were kept up to date row by row
-- while the store was written: about 0.3 s of the 1.4 s write of that trace. A lookup
-- `api_call_id = ?` (or `range_id = ?`, or IN) implies the column is not NULL, so SQLite uses the
-- partial index for every query that used the full one.
DROP INDEX source_api_call;
CREATE INDEX source_api_call ON _source(api_call_id) WHERE api_call_id IS NOT NULL;
DROP INDEX source_range;
CREATE INDEX source_range ON _source(range_id) WHERE range_id IS NOT NULL;
