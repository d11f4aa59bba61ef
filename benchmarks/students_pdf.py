"""A class's sheets in PDF: `bertdrill sheet -o class.pdf --students N`, in CPU seconds, against the same sheets in HTML.

Run: python benchmarks/students_pdf.py [STUDENTS]   (default 30; issue 24's target: at most 30 s for 30)
Each command runs in a process of its own; its CPU time (user + system, from wait4 through
``resource.RUSAGE_CHILDREN``) is what is compared, since wall time on a shared machine says more about the
machine's load than about bertdrill. The load average is printed beside the figures.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_S = 30.0


def cpu_of(args: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "bertdrill", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    students = sys.argv[1] if len(sys.argv) > 1 else "30"
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        html = cpu_of(["sheet", "-o", "class.html", "--students", students, "--seed", "5"], where)
        pdf = cpu_of(["sheet", "-o", "class.pdf", "--students", students, "--seed", "5"], where)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{'command':<48}{'CPU s':>8}")
    print(f"{'sheet -o class.html --students ' + students + ' (baseline)':<48}{html:>8.1f}")
    print(f"{'sheet -o class.pdf --students ' + students:<48}{pdf:>8.1f}")
    print(f"PDF / HTML {pdf / html:.1f}; target for 30 students: <= {TARGET_S:.0f} s "
          f"({'met' if pdf <= TARGET_S else 'MISSED'}); load average {load}")


if __name__ == "__main__":
    main()
