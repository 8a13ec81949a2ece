// Test helpers: real captures from ../shared/fixtures/real (AI_HWACCEL_FIXTURES_DIR) and
// scratch directory trees for system_view tests.
#pragma once

#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace test {

inline std::optional<std::string> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A real capture, or nullopt (with a message) where the captures are not available.
inline std::optional<std::string> capture(const std::string& relative) {
    const std::filesystem::path p = std::filesystem::path(AI_HWACCEL_FIXTURES_DIR) / relative;
    auto text = read_file(p);
    if (!text) MESSAGE("skipped: capture not found: " << p.string() << " (set AI_HWACCEL_FIXTURES_DIR)");
    return text;
}

/// A fresh directory under the system temp folder, removed when the object goes.
class scratch_dir {
public:
    scratch_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ai_hwaccel_test_XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) FAIL("mkdtemp failed");
        path_ = tmpl;
    }
    ~scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    void write(const std::string& relative, const std::string& content) const {
        const auto p = path_ / relative;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
    }

private:
    std::filesystem::path path_;
};

/// A rooted host where chosen paths read as "permission denied" (works when tests run as
/// root, where chmod denies nothing).
struct denying_view : ai_hwaccel::host_system {
    using ai_hwaccel::host_system::host_system;
    std::set<std::string, std::less<>> denied;
    ai_hwaccel::file_read read_file(std::string_view path, std::size_t cap = ai_hwaccel::default_read_cap) const {
        if (denied.count(path)) return {ai_hwaccel::read_status::permission_denied, {}};
        return ai_hwaccel::host_system::read_file(path, cap);
    }
};

inline std::size_t count_kind(std::span<const ai_hwaccel::warning> w, ai_hwaccel::warning_kind k) {
    return static_cast<std::size_t>(
        std::count_if(w.begin(), w.end(), [&](const ai_hwaccel::warning& x) { return x.kind == k; }));
}

// Warnings one per line, for INFO() when a test fails.
inline std::string warnings_text(std::span<const ai_hwaccel::warning> ws) {
    std::string s;
    for (const auto& w : ws) s += w.subject + ": " + w.message + "\n";
    return s;
}

} // namespace test
