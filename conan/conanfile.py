"""Conan 2 recipe for ai-hwaccel, a header-only C++20 library.

    conan create conan/ -o "ai-hwaccel/*:rocm=False"

Every backend is an option (all on by default, as in the CMake build). The package holds
the headers only, so one package serves every option set: package_info() turns the chosen
options into the AI_HWACCEL_* definitions each consumer compiles with.
"""
import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"

# CMakeLists.txt's AI_HWACCEL_BACKENDS, lower-cased and in the same (backend-table) order;
# tests/packages/check_packages.py fails when the two lists part.
_BACKENDS = (
    "cuda", "rocm", "intel_gpu", "apple", "vulkan", "tpu", "gaudi", "neuron", "intel_npu",
    "amd_xdna", "qualcomm", "cerebras", "graphcore", "groq", "samsung_npu", "mediatek_apu",
    "windows",
)


class AiHwaccelConan(ConanFile):
    name = "ai-hwaccel"
    version = "0.1.0"  # checked against include/ai_hwaccel/config.hpp by the test suite
    description = ("Find every AI accelerator on a machine and plan model deployment on it "
                   "(header-only C++20)")
    homepage = "https://github.com/ai-hwaccel/ai-hwaccel-cpp"
    url = homepage
    topics = ("gpu", "accelerator", "hardware-detection", "header-only")
    package_type = "header-library"
    license = "MIT"
    settings = "os", "arch", "compiler", "build_type"
    options = {**{backend: [True, False] for backend in _BACKENDS}, "with_json": [True, False]}
    default_options = {**{backend: True for backend in _BACKENDS}, "with_json": True}
    no_copy_source = True

    def export_sources(self):
        # The recipe sits in conan/ of the source tree; the headers are one level up.
        root = os.path.join(self.recipe_folder, os.pardir)
        copy(self, "*", src=os.path.join(root, "include"),
             dst=os.path.join(self.export_sources_folder, "include"))
        copy(self, "LICENSE*", src=root, dst=self.export_sources_folder)

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        self.requires("range-v3/0.12.0")
        if self.options.with_json:
            self.requires("nlohmann_json/3.11.3")

    def package_id(self):
        # Headers only: the options act through package_info(), not through the files.
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)

    def package(self):
        copy(self, "*", src=os.path.join(self.source_folder, "include"),
             dst=os.path.join(self.package_folder, "include"))
        copy(self, "LICENSE*", src=self.source_folder,
             dst=os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        # The names the CMake build installs, so find_package() and pkg-config read the same.
        self.cpp_info.set_property("cmake_file_name", "ai_hwaccel")
        self.cpp_info.set_property("cmake_target_name", "ai_hwaccel::ai_hwaccel")
        self.cpp_info.set_property("pkg_config_name", "ai_hwaccel")

        enabled = [backend for backend in _BACKENDS if self.options.get_safe(backend)]
        if len(enabled) < len(_BACKENDS):
            # Same encoding as the vcpkg port: start from none, name the ones wanted.
            self.cpp_info.defines.append("AI_HWACCEL_BACKENDS_NONE=1")
            self.cpp_info.defines.extend(f"AI_HWACCEL_BACKEND_{b.upper()}=1" for b in enabled)
        if not self.options.with_json:
            # Keeps io/json.hpp off even where another package puts nlohmann/json in reach.
            self.cpp_info.defines.append("AI_HWACCEL_JSON=0")

        if self.settings.os in ("Linux", "FreeBSD"):
            # Probes run in parallel threads; NVML is opened with dlopen.
            self.cpp_info.system_libs = ["pthread", "dl"]
