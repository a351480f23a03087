// tests/support/store_dump.hpp — every row of every table of a store as text, in rowid order: two
// ways of loading the same inputs must give equal dumps.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <string>
#include <vector>

namespace proflint::testing {

inline std::string dump_tables(SQLite::Database& db) {
  std::string out;
  std::vector<std::string> tables;
  SQLite::Statement q(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  for (const auto& t : tables) {
    out += "## " + t + "\n";
    SQLite::Statement rows(db, "SELECT * FROM \"" + t + "\" ORDER BY rowid");
    while (rows.executeStep()) {
      for (int c = 0; c < rows.getColumnCount(); ++c)
        out += (c ? "|" : "") + (rows.isColumnNull(c) ? std::string("∅") : rows.getColumn(c).getString());
      out += "\n";
    }
  }
  return out;
}

}  // namespace proflint::testing
