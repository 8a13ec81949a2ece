// ai-hwaccel: everything.
//
// The core tables and types, the registry and its range-v3 queries, and detection.
#pragma once

#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/registry.hpp"
