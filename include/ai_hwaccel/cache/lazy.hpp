// ai-hwaccel cache: a registry that probes a device family only when first asked.
//
//     ai_hwaccel::lazy_registry lazy{ai_hwaccel::host_system{}};
//     auto gpus = lazy.devices(ai_hwaccel::family::gpu);   // runs the GPU backends, once
//     auto npus = lazy.devices(ai_hwaccel::family::npu);   // now the NPU backends, once
//
// A program that only ever wants GPUs should not pay for starting the TPU, Gaudi or NPU
// tools. `devices(f)` runs the probes of the backends whose device kinds belong to family
// `f` (the host probes for family::cpu) the first time any caller asks for it, and serves
// later calls from what they found. Each backend runs at most once: the Apple backend,
// which finds a GPU and a Neural Engine, runs for whichever of the two families is asked
// first, and its NPU is then simply there. Calls from several threads are safe; two callers
// asking for the same family wait for one run, and callers asking for different families
// probe concurrently.
//
// The probes run through `detector` (detect/detect.hpp) restricted to the family's
// backends, so timing, merging of devices seen by several backends, *_VISIBLE_DEVICES and
// warnings work as in a full detection, within each family's run. The `detector` given at
// construction says which backends may run at all and how (parallel, visibility).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// Whether backend `b` finds devices of family `f` (from the backend table's device kinds).
constexpr bool backend_serves_family(backend_id b, family f) noexcept {
    for (const device_kind k : backend_table[static_cast<std::size_t>(b)].kinds)
        if (family_of(k) == f) return true;
    return false;
}

/// `S` is the system probed (host_system for the live machine); `Probes` a std::tuple of
/// probe types (this build's backends unless a test or a program gives its own).
template <system_view S, class Probes = builtin_probes>
class lazy_registry {
public:
    explicit lazy_registry(S sys, detector base = detector::all(), Probes probes = Probes{})
        : sys_(std::move(sys)), base_(base), probes_(std::move(probes)) {}

    lazy_registry(const lazy_registry&) = delete;
    lazy_registry& operator=(const lazy_registry&) = delete;

    /// The available devices of family `f`, probing that family first if no one has yet.
    /// A concrete vector (a copy): it stays valid whatever other threads probe meanwhile.
    std::vector<accelerator_profile> devices(family f) {
        ensure(f);
        std::lock_guard lock(mutex_);
        std::vector<accelerator_profile> out;
        for (const auto& p : profiles_)
            if (p.available && p.device_family() == f) out.push_back(p);
        return out;
    }

    /// Whether family `f` has been probed (or is being probed now).
    bool probed(family f) const {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < backend_count; ++i) {
            const auto b = static_cast<backend_id>(i);
            if (base_.requested(b) && backend_serves_family(b, f) && backend_state_[i] == state::idle) return false;
        }
        if (f == family::cpu && base_.host() && host_state_ == state::idle) return false;
        return true;
    }

    /// Probes every family not probed yet.
    void probe_all() {
        for (const auto& fi : family_table) ensure(fi.id);
    }

    /// What has been found so far, as a registry (a copy). Families never asked for are
    /// absent: call probe_all() first for a complete one.
    accelerator_registry snapshot() const {
        std::lock_guard lock(mutex_);
        return accelerator_registry(profiles_, warnings_, host_, io_);
    }

    /// Per-backend timings of every run so far, in the order they finished.
    std::vector<probe_timing> timings() const {
        std::lock_guard lock(mutex_);
        return timings_;
    }

private:
    enum class state : std::uint8_t { idle, running, done };

    // Claims the family's unprobed backends, runs them, and waits for any of its backends
    // that another thread is running; claims again what such a run gave back unfinished
    // (it threw), so that no caller returns with a backend of its family unprobed.
    void ensure(family f) {
        std::unique_lock lock(mutex_);
        for (;;) {
            detector mine = base_;
            bool any = false;
            std::array<bool, backend_count> claimed{};
            for (std::size_t i = 0; i < backend_count; ++i) {
                const auto b = static_cast<backend_id>(i);
                if (!base_.requested(b)) continue;
                if (backend_serves_family(b, f) && backend_state_[i] == state::idle) {
                    backend_state_[i] = state::running;
                    claimed[i] = true;
                    any = true;
                } else {
                    mine.without(b);
                }
            }
            const bool host = f == family::cpu && base_.host() && host_state_ == state::idle;
            if (host) {
                host_state_ = state::running;
                any = true;
            }
            mine.with_host(host);
            if (!any) {
                if (!busy(f)) return;
                changed_.wait(lock);
                continue;
            }
            lock.unlock();
#if AI_HWACCEL_EXCEPTIONS
            try {
                timed_detection found = run(mine);
                lock.lock();
                absorb(std::move(found), host); // all or nothing
            } catch (...) {
                // Out of memory: give the claim back so that this or a later call can try again.
                if (!lock.owns_lock()) lock.lock();
                release(claimed, host, state::idle);
                throw;
            }
#else
            timed_detection found = run(mine);
            lock.lock();
            absorb(std::move(found), host);
#endif
            release(claimed, host, state::done);
        }
    }

    timed_detection run(const detector& d) const {
        return std::apply([&](const auto&... p) { return d.run_timed_with(sys_, p...); }, probes_);
    }

    void release(const std::array<bool, backend_count>& claimed, bool host, state to) {
        for (std::size_t i = 0; i < backend_count; ++i)
            if (claimed[i]) backend_state_[i] = to;
        if (host) host_state_ = to;
        changed_.notify_all();
    }

    bool busy(family f) const {
        for (std::size_t i = 0; i < backend_count; ++i)
            if (backend_state_[i] == state::running && backend_serves_family(static_cast<backend_id>(i), f)) return true;
        return f == family::cpu && host_state_ == state::running;
    }

    // Adds a run's findings. Builds the new state aside and then swaps it in: if an
    // allocation fails, nothing has changed (a retry would otherwise add profiles twice).
    void absorb(timed_detection found, bool host) {
        auto& reg = found.registry;
        auto profiles = profiles_;
        auto warnings = warnings_;
        auto timings = timings_;
        host_info machine = host ? reg.host() : host_;
        system_io io = host ? reg.system() : io_;
        profiles.insert(profiles.end(), reg.all().begin(), reg.all().end());
        for (const auto& w : reg.warnings())
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
        // The host run carries the machine's description; the others only their links.
        const auto& links = host ? io_.interconnects : reg.system().interconnects;
        io.interconnects.insert(io.interconnects.end(), links.begin(), links.end());
        timings.insert(timings.end(), std::make_move_iterator(found.timings.begin()),
                       std::make_move_iterator(found.timings.end()));
        profiles_.swap(profiles);
        warnings_.swap(warnings);
        timings_.swap(timings);
        host_ = std::move(machine);
        io_ = std::move(io);
    }

    S sys_;
    detector base_;
    Probes probes_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::array<state, backend_count> backend_state_{};
    state host_state_ = state::idle;
    std::vector<accelerator_profile> profiles_;
    std::vector<warning> warnings_;
    host_info host_;
    system_io io_;
    std::vector<probe_timing> timings_;
};

template <system_view S>
lazy_registry(S) -> lazy_registry<S, builtin_probes>;
template <system_view S>
lazy_registry(S, detector) -> lazy_registry<S, builtin_probes>;

AI_HWACCEL_NAMESPACE_END
