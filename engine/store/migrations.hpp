// engine/store/migrations.hpp — schema/NNNN_*.sql, embedded at build time (see CMakeLists.txt).
#pragma once

#include <vector>

namespace proflint {

struct Migration {
  const char* name;  // file name, e.g. "0001_init.sql"
  const char* sql;
};

// All migrations in file-name order; migration i brings the store to user_version i+1.
const std::vector<Migration>& migrations();

}  // namespace proflint
