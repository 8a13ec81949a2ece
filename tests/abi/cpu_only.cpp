// Built with AI_HWACCEL_BACKENDS_NONE=1: no backend compiled in. Its inline variables and
// functions live in another ABI namespace, so the linker cannot merge them with the
// all-backends translation unit's and silently pick one.
#include "ai_hwaccel/core.hpp"

#include <cstdint>

std::uint32_t mask_seen_by_cpu_only_tu() { return ai_hwaccel::compiled_backend_mask; }
bool cuda_compiled_in_cpu_only_tu() { return ai_hwaccel::is_compiled(ai_hwaccel::backend_id::cuda); }
std::size_t tools_seen_by_cpu_only_tu() { return ai_hwaccel::info(ai_hwaccel::backend_id::cuda).tools.size(); }
