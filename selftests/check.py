#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run every kvm-ai test and print one closing line that counts them.

Stages on the build machine (each timed):
  unit     the C++ unit tests (GoogleTest through CTest; one count per TEST)
  spec     the generated netlink code still matches the YAML spec
  host     the selftests boots.toml gives to "host" (the P2P planner,
           vmhost.py's verdicts)
  product  what 'make' built holds no test part; the module builds for arm64
  patches  the kernel series applies, is checkpatch --strict clean, and the
           objects it touches compile (one count per patch and per object)
  deb      the Debian packages built, lintian-clean, installed in a clean
           bookworm root where DKMS builds kvmai (tools/devenv/deb.sh)
  kernel   the patched test kernel builds (make kernel), and kvmai's test
           payload for it (make vm-payload-kernel, on the vm-payload
           'make check' built)

Every other stage is a boot of the emulated AI host, as boots.toml says:
its kernel (Debian's 6.12 or the patched test kernel), its host profile
(vmhost/aihost.toml) and so the selftests it runs (one count per case),
whether 'make check' runs it and which stages run beside it.
'boots.py list' prints that table.

The closing line is `N passed, N failed, N skipped`; the exit status is 1 if
anything failed.  A stage that cannot run at all counts as one failure, named.

Stages joined by '+' run at the same time, the first in this process and
each other in a child check.py (a build-machine stage at the lowest CPU
priority), whose output follows the first's.  Without --stages, a boot may
also start stages in the background, in such children, which the boot
that needs them waits for (boots.toml's start and needs), and the run
waits for the rest at its end: the patched kernel builds while Debian's
kernel boots leave a core idle.

Boots of the same profile on both kernels run the same cases.  A case that
skips because of what its kernel has or lacks ("# SKIP kernel ...", "# SKIP
KVM ...": a feature of the series, or the fallback for kernels without it)
is counted once, on the kernel where it passed, and listed; one that passed
on neither kernel counts as skipped there.  Only cases that need hardware
the emulated host lacks should remain skipped.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "selftests"))
import boots  # noqa: E402  (boots.toml: the boots and where each selftest runs)
sys.path.insert(0, str(TOP / "selftests/vmhost"))
import vmhost  # noqa: E402  (what a guest kernel prints when it dies)

try:
    TABLE = boots.Table()
except boots.TableError as e:
    sys.exit(f"check: {boots.TABLE}: {e}")


class Tally:
    def __init__(self):
        self.passed, self.failed, self.skipped = 0, 0, 0
        self.failures = []
        # Boots that had to be repeated (the emulator, not a test, failed):
        # listed in the summary so that a flaky run is visible.
        self.retries = []
        # Kernel-feature skips held until every stage ran: case -> [stage],
        # and the stage each case passed on.
        self.kernel_skips = {}
        self.passed_on = {}
        # Seconds each selftest binary of a boot took: stage -> {name: s}.
        self.times = {}
        # Seconds each stage took, and how long the run waited for a
        # background stage ("waited NAME"), in the order they ended.
        self.stage_seconds = {}

    def add(self, stage, name, result, why=""):
        if result == "pass":
            self.passed_on.setdefault(name, stage)
            self.passed += 1
        elif result == "skip":
            self.skipped += 1
        else:
            self.failed += 1
            self.failures.append(f"{stage}: {name}" + (f": {why}" if why else ""))

    def settle_kernel_skips(self):
        """Count the held kernel-feature skips: not at all where the case
        passed on the other kernel, as skips where it passed nowhere."""
        other = []
        for name, stages in sorted(self.kernel_skips.items()):
            if name in self.passed_on:
                other.append(f"{name} (skipped on {', '.join(stages)}, "
                             f"passed on {self.passed_on[name]})")
            else:
                self.skipped += len(stages)
        self.kernel_skips = {}
        return other

    def summary(self):
        return f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped"

    # A child check.py's counts, kernel-feature skips still held, go to
    # its parent as JSON (--tally-out), which settles them with its own.
    FIELDS = ("passed", "failed", "skipped", "failures", "retries", "kernel_skips",
              "passed_on", "stage_seconds")

    def save(self, path):
        Path(path).write_text(json.dumps({k: getattr(self, k) for k in self.FIELDS}))

    def merge(self, path):
        other = json.loads(Path(path).read_text())
        self.passed += other["passed"]
        self.failed += other["failed"]
        self.skipped += other["skipped"]
        self.failures += other["failures"]
        self.retries += other["retries"]
        for name, stages in other["kernel_skips"].items():
            self.kernel_skips.setdefault(name, []).extend(stages)
        for name, stage in other["passed_on"].items():
            self.passed_on.setdefault(name, stage)
        self.stage_seconds.update(other["stage_seconds"])

    def stage_line(self, before=""):
        """Every stage's time on one line, for the end of the run: a CI log
        may show only its last lines.  @before: times of what ran before
        check.py (.ci/run's KVMAI_CI_TIMES), put first."""
        times = ", ".join(f"{name} {t:.0f}s" for name, t in self.stage_seconds.items())
        return "check: times: " + "; ".join(x for x in (before, times) if x)


def stage_unit(tally, args):
    build = TOP / "build/tools"
    junit = build / "junit.xml"
    junit.unlink(missing_ok=True)
    if not (build / "CTestTestfile.cmake").exists():
        tally.add("unit", "ctest", "fail",
                  f"no CTest tree at {build} (run 'make deps' for GoogleTest, then 'make')")
        return
    subprocess.run(["ctest", "--test-dir", str(build), "--output-junit", str(junit),
                    "--output-on-failure", "-j2"], stdout=None if args.verbose else
                   subprocess.DEVNULL)
    if not junit.exists():
        tally.add("unit", "ctest", "fail", "ctest wrote no JUnit report")
        return
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        status = case.get("status", "run")
        if case.find("failure") is not None or case.find("error") is not None or \
                status == "fail":
            tally.add("unit", name, "fail")
        elif case.find("skipped") is not None or status in ("notrun", "disabled"):
            tally.add("unit", name, "skip")
        else:
            tally.add("unit", name, "pass")


def stage_spec(tally, args):
    res = subprocess.run([str(TOP / "tools/devenv/ynl-regen.sh"), args.ksrc, "--check"],
                         capture_output=True, text=True)
    tally.add("spec", "generated netlink code matches Documentation/netlink/specs/kvmai.yaml",
              "pass" if res.returncode == 0 else "fail",
              (res.stderr.strip().splitlines() or [""])[-1])
    if res.returncode and args.verbose:
        print(res.stdout + res.stderr)


QEMU_CRASHED = 3    # vmhost.py's exit code when the emulator dies by a signal
KTAP_RE = re.compile(r"^(not ok|ok) \d+ (\S+)(.*)$")
# A skip for what the running kernel has or lacks, not for missing hardware.
KERNEL_SKIP_RE = re.compile(r"# SKIP (kernel|KVM|emulator) ")


# Why a case failed, from the '# ' lines it printed, in this order: the
# harness's failed assertion (file.c:LINE:case:Expected ...); the harness
# ending it (timeout, signal); the first kernel report kernel-health quotes
# (its own pattern); else the last line the case logged with TH_LOG
# (file.c:LINE:case:...), nearest to where it stopped.  A TH_LOG line also
# has file.c:LINE:, so "the first such line" named a log, not the failure.
WHY_RES = ((re.compile(r"^#\s+(\S+\.c:\d+:[^:\s]+:Expected .*)$"), False),
           (re.compile(r"^#\s+(\S+: Test terminated .*)$"), False),
           (re.compile(r"^#\s+(.*(WARNING:|BUG:|possible (circular|recursive) locking|"
                       r"inconsistent lock state|suspicious RCU usage|"
                       r"sleeping function called|general protection fault|Oops).*)$"), False),
           (re.compile(r"^#\s+(\S+\.c:\d+:.*)$"), True))


def failure_why(notes):
    """One line saying why a case failed: the summary is the only part of
    a long run's output sure to be read, so it carries the reason too."""
    for why_re, last in WHY_RES:
        for note in reversed(notes) if last else notes:
            m = why_re.match(note)
            if m:
                return m.group(1).strip()[:200]
    return ""


def console_why(console, vmhost_rc):
    """Why a boot's binary did not finish, from its console: the first
    line of the guest kernel's death (a CI log keeps only the summary, not
    the console), else that the kernel said nothing."""
    text = console.read_text(errors="replace") if console.exists() else ""
    for line in text.splitlines():
        if vmhost.KERNEL_DEATH.search(line) and "reboot: " not in line:
            line = re.sub(r"^\[\s*\d+\.\d+\]\s*", "", line.strip())
            return f"the emulated host's kernel: {line[:160]} (console: {console})"
    return (f"no word from the emulated host's kernel, vmhost exit {vmhost_rc}: "
            f"a hang or a timeout (console: {console})")


def parse_selftests(tally, stage, text, unfinished="crash or hang: see console log"):
    """Count kselftest cases from the framed KTAP the guest printed;
    @unfinished says why a binary that began gave no exit line."""
    current, seen, exited = None, set(), {}
    notes = []
    for line in text.splitlines():
        if line.startswith("#"):
            notes.append(line)
        if line.startswith("# kvmai-retry: "):
            tally.retries.append(f"{stage}: {line.split(': ', 1)[1].strip()}")
            continue
        if line.startswith("# kvmai-selftest: "):
            current = line.split(": ", 1)[1].strip()
            seen.add(current)
            continue
        if line.startswith("# kvmai-selftest-time: "):
            name, secs = line.split(": ", 1)[1].split()
            tally.times.setdefault(stage, {})[name] = float(secs)
            continue
        if line.startswith("# kvmai-selftest-exit: "):
            name, rc = line.split(": ", 1)[1].split()
            exited[name] = int(rc)
            current = None
            continue
        m = KTAP_RE.match(line)
        if m and current:
            verdict, case, rest = m.groups()
            notes, why = [], failure_why(notes)
            name = f"{current}: {case}"
            if stage in TABLE.boots and KERNEL_SKIP_RE.search(rest):
                tally.kernel_skips.setdefault(name, []).append(stage)
            elif "# SKIP" in rest:
                tally.add(stage, name, "skip")
            elif verdict == "ok" or "# XFAIL" in rest:
                tally.add(stage, name, "pass")
            else:
                tally.add(stage, name, "fail", why)
    for name in sorted(seen):
        if name not in exited:
            tally.add(stage, name, "fail", f"did not finish ({unfinished})")
    return seen


def stage_host(tally, args):
    """Run the selftests boots.toml gives to "host" from build/selftests/host,
    framed as the guest frames its tests."""
    tests = [TOP / "build/selftests/host" / name for name in TABLE.of("host")]
    missing = [t.name for t in tests if not t.exists()]
    if missing:
        tally.add("host", "selftests", "fail",
                  f"not built: {', '.join(missing)} (run 'make selftests')")
        return
    out = []
    for t in tests:
        res = subprocess.run([str(t)], capture_output=True, text=True)
        out += [f"# kvmai-selftest: {t.name}", res.stdout,
                f"# kvmai-selftest-exit: {t.name} {res.returncode}"]
        if args.verbose or res.returncode not in (0, 4):
            print(res.stdout + res.stderr)
    parse_selftests(tally, "host", "\n".join(out))


def run_counted(tally, args, stage, cmd, count, whole):
    """Run cmd; count(line) turns each line of its output that reports a
    case into (name, result, why), None for other lines.  A failure no
    such line accounts for (none at all, or a non-zero exit with no case
    failed: the series does not apply...) counts once, as `whole`, with
    the output's last line."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    if args.verbose or proc.returncode:
        print(out)
    counted, failed_before = 0, tally.failed
    for line in out.splitlines():
        case = count(line)
        if case:
            tally.add(stage, *case)
            counted += 1
    if not counted or (proc.returncode and tally.failed == failed_before):
        tally.add(stage, whole, "fail", (out.strip().splitlines() or ["no output"])[-1])


def kernel_case(line):
    """kernel.sh check: 'checkpatch: NAME: N errors, ...', 'compiled: OBJ'."""
    if line.startswith("checkpatch: "):
        name, verdict = line[len("checkpatch: "):].split(": ", 1)
        return f"checkpatch {name}", "pass" if "0 errors" in verdict else "fail", verdict
    if line.startswith(("compiled: ", "compile: ")):
        obj = line.split(": ", 1)[1].split()[0]
        return f"compile {obj}", "pass" if line.startswith("compiled") else "fail", ""
    return None


def qemu_case(line):
    """qemu.sh check: QEMU's checkpatch must be silent; 'applied: NAME'."""
    if line.startswith("checkpatch: qemu/"):
        name, verdict = line[len("checkpatch: "):].split(": ", 1)
        return (f"checkpatch {name}", "pass" if verdict == "0 errors, 0 warnings" else "fail",
                verdict)
    if line.startswith("applied: qemu/"):
        return f"apply {line.split(': ', 1)[1]}", "pass", ""
    return None


def quilt_case(line):
    """patches-export.sh --check: 'quilt: NAME: applied|clean|...'."""
    if line.startswith("quilt: ") and line.count(": ") >= 2:
        name, verdict = line[len("quilt: "):].rsplit(": ", 1)
        return f"quilt {name}", "pass" if verdict in ("applied", "clean") else "fail", verdict
    return None


def verdict_case(tag):
    """A counter for scripts that print 'TAG: NAME: ok|FAILED (why)' per
    check (deb.sh, product.sh)."""
    pattern = re.compile(rf"{tag}: ([\w.-]+): (ok|FAILED)(.*)")

    def case(line):
        m = pattern.match(line)
        if m:
            return m.group(1), "pass" if m.group(2) == "ok" else "fail", m.group(3).strip(" ()")
        return None
    return case


def stage_patches(tally, args):
    """The kernel series (kernel.sh check: one count per patch and per
    object), kvm-ai's QEMU patches (qemu.sh check: QEMU's checkpatch and
    applying, per patch), then the kernel series' quilt export applied to
    its base (one count per patch and the pop)."""
    devenv = TOP / "tools/devenv"
    run_counted(tally, args, "patches", [devenv / "kernel.sh", "check"], kernel_case, "series")
    run_counted(tally, args, "patches", [devenv / "qemu.sh", "check"], qemu_case, "qemu series")
    run_counted(tally, args, "patches", [devenv / "patches-export.sh", "--check"], quilt_case,
                "quilt export")


def stage_product(tally, args):
    """tools/devenv/product.sh: the module 'make' built holds no test-only
    part, git holds one copy of the series' registry, and the module
    builds for arm64; one count per 'product: NAME: ok|FAILED' line."""
    run_counted(tally, args, "product", [TOP / "tools/devenv/product.sh"],
                verdict_case("product"), "product")


def stage_deb(tally, args):
    """tools/devenv/deb.sh build lint check: the Debian packages built,
    lintian-clean, installed in a clean bookworm root where DKMS builds the
    module; one count per 'deb: NAME: ok|FAILED' line.  Built with nocheck:
    the unit stage ran the same tests, and building them file by file again
    took 725 s of CPU where the packages alone took 271 s with lintian, on
    the two cores the patched kernel's boots need.
    """
    run_counted(tally, args, "deb", ["env", "DEB_BUILD_OPTIONS=nocheck",
                                     TOP / "tools/devenv/deb.sh", "build", "lint", "check"],
                verdict_case("deb"), "packages")


def stage_boot(tally, args, stage):
    """Boot the emulated host as boots.toml's [boot.STAGE] says and count
    the cases of the check scenario, which runs the selftests of its host
    profile (or --selftests)."""
    boot = TABLE.boots[stage]
    cmd = [str(TOP / "selftests/vmhost/vmhost.py"), "--profile", boot.profile,
           "--scenario", "check", "--workdir", str(TOP / "build" / stage)]
    if boot.kernel == "patched":
        kdir = subprocess.run([str(TOP / "tools/devenv/kernel.sh"), "dir"],
                              capture_output=True, text=True).stdout.strip()
        payload = TOP / "build/vm-payload-kernel"
        if not kdir or not payload.exists():
            # 'make check' builds both before it runs this; without them
            # the series went untested, which is a failure, not a skip.
            tally.add(stage, "patched kernel", "fail",
                      "not built: see the 'make kernel' output above" if not kdir else
                      f"no kvmai.ko payload for it at {payload} (make vm-payload-kernel)")
            return
        cmd += ["--kernel-dir", kdir]
    else:
        payload = TOP / "build/vm-payload"
    cmd += ["--payload", str(payload)]
    if boot.cpu:
        cmd += ["--cpu", boot.cpu]
    if boot.emulator:
        cmd += ["--emulator", boot.emulator]
    if boot.cases and not args.selftests:
        cmd += ["--append", f"kvmai.only-cases={'+'.join(boot.cases)}"]
    if args.selftests:
        cmd += ["--append", f"kvmai.selftests={args.selftests}"]
    elif boot.selftests:
        cmd += ["--append", f"kvmai.selftests={','.join(boot.selftests + ('kernel_health',))}"]
    elif left_out := TABLE.left_out(stage):
        cmd += ["--append", f"kvmai.except={','.join(left_out)}"]
    # Multi-threaded TCG (the profiles with L2 guests) fails under load in
    # about one boot in five (emulated-host.rst): those boot up to twice more.
    attempts = 3 if boot.multi_tcg else 2
    for attempt in range(1, attempts + 1):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        out = []
        for line in proc.stdout:
            out.append(line)
            if args.verbose:
                print(line, end="")
        rc = proc.wait()
        # QEMU crashing, its guest's vCPUs stalling or its guest resetting
        # without a kernel message is the emulator's failure, not a test's
        # (vmhost.py's emulator_failure()): a fresh boot, said loudly,
        # and only the last run's results count.
        if rc != QEMU_CRASHED or attempt == attempts:
            break
        # Keep the failed boot's console: the next boot starts a new one.
        kept = TOP / "build" / stage / f"console.boot{attempt}.log"
        (TOP / "build" / stage / "console.log").replace(kept)
        tally.retries.append(f"{stage}: boot {attempt} ended by the emulator "
                             f"(console: {kept}); booted once more")
        print(f"check: {stage}: the emulator failed (see above); "
              "booting once more", flush=True)
    seen = parse_selftests(tally, stage, "".join(out),
                           console_why(TOP / "build" / stage / "console.log", rc))
    if not seen:
        tally.add(stage, "emulated host", "fail", f"no selftest ran (vmhost exit {rc})")
    elif rc not in (0, 1):
        # Includes the last boot's emulator failure: then the run fails.
        tally.add(stage, "emulated host", "fail", f"vmhost exit {rc}")


def stage_kernel(tally, args):
    """make kernel vm-payload-kernel, vm-payload taken as built: one count."""
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(TOP), "-o", "vm-payload",
                           "kernel", "vm-payload-kernel"], capture_output=True, text=True)
    out = (proc.stdout + proc.stderr).strip()
    if args.verbose or proc.returncode:
        print(out)
    why = out.splitlines()[-1] if proc.returncode and out else ""
    tally.add("kernel", "patched test kernel and its payload",
              "fail" if proc.returncode else "pass", why)


STAGES = {"unit": stage_unit, "spec": stage_spec, "host": stage_host, "product": stage_product,
          "patches": stage_patches, "deb": stage_deb, "kernel": stage_kernel}
assert tuple(STAGES) == boots.BUILD_STAGES


def run_stage(tally, args, name):
    before = (tally.passed, tally.failed, tally.skipped)
    t0 = time.monotonic()
    print(f"check: {name} ...", flush=True)
    if name in STAGES:
        STAGES[name](tally, args)
    else:
        stage_boot(tally, args, name)
    p, f, s = (a - b for a, b in zip((tally.passed, tally.failed, tally.skipped), before))
    held = sum(name in st for st in tally.kernel_skips.values())
    took = time.monotonic() - t0
    tally.stage_seconds[name] = took
    print(f"check: {name}: {p} passed, {f} failed, {s} skipped"
          + (f", {held} for the other kernel" if held else "")
          + f" in {took:.1f}s", flush=True)
    # Where a boot's minutes went, so the run's budget can be kept.
    slowest = sorted(tally.times.get(name, {}).items(), key=lambda kv: -kv[1])[:4]
    if slowest:
        print(f"check: {name}: longest " + ", ".join(f"{n} {t:.0f}s" for n, t in slowest),
              flush=True)


def run_beside(args, name, workdir):
    """Stage @name in a child check.py; its output and counts go to @workdir.
    A build-machine stage at the lowest CPU priority: the emulated host
    beside it keeps its core (deb at the same priority compiles on both
    cores and slows vm-kernel by half).  A boot at the same priority as the
    boot beside it: each emulated host of single-threaded TCG takes a
    core."""
    cmd = (["nice", "-n", "19"] if name in boots.BUILD_STAGES else []) + [
        sys.executable, __file__, "--ksrc", args.ksrc,
        "--stages", name, "--tally-out", str(workdir / f"{name}.json")]
    if args.selftests:
        cmd += ["--selftests", args.selftests]
    if args.verbose:
        cmd.append("-v")
    with open(workdir / f"{name}.log", "w") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)


WORKDIR = TOP / "build/check"


def join(tally, name, child):
    """Wait for the child check.py of stage @name, print its output and
    take its counts."""
    rc = child.wait()
    print((WORKDIR / f"{name}.log").read_text(), end="", flush=True)
    result = WORKDIR / f"{name}.json"
    if result.exists():
        tally.merge(result)
        result.unlink()
    else:
        tally.add(name, "stage", "fail", f"check.py for it exited {rc} with no counts")


def run_group(tally, args, names):
    """The first stage here, the others beside it in children, each
    child's output printed once the first stage is done."""
    WORKDIR.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    children = [(name, run_beside(args, name, WORKDIR)) for name in names[1:]]
    run_stage(tally, args, names[0])
    for name, child in children:
        join(tally, name, child)
    print(f"check: {'+'.join(names)} together in {time.monotonic() - t0:.1f}s", flush=True)


def wait_for(tally, name, child, when=""):
    """join() background stage @name, its wait timed and kept as "waited
    NAME" among the stage times."""
    t0 = time.monotonic()
    join(tally, name, child)
    waited = tally.stage_seconds[f"waited {name}"] = time.monotonic() - t0
    print(f"check: waited {waited:.1f}s for {name}{when}", flush=True)


def run_plan(tally, args, steps):
    """Each step in turn; a step's background stages start before it,
    after those it needs are done; the rest are waited for at the end."""
    background = {}
    for step in steps:
        for name in step.needs:
            if name in background:
                wait_for(tally, name, background.pop(name))
        for name in step.start:
            WORKDIR.mkdir(parents=True, exist_ok=True)
            print(f"check: {name} starts in the background", flush=True)
            background[name] = run_beside(args, name, WORKDIR)
        if len(step.names) == 1:
            run_stage(tally, args, step.names[0])
        else:
            run_group(tally, args, list(step.names))
    for name, child in background.items():
        wait_for(tally, name, child, " at the end")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ksrc", required=True, help="unpacked mainline source (YNL generator)")
    ap.add_argument("--stages",
                    help="stages, comma-separated, those run at the same time joined by '+' "
                         f"(default: boots.toml's, {TABLE.default_stages()}, with the "
                         "background stages its boots start)")
    ap.add_argument("--selftests",
                    help="comma-separated selftest binaries the boots run (default: those of "
                         "each boot's profile, then kernel_health)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--tally-out", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.stages:
        steps = [boots.Step(tuple(step.split("+"))) for step in args.stages.split(",")]
    else:
        steps = TABLE.plan()
    for name in sum((step.names + step.start for step in steps), ()):
        if name not in TABLE.stages():
            print(f"check: unknown stage '{name}'", file=sys.stderr)
            return 2
    tally = Tally()
    t_all = time.monotonic()
    run_plan(tally, args, steps)
    if args.tally_out:
        tally.save(args.tally_out)
        return 0
    for line in tally.settle_kernel_skips():
        print(f"check: ran on some boots only: {line}")
    for f in tally.failures:
        print(f"FAIL {f}")
    for r in tally.retries:
        print(f"RETRY {r}")
    print(f"check: {len(tally.retries)} boot(s) repeated")
    print(tally.stage_line(os.environ.get("KVMAI_CI_TIMES", "")))
    print(f"check: all stages in {time.monotonic() - t_all:.1f}s")
    print(tally.summary())
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
