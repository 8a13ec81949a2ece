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

// Waits for the test's gate and runs no tool; returns nothing when its detection was
// cancelled meanwhile: a probe that watches the stop token itself, as async.hpp invites.
struct watching_probe {
    static constexpr ah::backend_id backend = ah::backend_id::cuda;
    std::shared_ptr<gate> g;
    template <ah::system_view S>
    ah::probe_output probe(const S& sys) const {
        {
            std::unique_lock lock(g->m);
            ++g->started;
            g->cv.notify_all();
            g->cv.wait(lock, [&] { return g->open; });
        }
        ah::probe_output out;
        if constexpr (requires { sys.stop_token(); })
            if (sys.stop_token().stop_requested()) return out; // cut short
        ah::accelerator_profile p;
        p.kind = ah::device_kind::cuda_gpu;
        out.devices.push_back(p);
        return out;
    }
};

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

TEST_CASE("detection_handle::cancel that a probe honours itself gives nothing") {
    // No tool was refused, but the probe returned early: the result is incomplete.
    const auto only_cuda = ah::detector::none().with(ah::backend_id::cuda).parallel(false);
    auto g = std::make_shared<gate>();
    auto h = ah::detect_async_with(gated_machine{g}, only_cuda, watching_probe{g});
    g->wait_started(1);
    h.cancel();
    g->release();
    CHECK_FALSE(h.get().has_value());
    CHECK(h.refused_tools() == 0);
    // Not cancelled, the same probe finds its device.
    auto g2 = std::make_shared<gate>();
    g2->open = true;
    auto whole = ah::detect_async_with(gated_machine{g2}, only_cuda, watching_probe{g2});
    REQUIRE(whole.get().has_value());
    CHECK(whole.get()->registry.size() == 1);
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
namespace {
// A machine tree that counts the walks of the PCI bus and the tools it is asked to run;
// it shares scans and says it replays tools, as host_system does.
struct counting_tree {
    ah::host_system inner;
    std::shared_ptr<std::atomic<int>> pci_walks = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::mutex> m = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<std::string>> tools = std::make_shared<std::vector<std::string>>();

    ah::file_read read_file(std::string_view path, std::size_t cap = ah::default_read_cap) const {
        return inner.read_file(path, cap);
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view path) const {
        if (path == "/sys/bus/pci/devices") ++*pci_walks;
        return inner.list_dir(path);
    }
    std::optional<std::string> read_link(std::string_view path) const { return inner.read_link(path); }
    bool exists(std::string_view path) const { return inner.exists(path); }
    std::optional<std::string> env(std::string_view name) const { return inner.env(name); }
    ah::tool_result run(const ah::tool_request& request) const {
        {
            std::lock_guard lock(*m);
            tools->push_back(request.argv.empty() ? std::string() : std::string(request.argv.front()));
        }
        return inner.run(request);
    }
    bool replays_tools() const { return inner.replays_tools(); }
    counting_tree sharing(ah::detail::shared_scans& s) const {
        counting_tree c = *this;
        c.inner = inner.sharing(s);
        return c;
    }
    ah::detail::shared_scans* scans() const { return inner.scans(); }
};
} // namespace

TEST_CASE("detect_async takes detect()'s paths") {
    // The background view passes on what probes ask of a view beyond reading: whether it
    // replays tools (before NVML is loaded, or another OS's tools are run) and the scans a
    // detection shares. Without them a background detection walked the PCI bus once per
    // probe, and ran Apple's sysctl on Linux (a warning on every detection) where detect()
    // does not.
    using view = ah::cancellable_system<counting_tree>;
    static_assert(requires(const view& v, ah::detail::shared_scans& s) {
        { v.replays_tools() } -> std::convertible_to<bool>;
        { v.sharing(s) } -> std::same_as<view>;
        { v.scans() } -> std::same_as<ah::detail::shared_scans*>;
    });
    const auto tree = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-workstation-rtx4090";
    const counting_tree sync{ah::host_system(tree)};
    const auto expected = ah::detector::all().parallel(false).run(sync);
    const int sync_walks = sync.pci_walks->load();
    CHECK(sync_walks == 1);

    const counting_tree background{ah::host_system(tree)};
    auto h = ah::detect_async(background, ah::detector::all().parallel(false));
    const auto& found = h.get();
    REQUIRE(found.has_value());
    CHECK(background.pci_walks->load() == sync_walks);
    CHECK(*background.tools == *sync.tools);
    CHECK(found->registry == expected);
    CHECK(found->registry.warnings().size() == expected.warnings().size());
}

TEST_CASE("detect_async") {
    // An empty machine tree: the host probes find a CPU, every tool is "not found".
    auto h = ah::detect_async(ah::host_system("/nonexistent/ai-hwaccel-machine"));
    const auto& found = h.get();
    REQUIRE(found.has_value());
    CHECK(found->registry.size() == 1);
}
#endif
