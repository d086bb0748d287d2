#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot the emulated AI host many times in a row and count what ended each boot.

The emulator, not a test, is under scrutiny here: a boot ends 'ok' (the
scenario exited 0), 'failed' (the scenario exited non-zero), 'stall' (the
guest kernel reported an RCU stall), 'crash' (QEMU died by a signal) or
'timeout'.  Every boot that did not end 'ok' keeps its console and QEMU logs
under WORKDIR/bootN/.  One line per boot, then a summary per kernel; exit 1 if
any boot ended other than 'ok'.

  soak.py --boots 10 --payload build/vm-payload [--kernel-dir DIR ...]
"""

import argparse
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent


def classify(rc, err):
    if rc == 0:
        return "ok"
    if "RCU stall" in err:
        return "stall"
    if "killed by signal" in err:
        return "crash"
    if "timed out" in err:
        return "timeout"
    return "failed"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boots", type=int, default=10, help="boots per kernel")
    ap.add_argument("--scenario", default="check")
    ap.add_argument("--kernel-dir", action="append", default=[],
                    help="kernel to boot (repeat for several; default: Debian 6.12)")
    ap.add_argument("--payload", action="append", default=[],
                    help="payload for the kernel at the same position")
    ap.add_argument("--workdir", default=TOP / "build/soak")
    ap.add_argument("--profile", default="plain", help="host profile (aihost.toml)")
    ap.add_argument("--tcg-thread", choices=("single", "multi"))
    ap.add_argument("--append", help="extra kernel command line")
    args = ap.parse_args()
    kernels = args.kernel_dir or [None]
    if len(args.payload) != len(kernels):
        ap.error("give one --payload per kernel")

    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    totals, n = {}, 0
    for kdir, payload in zip(kernels, args.payload):
        label = Path(kdir).name if kdir else "linux-6.12"
        counts, walls = Counter(), []
        for i in range(args.boots):
            n += 1
            bdir = work / f"boot{n}"
            cmd = [str(HERE / "vmhost.py"), "--payload", payload, "--scenario", args.scenario,
                   "--profile", args.profile, "--workdir", str(bdir)]
            if kdir:
                cmd += ["--kernel-dir", kdir]
            if args.tcg_thread:
                cmd += ["--tcg-thread", args.tcg_thread]
            if args.append:
                cmd += ["--append", args.append]
            t0 = time.monotonic()
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
            wall = time.monotonic() - t0
            what = classify(proc.returncode, proc.stderr)
            counts[what] += 1
            walls.append(wall)
            init = [l for l in proc.stderr.splitlines() if "/init at" in l]
            print(f"soak: {label} boot {i + 1}/{args.boots}: {what} in {wall:.0f}s"
                  + (f" ({init[-1].split(': ', 2)[-1]})" if init else ""), flush=True)
            if what == "ok":
                shutil.rmtree(bdir, ignore_errors=True)
            else:
                (bdir / "vmhost.err").write_text(proc.stderr)
        totals[label] = (counts, walls)
    bad = 0
    for label, (counts, walls) in totals.items():
        bad += sum(v for k, v in counts.items() if k != "ok")
        print(f"soak: {label}: {sum(counts.values())} boots: "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
              + f"; wall min {min(walls):.0f}s mean {sum(walls) / len(walls):.0f}s "
              f"max {max(walls):.0f}s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
