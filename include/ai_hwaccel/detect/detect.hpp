// ai-hwaccel detect: detect(), and the builder that chooses what it runs.
//
//     auto registry = ai_hwaccel::detect();                        // everything compiled in
//     auto timed = ai_hwaccel::detector::none()
//                      .with(ai_hwaccel::backend_id::cuda)
//                      .with_host()
//                      .run_timed(ai_hwaccel::host_system{});      // registry + timings
//
// The orchestrator runs the enabled probes in parallel (on as many threads as the machine
// has, at least four; detection takes about as long as the slowest probe, not the sum), times each, concatenates what they
// found (the host's CPU first, then backends in table order), merges devices seen by
// several backends (detect/merge.hpp), applies the *_VISIBLE_DEVICES variables, and
// collects every warning. Nothing here throws for anything the machine does; with
// exceptions enabled, even a probe that runs out of memory becomes a `probe_failed`
// warning.
//
// Backends compiled out (AI_HWACCEL_BACKEND_<NAME>=0) have no probe here at all; asking
// for one at run time gives a `not_compiled` warning, never "not present".
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/environment.hpp"
#include "ai_hwaccel/detect/fabric.hpp"
#include "ai_hwaccel/detect/merge.hpp"
// Each backend header is empty unless its switch is on.
#include "ai_hwaccel/detect/amd.hpp"
#include "ai_hwaccel/detect/apple.hpp"
#include "ai_hwaccel/detect/cuda.hpp"
#include "ai_hwaccel/detect/intel_gpu.hpp"
#include "ai_hwaccel/detect/vulkan.hpp"
#include "ai_hwaccel/detect/tpu.hpp"
#include "ai_hwaccel/detect/gaudi.hpp"
#include "ai_hwaccel/detect/npu.hpp"
#include "ai_hwaccel/detect/neuron.hpp"
#include "ai_hwaccel/detect/qualcomm.hpp"
#include "ai_hwaccel/detect/cerebras.hpp"
#include "ai_hwaccel/detect/graphcore.hpp"
#include "ai_hwaccel/detect/groq.hpp"
#include "ai_hwaccel/detect/windows.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/storage.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
// One alias per backend: its probe, or nothing when the backend is switched off.
#if AI_HWACCEL_BACKEND_CUDA
using cuda_probes = std::tuple<cuda_probe>;
#else
using cuda_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_ROCM
using rocm_probes = std::tuple<rocm_probe>;
#else
using rocm_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
using intel_gpu_probes = std::tuple<intel_gpu_probe>;
#else
using intel_gpu_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_APPLE
using apple_probes = std::tuple<apple_probe>;
#else
using apple_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_VULKAN
using vulkan_probes = std::tuple<vulkan_probe>;
#else
using vulkan_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_TPU
using tpu_probes = std::tuple<tpu_probe>;
#else
using tpu_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_GAUDI
using gaudi_probes = std::tuple<gaudi_probe>;
#else
using gaudi_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_NEURON
using neuron_probes = std::tuple<neuron_probe>;
#else
using neuron_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_INTEL_NPU
using intel_npu_probes = std::tuple<intel_npu_probe>;
#else
using intel_npu_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_AMD_XDNA
using amd_xdna_probes = std::tuple<amd_xdna_probe>;
#else
using amd_xdna_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_QUALCOMM
using qualcomm_probes = std::tuple<qualcomm_probe>;
#else
using qualcomm_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_CEREBRAS
using cerebras_probes = std::tuple<cerebras_probe>;
#else
using cerebras_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_GRAPHCORE
using graphcore_probes = std::tuple<graphcore_probe>;
#else
using graphcore_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_GROQ
using groq_probes = std::tuple<groq_probe>;
#else
using groq_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_SAMSUNG_NPU
using samsung_npu_probes = std::tuple<samsung_npu_probe>;
#else
using samsung_npu_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_MEDIATEK_APU
using mediatek_apu_probes = std::tuple<mediatek_apu_probe>;
#else
using mediatek_apu_probes = std::tuple<>;
#endif
#if AI_HWACCEL_BACKEND_WINDOWS
using windows_probes = std::tuple<windows_probe>;
#else
using windows_probes = std::tuple<>;
#endif
} // namespace detail

/// The probes this build runs for its backends, in backend-table order (vendor backends
/// before Vulkan, so their view leads when devices are merged). A backend switched off
/// contributes none: its code is not even compiled.
using builtin_probes = decltype(std::tuple_cat(
    std::declval<detail::cuda_probes>(), std::declval<detail::rocm_probes>(),
    std::declval<detail::intel_gpu_probes>(), std::declval<detail::apple_probes>(),
    std::declval<detail::vulkan_probes>(), std::declval<detail::tpu_probes>(), std::declval<detail::gaudi_probes>(),
    std::declval<detail::neuron_probes>(), std::declval<detail::intel_npu_probes>(),
    std::declval<detail::amd_xdna_probes>(), std::declval<detail::qualcomm_probes>(),
    std::declval<detail::cerebras_probes>(), std::declval<detail::graphcore_probes>(),
    std::declval<detail::groq_probes>(), std::declval<detail::samsung_npu_probes>(),
    std::declval<detail::mediatek_apu_probes>(), std::declval<detail::windows_probes>()));

/// What became of one probe in a detection.
enum class probe_state : std::uint8_t {
    ran,          ///< it ran (its warnings say how well)
    not_compiled, ///< requested, but this build does not contain the backend
    failed,       ///< stopped on an internal error (see the probe_failed warning)
};

constexpr std::string_view to_string(probe_state s) noexcept {
    switch (s) {
    case probe_state::ran: return "ran";
    case probe_state::not_compiled: return "not_compiled";
    case probe_state::failed: return "failed";
    }
    return "failed";
}

struct probe_timing {
    std::string name; ///< the backend's name, or "host" for the machine's own probes
    std::optional<backend_id> backend;
    probe_state state = probe_state::ran;
    std::chrono::microseconds elapsed{0};
    std::size_t devices = 0;
    std::size_t warnings = 0;
};

/// A registry and how it was obtained.
struct timed_detection {
    accelerator_registry registry;
    std::vector<probe_timing> timings;
    std::chrono::microseconds elapsed{0}; ///< wall time of the whole detection
};

/// Everything the host probes find: the CPU's profile, the host, the system around it.
struct machine_output {
    host_info host;
    accelerator_profile cpu;
    system_io io;
    std::vector<warning> warnings;
};

#if AI_HWACCEL_BACKEND_APPLE
namespace detail {
/// macOS has no /proc. Where the host probe could read neither /proc/cpuinfo nor
/// /proc/meminfo and sysctl answers (on a Mac, or replayed from a captured one), the CPU's
/// name, maker, packages, cores and threads and the memory are sysctl's, and the two files' read
/// warnings go: a Mac has no such files to miss. Elsewhere (a live Linux host, a tree
/// without a sysctl capture) nothing changes.
template <system_view S>
void complete_host_from_sysctl(const S& sys, machine_output& m) {
    auto proc_read_error = [](const warning& w) {
        return w.kind == warning_kind::read_error && !w.backend &&
               (w.subject == "/proc/cpuinfo"sv || w.subject == "/proc/meminfo"sv);
    };
    if (std::ranges::count_if(m.warnings, proc_read_error) != 2 || !detail::apple::may_run_tools(sys)) return;
    const tool_request request = apple_sysctl_request();
    const tool_result r = sys.run(request);
    if (tool_missing(r, m.warnings)) return;
    // Warnings as the Apple probe words them, so that a run both make is reported once.
    std::vector<warning> found;
    if (report_tool_result(request, r, backend_id::apple, found)) {
        const auto parsed = parse_sysctl(r.out);
        detail::apple::problems_to_warnings(parsed.problems, "sysctl", found);
        const host_info h = apple_host(parsed.machine);
        if (h.memory.total_bytes || !h.cpu.model.empty()) {
            std::erase_if(m.warnings, proc_read_error);
            auto& cpu = m.host.cpu;
            cpu.model = h.cpu.model;
            cpu.maker = h.cpu.maker;
            cpu.arch = h.cpu.arch;
            cpu.features.bits |= h.cpu.features.bits;
            if (cpu.sockets == 0) cpu.sockets = h.cpu.sockets;
            if (cpu.cores == 0) cpu.cores = h.cpu.cores;
            if (cpu.threads == 0) cpu.threads = h.cpu.threads;
            m.host.memory.total_bytes = h.memory.total_bytes;
            m.cpu.maker = cpu.maker;
            if (!cpu.model.empty()) m.cpu.name = std::string_view(cpu.model);
            m.cpu.memory_bytes = h.memory.total_bytes;
            if (cpu.cores != 0) m.cpu.compute_units = {cpu.cores, origin::tool};
        }
    }
    m.warnings.insert(m.warnings.end(), found.begin(), found.end());
}
} // namespace detail
#endif

namespace detail {
// probe_machine, into an output the caller has (a detection's slot for the host).
template <system_view S>
void probe_machine_into(const S& sys, machine_output& m) {
    std::tie(m.host, m.cpu) = probe_host(sys, m.warnings);
#if AI_HWACCEL_BACKEND_APPLE
    complete_host_from_sysctl(sys, m);
#endif
    m.io.pci_devices = probe_pci(sys, m.warnings);
    m.io.interconnects = probe_fabric(sys, m.warnings); // InfiniBand / RoCE ports
    m.io.storage = probe_storage(sys, m.warnings);
    m.io.environment = probe_environment(sys, m.warnings);
}
} // namespace detail

/// The probes of the machine itself: CPU, memory and its limits, NUMA nodes (all in
/// probe_host; sysctl's view where a Mac has no /proc), PCI functions, storage, and the
/// runtime environment.
template <system_view S>
machine_output probe_machine(const S& sys) {
    machine_output m;
    detail::probe_machine_into(sys, m);
    return m;
}

/// Chooses what a detection runs. `all()` starts from every backend this build contains
/// plus the host probes; `none()` from nothing at all.
class detector {
public:
    static detector all() noexcept {
        detector d;
        d.requested_ = compiled_backend_mask; // backend_table's `compiled`, bit by bit
        d.host_ = true;
        return d;
    }
    static detector none() noexcept { return detector{}; }

    detector& with(backend_id b) noexcept {
        requested_ |= bit(b);
        return *this;
    }
    detector& without(backend_id b) noexcept {
        requested_ &= ~bit(b);
        return *this;
    }
    /// Adds (or removes) the host probes: CPU, memory, NUMA, PCI, network fabric (InfiniBand,
    /// RoCE), storage, environment.
    detector& with_host(bool on = true) noexcept {
        host_ = on;
        return *this;
    }
    /// Runs probes one after another instead of in parallel (for debugging and for
    /// callers that must not create threads).
    detector& parallel(bool on) noexcept {
        parallel_ = on;
        return *this;
    }
    /// Whether *_VISIBLE_DEVICES variables mark hidden devices unavailable (default on).
    detector& honour_visibility(bool on) noexcept {
        visibility_ = on;
        return *this;
    }

    bool requested(backend_id b) const noexcept { return (requested_ & bit(b)) != 0; }
    bool host() const noexcept { return host_; }
    std::uint32_t mask() const noexcept { return requested_; }

    /// Detects through `sys` with this build's probes.
    template <system_view S>
    timed_detection run_timed(const S& sys) const {
        return std::apply([&](const auto&... p) { return run_timed_with(sys, p...); }, builtin_probes{});
    }
    template <system_view S>
    accelerator_registry run(const S& sys) const {
        return run_timed(sys).registry;
    }

    /// Detects through `sys` with exactly the probes given (each runs if its backend is
    /// requested): how tests and programs with their own backends use the orchestrator.
    /// A view that can share scans among its probes (host_system::sharing) gets one for
    /// this detection, so that the PCI bus is walked once, not once by each probe.
    template <system_view S, class... Probes>
        requires(backend_probe<Probes, S> && ...)
    timed_detection run_timed_with(const S& sys, const Probes&... probes) const {
        if constexpr (sizeof...(Probes) > 0 && requires(detail::shared_scans& s) {
                          { sys.sharing(s) } -> std::same_as<S>;
                      }) {
            detail::shared_scans scans;
            return run_probes(sys.sharing(scans), probes...);
        } else {
            return run_probes(sys, probes...);
        }
    }

private:
    template <system_view S, class... Probes>
    timed_detection run_probes(const S& sys, const Probes&... probes) const {
        using clock = std::chrono::steady_clock;
        const auto start = clock::now();

        // One slot per possible task: the host first, then each probe in order. A slot
        // with a body is a task to run. The slots live on the stack (a few hundred bytes
        // each); the host's findings, which only its task fills, live beside them.
        constexpr std::size_t n = 1 + sizeof...(Probes);
        std::array<slot, n> slots;
        machine_output machine{}; // the host's findings; empty when not asked for
        if (host_) {
            slots[0].timing.name = "host";
            slots[0].sys = &sys;
            slots[0].machine = &machine;
            slots[0].body = [](const void* view, const void*, slot& s) { run_host(*static_cast<const S*>(view), s); };
        }
        std::size_t k = 1;
        (add_probe(sys, probes, slots[k++]), ...);

        // Without backend probes there is the host's task at most: nothing to run in parallel,
        // and no thread code in the program.
        constexpr bool may_run_parallel = sizeof...(Probes) > 0;
        const auto tasks =
            static_cast<std::size_t>(std::count_if(slots.begin(), slots.end(), [](const slot& s) { return s.used(); }));
        if (may_run_parallel && parallel_ && tasks > 1) run_parallel(slots, tasks);
        else
            for (auto& s : slots)
                if (s.used()) s.run();

        // Compiled-out backends that were asked for.
        std::vector<warning> warnings;
        std::vector<probe_timing> timings;
        for (std::size_t i = 0; i < backend_count; ++i) {
            const auto id = static_cast<backend_id>(i);
            if (!requested(id) || (compiled_backend_mask & bit(id)) != 0) continue;
            std::string message = "this build does not contain the ";
            message += detail::backend_displays[i];
            message += " backend (";
            message += detail::backend_macro_prefix;
            for (const char c : detail::backend_names[i]) message += detail::ascii_upper(c);
            message += "=0)";
            const std::string name(detail::backend_names[i]);
            warnings.push_back(warning{warning_kind::not_compiled, id, name, std::move(message), 0});
            timings.push_back(probe_timing{name, id, probe_state::not_compiled, {}, 0, 0});
        }

        std::vector<accelerator_profile> profiles;
        for (auto& s : slots) {
            if (!s.used()) continue;
            s.timing.devices = s.out.devices.size();
            s.timing.warnings = s.out.warnings.size();
            timings.push_back(std::move(s.timing));
            for (auto& w : s.out.warnings)
                if (std::ranges::find(warnings, w) == warnings.end()) warnings.push_back(std::move(w));
            for (auto& p : s.out.devices) profiles.push_back(std::move(p));
            for (auto& l : s.out.links) machine.io.interconnects.push_back(std::move(l)); // after the host's own
        }
        // The host's only device is the CPU, which is never merged: without backend probes
        // there is nothing to merge, and no merging code in the program.
        if constexpr (sizeof...(Probes) > 0) merge_duplicates(profiles);
        if (visibility_) apply_visibility(profiles, [&sys](std::string_view v) { return sys.env(v); }, warnings);

        // Built in place, not moved into a default-made one.
        return timed_detection{
            accelerator_registry(std::move(profiles), std::move(warnings), std::move(machine.host),
                                 std::move(machine.io)),
            std::move(timings), std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start)};
    }

    // One task of a detection: what it runs and what it found.
    struct slot {
        // The task: body(sys, probe, *this), or none when it was not requested.
        void (*body)(const void* sys, const void* probe, slot&) = nullptr;
        const void* sys = nullptr;
        const void* probe = nullptr;
        probe_timing timing{};
        probe_output out;
        machine_output* machine = nullptr; // the host's task's findings, less its CPU and warnings (in `out`)

        bool used() const noexcept { return body != nullptr; }
        void run() {
            using clock = std::chrono::steady_clock;
            const auto start = clock::now();
#if AI_HWACCEL_EXCEPTIONS
            try {
                body(sys, probe, *this);
            } catch (const std::exception& e) {
                fail(e.what());
            } catch (...) {
                fail("unknown exception");
            }
#else
            body(sys, probe, *this);
#endif
            timing.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
        }
        void fail(const char* what) {
            timing.state = probe_state::failed;
            out.warnings.push_back(warning{warning_kind::probe_failed, timing.backend, timing.name, what, 0});
        }
    };

    static constexpr std::uint32_t bit(backend_id b) noexcept {
        return std::uint32_t{1} << static_cast<unsigned>(b);
    }

    template <system_view S>
    static void run_host(const S& sys, slot& s) {
        machine_output& m = *s.machine;
        detail::probe_machine_into(sys, m);
        s.out.devices.push_back(std::move(m.cpu)); // run_probes takes the host and io from `machine`
        s.out.warnings = std::move(m.warnings);
    }

    template <system_view S, class P>
    void add_probe(const S& sys, const P& probe, slot& s) const {
        if (!requested(P::backend)) return;
        s.timing.name = std::string(descriptor_of<P>().name);
        s.timing.backend = P::backend;
        s.sys = &sys;
        s.probe = &probe;
        s.body = [](const void* view, const void* p, slot& t) {
            t.out = static_cast<const P*>(p)->probe(*static_cast<const S*>(view));
        };
    }

    // A few workers take the next probe until none is left: as many as the machine has
    // hardware threads, and at least four, since probes mostly wait on files and tools.
    // (A thread per probe costs more to start than most probes take on a small machine.)
    static void run_parallel(std::span<slot> slots, std::size_t tasks) {
        const std::size_t hardware = std::max(4u, std::thread::hardware_concurrency());
        const std::size_t workers = std::min(tasks, hardware);
        std::atomic<std::size_t> next{0};
        auto work = [&slots, &next] {
            for (std::size_t i = next.fetch_add(1); i < slots.size(); i = next.fetch_add(1))
                if (slots[i].used()) slots[i].run();
        };
        std::vector<std::thread> threads;
        threads.reserve(workers - 1);
        for (std::size_t w = 1; w < workers; ++w) {
#if AI_HWACCEL_EXCEPTIONS
            try {
                threads.emplace_back(work);
            } catch (...) {
                break; // no thread to be had: the workers there are (this one at least) do the rest
            }
#else
            threads.emplace_back(work);
#endif
        }
        work(); // the calling thread is a worker too
        for (auto& t : threads) t.join();
    }

    std::uint32_t requested_ = 0;
    bool host_ = false;
    bool parallel_ = true;
    bool visibility_ = true;
};

/// Detects through any system_view (a live host, a captured tree, a test double) with
/// everything this build contains.
template <system_view S>
accelerator_registry detect(const S& sys) {
    return detector::all().run(sys);
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// Detects the machine this process runs on.
inline accelerator_registry detect() { return detect(host_system{}); }
#endif

AI_HWACCEL_NAMESPACE_END
