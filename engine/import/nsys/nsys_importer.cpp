// engine/import/nsys/nsys_importer.cpp — Nsight Systems SQLite exports (nsys 2020.3 to 2026.2).
//
// Sniffs the SQLite header, opens the export immutable (the user's file is never written, not
// even a journal next to it), checks that it is an nsys export, and hands the tables to
// ExportReader. SQLite failures become proflint::Error naming the file and the table.
#include "engine/import/nsys/nsys_importer.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"
#include "engine/common/sqlite_file.hpp"
#include "engine/import/nsys/nsys_reader.hpp"
#include "engine/import/nsys/nsys_sqlite.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/model/sink.hpp"

namespace proflint {

namespace {

constexpr std::string_view kSqliteMagic("SQLite format 3\0", 16);

bool file_is_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {};
  in.read(magic, 2);
  return in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
}

std::string place_of(const nsys::ReadError& e) { return e.table().empty() ? "" : "table " + e.table(); }

}  // namespace

bool NsysImporter::sniff(std::string_view head, bool gzipped) const {
  if (head.substr(0, kSqliteMagic.size()) != kSqliteMagic) return false;
  // A proflint store is SQLite too; its application id 'PFLT' (header offset 68) leaves it to
  // the store loader.
  if (head.size() >= 72 && head.substr(68, 4) == "PFLT") return false;
  return true;
}

namespace {

// TARGET_INFO_SESSION_START_TIME: the epoch instant of the capture's start and, from the same
// instant written in UTC and in the target's local time, the machine's UTC offset (to the quarter
// hour). Event times are on the target's system clock, whose reading at that instant is
// systemClockNs (nsys 2024+); older exports count from the session's start (0).
void read_session_clock(const nsys::ExportFile& file, TraceInfo& info) {
  const std::string table = "TARGET_INFO_SESSION_START_TIME";
  if (!file.has_table(table)) return;
  nsys::Rows rows(file, table, {"utcEpochNs", "utcTime", "localTime", "systemClockNs"});
  if (!rows.next() || !rows.opt(0)) return;
  const int64_t utc_epoch_ns = *rows.opt(0);
  const int64_t system_clock_ns = rows.has(3) ? rows.opt(3).value_or(0) : 0;
  if (utc_epoch_ns <= 0 || system_clock_ns < 0 || system_clock_ns > utc_epoch_ns) return;
  info.epoch_base_ns = utc_epoch_ns - system_clock_ns;
  // Both texts are "2023-06-26T21:00:57": read as clock times on one calendar, they differ by the
  // UTC offset.
  auto utc = samples::parse_clock_time(rows.text(1)), local = samples::parse_clock_time(rows.text(2));
  if (utc && local) {
    constexpr int64_t kQuarterHour = 15 * 60 * int64_t{1'000'000'000};
    const int64_t diff = *local - *utc;
    const int64_t quarters = (diff + (diff >= 0 ? kQuarterHour / 2 : -kQuarterHour / 2)) / kQuarterHour;
    if (quarters >= -12 * 4 && quarters <= 14 * 4) info.utc_offset_ns = quarters * kQuarterHour;
  }
}

}  // namespace

ImportResult NsysImporter::import(const std::string& path, TraceModel& model, const ImportOptions& options) const {
  if (file_is_gzip(path))
    throw input_error(path, "", "gzip-compressed SQLite file: decompress it first (gunzip), then analyze the .sqlite");
  check_sqlite_header(path, /*copied_for_writing=*/false);  // truncation and damaged header bytes, named
  std::unique_ptr<nsys::ExportFile> file;
  try {
    file = std::make_unique<nsys::ExportFile>(path);
  } catch (const nsys::ReadError& e) {
    throw input_error(path, "", std::string(e.what()) + " (is the file a complete Nsight Systems SQLite export?)");
  }
  if (!nsys::looks_like_nsys_export(*file)) {
    // A proflint store whose header lost its application id lands here: name what it looks like.
    if (file->has_table("_kernel") && file->has_table("trace"))
      throw input_error(path, "",
                        "SQLite file has proflint store tables but not proflint's application id (expected 0x50464C54 "
                        "'PFLT' at header offset 68): a damaged or edited store; re-create it with proflint ingest");
    throw input_error(path, "", "SQLite file is not an Nsight Systems export (no StringIds/CUPTI_ACTIVITY_KIND_* tables)");
  }

  TraceInfo info;
  info.path = path;
  info.format = "nsys";
  info.clock = "session";  // nsys timestamps are ns on the capture session's clock
  info.vendor = "nvidia";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) info.file_bytes = static_cast<int64_t>(size);
  std::optional<nsys::ReadError> version_failure;
  try {
    nsys::ExportVersion version = nsys::read_export_version(*file);
    info.tool_version = version.product;
    info.format_version = version.schema;
  } catch (const nsys::ReadError& e) {
    version_failure = e;
  }

  try {
    read_session_clock(*file, info);
  } catch (const nsys::ReadError&) {
    // A damaged start-time row only loses the placing of sampling logs; the trace reads as before.
  }

  FactSink writer(model, info);
  if (version_failure)
    writer.add_issue(import_issue::table_unreadable, version_failure->what(), "table " + version_failure->table());
  nsys::ExportReader reader(*file, writer);
  std::optional<ProgressBar> progress;
  if (options.progress) {
    progress.emplace(true, path, reader.estimated_rows(), ProgressBar::Unit::rows);
    reader.set_progress(&*progress);
  }
  reader.read_all();
  if (progress) progress->finish();
  if (writer.rows_written() == 0 && reader.first_failure()) {
    const nsys::ReadError& e = *reader.first_failure();
    throw input_error(path, place_of(e),
                      std::string("cannot read: ") + e.what() + " (the export looks truncated or corrupted)");
  }
  writer.commit();
  return ImportResult{writer.trace_id(), writer.rows_written(), writer.issue_count()};
}

}  // namespace proflint
