#include "ai_hwaccel/cache/ttl.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ah = ai_hwaccel;
using namespace std::chrono_literals;

namespace {
// A clock that moves only when the test says so.
struct manual_clock {
    std::atomic<std::int64_t> ns{1'000'000'000};
    ah::ttl_cache::clock::time_point now() const {
        return ah::ttl_cache::clock::time_point(std::chrono::nanoseconds(ns.load()));
    }
    void advance(std::chrono::nanoseconds d) { ns += d.count(); }
};

// A registry that says which detection made it (its one warning's code).
ah::accelerator_registry numbered(int n) {
    ah::accelerator_registry r;
    r.add(ah::warning{ah::warning_kind::read_error, std::nullopt, "test", "detection", n});
    return r;
}

// Detections numbered 1, 2, …, the first of which waits, once started, until released.
struct held_first_detection {
    std::mutex m;
    std::condition_variable cv;
    bool started = false, go = false;
    std::atomic<int> runs{0};

    ah::accelerator_registry detect() {
        const int n = ++runs;
        if (n == 1) {
            std::unique_lock lock(m);
            started = true;
            cv.notify_all();
            cv.wait(lock, [&] { return go; });
        }
        return numbered(n);
    }
    void wait_started() {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return started; });
    }
    void release() {
        std::lock_guard lock(m);
        go = true;
        cv.notify_all();
    }
};
} // namespace

TEST_CASE("ttl_cache::get") {
    manual_clock clk;
    std::atomic<int> runs{0};
    ah::ttl_cache cache(
        10s, [&] { return numbered(++runs); }, [&] { return clk.now(); });

    CHECK(cache.peek() == nullptr);
    CHECK_FALSE(cache.age().has_value());
    const auto first = cache.get();
    REQUIRE(first != nullptr);
    CHECK(first->warnings()[0].code == 1);
    CHECK(cache.get() == first); // served from the cache, same snapshot

    clk.advance(9s);
    CHECK(cache.get() == first);
    CHECK(cache.age() == std::chrono::nanoseconds(9s));
    CHECK(cache.peek() == first);

    clk.advance(1s); // exactly the TTL: expired
    CHECK(cache.peek() == nullptr);
    const auto second = cache.get();
    CHECK(second->warnings()[0].code == 2);
    CHECK(first->warnings()[0].code == 1); // an old snapshot is untouched
    CHECK(runs == 2);
    CHECK(cache.detections() == 2);
}

TEST_CASE("ttl_cache::invalidate") {
    manual_clock clk;
    std::atomic<int> runs{0};
    ah::ttl_cache cache(
        1h, [&] { return numbered(++runs); }, [&] { return clk.now(); });
    (void)cache.get();
    cache.invalidate();
    CHECK(cache.peek() == nullptr);
    CHECK(cache.get()->warnings()[0].code == 2);
    CHECK(cache.get()->warnings()[0].code == 2);
}

TEST_CASE("ttl_cache::invalidate while a detection runs") {
    // The detection that was running is handed to its caller, but the invalidation is not
    // lost: the next get() detects again.
    held_first_detection held;
    ah::ttl_cache cache(1h, [&] { return held.detect(); });
    std::thread first([&] { CHECK(cache.get()->warnings()[0].code == 1); });
    held.wait_started();
    cache.invalidate(); // the machine changed while detection #1 ran
    held.release();
    first.join();
    CHECK(cache.peek() == nullptr);
    CHECK(cache.get()->warnings()[0].code == 2);
    CHECK(cache.detections() == 2);
    CHECK(cache.peek() != nullptr);
}

TEST_CASE("ttl_cache::get after an invalidate() waits for a detection that starts after it") {
    // A hot-plug handler's invalidate(); get(); must not be handed the detection that was
    // already running when the machine changed. Detection #1 runs while the machine has one
    // GPU; the handler invalidates and asks while it still runs: it gets #2. (Whether its
    // get() arrives while #1 runs or after, the answer is #2; the pause makes the first
    // case the likely one, the case a cache that handed #1 to it failed on.)
    held_first_detection held;
    ah::ttl_cache cache(1h, [&] { return held.detect(); });
    std::thread before([&] { CHECK(cache.get()->warnings()[0].code == 1); });
    held.wait_started();
    cache.invalidate();
    std::thread after([&] { CHECK(cache.get()->warnings()[0].code == 2); });
    std::this_thread::sleep_for(50ms);
    held.release();
    before.join();
    after.join();
    CHECK(cache.detections() == 2);
    CHECK(cache.get()->warnings()[0].code == 2);
}

TEST_CASE("ttl_cache with a zero TTL detects on every get") {
    std::atomic<int> runs{0};
    ah::ttl_cache cache(0s, [&] { return numbered(++runs); });
    (void)cache.get();
    (void)cache.get();
    CHECK(runs == 2);
}

TEST_CASE("ttl_cache with a TTL past what the clock counts never expires") {
    // seconds::max() in nanoseconds overflowed to a negative TTL: a detection every get().
    for (const auto ttl : {std::chrono::duration<double>(std::chrono::seconds::max()),
                           std::chrono::duration<double>(std::chrono::hours::max()),
                           std::chrono::duration<double>(1e300)}) {
        CAPTURE(ttl.count());
        manual_clock clk;
        std::atomic<int> runs{0};
        ah::ttl_cache cache(ttl, [&] { return numbered(++runs); }, [&] { return clk.now(); });
        CHECK(cache.ttl() == ah::ttl_cache::clock::duration::max());
        (void)cache.get();
        clk.advance(std::chrono::hours(24 * 365 * 100));
        (void)cache.get();
        CHECK(runs == 1);
    }
    ah::ttl_cache hours(std::chrono::hours::max(), [] { return numbered(0); });
    CHECK(hours.ttl() == ah::ttl_cache::clock::duration::max());
    ah::ttl_cache negative(-std::chrono::hours::max(), [] { return numbered(0); });
    CHECK(negative.ttl() == ah::ttl_cache::clock::duration::min());
    ah::ttl_cache nan(std::chrono::duration<double>(std::nan("")), [] { return numbered(0); });
    CHECK(nan.ttl() == ah::ttl_cache::clock::duration::zero());
    ah::ttl_cache half(std::chrono::duration<double>(0.5), [] { return numbered(0); });
    CHECK(half.ttl() == std::chrono::milliseconds(500));
}

TEST_CASE("ttl_cache::get from many threads runs one detection") {
    manual_clock clk;
    std::mutex m;
    std::condition_variable cv;
    bool entered = false, release = false;
    std::atomic<int> runs{0};
    ah::ttl_cache cache(
        1min,
        [&] {
            const int n = ++runs;
            std::unique_lock lock(m);
            entered = true;
            cv.notify_all();
            cv.wait(lock, [&] { return release; });
            return numbered(n);
        },
        [&] { return clk.now(); });

    constexpr int n_threads = 8;
    std::vector<ah::ttl_cache::registry_ptr> got(n_threads);
    std::vector<std::thread> threads;
    for (int i = 0; i < n_threads; ++i) threads.emplace_back([&, i] { got[static_cast<std::size_t>(i)] = cache.get(); });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return entered; });
        release = true;
        cv.notify_all();
    }
    for (auto& t : threads) t.join();
    CHECK(runs == 1);
    for (const auto& p : got) CHECK(p == got[0]);

    // Expired, then asked again by many: again one detection.
    clk.advance(2min);
    threads.clear();
    for (int i = 0; i < n_threads; ++i) threads.emplace_back([&, i] { got[static_cast<std::size_t>(i)] = cache.get(); });
    for (auto& t : threads) t.join();
    CHECK(runs == 2);
    for (const auto& p : got) CHECK(p->warnings()[0].code == 2);
}

#if AI_HWACCEL_EXCEPTIONS
TEST_CASE("ttl_cache::get after a detection that threw") {
    int calls = 0;
    ah::ttl_cache cache(1min, [&]() -> ah::accelerator_registry {
        if (++calls == 1) throw std::runtime_error("out of something");
        return numbered(calls);
    });
    CHECK_THROWS_AS((void)cache.get(), std::runtime_error);
    CHECK(cache.get()->warnings()[0].code == 2);
}

TEST_CASE("ttl_cache::get after a clock that threw") {
    // A caller's clock that throws once, read when the detection has ended: the next
    // get() detects again (it used to wait forever for a detection marked as running).
    auto reads = std::make_shared<std::atomic<int>>(0);
    auto cache = std::make_shared<ah::ttl_cache>(1min, [] { return numbered(1); }, [reads] {
        if (++*reads == 1) throw std::runtime_error("clock");
        return ah::ttl_cache::clock::time_point(std::chrono::seconds(1));
    });
    CHECK_THROWS_AS((void)cache->get(), std::runtime_error);
    // In a thread of its own, left behind if it hangs, so that a regression fails here.
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread([cache, done] {
        (void)cache->get();
        *done = true;
    }).detach();
    for (int i = 0; i < 1000 && !*done; ++i) std::this_thread::sleep_for(10ms);
    CHECK(done->load());
}
#endif
