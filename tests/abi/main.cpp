// Links two translation units that include the library with different backend switches
// and checks each still sees its own configuration.
#include <cstddef>
#include <cstdint>
#include <cstdio>

std::uint32_t mask_seen_by_all_backends_tu();
std::uint32_t mask_seen_by_cpu_only_tu();
bool cuda_compiled_in_all_backends_tu();
bool cuda_compiled_in_cpu_only_tu();
std::size_t tools_seen_by_all_backends_tu();
std::size_t tools_seen_by_cpu_only_tu();

int main() {
    int failures = 0;
    auto check = [&](bool ok, const char* what) {
        if (!ok) {
            std::printf("FAILED: %s\n", what);
            ++failures;
        }
    };
    check(mask_seen_by_all_backends_tu() == (1u << 17) - 1, "all-backends TU sees all 17 backends");
    check(mask_seen_by_cpu_only_tu() == 0, "cpu-only TU sees no backend");
    check(cuda_compiled_in_all_backends_tu(), "all-backends TU has CUDA");
    check(!cuda_compiled_in_cpu_only_tu(), "cpu-only TU has no CUDA");
    check(tools_seen_by_all_backends_tu() == 1, "all-backends TU lists nvidia-smi");
    check(tools_seen_by_cpu_only_tu() == 0, "cpu-only TU lists no CUDA tool");
    if (failures == 0) std::puts("two configurations linked into one program, each intact");
    return failures == 0 ? 0 : 1;
}
