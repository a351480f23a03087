// TEMPORARY stub, replaced by the real derivation.
#include "engine/derive/derive.hpp"
namespace proflint {
void derive_all(Store&, const DeriveOptions&, bool) {}
}
