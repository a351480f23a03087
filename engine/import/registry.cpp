// engine/import/registry.cpp — the explicit, sorted list of importers and the format sniffer.
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/import/nsys/nsys_importer.hpp"
#include "engine/import/samples/samples_importers.hpp"

namespace proflint {

const std::vector<std::unique_ptr<Importer>>& importers() {
  static const std::vector<std::unique_ptr<Importer>> all = [] {
    std::vector<std::unique_ptr<Importer>> v;
    // The memory timeline is a JSON array too: it is asked before Kineto, which takes any JSON.
    v.push_back(std::make_unique<MemoryTimelineImporter>());
    v.push_back(std::make_unique<KinetoImporter>());
    v.push_back(std::make_unique<NsysImporter>());
    v.push_back(std::make_unique<NvsmiCsvImporter>());
    v.push_back(std::make_unique<DmonImporter>());
    return v;
  }();
  return all;
}

namespace {

// First bytes of the file, gunzipped when it starts with the gzip magic.
std::string read_head(const std::string& path, bool& gzipped) {
  std::ifstream in(path, std::ios::binary);
  char raw[2] = {};
  in.read(raw, 2);
  gzipped = in.gcount() == 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
  std::string head(4096, '\0');
  if (gzipped) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) return {};
    int n = gzread(gz, head.data(), static_cast<unsigned>(head.size()));
    gzclose(gz);
    head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  } else {
    in.clear();
    in.seekg(0);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
  }
  return head;
}

}  // namespace

ImportResult import_file(const std::string& path, TraceModel& model, const ImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw input_error(path, "", "no such file");
  if (fs::is_directory(path, ec)) throw input_error(path, "", "is a directory, expected a profile file");
  if (fs::file_size(path, ec) == 0) throw input_error(path, "", "empty file, expected a profile");
  bool gzipped = false;
  std::string head = read_head(path, gzipped);
  if (head.empty() && gzipped) {
    // The Kineto byte source names the compressed byte where inflating failed.
    auto source = kineto::open_byte_source(path);
    char first[256];
    source->read(first, sizeof first);
    throw input_error(path, "byte 0", "gzip data holds no readable bytes (expected a gzipped trace)");
  }
  if (head.empty()) throw input_error(path, "", "cannot read file");
  // With an operator spec, a text that names its keys is that operator's log: such logs look like
  // nothing else ('[INFO] ...' would pass for a JSON array).
  if (const auto& spec = options.operator_spec) {
    bool names_a_key = !spec->total_key.empty() && head.find(spec->total_key) != std::string::npos;
    for (const auto& m : spec->modules) names_a_key = names_a_key || (!m.empty() && head.find(m) != std::string::npos);
    if (names_a_key) return import_operator_log(path, model, *spec);
  }
  for (const auto& importer : importers()) {
    if (!importer->sniff(head, gzipped)) continue;
    try {
      return importer->import(path, model, options);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      // A library's message ("database disk image is malformed") alone does not say which file.
      throw input_error(path, "", std::string("cannot read this ") +
                                      (importer->name() == "nsys"     ? "Nsight Systems export"
                                       : importer->name() == "kineto" ? "Kineto trace"
                                                                      : "sampling log") + ": " +
                                      e.what());
    }
  }
  if (options.operator_spec) return import_operator_log(path, model, *options.operator_spec);
  throw input_error(path, "", "not a recognised profile (expected PyTorch profiler / Kineto JSON, an Nsight Systems "
                              "SQLite export, a proflint store, or a sampling log: nvidia-smi --query-gpu CSV, "
                              "nvidia-smi dmon/pmon, dcgmi dmon, PyTorch memory timeline; an operator log needs --operator-spec)");
}

}  // namespace proflint
