"""``python -m modelgate ...``: the bundled binary with the same arguments and exit code."""

import os
import sys

from modelgate._find import find_modelgate_bin


def main() -> int:
    """Run the bundled binary; on POSIX it replaces this process."""
    binary = os.fsdecode(find_modelgate_bin())
    argv = [binary, *sys.argv[1:]]
    if sys.platform == "win32":
        # Windows has no exec that keeps the console and the exit code; wait for a child.
        import subprocess

        return subprocess.run(argv).returncode
    os.execv(binary, argv)
    return 2  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
