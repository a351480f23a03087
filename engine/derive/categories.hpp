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

// One of the category names above.
std::string_view kernel_category(std::string_view full_name);

}  // namespace proflint
