// ai-hwaccel detect: Cerebras systems (CS-2, CS-3).
//
// A Cerebras wafer-scale engine lives in its own appliance, and jobs reach it over the
// network from user nodes; the host this library runs on has no PCI function, device
// node, driver or local tool output that says a Cerebras system is there. No public
// source documents a local file or command on a user node that describes the system
// (its model, its wafer), so this probe reports nothing, on purpose: listing a device
// that cannot be seen would be a guess. The catalogue still describes WSE-2 and WSE-3 for
// planning ("what if I had a CS-3?").
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CEREBRAS

#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/system.hpp"

AI_HWACCEL_NAMESPACE_BEGIN

/// Reports no device and no warning: nothing local describes a Cerebras system.
struct cerebras_probe {
    static constexpr backend_id backend = backend_id::cerebras;

    template <system_view S>
    probe_output probe(const S&) const {
        return {};
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<cerebras_probe, host_system>);
#endif

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CEREBRAS
