// ai-hwaccel detect: detect().
//
// One call returns the registry of this machine. At this stage of the library it
// describes the host (CPU, memory, container memory limit); the accelerator backends
// plug in here as they land, each reported as "not compiled" when switched off.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/registry.hpp"

#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// Detects through any system_view (a live host, a captured tree, a test double).
template <system_view S>
accelerator_registry detect(const S& sys) {
    std::vector<warning> warnings;
    auto [host, cpu] = probe_host(sys, warnings);
    std::vector<accelerator_profile> profiles;
    profiles.push_back(cpu);
    return accelerator_registry(std::move(profiles), std::move(warnings), std::move(host));
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// Detects the machine this process runs on.
inline accelerator_registry detect() { return detect(host_system{}); }
#endif

AI_HWACCEL_NAMESPACE_END
