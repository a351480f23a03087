// tests/fuzz/fuzz_support.hpp — what every libFuzzer target of proflint shares (docs/fuzzing.md).
//
// The oracle: a target passes an input when proflint either accepts it or refuses it with an
// exception, as the CLI does (it prints the message and exits 2). Crashes, hangs, leaks and
// sanitizer reports are what libFuzzer and ASan/UBSan catch. PROFLINT_FUZZ_STRICT=1 narrows the
// oracle for long runs: only proflint::Error (a message naming the file and the place) counts as
// a clean refusal, and any other exception aborts with its message, so library messages that
// leak to the user (issue 20, defect 9) become findings too.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/common/error.hpp"

namespace proflint::fuzz {

inline bool strict() {
  static const bool on = [] {
    const char* v = std::getenv("PROFLINT_FUZZ_STRICT");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

// Runs `body`; exceptions are refusals (see above), except in strict mode.
template <class Body>
void refusals_allowed(Body&& body) {
  try {
    body();
  } catch (const proflint::Error&) {
  } catch (const std::exception& e) {
    if (!strict()) return;
    std::fprintf(stderr, "fuzz: strict mode: exception other than proflint::Error: %s\n", e.what());
    std::abort();
  }
}

// The importers and the store loader read paths, not memory: each input is written to one file
// per process (in /dev/shm when it exists, so no disk is touched), rewritten for every input.
class InputFile {
 public:
  explicit InputFile(std::string_view suffix) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    path_ = (dir / ("proflint-fuzz-" + std::to_string(::getpid()) + std::string(suffix))).string();
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) {
      std::perror(path_.c_str());
      std::abort();  // the harness itself is broken, not proflint
    }
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace proflint::fuzz
