# vcpkg overlay port for ai-hwaccel. It builds the checkout it lives in, so
#   vcpkg install ai-hwaccel[core,cuda,tpu] --overlay-ports=<checkout>/ports
# packages exactly the tree at hand. A port for a registry would fetch a release instead:
#   vcpkg_from_github(OUT_SOURCE_PATH SOURCE_PATH REPO ai-hwaccel/ai-hwaccel-cpp
#                     REF "v${VERSION}" SHA512 <hash of the archive> HEAD_REF main)
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

# Header-only: one (release) configuration serves every build type.
set(VCPKG_BUILD_TYPE release)

# Each feature is one backend switch. The package starts from no backend and turns on the
# selected ones, so `ai-hwaccel[core,cuda]` compiles the CUDA probe alone.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    cuda         AI_HWACCEL_BACKEND_CUDA
    rocm         AI_HWACCEL_BACKEND_ROCM
    intel-gpu    AI_HWACCEL_BACKEND_INTEL_GPU
    apple        AI_HWACCEL_BACKEND_APPLE
    vulkan       AI_HWACCEL_BACKEND_VULKAN
    tpu          AI_HWACCEL_BACKEND_TPU
    gaudi        AI_HWACCEL_BACKEND_GAUDI
    neuron       AI_HWACCEL_BACKEND_NEURON
    intel-npu    AI_HWACCEL_BACKEND_INTEL_NPU
    amd-xdna     AI_HWACCEL_BACKEND_AMD_XDNA
    qualcomm     AI_HWACCEL_BACKEND_QUALCOMM
    cerebras     AI_HWACCEL_BACKEND_CEREBRAS
    graphcore    AI_HWACCEL_BACKEND_GRAPHCORE
    groq         AI_HWACCEL_BACKEND_GROQ
    samsung-npu  AI_HWACCEL_BACKEND_SAMSUNG_NPU
    mediatek-apu AI_HWACCEL_BACKEND_MEDIATEK_APU
    windows      AI_HWACCEL_BACKEND_WINDOWS
    # The library looks for nlohmann_json quietly; with the feature it must be found,
    # without it it must not be picked up from another port.
    json         CMAKE_REQUIRE_FIND_PACKAGE_nlohmann_json
  INVERTED_FEATURES
    json         CMAKE_DISABLE_FIND_PACKAGE_nlohmann_json
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DAI_HWACCEL_BACKENDS_NONE=ON
    ${FEATURE_OPTIONS}
    -DAI_HWACCEL_INSTALL=ON
    -DAI_HWACCEL_BUILD_TESTS=OFF
    -DAI_HWACCEL_BUILD_EXAMPLES=OFF
    -DAI_HWACCEL_BUILD_BENCHMARKS=OFF
    -DAI_HWACCEL_BUILD_CLI=OFF
    -DAI_HWACCEL_BUILD_CAPI=OFF
    -DAI_HWACCEL_BUILD_PYTHON=OFF
)
vcpkg_cmake_install()

# The project installs its config to share/cmake/ai_hwaccel; vcpkg wants share/ai_hwaccel.
vcpkg_cmake_config_fixup(PACKAGE_NAME ai_hwaccel CONFIG_PATH share/cmake/ai_hwaccel)
vcpkg_fixup_pkgconfig()

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
# vcpkg requires share/<port>/copyright: the project's LICENSE (MIT).
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
