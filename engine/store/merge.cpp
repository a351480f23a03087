// engine/store/merge.cpp — Store::append_imported: folding a store imported on another thread
// into this one.
//
// Several profile files are imported at the same time, each into its own in-memory store (SQLite
// has one writer per database); they are then appended here in the order the files were given.
// What an import writes refers to other rows only through the trace id and interned strings
// (links between rows are derived later; the one exception, collective_arg.range_id, is mapped
// below), so appending means: new trace ids in order, the other
// store's strings interned into this one in their id order (exactly as StoreWriter would have
// met them), and every row copied in row-id order with fresh row ids. The result is the store a
// sequential import would have built, byte for byte.
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/store/store.hpp"

namespace proflint {

namespace {

// Columns holding a string.id (schema/0001_init.sql marks each "(string.id)").
bool is_string_ref(const std::string& column) {
  return column == "name_id" || column == "input_dims_id" || column == "input_types_id" || column == "call_stack_id" ||
         column == "module_id";
}

std::string sql_name(const std::string& name) { return "\"" + name + "\""; }

// pf_map(x): the id in this store of the other store's string x (NULL stays NULL).
void map_string_id(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const auto& map = *static_cast<const std::vector<int64_t>*>(sqlite3_user_data(ctx));
  int64_t id = sqlite3_value_int64(argv[0]);
  if (id < 0 || static_cast<size_t>(id) >= map.size() || map[static_cast<size_t>(id)] == 0) {
    sqlite3_result_error(ctx, "string id without a string", -1);
    return;
  }
  sqlite3_result_int64(ctx, map[static_cast<size_t>(id)]);
}

}  // namespace

void Store::append_imported(const Store& other) {
  auto& db = *db_;
  const std::string alias = "pf_other";
  {
    SQLite::Statement attach(db, "ATTACH DATABASE ? AS " + alias);
    attach.bind(1, "file:" + other.name_ + (other.vfs_ ? std::string("?vfs=") + other.vfs_ : std::string()));
    attach.exec();
  }
  std::vector<int64_t> string_map;
  struct Detach {
    SQLite::Database& db;
    std::string alias;
    ~Detach() { sqlite3_exec(db.getHandle(), ("DETACH DATABASE " + alias).c_str(), nullptr, nullptr, nullptr); }
  } detach{db, alias};
  SQLite::Transaction tx(db);

  // Strings: reuse equal texts, give new ones the next ids in the other store's id order.
  {
    std::unordered_map<std::string, int64_t> here;
    int64_t next_id = 1;
    SQLite::Statement mine(db, "SELECT id, value FROM main.string");
    while (mine.executeStep()) {
      int64_t id = mine.getColumn(0).getInt64();
      here.emplace(mine.getColumn(1).getString(), id);
      next_id = std::max(next_id, id + 1);
    }
    SQLite::Statement theirs(db, "SELECT id, value FROM " + alias + ".string ORDER BY id");
    SQLite::Statement insert(db, "INSERT INTO main.string(id, value) VALUES (?, ?)");
    while (theirs.executeStep()) {
      int64_t id = theirs.getColumn(0).getInt64();
      std::string value = theirs.getColumn(1).getString();
      if (id < 0) throw Error("internal: negative string id in an imported store");
      if (string_map.size() <= static_cast<size_t>(id)) string_map.resize(static_cast<size_t>(id) + 1, 0);
      auto [it, added] = here.emplace(value, next_id);
      if (added) {
        insert.bind(1, next_id);
        insert.bind(2, value);
        insert.exec();
        insert.reset();
        ++next_id;
      }
      string_map[static_cast<size_t>(id)] = it->second;
    }
  }
  if (sqlite3_create_function(db.getHandle(), "pf_map", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, &string_map,
                              map_string_id, nullptr, nullptr) != SQLITE_OK)
    throw Error("internal: cannot register pf_map");

  // Trace ids: the other store's traces, in order, after this store's.
  std::vector<std::pair<int64_t, int64_t>> traces;  // (theirs, ours)
  {
    int64_t next = db.execAndGet("SELECT COALESCE(MAX(trace_id), 0) + 1 FROM main.trace").getInt64();
    SQLite::Statement q(db, "SELECT trace_id FROM " + alias + ".trace ORDER BY trace_id");
    while (q.executeStep()) traces.emplace_back(q.getColumn(0).getInt64(), next++);
  }

  // Every table with a trace_id, in schema order, rows in row-id order.
  std::vector<std::string> tables;
  {
    SQLite::Statement q(db, "SELECT name FROM " + alias +
                                ".sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid");
    while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  }
  // collective_arg.range_id names a _range row: the ranges of each trace are copied in row-id
  // order after the rows already here, so the k-th range of a trace there is (base + k) here.
  std::unordered_map<int64_t, int64_t> range_base;  // our trace id -> largest _range.id before its copy
  for (const auto& table : tables) {
    std::vector<std::string> columns, values;
    bool has_trace = false;
    {
      SQLite::Statement info(db, "SELECT name, pk, type FROM pragma_table_info(?, ?)");
      info.bind(1, table);
      info.bind(2, alias);
      while (info.executeStep()) {
        std::string name = info.getColumn(0).getString();
        bool row_id = name == "id" && info.getColumn(1).getInt() == 1 && info.getColumn(2).getString() == "INTEGER";
        if (row_id) continue;  // a fresh row id, in the same order
        columns.push_back(sql_name(name));
        if (name == "trace_id") {
          has_trace = true;
          values.push_back("?1");
        } else if (table == "collective_arg" && name == "range_id") {
          values.push_back("?3 + (SELECT COUNT(*) FROM " + alias + "._range r WHERE r.trace_id = ?2 AND r.id <= " + alias +
                           ".collective_arg.range_id)");
        } else if (is_string_ref(name)) {
          values.push_back("pf_map(" + sql_name(name) + ")");
        } else {
          values.push_back(sql_name(name));
        }
      }
    }
    if (!has_trace) continue;  // string (done above) and other store-wide tables
    std::string cols, vals;
    for (size_t i = 0; i < columns.size(); ++i) {
      cols += (i ? ", " : "") + columns[i];
      vals += (i ? ", " : "") + values[i];
    }
    SQLite::Statement copy(db, "INSERT INTO main." + sql_name(table) + "(" + cols + ") SELECT " + vals + " FROM " +
                                   alias + "." + sql_name(table) + " WHERE trace_id = ?2 ORDER BY rowid");
    bool is_args = table == "collective_arg";
    for (const auto& [theirs, ours] : traces) {
      if (table == "_range") range_base[ours] = db.execAndGet("SELECT COALESCE(MAX(id), 0) FROM main._range").getInt64();
      copy.bind(1, ours);
      copy.bind(2, theirs);
      if (is_args) copy.bind(3, range_base[ours]);
      copy.exec();
      copy.reset();
    }
  }
  tx.commit();
  sqlite3_create_function(db.getHandle(), "pf_map", 1, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr);
}

}  // namespace proflint
