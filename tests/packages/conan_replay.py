#!/usr/bin/env python3
"""Replays `conan create conan/ -o ...` for ai-hwaccel without Conan (see conan_stub.py).

The recipe's own methods run in Conan's order (export_sources, layout, requirements,
validate, package, package_id, package_info) on real folders; a CMake config is written
from the resulting cpp_info the way CMakeDeps writes one; then the recipe's
test_package/conanfile.py builds and runs conan/test_package through its own build() and
test(), and the program must report exactly the backends the options chose.

    conan_replay.py --source-dir DIR --work-dir DIR --cxx C++ [--generator G]
                    [--disable cuda,rocm ...] [--only tpu,gaudi] [--without-json]
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conan_stub  # noqa: E402

# Where a Conan requirement's CMake package comes from in this replay: the same names the
# Conan Center recipes give them, found on the system.
_CMAKE_NAMES = {
    "range-v3": ("range-v3", "range-v3::range-v3"),
    "nlohmann_json": ("nlohmann_json", "nlohmann_json::nlohmann_json"),
}


def fail(message):
    print(f"conan replay: {message}", file=sys.stderr)
    sys.exit(1)


def project_backends(source_dir):
    text = open(os.path.join(source_dir, "CMakeLists.txt"), encoding="utf-8").read()
    match = re.search(r"set\(AI_HWACCEL_BACKENDS\s([^)]*)\)", text)
    if not match:
        fail("no set(AI_HWACCEL_BACKENDS ...) in CMakeLists.txt")
    return [b.lower() for b in match.group(1).split()]


def project_version(source_dir):
    text = open(os.path.join(source_dir, "include", "ai_hwaccel", "config.hpp"),
                encoding="utf-8").read()
    return re.search(r'#define AI_HWACCEL_VERSION_STRING "([0-9.]+)"', text).group(1)


def cmake_list(items):
    return ";".join(items).replace('"', '\\"')


def write_cmakedeps_config(recipe, package_folder, generators):
    """The parts of CMakeDeps' output a consumer of this package relies on."""
    info = recipe.cpp_info
    file_name = info.get_property("cmake_file_name") or recipe.name
    target = info.get_property("cmake_target_name") or f"{file_name}::{file_name}"
    lines = ["# Written by tests/packages/conan_replay.py from the recipe's cpp_info.",
             "include(CMakeFindDependencyMacro)"]
    links = []
    for ref in recipe.requires.refs:
        dep = ref.split("/")[0]
        if dep not in _CMAKE_NAMES:
            fail(f"requirement {ref} has no CMake mapping in the replay")
        dep_file, dep_target = _CMAKE_NAMES[dep]
        lines.append(f"find_dependency({dep_file})")
        links.append(dep_target)
    links += info.system_libs
    includes = [os.path.join(package_folder, d) for d in info.includedirs]
    lines += [f"if(NOT TARGET {target})",
              f"  add_library({target} INTERFACE IMPORTED)",
              f"  set_target_properties({target} PROPERTIES",
              f'    INTERFACE_INCLUDE_DIRECTORIES "{cmake_list(includes)}"',
              f'    INTERFACE_COMPILE_DEFINITIONS "{cmake_list(info.defines)}"',
              f'    INTERFACE_LINK_LIBRARIES "{cmake_list(links)}")',
              "endif()", ""]
    os.makedirs(generators, exist_ok=True)
    # CMakeDeps names the file <name>-config.cmake for an all-lower-case name.
    config_name = (f"{file_name}-config.cmake" if file_name == file_name.lower()
                   else f"{file_name}Config.cmake")
    with open(os.path.join(generators, config_name), "w", encoding="utf-8") as out:
        out.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--cxx", required=True)
    parser.add_argument("--cmake", default="cmake")
    parser.add_argument("--generator", default="")
    parser.add_argument("--only", default="", help="backends to keep on (others off)")
    parser.add_argument("--without-json", action="store_true")
    args = parser.parse_args()

    source_dir = os.path.abspath(args.source_dir)
    recipe_dir = os.path.join(source_dir, "conan")
    backends = project_backends(source_dir)
    _module, recipe_class = conan_stub.load_recipe(os.path.join(recipe_dir, "conanfile.py"),
                                                   "ai_hwaccel_conanfile")

    # The recipe as a package: header-only, the project's version, one option per backend.
    if recipe_class.package_type != "header-library":
        fail(f"package_type is {recipe_class.package_type!r}, not 'header-library'")
    if recipe_class.version != project_version(source_dir):
        fail(f"recipe version {recipe_class.version} differs from config.hpp")
    declared = set(recipe_class.options)
    if declared != set(backends) | {"with_json"}:
        fail(f"options {sorted(declared)} do not match the backends {backends} + with_json")

    chosen = {}
    if args.only:
        keep = args.only.split(",")
        unknown = set(keep) - set(backends)
        if unknown:
            fail(f"unknown backends {sorted(unknown)}")
        chosen = {b: (b in keep) for b in backends}
    if args.without_json:
        chosen["with_json"] = False
    enabled = [b for b in backends if chosen.get(b, recipe_class.default_options[b])]
    json_on = chosen.get("with_json", recipe_class.default_options["with_json"])

    work = os.path.abspath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    settings = {"os": "Linux", "arch": "x86_64", "compiler": "gcc", "compiler.version": "12",
                "compiler.cppstd": "20", "build_type": "Release"}

    # validate(): C++20 is required, and refused below it.
    too_old = recipe_class(chosen, {**settings, "compiler.cppstd": "17"})
    try:
        too_old.validate()
        fail("validate() accepted compiler.cppstd=17")
    except conan_stub.ConanInvalidConfiguration as refusal:
        print(f"validate() refuses cppstd 17: {refusal}")

    recipe = recipe_class(chosen, settings)
    recipe.validate()
    recipe.requirements()
    names = [r.split("/")[0] for r in recipe.requires.refs]
    if "range-v3" not in names or ("nlohmann_json" in names) != bool(json_on):
        fail(f"requirements {recipe.requires.refs} for with_json={json_on}")

    # export_sources() from the recipe folder, then build-less packaging from that copy.
    recipe.recipe_folder = recipe_dir
    recipe.export_sources_folder = os.path.join(work, "export_source")
    recipe.export_sources()
    recipe.layout()
    recipe.source_folder = os.path.join(recipe.export_sources_folder, recipe.folders.source)
    recipe.package_folder = os.path.join(work, "package")
    recipe.package()
    wanted = sorted(os.path.relpath(os.path.join(r, f), os.path.join(source_dir, "include"))
                    for r, _d, fs in os.walk(os.path.join(source_dir, "include")) for f in fs)
    packaged = sorted(os.path.relpath(os.path.join(r, f), os.path.join(recipe.package_folder, "include"))
                      for r, _d, fs in os.walk(os.path.join(recipe.package_folder, "include"))
                      for f in fs)
    if wanted != packaged:
        fail(f"package() headers differ from include/: missing {sorted(set(wanted) - set(packaged))}, "
             f"extra {sorted(set(packaged) - set(wanted))}")
    recipe.package_id()
    if not recipe.info.cleared:
        fail("package_id() must clear the info of a header-only package")
    recipe.package_info()

    defines = recipe.cpp_info.defines
    print(f"package_info() defines: {defines}")
    if len(enabled) < len(backends):
        expected = ["AI_HWACCEL_BACKENDS_NONE=1"] + [f"AI_HWACCEL_BACKEND_{b.upper()}=1" for b in enabled]
    else:
        expected = []
    if not json_on:
        expected.append("AI_HWACCEL_JSON=0")
    if defines != expected:
        fail(f"defines {defines}, expected {expected}")

    generators = os.path.join(work, "test_package", "build", "generators")
    write_cmakedeps_config(recipe, recipe.package_folder, generators)

    # test_package: its own recipe drives the build and the run.
    _tmodule, test_class = conan_stub.load_recipe(
        os.path.join(recipe_dir, "test_package", "conanfile.py"), "ai_hwaccel_test_package")
    reference = f"{recipe.name}/{recipe.version}"
    test = test_class(settings=settings, tested_reference_str=reference)
    test.requirements()
    if test.requires.refs != [reference]:
        fail(f"test_package requires {test.requires.refs}, not {reference}")
    test.layout()
    test.source_folder = os.path.join(recipe_dir, "test_package")
    test.build_folder = os.path.join(work, "test_package", test.folders.build)
    test.generators_folder = generators
    test.test_env = {"cmake": args.cmake, "cxx": args.cxx, "generator": args.generator}
    test.build()
    # Conan runs test() with the build folder as the working directory.
    os.chdir(test.build_folder)
    test.test()
    printed = "".join(test.output_log)
    mask = sum(1 << backends.index(b) for b in enabled)
    want = (f"ai_hwaccel {recipe.version} backends:" + "".join(f" {b}" for b in enabled)
            + (f" mask={mask:#x}\n" if mask else " mask=0\n"))
    if printed != want:
        fail(f"test_package printed {printed!r}, expected {want!r}")
    print(f"ok: {printed.strip()}")


if __name__ == "__main__":
    try:
        main()
    except conan_stub.ConanException as error:
        fail(str(error))
