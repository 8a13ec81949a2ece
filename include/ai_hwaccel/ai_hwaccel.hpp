// ai-hwaccel: everything.
//
// The core tables and types, the registry and its range-v3 queries, detection, and JSON
// (io/json.hpp: present when <nlohmann/json.hpp> is, off with AI_HWACCEL_JSON=0).
#pragma once

#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/environment.hpp"
#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/detect/merge.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/storage.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"
#include "ai_hwaccel/io/json.hpp"
#include "ai_hwaccel/plan/cost.hpp"
#include "ai_hwaccel/plan/memory.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/model_file.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/shard.hpp"
#include "ai_hwaccel/plan/throughput.hpp"
#include "ai_hwaccel/plan/training.hpp"
#include "ai_hwaccel/registry.hpp"
