// ai-hwaccel detect: NVIDIA GPUs through NVML, loaded at run time.
//
// NVML (libnvidia-ml.so.1) ships with the driver, not with the CUDA toolkit, so the
// library is opened with dlopen when the program runs and nothing of NVIDIA's is needed
// to build it. Asking NVML directly is the fast path: no process to start, no text to
// parse. When the library is absent, too old, or fails, the CUDA probe falls back to
// nvidia-smi.
//
// Only the handful of NVML entry points and structures used here are declared, with the
// layouts of NVIDIA's public nvml.h (they are part of the driver's stable C ABI). A call
// into a driver that has lost its GPU can block in the kernel; the query therefore runs
// on a thread of its own and is abandoned, not waited on, after its time limit (the
// thread and the library stay behind, which is the price of never hanging the caller).
// The library is never closed: NVML starts threads of its own, and unloading a driver
// library under them is not safe; the loader's reference count keeps one copy.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_OS_LINUX

#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// How the CUDA probe uses NVML.
struct nvml_options {
    /// The library to open: a bare soname is searched by the dynamic loader the way every
    /// NVIDIA tool finds it; a path with '/' must be absolute.
    std::string library = "libnvidia-ml.so.1";
    /// The whole query (init, every device, shutdown) must finish within this.
    std::chrono::milliseconds timeout{10'000};
};

enum class nvml_status : std::uint8_t {
    ok,
    library_not_found, ///< no NVML on this machine: not worth a warning
    unsafe_search_path, ///< the loader would search a relative folder (LD_LIBRARY_PATH); NVML not loaded
    missing_symbol,    ///< a driver too old for the entry points used here
    init_failed,       ///< nvmlInit refused (driver not loaded, version mismatch, …)
    timed_out,         ///< the query did not finish in time and was abandoned
    cancelled,         ///< the detection was stopped (query_nvml's `stop`) before it finished
};

/// What one NVML query found.
struct nvml_result {
    nvml_status status = nvml_status::library_not_found;
    std::vector<accelerator_profile> devices;
    /// Per-device problems (a device NVML could not open, a value out of range).
    std::vector<warning> warnings;
    std::string detail; ///< why it failed, for people
    /// Some GPU runs in MIG mode: its instances are listed by `nvidia-smi -L`, which the
    /// CUDA probe then uses instead.
    bool mig_enabled = false;
};

namespace detail::nvml {

// The subset of nvml.h used here. Return codes are an int-sized enum in the header.
using return_t = int;
using device_t = struct opaque_device*;
inline constexpr return_t success = 0;
inline constexpr return_t error_not_supported = 3;
inline constexpr unsigned temperature_gpu = 0;
inline constexpr unsigned clock_mem = 2;

struct pci_info { // nvmlPciInfo_t
    char bus_id_legacy[16];
    unsigned domain;
    unsigned bus;
    unsigned device;
    unsigned pci_device_id; // device id << 16 | vendor id
    unsigned pci_subsystem_id;
    char bus_id[32];
};
struct memory { // nvmlMemory_t
    unsigned long long total, free, used;
};
struct memory_v2 { // nvmlMemory_v2_t
    unsigned version;
    unsigned long long total, reserved, free, used;
};
/// nvmlMemory_v2, as nvml.h makes it: the structure's size (40 bytes on 64-bit targets,
/// 0x02000028), and its version in the top byte.
inline constexpr unsigned memory_v2_version = static_cast<unsigned>(sizeof(memory_v2)) | (2u << 24);
struct utilization { // nvmlUtilization_t
    unsigned gpu, memory;
};

struct api {
    return_t (*init)() = nullptr;
    return_t (*shutdown)() = nullptr;
    const char* (*error_string)(return_t) = nullptr;
    return_t (*system_driver_version)(char*, unsigned) = nullptr;
    return_t (*device_count)(unsigned*) = nullptr;
    return_t (*device_by_index)(unsigned, device_t*) = nullptr;
    return_t (*name)(device_t, char*, unsigned) = nullptr;
    return_t (*uuid)(device_t, char*, unsigned) = nullptr;
    return_t (*pci)(device_t, pci_info*) = nullptr;
    return_t (*memory_info)(device_t, memory*) = nullptr;
    return_t (*memory_info_v2)(device_t, memory_v2*) = nullptr;
    return_t (*compute_capability)(device_t, int*, int*) = nullptr;
    return_t (*power_limit)(device_t, unsigned*) = nullptr;
    return_t (*power_usage)(device_t, unsigned*) = nullptr;
    return_t (*temperature)(device_t, unsigned, unsigned*) = nullptr;
    return_t (*utilization_rates)(device_t, utilization*) = nullptr;
    return_t (*max_clock)(device_t, unsigned, unsigned*) = nullptr;
    return_t (*pcie_gen_current)(device_t, unsigned*) = nullptr;
    return_t (*pcie_gen_max)(device_t, unsigned*) = nullptr;
    return_t (*pcie_width_current)(device_t, unsigned*) = nullptr;
    return_t (*pcie_width_max)(device_t, unsigned*) = nullptr;
    return_t (*mig_mode)(device_t, unsigned*, unsigned*) = nullptr;
};

// dlsym returns void*; converting it to a function pointer is what POSIX guarantees works.
template <class F>
bool bind(void* lib, F& slot, const char* first, const char* second = nullptr) {
    void* p = ::dlsym(lib, first);
    if (!p && second) p = ::dlsym(lib, second);
    if (!p) return false;
    static_assert(sizeof(F) == sizeof(void*));
    std::memcpy(&slot, &p, sizeof p);
    return true;
}

// Resolves every entry point; returns the first one missing, or nullptr.
inline const char* bind_all(void* lib, api& a) {
    // Versioned names first: the unversioned ones are the pre-2013 ABI.
    if (!bind(lib, a.init, "nvmlInit_v2", "nvmlInit")) return "nvmlInit_v2";
    if (!bind(lib, a.shutdown, "nvmlShutdown")) return "nvmlShutdown";
    if (!bind(lib, a.error_string, "nvmlErrorString")) return "nvmlErrorString";
    if (!bind(lib, a.system_driver_version, "nvmlSystemGetDriverVersion")) return "nvmlSystemGetDriverVersion";
    if (!bind(lib, a.device_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")) return "nvmlDeviceGetCount_v2";
    if (!bind(lib, a.device_by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"))
        return "nvmlDeviceGetHandleByIndex_v2";
    if (!bind(lib, a.name, "nvmlDeviceGetName")) return "nvmlDeviceGetName";
    if (!bind(lib, a.uuid, "nvmlDeviceGetUUID")) return "nvmlDeviceGetUUID";
    if (!bind(lib, a.pci, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2")) return "nvmlDeviceGetPciInfo_v3";
    if (!bind(lib, a.memory_info, "nvmlDeviceGetMemoryInfo")) return "nvmlDeviceGetMemoryInfo";
    // The rest are optional: an old driver simply leaves those values unknown.
    bind(lib, a.memory_info_v2, "nvmlDeviceGetMemoryInfo_v2");
    bind(lib, a.compute_capability, "nvmlDeviceGetCudaComputeCapability");
    bind(lib, a.power_limit, "nvmlDeviceGetPowerManagementLimit");
    bind(lib, a.power_usage, "nvmlDeviceGetPowerUsage");
    bind(lib, a.temperature, "nvmlDeviceGetTemperature");
    bind(lib, a.utilization_rates, "nvmlDeviceGetUtilizationRates");
    bind(lib, a.max_clock, "nvmlDeviceGetMaxClockInfo");
    bind(lib, a.pcie_gen_current, "nvmlDeviceGetCurrPcieLinkGeneration");
    bind(lib, a.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind(lib, a.pcie_width_current, "nvmlDeviceGetCurrPcieLinkWidth");
    bind(lib, a.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    bind(lib, a.mig_mode, "nvmlDeviceGetMigMode");
    return nullptr;
}

// A C string from a fixed buffer NVML filled (terminated by us, whatever it did).
template <std::size_t N>
std::string_view terminated(char (&buf)[N]) noexcept {
    buf[N - 1] = '\0';
    return std::string_view(buf, std::strlen(buf));
}

inline std::string describe(const api& a, return_t rc) {
    const char* s = a.error_string ? a.error_string(rc) : nullptr;
    return s ? std::string(s) + " (" + std::to_string(rc) + ")" : "NVML error " + std::to_string(rc);
}

// Reads one device. Values NVML does not support stay unknown.
inline accelerator_profile read_device(const api& a, unsigned index, device_t dev, std::string_view driver,
                                       std::vector<warning>& warnings) {
    using detail::parsing::printable;
    accelerator_profile p = nvidia::blank_gpu(index);
    auto note = [&](std::string msg) {
        warnings.push_back(warning{warning_kind::value_out_of_range, backend_id::cuda, "NVML",
                                   "GPU " + std::to_string(index) + ": " + std::move(msg), 0});
    };
    bool changed = false;
    {
        char buf[96] = {};
        if (a.name(dev, buf, sizeof buf) == success) p.name.assign(printable(terminated(buf), changed));
    }
    {
        char buf[96] = {};
        if (a.uuid(dev, buf, sizeof buf) == success) p.uuid.assign(printable(terminated(buf), changed));
    }
    p.driver_version.assign(driver);
    pci_info pci{};
    if (a.pci(dev, &pci) == success) {
        // nvmlDeviceGetPciInfo_v2 (drivers before v3) fills the older layout: the address in
        // the 16-byte field at the start, nothing in the 32-byte one.
        auto addr = parse_pci_address(terminated(pci.bus_id));
        if (!addr) addr = parse_pci_address(terminated(pci.bus_id_legacy));
        if (addr) p.pci = *addr;
        if ((pci.pci_device_id & 0xffffu) == 0x10deu) p.pci_device_id = static_cast<std::uint16_t>(pci.pci_device_id >> 16);
    }
    // The first call counts the memory the driver keeps for itself (616 MiB of an H200 on
    // driver 580) as used; the second (newer drivers) reports it apart, and its used is
    // what nvidia-smi prints as Used, so both paths of the probe agree.
    memory m{};
    memory_v2 m2{};
    m2.version = memory_v2_version;
    bool have_memory = false;
    if (a.memory_info_v2 && a.memory_info_v2(dev, &m2) == success && m2.reserved <= m2.total) {
        m = {m2.total, m2.free, m2.used};
        have_memory = true;
    } else {
        have_memory = a.memory_info(dev, &m) == success;
    }
    if (have_memory) {
        constexpr unsigned long long max_bytes = 16ull << 40; // 16 TiB: more than any device has
        if (m.total > max_bytes || m.used > m.total || m.free > m.total) note("memory figures out of range, ignored");
        else {
            p.memory_bytes = {m.total, origin::tool};
            p.memory_used_bytes = {m.used, origin::tool};
            p.memory_free_bytes = {m.free, origin::tool};
        }
    }
    int major = 0, minor = 0;
    if (a.compute_capability && a.compute_capability(dev, &major, &minor) == success && major > 0 && major < 100 &&
        minor >= 0 && minor < 100)
        p.arch.assign(std::to_string(major) + "." + std::to_string(minor));
    unsigned v = 0;
    if (a.power_limit && a.power_limit(dev, &v) == success && v <= 100'000'000u)
        p.power_limit_watts = {v / 1000.0, origin::tool};
    if (a.power_usage && a.power_usage(dev, &v) == success && v <= 100'000'000u)
        p.power_draw_watts = {v / 1000.0, origin::tool};
    if (a.temperature && a.temperature(dev, temperature_gpu, &v) == success && v <= 500u)
        p.temperature_c = {static_cast<double>(v), origin::tool};
    utilization u{};
    if (a.utilization_rates && a.utilization_rates(dev, &u) == success && u.gpu <= 100u)
        p.utilization_percent = {static_cast<double>(u.gpu), origin::tool};
    auto link = [&](auto current_gen, auto current_width, sourced<pcie_link>& out) {
        unsigned gen = 0, width = 0;
        const bool g = current_gen && current_gen(dev, &gen) == success && gen > 0 && gen <= 16;
        const bool w = current_width && current_width(dev, &width) == success && width > 0 && width <= 64;
        if (!g && !w) return;
        pcie_link l;
        if (g) l.generation = static_cast<std::uint8_t>(gen);
        if (w) l.width = static_cast<std::uint8_t>(width);
        out = {l, origin::tool};
    };
    link(a.pcie_gen_current, a.pcie_width_current, p.pcie_current);
    link(a.pcie_gen_max, a.pcie_width_max, p.pcie_max);
    nvidia::match_catalogue(p);
    return p;
}

// Everything one query does, on whatever thread runs it.
inline nvml_result query(void* lib) {
    nvml_result r;
    api a;
    if (const char* missing = bind_all(lib, a)) {
        r.status = nvml_status::missing_symbol;
        r.detail = std::string("the NVML library has no ") + missing;
        return r;
    }
    if (const return_t rc = a.init(); rc != success) {
        r.status = nvml_status::init_failed;
        r.detail = "nvmlInit failed: " + describe(a, rc);
        return r;
    }
    char driver_buf[96] = {};
    std::string driver;
    bool changed = false;
    if (a.system_driver_version(driver_buf, sizeof driver_buf) == success)
        driver = detail::parsing::printable(terminated(driver_buf), changed);
    unsigned count = 0;
    if (const return_t rc = a.device_count(&count); rc != success) {
        r.status = nvml_status::init_failed;
        r.detail = "nvmlDeviceGetCount failed: " + describe(a, rc);
        a.shutdown();
        return r;
    }
    if (count > detail::parsing::max_rows) count = static_cast<unsigned>(detail::parsing::max_rows);
    for (unsigned i = 0; i < count; ++i) {
        device_t dev = nullptr;
        if (const return_t rc = a.device_by_index(i, &dev); rc != success) {
            // A GPU the driver lists but cannot open (lost, needs reset, no permission).
            accelerator_profile p = nvidia::blank_gpu(i);
            p.available = false;
            r.devices.push_back(p);
            r.warnings.push_back(warning{warning_kind::probe_failed, backend_id::cuda, "NVML",
                                         "GPU " + std::to_string(i) + " cannot be opened: " + describe(a, rc), 0});
            continue;
        }
        r.devices.push_back(read_device(a, i, dev, driver, r.warnings));
        unsigned current = 0, pending = 0;
        if (a.mig_mode && a.mig_mode(dev, &current, &pending) == success && current == 1) r.mig_enabled = true;
    }
    a.shutdown();
    r.status = nvml_status::ok;
    return r;
}

// A search list ld.so reads (LD_LIBRARY_PATH: split at ':' and ';') names only absolute
// folders: an empty entry is the current directory, and a relative one is found from it.
// $ORIGIN (the program's folder) is absolute once ld.so expands it.
inline bool absolute_search_list(std::string_view s) noexcept {
    for (;;) {
        const auto end = s.find_first_of(":;");
        const auto entry = s.substr(0, end);
        const auto origin = [&](std::string_view token) {
            return entry.starts_with(token) && (entry.size() == token.size() || entry[token.size()] == '/');
        };
        if (entry.empty() || (entry.front() != '/' && !origin("$ORIGIN") && !origin("${ORIGIN}"))) return false;
        if (end == std::string_view::npos) return true;
        s.remove_prefix(end + 1);
    }
}

// Whether a bare soname can only be found in absolute folders. ld.so read LD_LIBRARY_PATH
// when the program started (a later unsetenv does not change where it looks), so its own
// list for the program is asked (glibc's dlinfo); the variable as it is now must be safe too.
inline bool loader_path_is_safe() noexcept {
    if (const char* v = std::getenv("LD_LIBRARY_PATH"); v && !absolute_search_list(v)) return false;
#if defined(__GLIBC__) // RTLD_DI_SERINFO (an enumerator, not a macro): glibc only
    void* self = ::dlopen(nullptr, RTLD_LAZY);
    if (!self) return true;
    bool safe = true;
    Dl_serinfo size{};
    if (::dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size >= sizeof(Dl_serinfo)) {
        const std::unique_ptr<std::max_align_t[]> buffer(
            new std::max_align_t[(size.dls_size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t)]);
        auto* info = reinterpret_cast<Dl_serinfo*>(buffer.get());
        info->dls_size = size.dls_size;
        info->dls_cnt = size.dls_cnt;
        if (::dlinfo(self, RTLD_DI_SERINFO, info) == 0)
            for (unsigned i = 0; i < info->dls_cnt; ++i) {
                const char* dir = info->dls_serpath[i].dls_name;
                if (!dir || dir[0] != '/') safe = false;
            }
    }
    ::dlclose(self);
    return safe;
#else
    return true;
#endif
}

} // namespace detail::nvml

/// Opens NVML and reads every GPU it lists. Never throws (std::bad_alloc aside) and never
/// blocks past `options.timeout`.
/// `stop`: a detection's stop (async.hpp: its handle cancelled or destroyed), which leaves
/// the query within 100 ms, as a timeout does, instead of waiting for the driver.
inline nvml_result query_nvml(const nvml_options& options = {}, const std::stop_token& stop = {}) {
    using namespace detail::nvml;
    nvml_result r;
    const bool bare = options.library.find('/') == std::string::npos;
    if (!bare && options.library.front() != '/') {
        r.status = nvml_status::unsafe_search_path;
        r.detail = "NVML library path is relative: " + options.library;
        return r;
    }
    if (stop.stop_requested()) {
        r.status = nvml_status::cancelled;
        r.detail = "NVML not queried: the detection was cancelled";
        return r;
    }
    if (bare && !loader_path_is_safe()) {
        r.status = nvml_status::unsafe_search_path;
        r.detail = "the library search path (LD_LIBRARY_PATH) has a relative or empty entry; NVML not loaded";
        return r;
    }
    void* lib = ::dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        r.status = nvml_status::library_not_found;
        const char* e = ::dlerror();
        r.detail = e ? e : "dlopen failed";
        return r;
    }

    // The query runs on its own thread so that a wedged driver cannot hold the caller.
    struct shared {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        nvml_result result;
    };
    auto state = std::make_shared<shared>();
    auto work = [state, lib] {
        nvml_result q;
#if AI_HWACCEL_EXCEPTIONS
        try {
            q = query(lib);
        } catch (...) { // std::bad_alloc: report it rather than terminate
            q.status = nvml_status::init_failed;
            q.detail = "out of memory while reading NVML";
        }
#else
        q = query(lib);
#endif
        {
            std::lock_guard<std::mutex> lock(state->m);
            state->result = std::move(q);
            state->done = true;
        }
        state->cv.notify_one();
    };
#if AI_HWACCEL_EXCEPTIONS
    try {
        std::thread(work).detach();
    } catch (...) { // no thread to be had: run it here
        return query(lib);
    }
#else
    std::thread(work).detach();
#endif
    // Waited on in slices of at most 100 ms, to see a stop; abandoned at the deadline or
    // the stop (the library stays loaded for the thread still inside it).
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    std::unique_lock<std::mutex> lock(state->m);
    while (!state->done) {
        const auto now = std::chrono::steady_clock::now();
        if (stop.stop_requested()) {
            r.status = nvml_status::cancelled;
            r.detail = "NVML abandoned: the detection was cancelled";
            return r;
        }
        if (now >= deadline) {
            r.status = nvml_status::timed_out;
            r.detail = "NVML did not answer within " + std::to_string(options.timeout.count()) + " ms";
            return r;
        }
        state->cv.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(100)));
    }
    return std::move(state->result);
}

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA && AI_HWACCEL_OS_LINUX
