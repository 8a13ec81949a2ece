// A stand-in for libnvidia-ml.so.1, built by the tests so that the NVML loader
// (include/ai_hwaccel/detect/nvml.hpp) runs against a real shared library with NVIDIA's C
// ABI on machines without a GPU.
//
// Its GPUs come from the file named by AI_HWACCEL_FAKE_NVML_DATA: one line per GPU in the
// column order and format of the CUDA probe's own query
// (`nvidia-smi --query-gpu=index,uuid,…,pcie.link.width.max --format=csv,noheader,nounits`),
// so that one fixture can be served both ways and the two registries compared. "[N/A]"
// and "[Not Supported]" cells answer NVML_ERROR_NOT_SUPPORTED.
//
// AI_HWACCEL_FAKE_NVML_MODE makes it misbehave:
//   init-fails  nvmlInit_v2 answers NVML_ERROR_DRIVER_NOT_LOADED
//   hang        nvmlDeviceGetCount_v2 never returns (a wedged driver)
//   lost-gpu    the second GPU cannot be opened (NVML_ERROR_GPU_IS_LOST)
//   huge        memory totals past 16 TiB
//   no-memory-v2  nvmlDeviceGetMemoryInfo_v2 answers NVML_ERROR_NOT_SUPPORTED
//   pci-v2      the PCI info as nvmlDeviceGetPciInfo_v2 (older drivers) fills it: the
//               address in the 16-byte busId at the start, nothing in the 32-byte one
// Built with FAKE_NVML_WITHOUT_NAME it lacks nvmlDeviceGetName (a driver too old).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int ok = 0;
constexpr int invalid_argument = 2;
constexpr int not_supported = 3;
constexpr int insufficient_size = 7;
constexpr int driver_not_loaded = 9;
constexpr int gpu_is_lost = 15;
constexpr int argument_version_mismatch = 25;

struct gpu {
    std::vector<std::string> cells; // the 20 columns, trimmed
};

// Each nvmlInit_v2 loads a new list and publishes it; none is ever changed or destroyed
// afterwards: a query the tests abandoned (mode "hang") may still read the list it loaded
// while a later test loads its own, as NVML's own state is safe to read from threads.
// Each list links to the one before, so all stay reachable (no leak to report).
struct loaded {
    std::vector<gpu> list;
    const loaded* before = nullptr;
};
std::atomic<const loaded*>& current() {
    static std::atomic<const loaded*> newest{new loaded};
    return newest;
}
const std::vector<gpu>& gpus() { return current().load(std::memory_order_acquire)->list; }
void publish(loaded* l) {
    const loaded* expected = current().load(std::memory_order_acquire);
    do l->before = expected;
    while (!current().compare_exchange_weak(expected, l, std::memory_order_release, std::memory_order_acquire));
}

std::string mode() {
    const char* m = std::getenv("AI_HWACCEL_FAKE_NVML_MODE");
    return m ? m : "";
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool load() {
    auto* l = new loaded; // published below, never freed (see current)
    const char* path = std::getenv("AI_HWACCEL_FAKE_NVML_DATA");
    if (!path) {
        publish(l);
        return false;
    }
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (trim(line).empty()) continue;
        gpu g;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) g.cells.push_back(trim(cell));
        if (g.cells.size() == 20) l->list.push_back(g);
    }
    publish(l);
    return true;
}

enum column { index, uuid, name, bus_id, device_id, mem_total, mem_used, mem_free, compute_cap, driver,
              power_limit, power_draw, temperature, utilization, max_mem_clock, gen_cur, gen_max, width_cur,
              width_max, mig_mode };

const gpu* from_handle(void* h) {
    const auto i = reinterpret_cast<std::size_t>(h);
    return i >= 1 && i <= gpus().size() ? &gpus()[i - 1] : nullptr;
}

bool unavailable(const std::string& v) { return v.empty() || v.front() == '['; }

int copy(const std::string& v, char* out, unsigned len) {
    if (!out) return invalid_argument;
    if (v.size() + 1 > len) return insufficient_size;
    std::memcpy(out, v.c_str(), v.size() + 1);
    return ok;
}

int number(void* h, column c, double scale, unsigned* out) {
    const gpu* g = from_handle(h);
    if (!g || !out) return invalid_argument;
    const std::string& v = g->cells[c];
    if (unavailable(v)) return not_supported;
    *out = static_cast<unsigned>(std::strtod(v.c_str(), nullptr) * scale + 0.5);
    return ok;
}

} // namespace

extern "C" {

struct fake_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct fake_memory {
    unsigned long long total, free, used;
};
struct fake_memory_v2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
constexpr unsigned fake_memory_v2_version = static_cast<unsigned>(sizeof(fake_memory_v2)) | (2u << 24);

static void fill_memory(const gpu& g, fake_memory_v2& m) {
    const unsigned long long mib = 1024ull * 1024;
    m.total = std::strtoull(g.cells[mem_total].c_str(), nullptr, 10) * mib;
    m.used = std::strtoull(g.cells[mem_used].c_str(), nullptr, 10) * mib;
    m.free = std::strtoull(g.cells[mem_free].c_str(), nullptr, 10) * mib;
    if (mode() == "huge") m.total = 1ull << 62;
    m.reserved = m.used + m.free <= m.total ? m.total - m.used - m.free : 0;
}
struct fake_utilization {
    unsigned gpu, memory;
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
    if (mode() == "init-fails") return driver_not_loaded;
    return load() ? ok : driver_not_loaded;
}
__attribute__((visibility("default"))) int nvmlShutdown() { return ok; }
__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
    switch (rc) {
    case driver_not_loaded: return "Driver Not Loaded";
    case gpu_is_lost: return "GPU is lost";
    case not_supported: return "Not Supported";
    default: return "Unknown Error";
    }
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* out, unsigned len) {
    return gpus().empty() ? copy("", out, len) : copy(gpus()[0].cells[driver], out, len);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
    if (mode() == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
    if (!count) return invalid_argument;
    *count = static_cast<unsigned>(gpus().size());
    return ok;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
    if (!h || i >= gpus().size()) return invalid_argument;
    if (mode() == "lost-gpu" && i == 1) return gpu_is_lost;
    *h = reinterpret_cast<void*>(static_cast<std::size_t>(i) + 1);
    return ok;
}
#ifndef FAKE_NVML_WITHOUT_NAME
__attribute__((visibility("default"))) int nvmlDeviceGetName(void* h, char* out, unsigned len) {
    const gpu* g = from_handle(h);
    return g ? copy(g->cells[name], out, len) : invalid_argument;
}
#endif
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(void* h, char* out, unsigned len) {
    const gpu* g = from_handle(h);
    return g ? copy(g->cells[uuid], out, len) : invalid_argument;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(void* h, fake_pci_info* p) {
    const gpu* g = from_handle(h);
    if (!g || !p) return invalid_argument;
    std::memset(p, 0, sizeof *p);
    const std::string& b = g->cells[bus_id];
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    const bool parsed = std::sscanf(b.c_str(), "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4;
    if (mode() == "pci-v2") {
        if (parsed) std::snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    } else {
        std::snprintf(p->bus_id, sizeof p->bus_id, "%s", b.c_str());
    }
    if (parsed) {
        p->domain = dom;
        p->bus = bus;
        p->device = dev;
    }
    p->pci_device_id = static_cast<unsigned>(std::strtoul(g->cells[device_id].c_str(), nullptr, 16));
    return ok;
}
// As the driver answers: nvidia-smi's Used leaves out the memory the driver reserves
// (total - used - free), which the first call counts as used and the second reports apart.
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo_v2(void* h, fake_memory_v2* m) {
    const gpu* g = from_handle(h);
    if (!g || !m) return invalid_argument;
    if (m->version != fake_memory_v2_version) return argument_version_mismatch;
    if (mode() == "no-memory-v2") return not_supported;
    fill_memory(*g, *m);
    return ok;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* h, fake_memory* m) {
    const gpu* g = from_handle(h);
    if (!g || !m) return invalid_argument;
    fake_memory_v2 v2{};
    fill_memory(*g, v2);
    m->total = v2.total;
    m->free = v2.free;
    m->used = v2.total - v2.free;
    return ok;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(void* h, int* major, int* minor) {
    const gpu* g = from_handle(h);
    if (!g || !major || !minor) return invalid_argument;
    if (std::sscanf(g->cells[compute_cap].c_str(), "%d.%d", major, minor) != 2) return not_supported;
    return ok;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerManagementLimit(void* h, unsigned* mw) {
    return number(h, power_limit, 1000, mw);
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(void* h, unsigned* mw) {
    return number(h, power_draw, 1000, mw);
}
__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(void* h, unsigned sensor, unsigned* c) {
    return sensor == 0 ? number(h, temperature, 1, c) : invalid_argument;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(void* h, fake_utilization* u) {
    if (!u) return invalid_argument;
    u->memory = 0;
    return number(h, utilization, 1, &u->gpu);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxClockInfo(void* h, unsigned type, unsigned* mhz) {
    return type == 2 ? number(h, max_mem_clock, 1, mhz) : not_supported;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMigMode(void* h, unsigned* current, unsigned* pending) {
    const gpu* g = from_handle(h);
    if (!g || !current || !pending) return invalid_argument;
    const std::string& v = g->cells[mig_mode];
    if (unavailable(v)) return not_supported;
    *current = *pending = v == "Enabled" ? 1u : 0u;
    return ok;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCurrPcieLinkGeneration(void* h, unsigned* v) {
    return number(h, gen_cur, 1, v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxPcieLinkGeneration(void* h, unsigned* v) {
    return number(h, gen_max, 1, v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetCurrPcieLinkWidth(void* h, unsigned* v) {
    return number(h, width_cur, 1, v);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxPcieLinkWidth(void* h, unsigned* v) {
    return number(h, width_max, 1, v);
}

} // extern "C"
