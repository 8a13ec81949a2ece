#include "ai_hwaccel/detect/bandwidth.hpp"

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/plan/models.hpp"
#include "ai_hwaccel/plan/throughput.hpp"

#include <doctest/doctest.h>

#include "fixtures.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

// Small buffers keep the sanitizer phases quick: the figure then comes from the caches,
// which is fine here, where what is checked is the accounting, not the memory's speed.
TEST_CASE("measure_memory_bandwidth reads the whole buffer with every thread") {
    for (std::uint32_t threads : {1u, 2u, 3u}) {
        CAPTURE(threads);
        ah::bandwidth_options o;
        o.buffer_bytes = 4 * ah::units::mib + 12; // not a multiple of the threads' words
        o.threads = threads;
        o.passes = 3;
        const auto m = ah::measure_memory_bandwidth(o);
        REQUIRE_MESSAGE(m.ok(), m.error);
        CHECK(m.error.empty());
        CHECK(m.threads == threads);
        CHECK(m.passes == 3);
        // Whole words, the same number for each thread, nothing past the buffer asked for.
        CHECK(m.bytes_per_pass % (8ull * threads) == 0);
        CHECK(m.bytes_per_pass <= o.buffer_bytes);
        CHECK(m.bytes_per_pass > o.buffer_bytes - 8ull * threads);
        CHECK(m.fastest_seconds > 0);
        CHECK(m.slowest_seconds >= m.fastest_seconds);
        CHECK(std::isfinite(m.gbps));
        CHECK(m.gbps == doctest::Approx(static_cast<double>(m.bytes_per_pass) / m.fastest_seconds / 1e9));
    }
}

TEST_CASE("measure_memory_bandwidth defaults to the usable CPUs and a bounded buffer") {
    CHECK(ah::detail::membw::usable_cpus() >= 1);
    // 2 GiB, at most a quarter of what is free, at least 64 MiB.
    CHECK(ah::detail::membw::default_buffer_bytes(0) == 2 * ah::units::gib);
    CHECK(ah::detail::membw::default_buffer_bytes(64 * ah::units::gib) == 2 * ah::units::gib);
    CHECK(ah::detail::membw::default_buffer_bytes(2 * ah::units::gib) == 512 * ah::units::mib);
    CHECK(ah::detail::membw::default_buffer_bytes(100 * ah::units::mib) == 64 * ah::units::mib);
    ah::bandwidth_options o;
    o.buffer_bytes = 1 * ah::units::mib;
    o.passes = 1;
    const auto m = ah::measure_memory_bandwidth(o);
    REQUIRE_MESSAGE(m.ok(), m.error);
    CHECK(m.threads == ah::detail::membw::usable_cpus());
}

TEST_CASE("the default buffer is four times the last-level caches where that is more than 2 GiB") {
    using ah::units::gib;
    using ah::units::mib;
    // Two EPYC 9684X: 24 chiplets' 96 MiB of L3 = 2.25 GiB; the buffer 9 GiB, not the
    // 2 GiB the caches would hold nearly all of.
    CHECK(ah::detail::membw::default_buffer_bytes(0, 2304 * mib) == 9 * gib);
    CHECK(ah::detail::membw::default_buffer_bytes(0, 32 * mib) == 2 * gib);
    CHECK(ah::detail::membw::default_buffer_bytes(16 * gib, 2304 * mib) == 4 * gib); // a quarter of what is free
    CHECK(ah::detail::membw::default_buffer_bytes(0, ~std::uint64_t{0}) == 2 * gib); // past 2^64 / 4: not read

    // A buffer the caches hold much of: measured, and said.
    ah::bandwidth_options o;
    o.buffer_bytes = 1 * mib;
    o.cache_bytes = 32 * mib;
    o.threads = 1;
    o.passes = 1;
    const auto m = ah::measure_memory_bandwidth(o);
    REQUIRE_MESSAGE(m.ok(), m.error);
    CHECK(m.cache_bytes == 32 * mib);
    CHECK(m.note.find("under four times the CPUs' last-level caches") != std::string::npos);
    o.cache_bytes = 64 * 1024; // 64 KiB of cache: a 1 MiB buffer is 16 times it
    CHECK(ah::measure_memory_bandwidth(o).note.empty());
}

TEST_CASE("last_level_cache_bytes counts each last-level cache once") {
    // hand-made: four CPUs in two chiplets, each pair sharing a 32 MiB L3 (sizes as the
    // kernel prints them, in KiB); a fifth CPU's tree has only an L2.
    test::scratch_dir d;
    const auto cache = [&](int cpu, int index, int level, const std::string& size, const std::string& shared) {
        const std::string at = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                               std::to_string(index) + "/";
        d.write(at + "level", std::to_string(level) + "\n");
        d.write(at + "size", size + "\n");
        d.write(at + "shared_cpu_list", shared + "\n");
    };
    for (int cpu = 0; cpu < 4; ++cpu) {
        cache(cpu, 0, 1, "32K", std::to_string(cpu));
        cache(cpu, 2, 2, "1024K", std::to_string(cpu));
        cache(cpu, 3, 3, "32768K", cpu < 2 ? "0-1" : "2-3");
    }
    cache(4, 2, 2, "2048K", "4");
    d.write("sys/devices/system/cpu/online", "0-4\n"); // not a CPU folder
    const ah::host_system sys(d.path().string());
    CHECK(ah::last_level_cache_bytes(sys) == 2 * 32 * ah::units::mib + 2 * ah::units::mib);
    // No CPU folders, or garbage sizes: nothing known.
    test::scratch_dir empty;
    CHECK(ah::last_level_cache_bytes(ah::host_system(empty.path().string())) == 0);
    cache(0, 3, 3, "lots", "0-1");
    cache(1, 3, 3, "lots", "0-1");
    CHECK(ah::last_level_cache_bytes(sys) == 32 * ah::units::mib + 2 * ah::units::mib);
}

TEST_CASE("measure_memory_bandwidth refuses what it cannot do, in words") {
    ah::bandwidth_options o;
    o.buffer_bytes = 1 * ah::units::mib;
    o.passes = 0;
    auto m = ah::measure_memory_bandwidth(o);
    CHECK_FALSE(m.ok());
    CHECK(m.error == "passes must be 1 to 1000");

    o.passes = 1;
    o.threads = 5000;
    m = ah::measure_memory_bandwidth(o);
    CHECK_FALSE(m.ok());
    CHECK(m.error == "threads must be 0 (one per usable CPU) to 1024");

    o.threads = 4;
    o.buffer_bytes = 16; // two words for four threads
    m = ah::measure_memory_bandwidth(o);
    CHECK_FALSE(m.ok());
    CHECK(m.error == "a buffer of 16 bytes gives 4 threads nothing to read");

    // More than the machine holds: refused before anything is allocated.
    o.threads = 1;
    o.buffer_bytes = ~std::uint64_t{0} - 7;
    m = ah::measure_memory_bandwidth(o);
    CHECK_FALSE(m.ok());
    CHECK(m.gbps == 0);
    const auto physical = ah::detail::membw::physical_memory();
    REQUIRE(physical != 0); // Linux says
    CHECK(m.error == "a buffer of 18446744073709551608 bytes is more than the machine's memory (" +
                         std::to_string(physical) + " bytes)");
}

TEST_CASE("the buffer stays within the memory available to the process") {
    // MemAvailable, or a container's limit when lower; unknown figures leave the other.
    ah::memory_info m;
    m.available_bytes = {16 * ah::units::gib, ah::origin::sysfs};
    CHECK(ah::bandwidth_options_for(m).memory_available == 16 * ah::units::gib);
    m.cgroup_limit_bytes = {1 * ah::units::gib, ah::origin::sysfs};
    auto o = ah::bandwidth_options_for(m);
    CHECK(o.memory_available == 1 * ah::units::gib);
    CHECK(o.passes == 5); // the other options are the defaults, or the ones given
    ah::bandwidth_options given;
    given.threads = 3;
    CHECK(ah::bandwidth_options_for(m, given).threads == 3);
    m.available_bytes.reset();
    CHECK(ah::bandwidth_options_for(m).memory_available == 1 * ah::units::gib);
    m.cgroup_limit_bytes.reset();
    CHECK(ah::bandwidth_options_for(m).memory_available == 0); // unknown: the OS's free memory
    // The room left under the limit, when less; none at all refuses every buffer (one byte
    // is less than the smallest).
    m.available_bytes = {16 * ah::units::gib, ah::origin::sysfs};
    m.cgroup_limit_bytes = {8 * ah::units::gib, ah::origin::sysfs};
    m.cgroup_free_bytes = {2 * ah::units::gib, ah::origin::sysfs};
    CHECK(ah::bandwidth_options_for(m).memory_available == 2 * ah::units::gib);
    m.cgroup_free_bytes = {0, ah::origin::sysfs};
    CHECK(ah::bandwidth_options_for(m).memory_available == 1);
    CHECK(ah::detail::membw::default_buffer_bytes(1) == ah::detail::membw::smallest_default_buffer);
    m.cgroup_free_bytes = {32 * ah::units::gib, ah::origin::sysfs}; // more than the rest: the rest
    CHECK(ah::bandwidth_options_for(m).memory_available == 8 * ah::units::gib);
    m = {};

    // 320 MiB available: the default buffer is a quarter of it, and a buffer larger than
    // what is available is refused before anything is allocated.
    o.memory_available = 320 * ah::units::mib;
    o.threads = 1;
    o.passes = 1;
    const auto measured = ah::measure_memory_bandwidth(o);
    REQUIRE_MESSAGE(measured.ok(), measured.error);
    CHECK(measured.bytes_per_pass == 80 * ah::units::mib);
    o.memory_available = 8 * ah::units::mib;
    o.buffer_bytes = 16 * ah::units::mib;
    const auto refused = ah::measure_memory_bandwidth(o);
    CHECK_FALSE(refused.ok());
    CHECK(refused.error == "a buffer of 16777216 bytes is more than the memory available (8388608 bytes)");
    // Below 256 MiB available, the default is the 64 MiB floor.
    CHECK(ah::detail::membw::default_buffer_bytes(128 * ah::units::mib) == 64 * ah::units::mib);
}

TEST_CASE("bandwidth_options_for a host: no more threads than the CPU quota") {
    // A pod limited to 2.5 CPUs on a 64-CPU node: 3 threads, not 64 (which would spend
    // the quota early in each period and wait out the rest, reading slower).
    ah::host_info h;
    h.cpu.usable_threads = 64;
    h.cpu.cpu_quota = 2.5;
    CHECK(ah::bandwidth_options_for(h).threads == 3);
    h.cpu.cpu_quota = 4;
    CHECK(ah::bandwidth_options_for(h).threads == 4);
    // A quota above the CPUs it may use, none, or nonsense: one thread a usable CPU (0).
    h.cpu.cpu_quota = 100;
    CHECK(ah::bandwidth_options_for(h).threads == 0);
    h.cpu.cpu_quota = 0;
    CHECK(ah::bandwidth_options_for(h).threads == 0);
    h.cpu.cpu_quota = std::numeric_limits<double>::quiet_NaN();
    CHECK(ah::bandwidth_options_for(h).threads == 0);
    h.cpu.cpu_quota = 1e300;
    CHECK(ah::bandwidth_options_for(h).threads == 0);
    // Threads the caller chose stay, and the memory is read as before.
    h.cpu.cpu_quota = 2;
    h.memory.available_bytes = {8 * ah::units::gib, ah::origin::sysfs};
    ah::bandwidth_options mine;
    mine.threads = 16;
    const auto o = ah::bandwidth_options_for(h, mine);
    CHECK(o.threads == 16);
    CHECK(o.memory_available == 8 * ah::units::gib);
}

TEST_CASE("apply_cpu_bandwidth gives the CPU a measured bandwidth, and then a decode rate") {
    std::vector<ah::accelerator_profile> devices(2);
    devices[0].kind = ah::device_kind::cpu;
    devices[0].memory_bytes = {64 * ah::units::gib, ah::origin::sysfs};
    devices[1] = ah::profile_from_spec(*ah::find_device("RTX 4090"));
    const auto& m = *ah::find_model("llama-3.1-8b");
    CHECK(ah::estimate_throughput(devices[0], m, ah::quant_format::q4_k_m).decode_tokens_per_second == 0);

    ah::bandwidth_measurement failed;
    failed.error = "nothing measured";
    CHECK(ah::apply_cpu_bandwidth(devices, failed) == 0);
    CHECK_FALSE(devices[0].memory_bandwidth_gbps);

    ah::bandwidth_measurement measured;
    measured.gbps = 50;
    CHECK(ah::apply_cpu_bandwidth(devices, measured) == 1);
    CHECK(devices[0].memory_bandwidth_gbps.from == ah::origin::measured);
    CHECK(*devices[0].memory_bandwidth_gbps == 50);
    CHECK(devices[1].memory_bandwidth_gbps.from == ah::origin::catalogue); // GPUs are not touched
    // Decode reads the weights once per token: at 50 GB/s a ~4.9 GB model runs below 10 tok/s.
    const double tps = ah::estimate_throughput(devices[0], m, ah::quant_format::q4_k_m).decode_tokens_per_second;
    CHECK(tps > 5);
    CHECK(tps < 10);

    // A value the caller gave is kept.
    devices[0].memory_bandwidth_gbps = {80.0, ah::origin::user};
    CHECK(ah::apply_cpu_bandwidth(devices, measured) == 0);
    CHECK(*devices[0].memory_bandwidth_gbps == 80);
}

TEST_CASE("apply_cpu_bandwidth on a registry returns a copy with the CPU's figure, the rest kept") {
    std::vector<ah::accelerator_profile> devices(2);
    devices[0].kind = ah::device_kind::cpu;
    devices[0].memory_bytes = {64 * ah::units::gib, ah::origin::sysfs};
    devices[1] = ah::profile_from_spec(*ah::find_device("RTX 4090"));
    ah::warning w;
    w.kind = ah::warning_kind::tool_not_found;
    w.subject = "nvidia-smi";
    const ah::accelerator_registry reg(devices, {w});

    ah::bandwidth_measurement failed;
    failed.error = "nothing measured";
    CHECK(ah::apply_cpu_bandwidth(reg, failed) == reg);

    ah::bandwidth_measurement measured;
    measured.gbps = 42.5;
    const auto out = ah::apply_cpu_bandwidth(reg, measured);
    REQUIRE(out.size() == 2);
    CHECK(out.all()[0].memory_bandwidth_gbps.from == ah::origin::measured);
    CHECK(*out.all()[0].memory_bandwidth_gbps == 42.5);
    CHECK(*out.all()[1].memory_bandwidth_gbps == *devices[1].memory_bandwidth_gbps);
    REQUIRE(out.warnings().size() == 1);
    CHECK(out.warnings()[0].subject == "nvidia-smi");
    CHECK_FALSE(reg.all()[0].memory_bandwidth_gbps); // the registry given is unchanged
    CHECK_FALSE(out == reg);
}
