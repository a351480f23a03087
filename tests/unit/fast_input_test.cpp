// tests/unit/fast_input_test.cpp — the fast input paths give exactly what the plain ones give:
// ISA-L's inflate against zlib's, every simdjson kernel of the event parser against the others,
// and nsys rows read ahead on other connections against rows stepped on the export's own.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/nsys/nsys_sqlite.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

class FastInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_fast_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // One gzip member of `text` (zlib's deflate at `level`, gzip wrapper).
  static std::string gzip(const std::string& text, int level = 6) {
    z_stream zs{};
    EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&zs, text.size()) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
  }
  // Everything `path` inflates to with `inflater`, or "ERROR: message".
  static std::string inflate_all(const std::string& path, kineto::Inflater inflater) {
    try {
      auto src = kineto::open_byte_source(path, inflater);
      std::string out;
      std::vector<char> buf(100000);  // not a divisor of anything: reads end mid-member
      while (size_t n = src->read(buf.data(), buf.size())) out.append(buf.data(), n);
      return out;
    } catch (const Error& e) {
      return std::string("ERROR: ") + e.what();
    }
  }

  fs::path dir_;
};

// A few MB of trace-like text with long repeats (back-references across 1 MiB reads).
std::string sample_text(int events) {
  std::ostringstream s;
  s << "{\"traceEvents\": [\n";
  for (int i = 0; i < events; ++i)
    s << "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::k" << (i % 97) << "\", \"pid\": 0, \"tid\": "
      << (i % 5) << ", \"ts\": " << 1000 + i * 7 << ".125, \"dur\": " << i % 13 << "},\n";
  s << "{}]}\n";
  return s.str();
}

TEST_F(FastInput, IsaLInflatesWhatZlibInflatesMembersAndPaddingIncluded) {
#if PROFLINT_HAVE_ISAL
  EXPECT_STREQ(kineto::inflater_name(), "isa-l igzip");
#else
  EXPECT_STREQ(kineto::inflater_name(), "zlib");
#endif
  EXPECT_STREQ(kineto::inflater_name(kineto::Inflater::zlib), "zlib");
  const std::string a = sample_text(40000), b = sample_text(3);
  ASSERT_GT(a.size(), 3u << 20);
  struct Case {
    std::string name, bytes, expected;
  };
  std::vector<Case> cases = {
      {"one.gz", gzip(a), a},
      {"stored.gz", gzip(b, 0), b},  // stored (type 0) blocks
      {"members.gz", gzip(a, 1) + gzip(b, 9) + gzip(a, 6), a + b + a},
      {"padded.gz", gzip(b) + std::string(1000, '\0'), b},
      {"empty_member.gz", gzip("") + gzip(b), b},
  };
  for (const auto& c : cases) {
    auto path = write(c.name, c.bytes);
    std::string best = inflate_all(path, kineto::Inflater::best), zlib = inflate_all(path, kineto::Inflater::zlib);
    EXPECT_EQ(best.size(), c.expected.size()) << c.name << ": " << best.substr(0, 200);
    EXPECT_TRUE(best == c.expected) << c.name;
    EXPECT_TRUE(zlib == c.expected) << c.name;
  }
}

TEST_F(FastInput, IsaLRefusesWhatZlibRefuses) {
  const std::string text = sample_text(20000);
  const std::string gz = gzip(text);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // CRC-32 of the trailer
  std::string bad_data = gz;
  for (size_t i = 100; i < 140; ++i) bad_data[i] = static_cast<char>(0xFF);
  std::string bad_method = gz;
  bad_method[2] = 7;  // compression method (RFC 1952: 8 = deflate), header byte 2
  struct Case {
    std::string name, bytes, message;
  };
  // The messages are proflint's, the same for both inflaters: zlib's texts ("invalid distance too
  // far back", "incorrect header check") used to be quoted in parentheses (issue 20).
  std::vector<Case> cases = {
      {"cut.gz", gz.substr(0, gz.size() / 2), "gzip data ends early"},
      {"no_trailer.gz", gz.substr(0, gz.size() - 8), "gzip data ends early"},
      {"crc.gz", bad_crc, "corrupt gzip data: the CRC-32 or length at the end of a gzip member does not match"},
      {"data.gz", bad_data, "corrupt gzip data: the compressed (deflate) data is damaged"},
      {"method.gz", bad_method, "corrupt gzip data: the gzip header is not valid"},
      {"garbage_after.gz", gz + "trailing text",
       "corrupt gzip data: the bytes after the end of the gzip stream are neither another gzip member nor zero padding"},
  };
  for (const auto& c : cases) {
    auto path = write(c.name, c.bytes);
    std::vector<std::string> words;
    for (auto inflater : {kineto::Inflater::best, kineto::Inflater::zlib}) {
      std::string got = inflate_all(path, inflater);
      ASSERT_EQ(got.rfind("ERROR: ", 0), 0u) << c.name << " with " << kineto::inflater_name(inflater);
      EXPECT_NE(got.find(path + ": byte "), std::string::npos) << got;
      EXPECT_NE(got.find(c.message), std::string::npos) << c.name << " with " << kineto::inflater_name(inflater) << ": " << got;
      for (const char* zlib_word : {"invalid", "incorrect", "too far back", "unknown compression"})
        EXPECT_EQ(got.find(zlib_word), std::string::npos) << c.name << ": " << got;
      words.push_back(got.substr(got.find(": ", got.find(": byte ") + 2)));  // after "PATH: byte N"
    }
    EXPECT_EQ(words[0], words[1]) << c.name;
  }
}

// Every field the parser fills, as one line, to compare kernels.
std::string describe(const kineto::KinetoEvent& e) {
  std::ostringstream s;
  auto o = [&](const std::optional<int64_t>& v) { s << (v ? std::to_string(*v) : "-") << ","; };
  s << e.ph << "|" << e.cat << e.has_cat << "|" << e.name << "|" << e.pid.present << e.pid.text;
  o(e.pid.number);
  s << e.tid.present << e.tid.text;
  o(e.tid.number);
  s << e.ts << e.has_ts << "|" << e.dur << e.has_dur << "|" << e.has_flow_id;
  for (const auto& v : {e.flow_id, e.device, e.stream, e.correlation, e.external_id, e.registers_per_thread,
                        e.shared_memory, e.bytes, e.sequence_number, e.fwd_thread_id, e.device_type, e.device_id,
                        e.total_allocated, e.total_reserved, e.mem_bytes})
    o(v);
  for (const auto& v : e.grid) o(v);
  for (const auto& v : e.block) o(v);
  s << "|" << e.input_dims << e.has_input_dims << "|" << e.input_types << e.has_input_types << "|" << e.call_stack
    << e.has_call_stack << "|" << e.module_hierarchy << e.has_module << "|" << e.sync_kind << "|" << e.meta_name
    << e.has_meta_name << "|" << e.meta_labels << "|" << e.numeric_args_kept;
  for (const auto& [k, v] : e.numeric_args) s << k << "=" << v << ";";
  return s.str();
}

TEST(FastJson, EveryCompiledKernelParsesEventsAlike) {
  auto kernels = kineto::runnable_event_parser_kernels();
  ASSERT_GE(kernels.size(), 1u);
  std::vector<std::string> events = {
      R"({"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::\"x\"\\n>", "pid": 0, "tid": "stream 7", "ts": 1610366388630527.125, "dur": 1009.5, "args": {"External id": 627, "correlation": 9, "grid": [80, 1, 2], "block": [128, 1, 1], "stream": 7, "registers per thread": 80, "shared memory": 4096, "Input Dims": [[32, 3], []], "Input type": ["float", ""]}})",
      R"({"args": {"Total Allocated": 1.5e9, "Total Reserved": 2147483648, "Bytes": -512, "Device Type": 1, "Device Id": 0, "Addr": 140212}, "ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 12, "tid": 12, "ts": 5})",
      R"({"ph": "C", "name": "GPU 0 Util", "pid": 3, "ts": 7, "args": {"GPU Utilization": 0.875, "x\u00e9": 2, "\u2603": 3}})",
      R"({"ph": "M", "name": "process_labels", "pid": 7, "args": {"labels": "GPU \u0030 \ud83d\ude00", "name": "caf\u00e9"}})",
      R"({"ph": "s", "id": "0x1f", "pid": 1, "tid": 1, "ts": 1, "cat": "ac2g", "name": "flow"})",
      R"({"ph": "X", "name": "aten::mm", "pid": "host", "tid": 99999999999999999999, "ts": "12.5", "dur": null, "args": {"Sequence number": 4, "Fwd thread id": 1, "Call stack": "a.py(1): f\nb.py(2): g", "Module Hierarchy": "top.layer1"}})",
      R"({"ph": "X", "name": "a)",
      R"([1, 2])",
      "{\"name\": \"\xff\xfe\"}",
      R"({"ph": "X", "args": {"deep": [[[[[[[[[[[[[[1]]]]]]]]]]]]]}, "name": "z"})",
      std::string(3000, '[') + std::string(3000, ']'),
  };
  for (std::string text : events) {
    const size_t n = text.size();
    text.append(kineto::kParserPadding, ' ');
    std::string first;
    for (const auto& kernel : kernels) {
      kineto::KinetoEvent ev;
      std::string_view error;
      auto status = kernel->parse(text.data(), n, ev, error);
      std::string got = std::to_string(static_cast<int>(status)) + " " + std::string(error) + " " +
                        (status == kineto::ParseStatus::ok ? describe(ev) : "");
      if (&kernel == &kernels.front()) first = got;
      else EXPECT_EQ(got, first) << kernel->name() << " vs " << kernels.front()->name() << " on " << text.substr(0, 60);
    }
  }
}

TEST(FastJson, ParserRunsTheKernelSimdjsonPicksForThisCpu) {
  // The regression this guards: a plain x86-64 build parsed with the scalar "fallback" kernel
  // even where simdjson had picked haswell or icelake for the CPU.
  std::string active = simdjson::get_active_implementation()->name();
  std::vector<std::string> compiled;
  for (const auto& k : kineto::runnable_event_parser_kernels()) compiled.emplace_back(k->name());
  kineto::EventParser parser;
  if (std::find(compiled.begin(), compiled.end(), active) != compiled.end()) {
    EXPECT_EQ(parser.kernel_name(), active);
  }
#if defined(__x86_64__)
  if (active == "haswell" || active == "icelake") {
    EXPECT_NE(std::string(parser.kernel_name()), "fallback");
    EXPECT_NE(kineto::json_parser_description().find(active), std::string::npos);
  }
#endif
}

// --- nsys: rows read ahead ---

class FastNsys : public FastInput {
 protected:
  std::string make_db(const std::string& sql) {
    std::string path = (dir_ / "export.sqlite").string();
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
    return path;
  }
  // Every accessor of every row, as text; "ERROR table row message" at a failure.
  static std::string dump(const nsys::ExportFile& file, const std::string& table,
                          const std::vector<std::string_view>& columns, const std::string& where = "") {
    std::ostringstream s;
    try {
      nsys::Rows rows(file, table, columns, where);
      while (rows.next()) {
        s << rows.row_number() << ":";
        for (int i = 0; i < static_cast<int>(columns.size()); ++i) {
          s << " " << rows.has(i) << rows.null(i) << "/" << rows.i64(i) << "/" << rows.real(i) << "/[" << rows.text(i)
            << "]";
          auto o = rows.opt(i);
          s << (o ? std::to_string(*o) : "-");
        }
        s << "\n";
      }
    } catch (const nsys::ReadError& e) {
      s << "ERROR " << e.table() << " " << e.row() << " " << e.what() << "\n";
    }
    return s.str();
  }
};

TEST_F(FastNsys, ReadAheadRowsEqualSteppedRowsValueForValue) {
  // Every SQLite type in every column, SQLite's conversions between them included (text that
  // starts with digits, reals read as ints, ints read as text, blobs), over several chunks.
  std::ostringstream sql;
  sql << "CREATE TABLE t (a, b, c, d);"
      << "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
      << "INSERT INTO t SELECT "
      << "CASE i % 6 WHEN 0 THEN NULL WHEN 1 THEN i * 1000003 WHEN 2 THEN i + 0.25 WHEN 3 THEN ' ' || i || 'abc' "
      << "WHEN 4 THEN x'00ff41' ELSE -9223372036854775807 - 1 END, "
      << "CASE i % 4 WHEN 0 THEN 1e300 WHEN 1 THEN -0.0 WHEN 2 THEN '3.75e2' ELSE 'caf' || char(233) END, "
      << "i, printf('%.*c', i % 50, 'x') FROM n;";
  auto path = make_db(sql.str());
  const std::vector<std::string_view> columns = {"a", "b", "missing", "c", "d"};
  nsys::ExportFile plain(path);
  std::string stepped = dump(plain, "t", columns, "WHERE c % 3 != 1");
  ASSERT_GT(stepped.size(), 100000u);
  nsys::ExportFile ahead(path);
  ahead.prefetch("t", columns, "WHERE c % 3 != 1");
  EXPECT_EQ(dump(ahead, "t", columns, "WHERE c % 3 != 1"), stepped);
  // A prefetch is for the one SELECT it names: another clause steps as before.
  ahead.prefetch("t", columns);
  EXPECT_EQ(dump(ahead, "t", {"a"}), dump(plain, "t", {"a"}));
}

TEST_F(FastNsys, ReadAheadMeetsADamagedPageAtTheSameRowWithTheSameMessage) {
  std::ostringstream sql;
  sql << "CREATE TABLE pad (x); CREATE TABLE t (start, end, name);"
      << "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) "
      << "INSERT INTO t SELECT i * 10, i * 10 + 5, 'kernel_' || i FROM n;";
  auto path = make_db(sql.str());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    auto size = static_cast<int64_t>(f.tellg());
    f.seekp((size * 2 / 3) / 4096 * 4096);
    std::string junk(4096, '\xFF');
    f.write(junk.data(), 4096);
  }
  const std::vector<std::string_view> columns = {"start", "end", "name"};
  nsys::ExportFile plain(path);
  std::string stepped = dump(plain, "t", columns);
  ASSERT_NE(stepped.find("ERROR t "), std::string::npos) << stepped.substr(stepped.size() - 200);
  nsys::ExportFile ahead(path);
  ahead.prefetch("t", columns);
  EXPECT_EQ(dump(ahead, "t", columns), stepped);
}

TEST_F(FastNsys, AReadAheadNobodyTakesEndsWithTheFile) {
  auto path = make_db(
      "CREATE TABLE t (a); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) "
      "INSERT INTO t SELECT i FROM n;");
  for (int i = 0; i < 20; ++i) {
    nsys::ExportFile file(path);
    file.prefetch("t", {"a"}, "WHERE a > 5");  // never taken: blocks on its full queue until the file closes
    file.prefetch("t", {"a"});
    nsys::Rows rows(file, "t", {"a"});
    ASSERT_TRUE(rows.next());  // and a Rows abandoned midway stops its thread too
    EXPECT_EQ(rows.i64(0), 1);
  }
}

}  // namespace
}  // namespace proflint
