"""A stand-in for the parts of the `conan` Python package that ai-hwaccel's recipes use.

Conan cannot be installed where the tests run, so the tests load conan/conanfile.py and
conan/test_package/conanfile.py against these modules instead. Each stand-in does what
Conan 2 documents for the call, for the cases the recipes meet: copy() copies by fnmatch
pattern, options accept only their declared values, check_min_cppstd() compares the
cppstd setting, CMake() configures and builds with the toolchain values a CMakeToolchain
would give. Anything else is absent, so a recipe that starts using more of Conan fails
here rather than passing untested.
"""
import fnmatch
import os
import shutil
import subprocess
import sys
import types


class ConanInvalidConfiguration(Exception):
    pass


class ConanException(Exception):
    pass


class _Value:
    """An option or setting value: compares with strings, is truthy like Conan's."""

    def __init__(self, value):
        self._value = value

    def __bool__(self):
        return str(self._value) not in ("False", "None", "0", "")

    def __eq__(self, other):
        return str(self._value) == str(other)

    def __hash__(self):
        return hash(str(self._value))

    def __str__(self):
        return str(self._value)


class Options:
    def __init__(self, declared, defaults, chosen):
        self._declared = dict(declared)
        self._values = {}
        for name, value in {**defaults, **chosen}.items():
            if name not in self._declared:
                raise ConanException(f"option '{name}' does not exist")
            if value not in self._declared[name]:
                raise ConanException(f"'{value}' is not a possible value of option '{name}'")
            self._values[name] = value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._values:
            raise ConanException(f"option '{name}' does not exist")
        return _Value(self._values[name])

    def get_safe(self, name, default=None):
        return self._values.get(name, default)


class Settings:
    def __init__(self, values):
        self._values = values  # "compiler.cppstd" -> "20"

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._values and not any(k.startswith(name + ".") for k in self._values):
            raise ConanException(f"setting '{name}' does not exist")
        return _SettingNode(self._values, name)

    def get_safe(self, name, default=None):
        return self._values.get(name, default)


class _SettingNode(_Value):
    def __init__(self, values, path):
        super().__init__(values.get(path))
        self._all = values
        self._path = path

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _SettingNode(self._all, f"{self._path}.{name}")


class CppInfo:
    def __init__(self):
        self.includedirs = ["include"]
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.defines = []
        self.system_libs = []
        self.cxxflags = []
        self.requires = []
        self._properties = {}

    def set_property(self, name, value):
        self._properties[name] = value

    def get_property(self, name):
        return self._properties.get(name)


class _Info:
    def __init__(self):
        self.cleared = False

    def clear(self):
        self.cleared = True


class _Requirements:
    def __init__(self):
        self.refs = []

    def __call__(self, ref, **kwargs):
        self.refs.append(ref)


class _Folders:
    def __init__(self):
        self.source = ""
        self.build = ""
        self.generators = ""


class _CppLayout:
    def __init__(self):
        self.build = types.SimpleNamespace(bindir=".", bindirs=["."])


class ConanFile:
    name = None
    version = None
    options = {}
    default_options = {}
    settings = ()

    def __init__(self, chosen_options=None, settings=None, tested_reference_str=None):
        self.options = Options(type(self).options, type(self).default_options,
                               chosen_options or {})
        self.settings = Settings(settings or {})
        self.requires = _Requirements()
        self.cpp_info = CppInfo()
        self.info = _Info()
        self.folders = _Folders()
        self.cpp = _CppLayout()
        self.tested_reference_str = tested_reference_str
        self.output_log = []
        # Set by the harness as Conan would for each step.
        self.recipe_folder = None
        self.export_sources_folder = None
        self.source_folder = None
        self.build_folder = None
        self.package_folder = None
        self.generators_folder = None
        self.test_env = {}

    def run(self, command, env=None, **kwargs):
        result = subprocess.run(command, shell=True, capture_output=True, text=True)
        self.output_log.append(result.stdout)
        if result.returncode != 0:
            raise ConanException(f"'{command}' failed ({result.returncode}):\n"
                                 f"{result.stdout}{result.stderr}")


# ---- conan.tools.* ----------------------------------------------------------------------

def copy(conanfile, pattern, src, dst, keep_path=True, excludes=None):
    """Copies the files below src whose relative path matches pattern (fnmatch)."""
    copied = []
    src = os.path.normpath(src)
    for root, _dirs, files in os.walk(src):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), src)
            if not fnmatch.fnmatch(rel, pattern) and not fnmatch.fnmatch(f, pattern):
                continue
            if excludes and any(fnmatch.fnmatch(rel, e) for e in excludes):
                continue
            target = os.path.join(dst, rel if keep_path else f)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(root, f), target)
            copied.append(target)
    return copied


def basic_layout(conanfile, src_folder="."):
    conanfile.folders.source = src_folder
    conanfile.folders.build = os.path.join("build", str(conanfile.settings.get_safe("build_type") or "Release"))
    conanfile.folders.generators = os.path.join(conanfile.folders.build, "generators")


def cmake_layout(conanfile, src_folder="."):
    conanfile.folders.source = src_folder
    conanfile.folders.build = os.path.join("build", str(conanfile.settings.get_safe("build_type") or "Release"))
    conanfile.folders.generators = os.path.join(conanfile.folders.build, "generators")
    conanfile.cpp.build.bindir = "."


def _cppstd_number(value):
    text = str(value).replace("gnu", "")
    return {"98": 1998, "11": 2011, "14": 2014, "17": 2017, "20": 2020, "23": 2023}[text]


def check_min_cppstd(conanfile, cppstd, gnu_extensions=False):
    current = conanfile.settings.get_safe("compiler.cppstd")
    if current is None:
        raise ConanInvalidConfiguration("compiler.cppstd is not set (the stand-in has no "
                                        "per-compiler defaults)")
    if _cppstd_number(current) < _cppstd_number(cppstd):
        raise ConanInvalidConfiguration(f"Current cppstd ({current}) is lower than the "
                                        f"required C++ standard ({cppstd}).")


def can_run(conanfile):
    return True


class CMake:
    """Configures and builds as conan's CMake helper does after CMakeToolchain and
    CMakeDeps: the compiler and C++ standard from the settings, the generated package
    configs on CMAKE_PREFIX_PATH."""

    def __init__(self, conanfile):
        self._c = conanfile

    def configure(self):
        c = self._c
        cmd = [c.test_env["cmake"], "-S", c.source_folder, "-B", c.build_folder,
               f"-DCMAKE_PREFIX_PATH={c.generators_folder}",
               f"-DCMAKE_CXX_COMPILER={c.test_env['cxx']}",
               f"-DCMAKE_BUILD_TYPE={c.settings.get_safe('build_type')}",
               f"-DCMAKE_CXX_STANDARD={str(c.settings.get_safe('compiler.cppstd')).replace('gnu', '')}"]
        if c.test_env.get("generator"):
            cmd += ["-G", c.test_env["generator"]]
        _check_call(cmd)

    def build(self):
        _check_call([self._c.test_env["cmake"], "--build", self._c.build_folder])


def _check_call(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ConanException(f"{' '.join(cmd)} failed:\n{result.stdout}{result.stderr}")


def install():
    """Registers the stand-in modules under the names the recipes import."""
    modules = {
        "conan": {"ConanFile": ConanFile, "__version__": "2.0.0-stand-in"},
        "conan.errors": {"ConanInvalidConfiguration": ConanInvalidConfiguration,
                         "ConanException": ConanException},
        "conan.tools": {},
        "conan.tools.files": {"copy": copy},
        "conan.tools.layout": {"basic_layout": basic_layout},
        "conan.tools.build": {"check_min_cppstd": check_min_cppstd, "can_run": can_run},
        "conan.tools.cmake": {"CMake": CMake, "cmake_layout": cmake_layout},
    }
    for name, attrs in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        module.__path__ = []  # a package, so its submodules import
        sys.modules[name] = module


def load_recipe(path, module_name):
    """Imports a conanfile.py and returns its ConanFile subclass."""
    import importlib.util

    install()
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, ConanFile) and v is not ConanFile]
    if len(classes) != 1:
        raise ConanException(f"{path}: expected one ConanFile subclass, found {len(classes)}")
    return module, classes[0]
