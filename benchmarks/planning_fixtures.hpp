// Shared by the planning benchmarks: interconnect entries as detection would report them.
#pragma once

#include <ai_hwaccel/core/system_io.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bench {

inline ai_hwaccel::interconnect link(ai_hwaccel::interconnect_kind kind, ai_hwaccel::link_scope scope, double gbps,
                                     std::vector<std::uint32_t> devices) {
    ai_hwaccel::interconnect l;
    l.kind = kind;
    l.scope = scope;
    l.name = std::string(ai_hwaccel::to_string(kind));
    l.bandwidth_gbps = {gbps, ai_hwaccel::origin::user};
    l.devices = std::move(devices);
    return l;
}

} // namespace bench
