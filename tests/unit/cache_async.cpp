#include "ai_hwaccel/cache/async.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {
// A machine whose tools hang until the test opens a gate; counts the tools started.
struct gate {
    std::mutex m;
    std::condition_variable cv;
    int started = 0;
    bool open = false;

    void wait_started(int n) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return started >= n; });
    }
    void release() {
        std::lock_guard lock(m);
        open = true;
        cv.notify_all();
    }
    int count() {
        std::lock_guard lock(m);
        return started;
    }
};

struct gated_machine {
    std::shared_ptr<gate> g;
    ah::file_read read_file(std::string_view, std::size_t = ah::default_read_cap) const {
        return {ah::read_status::not_found, {}};
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view) const { return std::nullopt; }
    std::optional<std::string> read_link(std::string_view) const { return std::nullopt; }
    bool exists(std::string_view) const { return false; }
    std::optional<std::string> env(std::string_view) const { return std::nullopt; }
    ah::tool_result run(const ah::tool_request&) const {
        std::unique_lock lock(g->m);
        ++g->started;
        g->cv.notify_all();
        g->cv.wait(lock, [&] { return g->open; });
        ah::tool_result r;
        r.status = ah::tool_status::exited;
        r.out = "ok";
        return r;
    }
};
static_assert(ah::system_view<gated_machine>);
static_assert(ah::system_view<ah::cancellable_system<gated_machine>>);

// Runs two tools; finds a device when both answered.
template <ah::backend_id B>
struct two_tool_probe {
    static constexpr ah::backend_id backend = B;
    template <ah::system_view S>
    ah::probe_output probe(const S& sys) const {
        ah::probe_output out;
        int answered = 0;
        for (const char* tool : {"first-tool", "second-tool"})
            if (ah::run_reporting(sys, ah::tool_request{{tool}}, B, out.warnings)) ++answered;
        if (answered == 2) {
            ah::accelerator_profile p;
            p.kind = ah::device_kind::cuda_gpu;
            p.name = ah::to_string(B);
            out.devices.push_back(p);
        }
        return out;
    }
};
using probe_a = two_tool_probe<ah::backend_id::cuda>;
using probe_b = two_tool_probe<ah::backend_id::rocm>;

ah::detector sequential() {
    return ah::detector::none().with(ah::backend_id::cuda).with(ah::backend_id::rocm).parallel(false);
}
} // namespace

TEST_CASE("detect_async_with") {
    auto g = std::make_shared<gate>();
    g->open = true;
    auto h = ah::detect_async_with(gated_machine{g}, sequential(), probe_a{}, probe_b{});
    CHECK(h.valid());
    const auto& found = h.get();
    CHECK(h.ready());
    REQUIRE(found.has_value());
    CHECK(found->registry.size() == 2);
    CHECK(found->timings.size() == 2);
    CHECK(g->count() == 4);
    CHECK(h.refused_tools() == 0);
    h.cancel(); // after the end: the result stays
    CHECK(h.get().has_value());
}

TEST_CASE("detection_handle::cancel") {
    auto g = std::make_shared<gate>();
    auto h = ah::detect_async_with(gated_machine{g}, sequential(), probe_a{}, probe_b{});
    g->wait_started(1); // the first tool hangs
    CHECK_FALSE(h.ready());
    h.cancel();
    CHECK(h.cancel_requested());
    g->release(); // the hung tool ends (as a timeout would end it)
    h.wait();
    CHECK_FALSE(h.get().has_value());
    CHECK(g->count() == 1);        // no tool started after cancel()
    CHECK(h.refused_tools() == 3); // the first probe's second tool, both of the second's
}

TEST_CASE("detection_handle::cancel with parallel probes") {
    auto g = std::make_shared<gate>();
    auto h = ah::detect_async_with(gated_machine{g}, sequential().parallel(true), probe_a{}, probe_b{});
    g->wait_started(2); // both probes' first tools hang
    h.cancel();
    g->release();
    CHECK_FALSE(h.get().has_value());
    CHECK(g->count() == 2);
    CHECK(h.refused_tools() == 2);
}

TEST_CASE("detection_handle destructor cancels and waits") {
    auto g = std::make_shared<gate>();
    auto h = ah::detect_async_with(gated_machine{g}, sequential(), probe_a{}, probe_b{});
    g->wait_started(1);
    // What a tool runner with a cancellation hook would do: end the hung tool on stop.
    std::stop_callback release_on_stop(h.stop_token(), [&] { g->release(); });
    h = ah::detection_handle{}; // destroys the running detection
    CHECK_FALSE(h.valid());
    CHECK(g->count() == 1);
}

TEST_CASE("detection_handle default and moved") {
    ah::detection_handle none;
    CHECK_FALSE(none.valid());
    CHECK(none.ready());
    CHECK_FALSE(none.get().has_value());
    none.cancel();

    auto g = std::make_shared<gate>();
    g->open = true;
    auto h = ah::detect_async_with(gated_machine{g}, sequential(), probe_a{});
    ah::detection_handle moved = std::move(h);
    CHECK(moved.valid());
    CHECK(moved.get().has_value());
}

namespace {
// The first tool answers; the second runs until the detection's stop reaches it and then
// ends as the runner ends a killed tool.
struct stoppable_machine : gated_machine {
    ah::tool_result run(const ah::tool_request& rq) const {
        ah::tool_result r;
        {
            std::unique_lock lock(g->m);
            ++g->started;
            g->cv.notify_all();
        }
        if (rq.argv.front() == "second-tool") {
            std::mutex m;
            std::condition_variable cv;
            bool stopped = false;
            std::stop_callback on_stop(rq.stop, [&] {
                std::lock_guard lock(m);
                stopped = true;
                cv.notify_all();
            });
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return stopped; });
            r.status = ah::tool_status::cancelled;
            return r;
        }
        r.status = ah::tool_status::exited;
        r.out = "ok";
        return r;
    }
};

// A view whose environment lookup throws (a custom view's own failure).
struct throwing_machine : gated_machine {
    std::optional<std::string> env(std::string_view) const { throw std::runtime_error("view failed"); }
};
} // namespace

TEST_CASE("detection_handle::cancel that cuts the last tool short gives nothing") {
    // No tool is refused after the stop (the cut one was the last), yet the detection is
    // incomplete: the device the two tools would have found is missing.
    auto g = std::make_shared<gate>();
    auto h = ah::detect_async_with(stoppable_machine{{g}}, sequential(), probe_a{});
    g->wait_started(2);
    h.cancel();
    CHECK_FALSE(h.get().has_value());
    CHECK(h.refused_tools() == 1);
}

#if AI_HWACCEL_EXCEPTIONS
TEST_CASE("detection_handle: what the detection throws comes out of get(), not std::terminate") {
    auto g = std::make_shared<gate>();
    g->open = true;
    auto h = ah::detect_async_with(throwing_machine{{g}}, sequential(), probe_a{});
    h.wait(); // `done` is set even so
    CHECK(h.ready());
    CHECK_THROWS_AS(h.get(), std::runtime_error);
}
#endif

#if AI_HWACCEL_OS_LINUX
TEST_CASE("detect_async") {
    // An empty machine tree: the host probes find a CPU, every tool is "not found".
    auto h = ah::detect_async(ah::host_system("/nonexistent/ai-hwaccel-machine"));
    const auto& found = h.get();
    REQUIRE(found.has_value());
    CHECK(found->registry.size() == 1);
}
#endif
