// Test helpers: real captures from ../shared/fixtures/real (AI_HWACCEL_FIXTURES_DIR) and
// scratch directory trees for system_view tests.
#pragma once

#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <mutex>
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

/// Whether a folder of AI_HWACCEL_MACHINES_DIR is a fixture machine: hand-made
/// ("handmade-*") or written by `ai-hwaccel gather` on a real one ("captured-*").
inline bool is_fixture_machine(const std::filesystem::directory_entry& e) {
    const auto name = e.path().filename().string();
    return e.is_directory() && (name.starts_with("handmade-") || name.starts_with("captured-"));
}

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

/// Calls `f(relative_path, text)` for every real capture under AI_HWACCEL_FIXTURES_DIR (the
/// `.source` notes beside them and README.md are not captures) and returns how many there were:
/// 0, with a message, where the captures are not available. `relative_path` uses '/'.
template <class F>
std::size_t for_each_capture(F&& f) {
    namespace fs = std::filesystem;
    const fs::path root(AI_HWACCEL_FIXTURES_DIR);
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        MESSAGE("skipped: fixtures not found: " << root.string() << " (set AI_HWACCEL_FIXTURES_DIR)");
        return 0;
    }
    std::size_t count = 0;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->path().extension() == ".source" || it->path().filename() == "README.md")
            continue;
        const std::string relative = it->path().lexically_relative(root).generic_string();
        CAPTURE(relative);
        const auto text = read_file(it->path());
        REQUIRE(text);
        ++count;
        f(std::string_view(relative), *text);
    }
    CHECK_FALSE(ec);
    return count;
}

/// A capture format's sniffer and the real captures that are its own: those whose path under
/// the fixtures folder starts with `prefix`, unless it also starts with `except`. A null
/// `prefix` is a format with no real capture yet: its sniffer must say 0 to all of them.
struct sniffer_row {
    const char* name;
    int (*sniff)(std::string_view) noexcept;
    const char* prefix;
    const char* except = nullptr;
};

inline bool claims(const sniffer_row& row, std::string_view relative) {
    return row.prefix != nullptr && relative.starts_with(row.prefix) &&
           !(row.except != nullptr && relative.starts_with(row.except));
}

/// Called with each capture a row claims, its path and its text (for parsing it).
using claimed_capture_fn = std::function<void(const sniffer_row&, std::string_view, const std::string&)>;

/// Sniffs every real capture with every row's sniffer: > 0 for the captures the sniffer owns
/// (claimed by any row with that sniffer, so one sniffer may have several rows), 0 for every
/// other. Also checks that each row with a prefix claims at least one capture, that the
/// (capture, row) claims number exactly `expected_claims`, and that the walk saw the whole
/// fixture set (over 100 captures). `on_claim` runs for each claim, inside the same CAPTUREs.
/// Where the captures are not available it checks nothing.
inline void check_sniffers(std::span<const sniffer_row> rows, std::size_t expected_claims,
                           const claimed_capture_fn& on_claim = {}) {
    std::vector<std::size_t> per_row(rows.size(), 0);
    const std::size_t captures = for_each_capture([&](std::string_view relative, const std::string& text) {
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const sniffer_row& row = rows[i];
            const std::string sniffer(row.name);
            CAPTURE(sniffer);
            const auto same_sniffer = [&](const sniffer_row& r) { return r.sniff == row.sniff; };
            if (std::none_of(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(i), same_sniffer)) {
                // The first row of its sniffer checks it for all of that sniffer's rows.
                const bool own = std::any_of(rows.begin(), rows.end(),
                                             [&](const sniffer_row& r) { return same_sniffer(r) && claims(r, relative); });
                const int score = row.sniff(text);
                if (own) CHECK(score > 0);
                else CHECK(score == 0);
            }
            if (claims(row, relative)) {
                ++per_row[i];
                if (on_claim) on_claim(row, relative, text);
            }
        }
    });
    if (captures == 0) return;
    CHECK(captures > 100);
    std::size_t total = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string sniffer(rows[i].name);
        CAPTURE(sniffer);
        if (rows[i].prefix != nullptr) CHECK(per_row[i] > 0);
        total += per_row[i];
    }
    CHECK(total == expected_claims);
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

/// A rooted host that notes the files it reads and the links it follows, in order (safe
/// for the detector's parallel probes; the order is then theirs).
struct counting_view : ai_hwaccel::host_system {
    using ai_hwaccel::host_system::host_system;
    mutable std::vector<std::string> read;
    ai_hwaccel::file_read read_file(std::string_view path, std::size_t cap = ai_hwaccel::default_read_cap) const {
        note(path);
        return ai_hwaccel::host_system::read_file(path, cap);
    }
    std::optional<std::string> read_link(std::string_view path) const {
        note(path);
        return ai_hwaccel::host_system::read_link(path);
    }

private:
    void note(std::string_view path) const {
        const std::lock_guard<std::mutex> lock(mutex_);
        read.emplace_back(path);
    }
    mutable std::mutex mutex_;
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
