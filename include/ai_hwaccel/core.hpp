// ai-hwaccel: the light umbrella.
//
// The core vocabulary and every constexpr table: units, quantization formats, families,
// vendors, device kinds, backends, the device catalogue, PCI addresses, profiles and
// requirements. Everything here is usable in constant expressions and allocation-free:
// no range-v3, no I/O, no threads, no std::string. The runtime companions that do
// allocate (core/warning.hpp, core/system_io.hpp) come with registry.hpp, or on their own.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/device_spec.hpp"
#include "ai_hwaccel/core/inplace_string.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/quantization.hpp"
#include "ai_hwaccel/core/requirement.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
