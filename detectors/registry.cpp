// detectors/registry.cpp — the explicit, sorted list of built-in detectors.
//
// Adding a detector: write detectors/<id_snake>.cpp with a `DetectorInfo <id_snake>_info()`
// function, declare it here and add it to the list in id order.
#include "engine/analysis/detector.hpp"

namespace proflint {

const std::vector<DetectorInfo>& detector_registry() {
  static const std::vector<DetectorInfo> all = {};
  return all;
}

}  // namespace proflint
