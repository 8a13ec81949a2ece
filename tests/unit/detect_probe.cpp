#include "ai_hwaccel/detect/probe.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using namespace std::chrono_literals;

namespace {

struct fake_cuda_probe {
    static constexpr ah::backend_id backend = ah::backend_id::cuda;
    template <ah::system_view S>
    ah::probe_output probe(const S&) const {
        return {};
    }
};
struct not_a_probe {
    static constexpr ah::backend_id backend = ah::backend_id::cuda;
    int probe(const ah::host_system&) const { return 0; }
};

ah::tool_result result(ah::tool_status s, int code = 0) {
    ah::tool_result r;
    r.status = s;
    r.exit_code = s == ah::tool_status::exited ? code : 0;
    r.signal = s == ah::tool_status::signalled ? code : 0;
    return r;
}

} // namespace

static_assert(ah::backend_probe<fake_cuda_probe, ah::host_system>);
static_assert(!ah::backend_probe<not_a_probe, ah::host_system>);
static_assert(!ah::backend_probe<fake_cuda_probe, int>);
static_assert(ah::descriptor_of<fake_cuda_probe>().name == "cuda");

TEST_CASE("report_tool_result: one typed warning per way a tool can fail") {
    const ah::tool_request rq{{"nvidia-smi", "-L"}, 5s};
    struct row {
        ah::tool_result r;
        bool parse;
        ah::warning_kind kind;
        int code;
    };
    auto failed = result(ah::tool_status::exited, 9);
    failed.err = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nmore\n";
    auto cut = result(ah::tool_status::truncated);
    cut.out_truncated = true;
    cut.out = "partial";
    // Named members, not a structured binding: clang 14 cannot capture one in the lambdas
    // doctest's CAPTURE makes.
    for (const auto& entry : {
             row{failed, false, ah::warning_kind::tool_failed, 9},
             row{result(ah::tool_status::signalled, 11), false, ah::warning_kind::tool_signalled, 11},
             row{result(ah::tool_status::timed_out), false, ah::warning_kind::tool_timed_out, 0},
             row{cut, true, ah::warning_kind::output_truncated, 0},
             row{result(ah::tool_status::not_found), false, ah::warning_kind::tool_not_found, 0},
             row{result(ah::tool_status::not_executable), false, ah::warning_kind::tool_not_executable, 0},
             row{result(ah::tool_status::spawn_failed), false, ah::warning_kind::tool_failed, 0},
         }) {
        const auto& r = entry.r;
        const bool parse = entry.parse;
        const ah::warning_kind kind = entry.kind;
        const int code = entry.code;
        CAPTURE(ah::to_string(r.status));
        std::vector<ah::warning> w;
        CHECK(ah::report_tool_result(rq, r, ah::backend_id::cuda, w) == parse);
        REQUIRE(w.size() == 1);
        CHECK(w[0].kind == kind);
        CHECK(w[0].code == code);
        CHECK(w[0].subject == "nvidia-smi");
        CHECK(w[0].backend == ah::backend_id::cuda);
    }
    std::vector<ah::warning> w;
    ah::report_tool_result(rq, failed, ah::backend_id::cuda, w);
    // The first line of stderr says why.
    CHECK(w[0].message == "exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
    w.clear();
    ah::report_tool_result(rq, result(ah::tool_status::timed_out), std::nullopt, w);
    CHECK(w[0].message.find("5 s") != std::string::npos);

    // A clean run is silent; unsafe PATH entries are reported whatever the outcome.
    w.clear();
    auto ok = result(ah::tool_status::exited, 0);
    ok.unsafe_path_entries = {"", "bin"};
    CHECK(ah::report_tool_result(rq, ok, std::nullopt, w));
    REQUIRE(w.size() == 2);
    CHECK(w[0].kind == ah::warning_kind::unsafe_path_ignored);
    CHECK(w[1].message.find("\"bin\"") != std::string::npos);

    // A tool that is not installed says nothing of itself, but the entries its lookup
    // skipped are still reported (probes of optional tools return quietly on not_found).
    w.clear();
    auto missing = result(ah::tool_status::not_found);
    missing.unsafe_path_entries = {"bin"};
    CHECK(ah::tool_missing(missing, w));
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::unsafe_path_ignored);
    w.clear();
    CHECK_FALSE(ah::tool_missing(ok, w));
    CHECK(w.empty());
}

TEST_CASE("run_reporting through a machine tree") {
    test::scratch_dir root;
    root.write("ai-hwaccel-tools/index", "0\tout.txt\tvendor-smi --list\n2\t-\tvendor-smi --bad\n");
    root.write("ai-hwaccel-tools/out.txt", "device 0\n");
    const ah::host_system sys(root.path().string());
    std::vector<ah::warning> w;
    CHECK(ah::run_reporting(sys, {{"vendor-smi", "--list"}}, ah::backend_id::gaudi, w) == "device 0\n");
    CHECK(w.empty());
    CHECK_FALSE(ah::run_reporting(sys, {{"vendor-smi", "--bad"}}, ah::backend_id::gaudi, w));
    CHECK_FALSE(ah::run_reporting(sys, {{"other-smi"}}, ah::backend_id::gaudi, w));
    REQUIRE(w.size() == 2);
    CHECK(w[0].kind == ah::warning_kind::tool_failed);
    CHECK(w[1].kind == ah::warning_kind::tool_not_found);
}
