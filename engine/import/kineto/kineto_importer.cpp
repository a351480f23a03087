// TEMPORARY stub, replaced by the real importer.
#include "engine/import/kineto/kineto_importer.hpp"
#include "engine/common/error.hpp"
namespace proflint {
bool KinetoImporter::sniff(std::string_view head, bool) const { return false; }
ImportResult KinetoImporter::import(const std::string& path, Store&, const ImportOptions&) const { throw Error("todo"); }
}
