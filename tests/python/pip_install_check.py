"""`pip install .` builds the package from the checkout, and the installed copy works away
from the tree: its own configs/, gymnasium.make, check_env and a replay.

Run by ctest (PythonTest.PipInstall) with .venv's python, which tools/setup.sh gives
scikit-build-core and pybind11 so the build needs no network; the build folder is
build/pip (pyproject.toml), compiled objects come from ccache.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHECK = r"""
import os, sys, gymnasium as gym, meshsim
from gymnasium.utils.env_checker import check_env
site = sys.argv[1]
for path in (meshsim.__file__, meshsim.default_scenario_path(), meshsim.default_training_path()):
    assert path.startswith(site), path + " is not in the installed package"
    assert os.path.exists(path), path
check_env(gym.make("meshsim/Autoscaling-v0").unwrapped, skip_render_check=True)
run = meshsim.replay(frames=False, run__until_s=600)
assert run.summary["requests"]["completed"] > 0, run.summary["requests"]
print("installed package works:", run.summary["requests"]["completed"], "requests completed")
"""


def main():
    try:
        import scikit_build_core  # noqa: F401
    except ImportError:
        print("skipped: scikit-build-core is not installed (tools/setup.sh puts it in .venv)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        site = os.path.join(tmp, "site")
        env = dict(os.environ, CCACHE_BASEDIR=ROOT, CCACHE_NOHASHDIR="1")
        env.pop("PYTHONPATH", None)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--no-build-isolation", "--no-deps", "--target", site,
                        # the main build's flags, so ccache serves its objects
                        "--config-settings=cmake.define.MESHSIM_WERROR=ON", ROOT], check=True, env=env)
        subprocess.run([sys.executable, "-c", CHECK, site], check=True, cwd=tmp, env=dict(env, PYTHONPATH=site))
    return 0


if __name__ == "__main__":
    sys.exit(main())
