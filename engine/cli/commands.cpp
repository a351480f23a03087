// engine/cli/commands.cpp — see commands.hpp.
#include "engine/pipeline/load.hpp"
#include "engine/cli/commands.hpp"

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/facts.hpp"
#include "engine/analysis/job_summary.hpp"
#include "engine/pipeline/restrict.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/common/error.hpp"
#include "engine/common/format.hpp"
#include "engine/common/output_file.hpp"
#include "engine/common/suggest.hpp"
#include "engine/config/config.hpp"
#include "engine/derive/derive.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/samples/samples_importers.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/report/dlprof/model.hpp"
#include "engine/report/findings_report.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/output.hpp"
#include "engine/report/summary_report.hpp"

namespace proflint {

// Command-line flags win over proflint.toml, which wins over built-in defaults.
LoadOptions load_options(const CommonOptions& o) {
  if (o.iter_start && o.iter_stop && *o.iter_stop < *o.iter_start)
    throw Error("--iter-stop (" + std::to_string(*o.iter_stop) + ") must be at least --iter-start (" + std::to_string(*o.iter_start) + ")");
  if ((o.iter_start && *o.iter_start < 0) || (o.iter_stop && *o.iter_stop < 0))
    throw Error("--iter-start and --iter-stop are 0-based iteration ordinals and cannot be negative");
  Config config = load_config(o.config_path);
  LoadOptions l;
  l.import.progress = o.progress;
  l.derive.key_node = o.key_node ? o.key_node : config.key_node;
  l.derive.iter_start = o.iter_start;
  l.derive.iter_stop = o.iter_stop;
  l.derive.extra_tensor_core_patterns = config.tensor_core_patterns;
  l.derive.job_by = o.job_by.value_or("auto");
  if (o.operator_spec_path || o.operator_total || !o.operator_modules.empty()) {
    OperatorSpec spec;
    if (o.operator_spec_path) {
      std::ifstream in(*o.operator_spec_path, std::ios::binary);
      if (!in) throw input_error(*o.operator_spec_path, "", "cannot read the operator profiler spec");
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      spec = samples::parse_operator_spec(text, *o.operator_spec_path);
    }
    if (o.operator_total) spec.total_key = *o.operator_total;
    if (!o.operator_modules.empty()) spec.modules = o.operator_modules;
    if (o.operator_name) spec.name = *o.operator_name;
    if (spec.total_key.empty() && spec.modules.empty())
      throw Error("--operator-total or --operator-modules (or a spec with them) is needed to read an operator log");
    l.import.operator_spec = spec;
  }
  if (o.sample_offset_s) {
    if (!std::isfinite(*o.sample_offset_s) || std::fabs(*o.sample_offset_s) > 1e9)
      throw Error("--sample-offset must be a number of seconds between -1e9 and 1e9");
    l.sample_offset_ns = static_cast<int64_t>(std::llround(*o.sample_offset_s * 1e9));
  }
  l.derive.source_skip = config.source_skip;
  l.derive.source_keep = config.source_keep;
  // A saved store keeps what it was derived with (jobs included) unless an option says otherwise.
  l.rederive = l.derive.key_node || o.iter_start || o.iter_stop || o.job_by || !config.tensor_core_patterns.empty() ||
               !config.source_skip.empty() || !config.source_keep.empty();
  return l;
}

namespace {

// Op IDs of the detail report are 12 hexadecimal digits (dlprof::Model's op_id).
bool looks_like_op_id(const std::string& s) {
  return s.size() == 12 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// Traces where --key-node marked no iteration, with derivation's note ("key node 'X' not found; …").
std::vector<std::pair<std::string, std::string>> key_node_misses(Store& store) {
  std::vector<std::pair<std::string, std::string>> out;
  SQLite::Statement q(store.db(),
                      "SELECT t.path, COALESCE(i.example, '') FROM import_issue i JOIN trace t USING (trace_id) "
                      "WHERE i.kind = 'key_node_not_found' ORDER BY t.trace_id");
  while (q.executeStep()) out.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getString());
  return out;
}

}  // namespace

Store load_store(const std::vector<std::string>& inputs, const CommonOptions& o, bool split) {
  LoadOptions l = load_options(o);
  // PROFLINT_SPLIT_STORE=0 keeps the store in one database (tests and measurements of both).
  const char* forced = std::getenv("PROFLINT_SPLIT_STORE");
  l.split_store = split && !(forced && *forced == '0');
  Store store = load_inputs(inputs, l);
  if (!l.derive.key_node) return store;
  auto misses = key_node_misses(store);
  if (!misses.empty() && looks_like_op_id(*l.derive.key_node)) {
    // An Op ID copied from `report --reports detail` stands for the name of its op.
    std::string id = *l.derive.key_node;
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    auto model = dlprof::load_model(store);
    for (const auto& op : model.ops) {
      if (op.op_id != id) continue;
      // The last path component, without the "(N)" that numbers repeats under one parent; the key
      // node then stands for every op of that name.
      size_t slash = op.name.rfind('/');
      std::string leaf = slash == std::string::npos ? op.name : op.name.substr(slash + 1);
      size_t open = leaf.rfind('(');
      if (open != std::string::npos && open > 0 && leaf.back() == ')' &&
          std::all_of(leaf.begin() + static_cast<std::ptrdiff_t>(open) + 1, leaf.end() - 1,
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        leaf.resize(open);
      l.derive.key_node = leaf;
      std::cerr << "proflint: --key-node " << id << " is the Op ID of '" << *l.derive.key_node << "'\n";
      derive_all(store, l.derive, /*force=*/true);
      misses = key_node_misses(store);
      break;
    }
  }
  for (const auto& [path, problem] : misses) std::cerr << "proflint: warning: " << path << ": " << problem << "\n";
  return store;
}

AnalysisOptions analysis_options(const Config& config, const CommonOptions& o) {
  AnalysisOptions ao;
  ao.detectors = config.detectors;
  ao.suppressions = config.suppressions;
  ao.rule_files = lua::collect_rule_files(config, o.rule_dirs);
  ao.rules = config.rules.rules;
  ao.rule_limits = config.rules.limits;
  return ao;
}

// A rule that failed is input proflint could not use: exit 2 when asked (the outputs are written
// and complete, with the rule-error findings in them).
int rule_error_exit_code(const std::vector<const std::vector<Finding>*>& findings, const CommonOptions& options) {
  if (!options.fail_on_rule_error.value_or(running_in_ci())) return 0;
  int64_t failed = 0;
  for (const auto* list : findings)
    failed += std::count_if(list->begin(), list->end(), [](const Finding& f) { return f.id == "rule-error"; });
  if (failed == 0) return 0;
  std::cerr << "proflint: error: " << failed << " Lua rule error" << (failed == 1 ? "" : "s")
            << " (see the rule-error findings); exiting with 2 because of --fail-on-rule-error"
            << (options.fail_on_rule_error ? "" : " (on by default under CI=true; --no-fail-on-rule-error turns it off)")
            << "\n";
  return 2;
}

namespace {

// RFC 4180 field: quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  if (!ci) return false;
  std::string v(ci);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "true" || v == "1";
}

bool use_color_on_stdout() { return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr; }
bool stderr_is_terminal() { return isatty(STDERR_FILENO); }

int run_command(const std::function<int()>& body, const std::vector<std::string>& inputs) {
  std::string files;
  for (const auto& f : inputs) files += (files.empty() ? "" : ", ") + f;
  auto library_error = [&](std::string what) {
    if (what.find("integer overflow") != std::string::npos)
      what += " (a sum of durations or byte counts left the 64-bit range: the profile holds implausibly large values)";
    else if (what.find("malformed") != std::string::npos)
      what += " (the file is damaged: expected an intact SQLite database; re-create it)";
    std::cerr << "proflint: error: " << (files.empty() ? "" : files + ": ") << "analysis failed: " << what << "\n";
  };
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << "proflint: error: " << e.what() << "\n";
  } catch (const SQLite::Exception& e) {
    library_error(e.what());
  } catch (const std::bad_alloc&) {
    std::cerr << "proflint: error: out of memory\n";
  } catch (const std::exception& e) {
    library_error(e.what());
  }
  return 2;
}

std::string version_text() {
  return std::string("proflint ") + PROFLINT_VERSION + "\nKineto JSON: " + kineto::json_parser_description() +
         "\ngzip: " + kineto::inflater_name() + "\nSQLite: " + sqlite3_libversion();
}

int cmd_summary(const CommonOptions& options) {
  if (options.format != "text" && options.format != "json")
    throw Error("--format must be text or json for summary, got '" + options.format + "'");
  Store store = load_store(options.inputs, options);
  auto summaries = summarize(store);
  auto jobs = summarize_jobs(store);
  bool color = options.output == "-" && use_color_on_stdout();
  write_output(options.output,
               options.format == "json" ? render_summary_json(summaries, jobs) : render_summary_text(summaries, color, jobs), color);
  return 0;
}

int cmd_analyze(const CommonOptions& options, const AnalyzeOptions& analyze) {
  static const std::set<std::string> formats = {"text", "json", "markdown", "sarif", "html"};
  if (!formats.count(options.format))
    throw Error("--format must be text, json, markdown, sarif or html, got '" + options.format + "'");
  std::optional<Severity> threshold;
  if (analyze.fail_on != "never") {
    threshold = parse_severity(analyze.fail_on);
    if (!threshold || *threshold == Severity::info) throw Error("--fail-on must be high, medium, low or never, got '" + analyze.fail_on + "'");
  }
  Config config = load_config(options.config_path);
  for (const auto& dir : options.rule_dirs) lua::rule_files_in(dir);  // a missing --rules folder is a usage error, before any import
  // Output targets are checked before the work and written only after all of it succeeded.
  OutputFile out(options.output, "-o");
  std::optional<OutputFile> db_out;
  if (analyze.db_path) db_out.emplace(*analyze.db_path, "--db");
  Store store = load_store(options.inputs, options, /*split=*/!db_out);
  if (db_out) store.stage_into(*db_out);
  restrict_to_selection(store);  // after --db: the saved store keeps the whole capture
  AnalysisOptions ao = analysis_options(config, options);
  ao.only.insert(analyze.only.begin(), analyze.only.end());
  ao.skip.insert(analyze.skip.begin(), analyze.skip.end());
  AnalysisResult result = run_analysis(store, ao, detector_registry());
  bool color = options.format == "text" && options.output == "-" && use_color_on_stdout();
  std::string text;
  if (options.format == "json") text = render_findings_json(result);
  else if (options.format == "markdown") text = render_findings_markdown(result);
  else if (options.format == "sarif") text = render_findings_sarif(result);
  else if (options.format == "html") text = render_findings_html(store, result);
  else text = render_findings_text(result, color);
  out.stage(escape_controls(text, color));  // a kernel name's escape sequence must not reach the terminal
  std::vector<OutputFile*> outputs{&out};
  if (db_out) outputs.push_back(&*db_out);
  commit_all(outputs);
  if (int rc = rule_error_exit_code({&result.findings}, options)) return rc;
  if (threshold) {
    for (const auto& f : result.findings)
      if (!f.diagnostic && f.effective_severity >= *threshold) return 1;
  }
  return 0;
}

int cmd_config_dump(const CommonOptions& options) {
  write_output(options.output, dump_config(load_config(options.config_path)));
  return 0;
}

int cmd_ingest(const CommonOptions& options, const std::string& db_path) {
  OutputFile db(db_path, "--db");  // a directory or other unusable target fails before the import
  Store store = load_store(options.inputs, options);
  store.stage_into(db);
  auto summaries = summarize(store);
  db.commit();  // only once everything the command does has succeeded
  for (const auto& s : summaries) {
    std::cerr << "ingested " << s.path << ": " << s.kernel_count << " kernels, " << s.memcpy_count << " memcpy, "
              << s.api_call_count << " API calls, " << s.op_count << " ops, " << s.iterations.count << " iterations\n";
  }
  std::cerr << "wrote " << db_path << " (schema version " << latest_schema_version() << ")\n";
  return 0;
}

int cmd_query(const CommonOptions& options, const std::string& sql) {
  Store store = load_store(options.inputs, options);
  // The detectors' authorizer: sqlite3_stmt_readonly alone lets ATTACH and PRAGMA writable_schema
  // through (they change the connection, not the file), and the store is a copy in memory anyway.
  ReadOnlyGuard read_only(store.db());
  sqlite3* db = store.db().getHandle();
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, &tail) != SQLITE_OK) {
    std::string why = sqlite3_errmsg(db);
    if (sqlite3_errcode(db) == SQLITE_AUTH || why.find("not authorized") != std::string::npos)
      throw Error("query: only read-only statements (SELECT, WITH ...) are allowed; refused: " + why);
    throw Error("query: " + why);
  }
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> guard(stmt, &sqlite3_finalize);
  if (!stmt) throw Error("query: empty SQL statement");
  while (tail && *tail && std::isspace(static_cast<unsigned char>(*tail))) ++tail;
  if (tail && *tail && *tail != ';') throw Error("query: give exactly one SQL statement");
  if (!sqlite3_stmt_readonly(stmt)) throw Error("query: only read-only statements (SELECT, WITH ...) are allowed");
  int cols = sqlite3_column_count(stmt);
  int rc;
  std::string out;
  if (options.format == "json") {
    // {"columns": [...], "rows": [[...], ...]}: each value keeps its SQLite type, so NULL (null)
    // and an empty string ("") stay apart, as CSV cannot keep them. A non-finite real is null
    // (JSON has no NaN); a blob is its bytes in hex.
    nlohmann::json columns = nlohmann::json::array(), rows = nlohmann::json::array();
    for (int c = 0; c < cols; ++c) columns.push_back(sqlite3_column_name(stmt, c));
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      nlohmann::json row = nlohmann::json::array();
      for (int c = 0; c < cols; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_NULL: row.push_back(nullptr); break;
          case SQLITE_INTEGER: row.push_back(static_cast<int64_t>(sqlite3_column_int64(stmt, c))); break;
          case SQLITE_FLOAT: {
            double v = sqlite3_column_double(stmt, c);
            if (std::isfinite(v)) row.push_back(v); else row.push_back(nullptr);
            break;
          }
          case SQLITE_BLOB: {
            const auto* bytes = static_cast<const unsigned char*>(sqlite3_column_blob(stmt, c));
            std::string hex;
            for (int i = 0, n = sqlite3_column_bytes(stmt, c); i < n; ++i) hex += fmt::format("{:02x}", bytes[i]);
            row.push_back(hex);
            break;
          }
          default: {
            const unsigned char* text = sqlite3_column_text(stmt, c);
            row.push_back(std::string(text ? reinterpret_cast<const char*>(text) : "",
                                      static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) throw Error(std::string("query: ") + sqlite3_errmsg(db));
    nlohmann::json root = {{"columns", std::move(columns)}, {"rows", std::move(rows)}};
    write_output(options.output, root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return 0;
  }
  for (int c = 0; c < cols; ++c) out += (c ? "," : "") + csv_field(sqlite3_column_name(stmt, c));
  out += "\n";
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int c = 0; c < cols; ++c) {
      if (c) out += ",";
      if (sqlite3_column_type(stmt, c) == SQLITE_NULL) continue;
      const unsigned char* text = sqlite3_column_text(stmt, c);
      out += csv_field(text ? reinterpret_cast<const char*>(text) : "");
    }
    out += "\n";
  }
  if (rc != SQLITE_DONE) throw Error(std::string("query: ") + sqlite3_errmsg(db));
  write_output(options.output, out);
  return 0;
}

}  // namespace proflint
