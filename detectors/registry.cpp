// detectors/registry.cpp — the explicit, sorted list of built-in detectors.
//
// Adding a detector: `scripts/add_detector.py ID` writes detectors/<id_snake>.cpp defining
// `DetectorInfo <id_snake>_info()`, declares it below and adds it to the list in id order (a test
// checks the order), with its doc page and golden cases (docs/adding-a-detector.md).
#include "engine/analysis/detector.hpp"

namespace proflint {

DetectorInfo allocation_churn_info();
DetectorInfo amp_not_used_info();
DetectorInfo bad_iteration_range_info();
DetectorInfo batch_size_info();
DetectorInfo communication_bound_info();
DetectorInfo cpu_hotspot_idle_info();
DetectorInfo cudnn_benchmark_off_info();
DetectorInfo dataloader_stall_info();
DetectorInfo dp_instead_of_ddp_info();
DetectorInfo emit_nvtx_missing_info();
DetectorInfo gpu_idle_gaps_info();
DetectorInfo gpu_imbalance_info();
DetectorInfo gpu_underutilized_info();
DetectorInfo host_sync_info();
DetectorInfo import_issues_info();
DetectorInfo io_bound_input_info();
DetectorInfo launch_bound_info();
DetectorInfo memcpy_bound_info();
DetectorInfo no_fusion_info();
DetectorInfo no_gpu_activity_info();
DetectorInfo no_iterations_info();
DetectorInfo pageable_memcpy_info();
DetectorInfo rank_straggler_info();
DetectorInfo slow_api_info();
DetectorInfo small_capture_info();
DetectorInfo sync_memcpy_info();
DetectorInfo sync_memset_info();
DetectorInfo tensor_core_shape_info();
DetectorInfo unknown_kernels_info();
DetectorInfo unused_gpus_info();

const std::vector<DetectorInfo>& detector_registry() {
  static const std::vector<DetectorInfo> all = {
      allocation_churn_info(),
      amp_not_used_info(),
      bad_iteration_range_info(),
      batch_size_info(),
      communication_bound_info(),
      cpu_hotspot_idle_info(),
      cudnn_benchmark_off_info(),
      dataloader_stall_info(),
      dp_instead_of_ddp_info(),
      emit_nvtx_missing_info(),
      gpu_idle_gaps_info(),
      gpu_imbalance_info(),
      gpu_underutilized_info(),
      host_sync_info(),
      import_issues_info(),
      io_bound_input_info(),
      launch_bound_info(),
      memcpy_bound_info(),
      no_fusion_info(),
      no_gpu_activity_info(),
      no_iterations_info(),
      pageable_memcpy_info(),
      rank_straggler_info(),
      slow_api_info(),
      small_capture_info(),
      sync_memcpy_info(),
      sync_memset_info(),
      tensor_core_shape_info(),
      unknown_kernels_info(),
      unused_gpus_info(),
  };
  return all;
}

}  // namespace proflint
