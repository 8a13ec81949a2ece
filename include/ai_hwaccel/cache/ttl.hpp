// ai-hwaccel cache: a thread-safe, time-limited cache of one detection.
//
//     ai_hwaccel::ttl_cache cache(std::chrono::seconds(30));   // detects the live host
//     auto reg = cache.get();   // shared_ptr<const accelerator_registry>, never null
//
// `get()` returns the registry of the last detection while it is younger than the TTL and
// detects again once it is not. When several threads call `get()` on an empty or expired
// cache, exactly one of them detects and the others wait for its result: N callers cost one
// detection, not N. The registry is handed out as a `shared_ptr<const …>`, so a caller keeps
// a consistent snapshot however often the cache is refreshed behind it.
//
// What "detect" and "now" mean is injectable: any function returning a registry (a
// `detector` with chosen backends, a captured machine tree, a disk cache's
// `get_or_detect`, a test double) and any steady clock reading (tests step time by hand
// instead of sleeping).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/registry.hpp"

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
#include "ai_hwaccel/detect/detect.hpp"
#endif

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

AI_HWACCEL_NAMESPACE_BEGIN

class ttl_cache {
public:
    using clock = std::chrono::steady_clock;
    using detect_function = std::function<accelerator_registry()>;
    using clock_function = std::function<clock::time_point()>;
    using registry_ptr = std::shared_ptr<const accelerator_registry>;

    /// A cache whose entries live `ttl`, filled by `detect`, timed by `now` (the steady
    /// clock unless a test gives its own). A `ttl` of zero or less re-detects on every get();
    /// one past what the clock counts (`hours::max()`) never expires.
    template <class Rep, class Period>
    ttl_cache(std::chrono::duration<Rep, Period> ttl, detect_function detect, clock_function now = {})
        : ttl_(held(ttl)), detect_(std::move(detect)), now_(std::move(now)) {
        if (!now_) now_ = [] { return clock::now(); };
    }

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
    /// A cache of the live host's full detection (`detect()`).
    template <class Rep, class Period>
    explicit ttl_cache(std::chrono::duration<Rep, Period> ttl) : ttl_cache(ttl, [] { return ai_hwaccel::detect(); }) {}
#endif

    ttl_cache(const ttl_cache&) = delete;
    ttl_cache& operator=(const ttl_cache&) = delete;

    /// The cached registry, detected first when the cache is empty, expired or invalidated.
    /// Never null. Threads arriving while another detects wait for that detection.
    registry_ptr get() {
        std::unique_lock lock(mutex_);
        // A detection that started before an invalidate() this call comes after saw the
        // machine as it was: it is not handed to this call.
        const std::uint64_t asked = invalidations_;
        for (;;) {
            if (value_ && !stale_ && now_() - taken_ < ttl_) return value_;
            if (!detecting_) break;
            const std::uint64_t seen = generation_;
            done_.wait(lock, [&] { return !detecting_ || generation_ != seen; });
            // A detection that just finished is returned even if the TTL is zero (the
            // waiters asked while it ran, so it is as fresh as anything they could get),
            // unless it started before an invalidate() that came before this call.
            if (generation_ != seen && value_ && value_since_ >= asked) return value_;
        }
        detecting_ = true;
        const std::uint64_t invalidations = invalidations_;
        lock.unlock();

        registry_ptr fresh;
        clock::time_point taken;
#if AI_HWACCEL_EXCEPTIONS
        try {
            fresh = std::make_shared<const accelerator_registry>(detect_());
            taken = now_();
        } catch (...) {
            // Detection itself never throws; this is out of memory or a caller's function
            // (the detection's or the clock's). Let a waiter try again rather than leave
            // them blocked.
            lock.lock();
            detecting_ = false;
            done_.notify_all();
            throw;
        }
#else
        fresh = std::make_shared<const accelerator_registry>(detect_());
        taken = now_();
#endif
        lock.lock();
        value_ = fresh;
        value_since_ = invalidations;
        taken_ = taken;
        // An invalidate() while this ran says the machine changed meanwhile: the result is
        // kept for those waiting on it, but the next get() detects again.
        stale_ = invalidations_ != invalidations;
        detecting_ = false;
        ++generation_;
        ++detections_;
        done_.notify_all();
        return fresh;
    }

    /// The cached registry if there is a fresh one, without detecting.
    registry_ptr peek() const {
        std::lock_guard lock(mutex_);
        if (value_ && !stale_ && now_() - taken_ < ttl_) return value_;
        return nullptr;
    }

    /// Makes every get() that starts after it returns detect again, or wait for a
    /// detection that starts after it. A detection already running still completes and is
    /// handed to the get() calls that were waiting on it before, but does not count as
    /// fresh.
    void invalidate() {
        std::lock_guard lock(mutex_);
        stale_ = true;
        ++invalidations_;
    }

    /// Age of the cached registry; empty when there is none.
    std::optional<clock::duration> age() const {
        std::lock_guard lock(mutex_);
        if (!value_) return std::nullopt;
        return now_() - taken_;
    }

    /// How many detections this cache has run (for tests and diagnostics).
    std::uint64_t detections() const {
        std::lock_guard lock(mutex_);
        return detections_;
    }

    clock::duration ttl() const noexcept { return ttl_; }

private:
    // `d` in the clock's units, held to what they can count (a conversion past them
    // overflows: seconds::max() would become negative, "re-detect every time").
    template <class Rep, class Period>
    static constexpr clock::duration held(std::chrono::duration<Rep, Period> d) noexcept {
        using wide = std::chrono::duration<long double>;
        const long double x = wide(d).count();
        if (x != x) return clock::duration::zero(); // NaN
        if (x >= wide(clock::duration::max()).count()) return clock::duration::max();
        if (x <= wide(clock::duration::min()).count()) return clock::duration::min();
        return std::chrono::duration_cast<clock::duration>(d);
    }

    const clock::duration ttl_;
    detect_function detect_;
    clock_function now_;

    mutable std::mutex mutex_;
    std::condition_variable done_;
    registry_ptr value_;
    clock::time_point taken_{};
    bool stale_ = false;
    bool detecting_ = false;
    std::uint64_t generation_ = 0; ///< bumped by each completed detection
    std::uint64_t detections_ = 0;
    std::uint64_t invalidations_ = 0; ///< bumped by each invalidate()
    std::uint64_t value_since_ = 0;   ///< invalidations_ when value_'s detection started
};

AI_HWACCEL_NAMESPACE_END
