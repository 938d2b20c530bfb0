"""Cold start (issue 26 item 1): `treegram --version` loads nothing heavy; treegram's kernels cache through its
own locator (benchmarks/bench_coldstart.py measures the times)."""

import os
import subprocess
import sys


def _run(code: str) -> str:
    # without the locator list this test process's `import treegram` put in the environment
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_LOCATOR_CLASSES"}
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout


def test_version_imports_neither_numpy_nor_rich_nor_plugins():
    out = _run("import sys\n"
               "from treegram.cli.app import main\n"
               "assert main(['--version']) == 0\n"
               "heavy = [m for m in ('numpy', 'numba', 'rich', 'pluggy', 'treegram.plugin_manager') if m in sys.modules]\n"
               "print('heavy:', heavy)\n")
    assert out.splitlines()[0].startswith("treegram ")
    assert out.splitlines()[-1] == "heavy: []"


def test_version_with_other_arguments_still_goes_through_argparse():
    out = _run("from treegram.cli.app import main\n"
               "print('rc', main(['parse', '--version']))\n")
    assert out.strip().splitlines()[-1] == "rc 2"  # `parse` has no --version: a usage error, not the version


def test_treegram_kernels_use_the_package_locator_even_when_numba_came_first():
    out = _run("import numba\n"
               "import treegram\n"
               "from treegram.charts import kernels\n"
               "print(type(kernels.fill_chart._cache._impl.locator).__name__)\n")
    assert out.strip() == "PackageCacheLocator"
