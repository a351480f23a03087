// python/src/module.cpp — proflint._core: the command line, run in-process.
//
// run_cli(args) runs `proflint ARGS...` exactly as the binary does (python/src/cli_main.cpp) and
// returns (exit code, stdout text, stderr text). The Python package (python/proflint/) builds the
// arguments, asks for JSON/CSV in a temporary file, and turns exit code 2 into an exception that
// carries the error line. While the engine works the GIL is released, so other Python threads
// run; engine calls themselves run one at a time, because the messages are collected by pointing
// std::cout and std::cerr at buffers for the duration of a call (process-wide streams).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cli/commands.hpp"

int proflint_cli_main(int argc, char** argv);

namespace {

std::mutex engine_mutex;

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

pybind11::tuple run_cli(const std::vector<std::string>& args) {
  int code = 2;
  std::string out_text, err_text;
  {
    pybind11::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(engine_mutex);
    std::ostringstream out, err;
    {
      Redirect to_out(std::cout, out.rdbuf()), to_err(std::cerr, err.rdbuf());
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
        err << "proflint: error: " << e.what() << "\n";
        code = 2;
      }
    }
    out_text = out.str();
    err_text = err.str();
  }
  return pybind11::make_tuple(code, pybind11::bytes(out_text), pybind11::bytes(err_text));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "proflint's engine: the command line run in-process (see the proflint package).";
  m.attr("__version__") = PROFLINT_VERSION;
  m.def("version_text", &proflint::version_text,
        "`proflint --version`: the version and the input libraries this build uses.");
  m.def("run_cli", &run_cli, pybind11::arg("args"),
        "Runs `proflint ARGS...` in this process with the GIL released; returns (exit code, stdout "
        "bytes, stderr bytes).");
}
