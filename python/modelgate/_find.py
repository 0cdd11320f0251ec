"""Where the wheel put the modelgate binary.

The wheel installs the binary as a script (``<scripts>/modelgate``, ``modelgate.exe`` on
Windows), not inside this package, so it is looked up the way installers lay scripts out: the
scheme of the interpreter running this code (a virtual environment, or the system), the user
scheme (``pip install --user``), and a ``bin`` folder beside the package (``pip install
--target``). ``PATH`` is deliberately not searched: a different modelgate found there would
answer for a version this package was not built with.
"""

import os
import sys
import sysconfig
from typing import List

__all__ = ["find_modelgate_bin"]


def _exe_name() -> str:
    return "modelgate" + (sysconfig.get_config_var("EXE") or "")


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _candidates() -> List[str]:
    name = _exe_name()
    dirs = [sysconfig.get_path("scripts")]
    try:
        dirs.append(sysconfig.get_path("scripts", scheme=_user_scheme()))
    except KeyError:
        pass
    # `pip install --target DIR`: the package in DIR/modelgate, the scripts in DIR/bin.
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs.append(os.path.join(package_parent, "bin"))
    return [os.path.join(d, name) for d in dirs if d]


def find_modelgate_bin() -> str:
    """The path of the modelgate binary installed with this package.

    Raises ``FileNotFoundError`` naming every place looked at when there is none (the package
    was copied without its wheel's scripts, for instance).
    """
    looked = _candidates()
    for path in looked:
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "the modelgate binary installed with the modelgate-cli wheel was not found; looked at: "
        + ", ".join(looked)
    )
