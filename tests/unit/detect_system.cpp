#include "ai_hwaccel/detect/system.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace ah = ai_hwaccel;

TEST_CASE("host_system::read_file") {
    test::scratch_dir dir;
    dir.write("proc/meminfo", "MemTotal: 1024 kB\n");
    dir.write("big", std::string(10000, 'x'));
    const ah::host_system sys(dir.path().string());
    const auto r = sys.read_file("/proc/meminfo", 4096);
    CHECK(r.status == ah::read_status::ok);
    CHECK(r.data == "MemTotal: 1024 kB\n");
    // A file over the cap is cut at the cap and says so.
    const auto big = sys.read_file("/big", 100);
    CHECK(big.status == ah::read_status::truncated);
    CHECK(big.data.size() == 100);
    CHECK(big.ok());
    CHECK(sys.read_file("/big", 10000).status == ah::read_status::ok);
    CHECK(sys.read_file("/missing", 10).status == ah::read_status::not_found);
    CHECK_FALSE(sys.read_file("/missing", 10).ok());
    // A directory is not a file.
    CHECK(sys.read_file("/proc", 10).status == ah::read_status::error);
}

TEST_CASE("host_system::read_file permission") {
    if (::geteuid() == 0) {
        MESSAGE("skipped: root reads any file");
        return;
    }
    test::scratch_dir dir;
    dir.write("secret", "x");
    ::chmod((dir.path() / "secret").c_str(), 0);
    CHECK(ah::host_system(dir.path().string()).read_file("/secret", 10).status ==
          ah::read_status::permission_denied);
}

TEST_CASE("host_system::read_file does not block on a FIFO") {
    test::scratch_dir dir;
    const auto fifo = dir.path() / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(ah::host_system(dir.path().string()).read_file("/fifo", 10).status == ah::read_status::error);
}

TEST_CASE("host_system::list_dir") {
    test::scratch_dir dir;
    dir.write("sys/class/drm/card0/x", "");
    dir.write("sys/class/drm/card1/x", "");
    const ah::host_system sys(dir.path().string() + "///");
    auto names = sys.list_dir("/sys/class/drm");
    REQUIRE(names.has_value());
    std::sort(names->begin(), names->end());
    CHECK(*names == std::vector<std::string>{"card0", "card1"});
    CHECK_FALSE(sys.list_dir("/sys/class/nope").has_value());
}

TEST_CASE("host_system::read_link") {
    test::scratch_dir dir;
    dir.write("sys/devices/pci0000:00/0000:00:01.0/x", "");
    std::filesystem::create_directories(dir.path() / "sys/class/drm/card0");
    std::filesystem::create_symlink("../../../../bus/pci/drivers/amdgpu", dir.path() / "sys/class/drm/card0/driver");
    const ah::host_system sys(dir.path().string());
    CHECK(sys.read_link("/sys/class/drm/card0/driver") == "../../../../bus/pci/drivers/amdgpu");
    CHECK_FALSE(sys.read_link("/sys/class/drm/card0").has_value());
    CHECK(sys.exists("/sys/class/drm/card0"));
    CHECK_FALSE(sys.exists("/sys/class/drm/card9"));
}

TEST_CASE("host_system::env") {
    ::setenv("AI_HWACCEL_TEST_VARIABLE", "value", 1);
    const ah::host_system sys;
    CHECK(sys.env("AI_HWACCEL_TEST_VARIABLE") == "value");
    ::unsetenv("AI_HWACCEL_TEST_VARIABLE");
    CHECK_FALSE(sys.env("AI_HWACCEL_TEST_VARIABLE").has_value());
}

TEST_CASE("system_view") {
    static_assert(ah::system_view<ah::host_system>);
    static_assert(!ah::system_view<int>);
}
