// Built with the default configuration: every backend compiled in.
#include "ai_hwaccel/core.hpp"

#include <cstdint>

std::uint32_t mask_seen_by_all_backends_tu() { return ai_hwaccel::compiled_backend_mask; }
bool cuda_compiled_in_all_backends_tu() { return ai_hwaccel::is_compiled(ai_hwaccel::backend_id::cuda); }
std::size_t tools_seen_by_all_backends_tu() { return ai_hwaccel::info(ai_hwaccel::backend_id::cuda).tools.size(); }
