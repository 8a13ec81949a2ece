// Uses every part of the library that names a vendor: the backend table, the tool runner
// and its trusted folders, the visibility variables, detection. Built once with every
// backend and once with none; the second binary must not contain a single vendor string
// (tests/vendor_strings.cmake), the first must contain them all (else the check proves
// nothing).
#include "ai_hwaccel/ai_hwaccel.hpp"

#include <cstdio>

namespace ah = ai_hwaccel;

int main(int argc, char**) {
    for (const auto& b : ah::backend_table) {
        for (auto t : b.tools) std::printf("%.*s\n", static_cast<int>(t.size()), t.data());
        for (auto l : b.libraries) std::printf("%.*s\n", static_cast<int>(l.size()), l.data());
        for (auto p : b.paths) std::printf("%.*s\n", static_cast<int>(p.size()), p.data());
    }
    for (auto d : ah::trusted_tool_dirs) std::printf("%.*s\n", static_cast<int>(d.size()), d.data());
    for (const auto& r : ah::visibility_rules) std::printf("%.*s\n", static_cast<int>(r.variable.size()), r.variable.data());
    if (argc > 1) {
        const auto reg = ah::detect();
        const auto r = ah::host_system{}.run({{"true"}});
        std::printf("%zu %d\n", reg.size(), static_cast<int>(r.status));
    }
    return 0;
}
