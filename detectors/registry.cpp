// detectors/registry.cpp — the explicit, sorted list of built-in detectors.
//
// Adding a detector: write detectors/<id_snake>.cpp defining `DetectorInfo <id_snake>_info()`,
// declare it below and add it to the list in id order (a test checks the order).
#include "engine/analysis/detector.hpp"

namespace proflint {

DetectorInfo pageable_memcpy_info();

const std::vector<DetectorInfo>& detector_registry() {
  static const std::vector<DetectorInfo> all = {
      pageable_memcpy_info(),
  };
  return all;
}

}  // namespace proflint
