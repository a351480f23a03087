// python/src/module.cpp — proflint._core: the command line, run in-process.
//
// run_cli(args) runs `proflint ARGS...` exactly as the binary does (python/src/cli_main.cpp) and
// returns (exit code, stdout text, stderr text). The Python package (python/proflint/) builds the
// arguments, asks for JSON/CSV in a temporary file, and turns exit code 2 into an exception that
// carries the error line. While the engine works the GIL is released, so other Python threads
// run; engine calls themselves run one at a time, because the messages are collected by pointing
// std::cout and std::cerr at buffers for the duration of a call (process-wide streams).
//
// Progress: the importer prints "proflint: reading FILE: 40% (...)" lines on stderr (C stdio,
// engine/import/progress.cpp). Given a callback, run_cli points file descriptor 2 at a pipe for
// the call; a reader thread hands those lines to the callback (with the GIL) and passes every
// other line on to the real stderr.
#include <fcntl.h>
#include <poll.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/cli/commands.hpp"

int proflint_cli_main(int argc, char** argv);

namespace {

std::mutex engine_mutex;

// Collects what is written to it; safe for writes from several threads (compare loads its two
// sides on two threads, and both may warn), as std::cerr itself is.
class LockedBuffer : public std::streambuf {
 public:
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      std::lock_guard<std::mutex> lock(mutex_);
      text_.push_back(traits_type::to_char_type(c));
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> lock(mutex_);
    text_.append(s, static_cast<size_t>(n));
    return n;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

// Points `stream` at `buffer` until destroyed.
class Redirect {
 public:
  Redirect(std::ostream& stream, std::streambuf* buffer) : stream_(stream), old_(stream.rdbuf(buffer)) {}
  ~Redirect() { stream_.rdbuf(old_); }
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;

 private:
  std::ostream& stream_;
  std::streambuf* old_;
};

// "proflint: reading FILE: 40% (12.0/30.0 MiB)" -> FILE, 40; false for any other line.
bool parse_progress(const std::string& line, std::string& file, int& percent) {
  static const std::string prefix = "proflint: reading ";
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  size_t sign = line.rfind("% (");
  if (sign == std::string::npos) return false;
  size_t colon = line.rfind(": ", sign);
  if (colon == std::string::npos || colon < prefix.size()) return false;
  std::string digits = line.substr(colon + 2, sign - colon - 2);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  file = line.substr(prefix.size(), colon - prefix.size());
  percent = std::atoi(digits.c_str());
  return true;
}

// File descriptor 2 points at a pipe while this lives (see the top of the file).
class ProgressPipe {
 public:
  // `callback` is borrowed: the caller's argument outlives the call.
  explicit ProgressPipe(pybind11::handle callback) : callback_(callback) {
    int fds[2];
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    if (saved_ < 0 || ::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot redirect stderr for progress");
    read_ = fds[0];
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    reader_ = std::thread([this] { pump(); });
  }
  ~ProgressPipe() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    stopping_ = true;
    reader_.join();
    ::close(read_);
    ::close(saved_);
  }
  ProgressPipe(const ProgressPipe&) = delete;
  ProgressPipe& operator=(const ProgressPipe&) = delete;

 private:
  // Reads until fd 2 is restored and the pipe has been idle for 50 ms. Not until the end of the
  // pipe: a process started during the call inherits its write end and may outlive the call.
  void pump() {
    std::string pending;
    char buffer[4096];
    pollfd ready{read_, POLLIN, 0};
    for (;;) {
      int r = ::poll(&ready, 1, 50);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) break;
      if (r == 0) {
        if (stopping_) break;
        continue;
      }
      ssize_t n = ::read(read_, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending.append(buffer, static_cast<size_t>(n));
      size_t end;
      while ((end = pending.find('\n')) != std::string::npos) {
        handle(pending.substr(0, end + 1));
        pending.erase(0, end + 1);
      }
    }
    if (!pending.empty()) handle(pending);
  }
  void handle(const std::string& line) {
    std::string file;
    int percent = 0;
    if (!parse_progress(line, file, percent)) {
      size_t done = 0;
      while (done < line.size()) {
        ssize_t w = ::write(saved_, line.data() + done, line.size() - done);
        if (w <= 0) break;
        done += static_cast<size_t>(w);
      }
      return;
    }
    pybind11::gil_scoped_acquire gil;
    try {
      callback_(file, percent);
    } catch (pybind11::error_already_set& e) {
      e.discard_as_unraisable("proflint progress callback");
    }
  }

  pybind11::handle callback_;
  int saved_ = -1, read_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread reader_;
};

pybind11::tuple run_cli(const std::vector<std::string>& args, const pybind11::object& progress) {
  int code = 2;
  std::string out_text, err_text;
  {
    pybind11::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(engine_mutex);
    LockedBuffer out, err;
    // After the lock (one redirection at a time), with the GIL released: the reader thread takes
    // the GIL for each callback, and is joined before this scope ends.
    std::unique_ptr<ProgressPipe> pipe;
    if (!progress.is_none()) pipe = std::make_unique<ProgressPipe>(progress);
    {
      Redirect to_out(std::cout, &out), to_err(std::cerr, &err);
      std::vector<std::string> words{"proflint"};
      words.insert(words.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      // main() turns every engine error into a message and exit code 2 (run_command); what could
      // still escape is the argument parser's own failure.
      try {
        code = proflint_cli_main(static_cast<int>(words.size()), argv.data());
      } catch (const std::exception& e) {
        std::cerr << "proflint: error: " << e.what() << "\n";
        code = 2;
      }
    }
    out_text = out.text();
    err_text = err.text();
  }
  return pybind11::make_tuple(code, pybind11::bytes(out_text), pybind11::bytes(err_text));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "proflint's engine: the command line run in-process (see the proflint package).";
  m.attr("__version__") = PROFLINT_VERSION;
  m.def("version_text", &proflint::version_text,
        "`proflint --version`: the version and the input libraries this build uses.");
  m.def("run_cli", &run_cli, pybind11::arg("args"), pybind11::arg("progress") = pybind11::none(),
        "Runs `proflint ARGS...` in this process with the GIL released; returns (exit code, stdout "
        "bytes, stderr bytes). `progress(file, percent)` is called for each import progress line "
        "(give --progress too).");
}
