// engine/derive/categories.hpp — what kind of work a GPU kernel does, from its name.
//
// Categories (kernel.category): communication, memory, attention, conv, gemm, reduction,
// elementwise, other. Checked in that order on the kernel's own name (without template
// arguments, return type or parameters); for generic CUTLASS launch wrappers, whose own name says
// nothing (cutlass::Kernel<cutlass_80_tensorop_s1688gemm…>), on the full name.
#pragma once

#include <string>
#include <string_view>

namespace proflint {

// The kernel's own name: `void ns::fn<T…>(args…)` -> `ns::fn`; `std::enable_if<…>::type f<…>(…)` -> `f`.
std::string kernel_base_name(std::string_view full_name);

// One of the category names above. Inductor's Triton kernels are decided by their prefix first
// (triton_kernel_kind): `triton_poi_fused_convolution_relu_0` is elementwise work, not a conv.
std::string_view kernel_category(std::string_view full_name);

// What an Inductor-generated Triton kernel does, from the prefix Inductor writes:
// 'pointwise' (triton_poi_), 'reduction' (triton_red_), 'persistent_reduction' (triton_per_),
// 'template' (triton_tem_, GEMM/conv templates), 'foreach' (triton_for_), 'triton' for other
// names starting with triton_; "" for kernels that are not Triton kernels.
std::string_view triton_kernel_kind(std::string_view name);

}  // namespace proflint
