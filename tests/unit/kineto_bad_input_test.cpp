// tests/unit/kineto_bad_input_test.cpp — inputs the Kineto importer must refuse: each throws
// proflint::Error naming the file (and, where there is one, the byte), and leaves no trace row.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/pipeline/load.hpp"
#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/store/store.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

// Big enough that a cut in the middle of the gzip stream falls inside traceEvents.
std::string sample_trace() {
  std::string s = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int i = 0; i < 2000; ++i) {
    if (i) s += ",\n";
    s += R"({"ph": "X", "cat": "kernel", "name": "kernel_)" + std::to_string(i * 7919 % 1000) + R"(", "pid": 0, "tid": 7, "ts": )" +
         std::to_string(1000 + i * 10) + R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(i) + "}}";
  }
  return s + "]}";
}

class KinetoBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_kineto_bad_" + std::to_string(getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string gzipped(const std::string& content) {
    auto p = (dir_ / "tmp.gz").string();
    gzFile gz = gzopen(p.c_str(), "wb");
    gzwrite(gz, content.data(), static_cast<unsigned>(content.size()));
    gzclose(gz);
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    fs::remove(p);
    return bytes;
  }

  // Both entry points (the importer itself and the registry's sniff + dispatch) refuse the file
  // with a message naming it and containing `what`; the store keeps no trace row.
  void expect_refused(const std::string& path, const std::string& what) {
    for (int via_registry = 0; via_registry < 2; ++via_registry) {
      Store store = Store::create_in_memory();
      try {
        if (via_registry)
          import_file(path, store, {});
        else
          import_into(KinetoImporter(), path, store, {});
        ADD_FAILURE() << "no error for " << path;
      } catch (const Error& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find(path), std::string::npos) << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      }
      SQLite::Statement q(store.db(), "SELECT (SELECT count(*) FROM trace) + (SELECT count(*) FROM _kernel)");
      ASSERT_TRUE(q.executeStep());
      EXPECT_EQ(q.getColumn(0).getInt64(), 0) << "a refused file must leave nothing behind";
    }
  }

  fs::path dir_;
};

TEST_F(KinetoBadInput, TruncatedGzip) {
  std::string gz = gzipped(sample_trace());
  ASSERT_GT(gz.size(), 1000u);
  auto path = write("cut.json.gz", gz.substr(0, gz.size() / 2));
  expect_refused(path, "gzip data ends early");
}

TEST_F(KinetoBadInput, TruncatedPlainJson) {
  std::string text = sample_trace();
  auto path = write("cut.json", text.substr(0, text.size() / 2));
  expect_refused(path, "file ends inside traceEvents");
  expect_refused(path, "byte " + std::to_string(text.size() / 2));
}

TEST_F(KinetoBadInput, GzipThatDecompressesToATruncatedTrace) {
  std::string text = sample_trace();
  auto path = write("short.json.gz", gzipped(text.substr(0, text.size() - 100)));
  expect_refused(path, "file ends inside traceEvents");
}

TEST_F(KinetoBadInput, JsonObjectWithoutTraceEvents) {
  auto path = write("config.json", R"({"learning_rate": 0.1, "layers": [1, 2, 3], "note": "traceEvents"})");
  expect_refused(path, "no \"traceEvents\" array");
}

TEST_F(KinetoBadInput, EmptyTraceEvents) {
  expect_refused(write("empty.json", R"({"traceEvents": []})"), "empty trace: traceEvents has no events");
  expect_refused(write("empty_array.json", "[ ]"), "empty trace");
}

TEST_F(KinetoBadInput, GarbageAfterGzipMagic) {
  std::string junk = "\x1f\x8b";
  for (int i = 0; i < 500; ++i) junk += static_cast<char>((i * 37 + 11) % 256);
  expect_refused(write("junk.json.gz", junk), "gzip");
}

TEST_F(KinetoBadInput, ArrayWhoseElementsAreNotEvents) {
  expect_refused(write("numbers.json", "[1, 2, 3]"), "no readable trace events");
}

TEST_F(KinetoBadInput, TraceEventsThatIsNotAnArray) {
  expect_refused(write("obj.json", R"({"traceEvents": {"ph": "X"}})"), "traceEvents is not an array");
}

}  // namespace
}  // namespace proflint
