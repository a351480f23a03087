// engine/common/sqlite_file.hpp — the SQLite files proflint reads (Nsight Systems exports, saved
// stores) checked before SQLite opens them, and SQLite's words for a damaged file said in
// proflint's (issue 20, defect 9: "database disk image is malformed", "malformed database schema
// (x)" and "attempt to write a readonly database" reached the user as they were).
#pragma once

#include <string>
#include <string_view>

namespace proflint {

// Checks the 100-byte header of the SQLite file at `path` (https://sqlite.org/fileformat.html
// §1.3) and its size against the page count the header gives; throws input_error naming the file,
// the header byte and what was expected. `copied_for_writing`: the file is copied into a database
// proflint writes (a saved store loaded into memory), so a write version above 2, which makes
// SQLite treat the file and every copy of its header as read-only, is refused as well. A file
// that does not start with "SQLite format 3" is left to the caller.
void check_sqlite_header(const std::string& path, bool copied_for_writing);

// SQLite's message about a damaged file in proflint's words: the phrases SQLite uses for a
// damaged file are replaced, anything else is returned as it was.
std::string sqlite_damage_words(std::string_view sqlite_message);

// The schema entry (table, index or view) that SQLite's "malformed database schema (NAME)"
// names, or "" when the message names none.
std::string damaged_schema_entry(std::string_view sqlite_message);

// A table or column name as a double-quoted SQL identifier ("a""b" for a"b).
std::string quote_identifier(std::string_view name);

}  // namespace proflint
