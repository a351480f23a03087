// TEMPORARY stub, replaced by the real importer.
#include "engine/import/nsys/nsys_importer.hpp"
#include "engine/common/error.hpp"
namespace proflint {
bool NsysImporter::sniff(std::string_view head, bool) const { return false; }
ImportResult NsysImporter::import(const std::string& path, Store&, const ImportOptions&) const { throw Error("todo"); }
}
