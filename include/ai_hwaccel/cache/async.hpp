// ai-hwaccel cache: detection in the background, abandoned cleanly.
//
//     auto pending = ai_hwaccel::detect_async();          // returns at once
//     ...                                                 // start the program meanwhile
//     if (const auto& found = pending.get())              // waits for the result
//         use(found->registry);
//
// `detect_async` runs a detection (detect/detect.hpp) on a thread of its own and returns a
// `detection_handle`. Calling `cancel()`, or destroying the handle, asks the detection to
// stop: from then on no probe starts a new tool (each tool request is refused on the spot,
// so the probes that remain wind down at once, reading a few files at most), and the
// result is discarded. A tool already running when cancel() is called is killed with its
// process group within 100 ms (the tool runner watches the request's stop token), so the
// destructor never waits for a tool's timeout.
//
// The handle exposes its std::stop_token, so code that runs inside the detection (a custom
// system_view, a probe) can watch for cancellation itself.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// A system_view that forwards to `S` until its stop token is triggered, and from then on
/// refuses to start tools (`spawn_failed`). Files are still read: that is quick, and
/// probes need no special case for a half-cancelled detection. `refused` counts the runs
/// the stop refused or cut short: a detection with any is incomplete.
template <system_view S>
class cancellable_system {
public:
    cancellable_system(const S& inner, std::stop_token token, std::atomic<std::size_t>& refused)
        : inner_(&inner), token_(std::move(token)), refused_(&refused) {}

    file_read read_file(std::string_view path, std::size_t cap = default_read_cap) const {
        return inner_->read_file(path, cap);
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view path) const { return inner_->list_dir(path); }
    std::optional<std::string> read_link(std::string_view path) const { return inner_->read_link(path); }
    bool exists(std::string_view path) const { return inner_->exists(path); }
    std::optional<std::string> env(std::string_view name) const { return inner_->env(name); }
    tool_result run(const tool_request& request) const {
        if (token_.stop_requested()) {
            refused_->fetch_add(1, std::memory_order_relaxed);
            tool_result r;
            r.status = tool_status::spawn_failed;
            return r;
        }
        // A tool already running when the detection is cancelled is killed at once.
        tool_request stoppable = request;
        stoppable.stop = token_;
        tool_result r = inner_->run(stoppable);
        if (r.status == tool_status::cancelled) refused_->fetch_add(1, std::memory_order_relaxed);
        return r;
    }

    /// As the inner view says, where it says: probes ask before loading a library or
    /// running another operating system's tools, so that a detection in the background
    /// takes the paths detect() takes.
    bool replays_tools() const
        requires requires(const S& s) {
            { s.replays_tools() } -> std::convertible_to<bool>;
        }
    {
        return inner_->replays_tools();
    }
    /// The same view over the inner view's sharing `s` (host_system::sharing), so that the
    /// probes of a background detection walk the PCI bus once, as detect()'s do.
    cancellable_system sharing(detail::shared_scans& s) const
        requires requires(const S& v) {
            { v.sharing(s) } -> std::same_as<S>;
        }
    {
        cancellable_system copy = *this;
        copy.shared_ = std::make_shared<const S>(inner_->sharing(s));
        copy.inner_ = copy.shared_.get();
        return copy;
    }
    /// The scans the inner view shares, or nullptr.
    detail::shared_scans* scans() const
        requires requires(const S& v) {
            { v.scans() } -> std::same_as<detail::shared_scans*>;
        }
    {
        return inner_->scans();
    }

    std::stop_token stop_token() const { return token_; }

private:
    const S* inner_;
    std::shared_ptr<const S> shared_; ///< the sharing copy inner_ points to, if any
    std::stop_token token_;
    std::atomic<std::size_t>* refused_;
};

/// A detection running in the background. Move-only; destroying it cancels and waits.
class detection_handle {
public:
    detection_handle() = default;
    detection_handle(detection_handle&&) noexcept = default;
    detection_handle& operator=(detection_handle&& other) noexcept {
        if (this != &other) {
            finish();
            state_ = std::move(other.state_);
            stop_ = std::move(other.stop_);
            thread_ = std::move(other.thread_);
        }
        return *this;
    }
    detection_handle(const detection_handle&) = delete;
    detection_handle& operator=(const detection_handle&) = delete;
    ~detection_handle() { finish(); }

    /// Whether this handle has a detection (a default-constructed one has none).
    bool valid() const noexcept { return state_ != nullptr; }

    /// Asks the detection to stop; returns at once. Idempotent.
    void cancel() noexcept {
        if (state_) stop_.request_stop();
    }
    bool cancel_requested() const noexcept { return state_ && stop_.stop_requested(); }
    std::stop_token stop_token() const noexcept { return stop_.get_token(); }

    /// Whether the detection has ended (completed or wound down after cancel()).
    bool ready() const {
        if (!state_) return true;
        std::lock_guard lock(state_->mutex);
        return state_->done;
    }
    void wait() const {
        if (!state_) return;
        std::unique_lock lock(state_->mutex);
        state_->cv.wait(lock, [&] { return state_->done; });
    }
    template <class Rep, class Period>
    bool wait_for(std::chrono::duration<Rep, Period> d) const {
        if (!state_) return true;
        std::unique_lock lock(state_->mutex);
        return state_->cv.wait_for(lock, d, [&] { return state_->done; });
    }

    /// Waits, then gives the detection, or nothing when it was cancelled before it could
    /// complete (cancel() came while it ran, or before it started). A detection that
    /// completed before cancel() reached it is kept. The reference lives as long as
    /// the handle. Where the detection threw (out of memory; a custom system_view's own
    /// exception), get() throws it, as std::future::get does.
    const std::optional<timed_detection>& get() const {
        static const std::optional<timed_detection> none;
        if (!state_) return none;
        wait();
#if AI_HWACCEL_EXCEPTIONS
        if (state_->error) std::rethrow_exception(state_->error);
#endif
        return state_->result; // written before `done`, never after
    }

    /// How many tool runs the cancellation refused or cut short (for tests and diagnostics).
    std::size_t refused_tools() const noexcept {
        return state_ ? state_->refused.load(std::memory_order_relaxed) : 0;
    }

private:
    struct shared_state {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
        std::optional<timed_detection> result;
#if AI_HWACCEL_EXCEPTIONS
        std::exception_ptr error; ///< what the detection threw, for get()
#endif
        std::atomic<std::size_t> refused{0};
    };

    template <system_view S, class... Probes>
    friend detection_handle detect_async_with(S sys, detector d, Probes... probes);

    void finish() noexcept {
        if (!state_) return;
        stop_.request_stop();
        if (thread_.joinable()) thread_.join();
        state_.reset();
    }

    std::shared_ptr<shared_state> state_;
    std::stop_source stop_{std::nostopstate};
    std::thread thread_;
};

/// Runs `d` with exactly `probes` through `sys` in the background (the asynchronous
/// `detector::run_timed_with`). `sys` is copied into the detection.
template <system_view S, class... Probes>
detection_handle detect_async_with(S sys, detector d, Probes... probes) {
    detection_handle h;
    h.state_ = std::make_shared<detection_handle::shared_state>();
    h.stop_ = std::stop_source{};
    auto body = [state = h.state_, token = h.stop_.get_token(), sys = std::move(sys), d,
                 probes = std::make_tuple(std::move(probes)...)]() mutable {
        std::optional<timed_detection> result;
        // An exception must not leave the thread (std::terminate) nor leave `done` unset
        // (get() would wait forever): it is kept for get().
#if AI_HWACCEL_EXCEPTIONS
        std::exception_ptr error;
        try {
#endif
            if (!token.stop_requested()) {
                const cancellable_system<S> view(sys, token, state->refused);
                timed_detection found =
                    std::apply([&](const auto&... p) { return d.run_timed_with(view, p...); }, probes);
                // Incomplete when a tool was refused or cut short, or when anything else
                // (a probe, a system view) may have wound down on the stop: either way, a
                // cancelled detection's result is discarded.
                if (state->refused.load() == 0 && !token.stop_requested()) result = std::move(found);
            }
#if AI_HWACCEL_EXCEPTIONS
        } catch (...) {
            error = std::current_exception();
        }
#endif
        std::lock_guard lock(state->mutex);
        state->result = std::move(result);
#if AI_HWACCEL_EXCEPTIONS
        state->error = std::move(error);
#endif
        state->done = true;
        state->cv.notify_all();
    };
#if AI_HWACCEL_EXCEPTIONS
    try {
        h.thread_ = std::thread(body);
    } catch (...) {
        body(); // no thread to be had: detect here, synchronously
    }
#else
    h.thread_ = std::thread(std::move(body));
#endif
    return h;
}

/// Runs `d` with this build's probes through `sys` in the background.
template <system_view S>
detection_handle detect_async(S sys, detector d = detector::all()) {
    return std::apply([&](const auto&... p) { return detect_async_with(std::move(sys), d, p...); }, builtin_probes{});
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// Detects the live machine in the background.
inline detection_handle detect_async(detector d = detector::all()) { return detect_async(host_system{}, d); }
#endif

AI_HWACCEL_NAMESPACE_END
