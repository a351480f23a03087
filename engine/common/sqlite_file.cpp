// engine/common/sqlite_file.cpp — see sqlite_file.hpp.
#include "engine/common/sqlite_file.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/common/error.hpp"

namespace proflint {

void check_sqlite_header(const std::string& path, bool copied_for_writing) {
  unsigned char h[100] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(h), sizeof h);
  const auto got = static_cast<size_t>(in.gcount());
  if (got < 16 || std::memcmp(h, "SQLite format 3", 16) != 0) return;  // not SQLite: the caller says what it expected
  if (got < sizeof h)
    throw input_error(path, "byte " + std::to_string(got),
                      "the file ends inside the 100-byte SQLite header (truncated): expected a complete SQLite database");
  auto be16 = [&](int i) { return static_cast<uint32_t>(h[i] << 8 | h[i + 1]); };
  auto be32 = [&](int i) { return static_cast<uint32_t>(h[i]) << 24 | be16(i + 1) << 8 | h[i + 3]; };
  const uint32_t page_size = be16(16) == 1 ? 65536 : be16(16);
  if (page_size < 512 || (page_size & (page_size - 1)) != 0)
    throw input_error(path, "SQLite header byte 16",
                      "page size " + std::to_string(page_size) + ", expected a power of two from 512 to 65536: a damaged file");
  if (h[19] != 1 && h[19] != 2)
    throw input_error(path, "SQLite header byte 19",
                      "file format read version " + std::to_string(h[19]) +
                          ", expected 1 (rollback journal) or 2 (WAL): a damaged file");
  // A write version above 2 makes SQLite open the file read-only, and the copy made with the
  // backup API carries the header along: every later write failed with "attempt to write a
  // readonly database".
  if (copied_for_writing && h[18] != 1 && h[18] != 2)
    throw input_error(path, "SQLite header byte 18",
                      "file format write version " + std::to_string(h[18]) +
                          ", expected 1 (rollback journal) or 2 (WAL): the file was edited or damaged");
  if (h[21] != 64 || h[22] != 32 || h[23] != 32)
    throw input_error(path, "SQLite header bytes 21-23",
                      "payload fractions " + std::to_string(h[21]) + ", " + std::to_string(h[22]) + ", " +
                          std::to_string(h[23]) + ", expected 64, 32, 32: a damaged file");
  // The page count at offset 28 is valid when the change counter (24) equals the version it is
  // valid for (92); a file shorter than those pages lost its end.
  const uint32_t pages = be32(28);
  if (pages == 0 || be32(24) != be32(92)) return;
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  const uint64_t expected = static_cast<uint64_t>(pages) * page_size;
  if (!ec && size < expected)
    throw input_error(path, "byte " + std::to_string(size),
                      "the file ends early (truncated): its SQLite header says " + std::to_string(pages) + " pages of " +
                          std::to_string(page_size) + " bytes, " + std::to_string(expected) + " bytes in all");
}

namespace {

constexpr std::string_view kSchemaPhrase = "malformed database schema (";

// SQLite writes "malformed database schema (NAME)" and, when it knows why, " - DETAIL".
bool split_schema_message(std::string_view m, size_t& at, std::string& name, std::string& detail, size_t& end) {
  at = m.find(kSchemaPhrase);
  if (at == std::string_view::npos) return false;
  const size_t open = at + kSchemaPhrase.size();
  size_t close = m.find(") - ", open);
  if (close != std::string_view::npos) {
    name = std::string(m.substr(open, close - open));
    detail = std::string(m.substr(close + 4));
    end = m.size();
    return true;
  }
  close = m.find(')', open);
  if (close == std::string_view::npos) return false;
  name = std::string(m.substr(open, close - open));
  end = close + 1;
  return true;
}

}  // namespace

std::string damaged_schema_entry(std::string_view m) {
  size_t at = 0, end = 0;
  std::string name, detail;
  return split_schema_message(m, at, name, detail, end) ? name : std::string();
}

std::string sqlite_damage_words(std::string_view m) {
  size_t at = 0, end = 0;
  std::string name, detail;
  if (split_schema_message(m, at, name, detail, end))
    return std::string(m.substr(0, at)) + "the file's schema table (sqlite_master) is damaged: the definition of '" +
           name + "' " + (detail.empty() ? "cannot be used" : "does not compile (" + detail + ")") +
           "; the file was edited or damaged after it was written" + std::string(m.substr(end));
  static const std::pair<std::string_view, std::string_view> phrases[] = {
      {"database disk image is malformed",
       "the file is damaged: its pages do not form a valid SQLite database (truncated, overwritten or edited)"},
      {"file is not a database", "not a readable SQLite database: its header or first page is damaged"},
      {"no such table: ", "missing table "},
      {"attempt to write a readonly database",
       "the file's SQLite header marks it read-only (file format write version above 2): the file was edited or "
       "damaged"},
  };
  for (const auto& [phrase, words] : phrases) {
    size_t p = m.find(phrase);
    if (p != std::string_view::npos)
      return std::string(m.substr(0, p)) + std::string(words) + std::string(m.substr(p + phrase.size()));
  }
  return std::string(m);
}

std::string quote_identifier(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

}  // namespace proflint
