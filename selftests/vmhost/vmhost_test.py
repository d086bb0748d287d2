#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tests of vmhost.py's verdicts on how a boot ended, printed as KTAP so that
check.py's host stage counts them as it counts the C tests.

These decide whether check.py boots the emulated host once more (the
emulator failed) or counts the run as it is (the guest failed), so a wrong
verdict either hides a guest's crash or fails CI on TCG's.  Last, the
reasons check.py's summary gives for failed cases."""

import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
from pathlib import Path

# Run from the tree or installed as build/selftests/host/vmhost_test:
# vmhost.py is the tree's, found upwards from here.
SRC = next(d / "selftests/vmhost/vmhost.py" for d in Path(__file__).resolve().parents
           if (d / "selftests/vmhost/vmhost.py").exists())
spec = importlib.util.spec_from_file_location("vmhost", SRC)
vmhost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vmhost)
# check.py beside it, for the reasons its summary gives.
spec = importlib.util.spec_from_file_location("check", SRC.parent.parent / "check.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)
boots = sys.modules["boots"]

# The last console lines of an emulated host that reset while its L2
# guest booted: the last thing its kernel said was about L2.
TRIPLE_FAULT = """\
[   14.160201] kvm_amd: Nested Virtualization enabled
[   14.454164] kvm: kvm [451]: vcpu0, guest rIP: 0xffffffffac09e458 Unhandled WRMSR(0xc0010007) = 0xffff
"""
PANIC = TRIPLE_FAULT + """\
[   15.0] Kernel panic - not syncing: Fatal exception
[   15.1] Rebooting in 1 seconds..
"""
OOPS = TRIPLE_FAULT + """\
[   15.0] BUG: kernel NULL pointer dereference, address: 0000000000000008
[   15.0] Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI
"""
REBOOT = "[   15.0] reboot: Restarting system\n"


# The console of an emulated host one of whose vCPUs stays in L2 guest
# mode (the task is the L2 guest's QEMU): the watchdog says so every 28 s
# while neither port says anything else.
# The other vCPU's word for a vCPU stuck in an L2 guest (seen in CI).
HUNG_TASK = TRIPLE_FAULT + """\
[  243.413122] INFO: task khugepaged:46 blocked for more than 121 seconds.
[  243.413961]       Tainted: G           OE      6.12.117+deb12-amd64 #1 Debian 6.12.117-1~deb12u1
"""
STUCK_IN_L2 = TRIPLE_FAULT + "".join(
    f"[  {t}.185] watchdog: BUG: soft lockup - CPU#1 stuck for {s}s! [qemu-system-x86:458]\n"
    for t, s in ((49, 26), (77, 52), (105, 78)))
# guest/l2-run's word for it, after its heartbeat while L2 ran.
L2_OUTLIVED = TRIPLE_FAULT + """\
l2-run: L2 'uncore' running for 20s
l2-run: L2 'uncore' outlived SIGKILL with a thread running: a vCPU of this host stays in L2's guest mode
"""
# Its heartbeat alone: an L2 that is running.
L2_RUNNING = TRIPLE_FAULT + "l2-run: L2 'uncore' running for 20s\n"
# The same report naming another task: a kernel bug of ours, not TCG's.
STUCK_ELSEWHERE = TRIPLE_FAULT + \
    "[  49.185] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [kworker/0:1:31]\n"


class Silence(unittest.TestCase):
    """What on the console counts as the guest being heard: silence_s of
    nothing else ends the boot as the emulator's failure."""

    def test_vcpu_stuck_in_l2_is_not_heard(self):
        self.assertEqual(vmhost.console_news(STUCK_IN_L2), vmhost.console_news(TRIPLE_FAULT))

    def test_other_soft_lockups_are_heard(self):
        self.assertNotEqual(vmhost.console_news(STUCK_ELSEWHERE),
                            vmhost.console_news(TRIPLE_FAULT))

    def test_l2_heartbeat_is_heard(self):
        self.assertNotEqual(vmhost.console_news(L2_RUNNING), vmhost.console_news(TRIPLE_FAULT))

    def test_kernel_messages_are_heard(self):
        self.assertNotEqual(vmhost.console_news(OOPS), vmhost.console_news(TRIPLE_FAULT))

KHUGEPAGED_SPINNING = """\
[  209.452353] watchdog: BUG: soft lockup - CPU#1 stuck for 27s! [khugepaged:45]
[  237.452062] watchdog: BUG: soft lockup - CPU#1 stuck for 53s! [khugepaged:45]
[  265.452078] watchdog: BUG: soft lockup - CPU#1 stuck for 79s! [khugepaged:45]
[  293.452049] watchdog: BUG: soft lockup - CPU#1 stuck for 105s! [khugepaged:45]
"""


class StuckInL2(unittest.TestCase):
    """Hung tasks while the host runs guests of its own: a vCPU stuck in
    an L2 guest that its own watchdog cannot report."""

    def test_hung_task_in_a_host_of_l2_guests_is_the_emulators(self):
        self.assertTrue(vmhost.stuck_in_l2(HUNG_TASK, True))

    def test_hung_task_elsewhere_is_ours(self):
        self.assertFalse(vmhost.stuck_in_l2(HUNG_TASK, False))

    def test_l2_outliving_sigkill_is_the_emulators(self):
        self.assertTrue(vmhost.stuck_in_l2(L2_OUTLIVED, True))

    def test_task_spinning_for_a_stuck_vcpu_is_the_emulators(self):
        # The libvirt profile's boot that went on until timeout_s.
        self.assertTrue(vmhost.stuck_in_l2(KHUGEPAGED_SPINNING, True))

    def test_short_soft_lockup_is_not_yet(self):
        self.assertFalse(vmhost.stuck_in_l2(KHUGEPAGED_SPINNING.splitlines()[0], True))

    def test_spinning_task_elsewhere_is_ours(self):
        self.assertFalse(vmhost.stuck_in_l2(KHUGEPAGED_SPINNING, False))

    def test_l2_heartbeat_is_not_a_stall(self):
        self.assertFalse(vmhost.stuck_in_l2(L2_RUNNING, True))

    def test_other_messages_are_not_hung_tasks(self):
        self.assertFalse(vmhost.stuck_in_l2(OOPS + TRIPLE_FAULT, True))


class EmulatorFailure(unittest.TestCase):
    def test_silent_reset_is_the_emulators(self):
        self.assertIn("triple fault", vmhost.emulator_failure(0, TRIPLE_FAULT))

    def test_reset_before_any_console_output_is_the_emulators(self):
        self.assertIsNotNone(vmhost.emulator_failure(0, ""))

    def test_panic_is_the_guests(self):
        self.assertIsNone(vmhost.emulator_failure(0, PANIC))

    def test_oops_then_reset_is_the_guests(self):
        self.assertIsNone(vmhost.emulator_failure(0, OOPS))

    def test_reboot_by_the_guest_is_the_guests(self):
        self.assertIsNone(vmhost.emulator_failure(0, REBOOT))

    def test_signal_is_the_emulators(self):
        self.assertIn("signal 11", vmhost.emulator_failure(-11, TRIPLE_FAULT))

    def test_qemu_error_exit_is_not_retried(self):
        # QEMU exits 1 on a bad option or a device it cannot create: a
        # mistake of ours that a second boot repeats.
        self.assertIsNone(vmhost.emulator_failure(1, ""))


# A harness case that logged (TH_LOG: file:line too), failed an assertion,
# then logged more; one that passed; one that ran out of time after a log
# line; then kernel-health's report of a warning.
FAILED_RUN = """\
# kvmai-selftest: nested_uncore_test
TAP version 13
#  RUN           l2unc.reads ...
# nested_uncore_test.c:269:reads:virsh start vm1: exit 0 after 14.9 s
# no reads (the same loop): 1200 exits in 2.00 s
# nested_uncore_test.c:487:reads:Expected att_per_read (0.700000) < 0.01 (0.01)
# reads: Test terminated by assertion
#          FAIL  l2unc.reads
not ok 1 l2unc.reads
ok 2 l2unc.revoke
#  RUN           l2unc.boots ...
# nested_uncore_test.c:101:boots:l2-run started
# boots: Test terminated by timeout
#          FAIL  l2unc.boots
not ok 3 l2unc.boots
# kvmai-selftest-exit: nested_uncore_test 1
# kvmai-selftest-time: nested_uncore_test 97.5
# kvmai-selftest: kernel_health
# [  312.5] WARNING: CPU: 1 PID: 455 at arch/x86/kvm/svm/svm.c:1234 svm_vcpu_run+0x1
# first report in full:
not ok 1 kernel_health.no_warnings_or_lock_reports
# kvmai-selftest-exit: kernel_health 1
"""


class Summary(unittest.TestCase):
    """check.py's closing FAIL lines carry each failure's reason: a CI log
    may show only its end."""

    def failures(self):
        tally = check.Tally()
        check.parse_selftests(tally, "nested-pmu", FAILED_RUN)
        return tally

    def test_failed_assertion_is_the_reason(self):
        self.assertIn("nested-pmu: nested_uncore_test: l2unc.reads: nested_uncore_test.c:487:"
                      "reads:Expected att_per_read", self.failures().failures[0])

    def test_timeout_is_the_reason(self):
        self.assertIn("l2unc.boots: boots: Test terminated by timeout", self.failures().failures[1])

    def test_kernel_report_is_the_reason(self):
        self.assertIn("kernel_health.no_warnings_or_lock_reports: [  312.5] WARNING: CPU: 1",
                      self.failures().failures[2])

    def test_log_line_is_the_reason_when_nothing_else_says(self):
        tally = check.Tally()
        check.parse_selftests(tally, "vm", "# kvmai-selftest: p2p_test\n#  RUN p2p.a ...\n"
                              "# p2p_test.c:10:a:first\n# p2p_test.c:12:a:last\nnot ok 1 p2p.a\n")
        self.assertIn("p2p.a: p2p_test.c:12:a:last", tally.failures[0])

    def test_unfinished_binary_names_the_kernels_death(self):
        # A CI log shows the summary, not the console: a binary cut off by
        # a panic of the emulated host's kernel says so there.
        with tempfile.TemporaryDirectory() as tmp:
            console = Path(tmp) / "console.log"
            console.write_text("[  300.1] kvm_amd: something\n[  301.5] Kernel panic - not "
                               "syncing: corrupted stack end detected inside scheduler\n"
                               "[  301.6] reboot: Restarting system\n")
            tally = check.Tally()
            check.parse_selftests(tally, "nested-pmu-genoa",
                                  "# kvmai-selftest: nested_uncore_test\nTAP version 13\n",
                                  check.console_why(console, 1))
        self.assertIn("nested_uncore_test: did not finish (the emulated host's kernel: Kernel "
                      "panic - not syncing: corrupted stack end detected inside scheduler "
                      f"(console: {console}))", tally.failures[0])

    def test_unfinished_binary_without_a_kernel_message_is_a_hang(self):
        with tempfile.TemporaryDirectory() as tmp:
            console = Path(tmp) / "console.log"
            console.write_text(TRIPLE_FAULT)
            why = check.console_why(console, 1)
        self.assertTrue(why.startswith("no word from the emulated host's kernel, vmhost exit 1"),
                        why)

    def test_passed_case_gives_no_reason(self):
        tally = self.failures()
        self.assertEqual((1, 3), (tally.passed, tally.failed))

    def test_binary_times_are_kept_per_stage(self):
        self.assertEqual({"nested-pmu": {"nested_uncore_test": 97.5}}, self.failures().times)

    def test_stage_times_end_the_run_with_a_childs(self):
        child, parent = check.Tally(), check.Tally()
        child.stage_seconds["deb"] = 801.4
        parent.stage_seconds["vm"] = 112.2
        with tempfile.TemporaryDirectory() as tmp:
            child.save(Path(tmp) / "deb.json")
            parent.merge(Path(tmp) / "deb.json")
        parent.stage_seconds["waited deb"] = 0.1
        self.assertEqual("check: times: deps 37s, build 170s; vm 112s, deb 801s, waited deb 0s",
                         parent.stage_line("deps 37s, build 170s"))


BOOTS_PROFILES = """
[profile.plain]
[profile.nested]
"""
BOOTS = """
[boot.vm]
kernel = "6.12"
profile = "plain"
start = ["kernel"]
[boot.vm-kernel]
kernel = "patched"
profile = "plain"
needs = ["kernel"]
beside = ["vm-kernel-dev"]
start = ["deb"]
[boot.vm-kernel-dev]
kernel = "patched"
profile = "plain"
selftests = ["p2p_test"]
[boot.nested-kernel]
kernel = "patched"
profile = "nested"
[selftests]
fuzz_test = "plain"
p2p_test = "plain"
nested_test = "nested"
"""

NESTED_UEFI = """
[boot.nested]
kernel = "6.12"
profile = "nested"
[boot.nested-uefi]
kernel = "6.12"
profile = "nested"
emulator = "kvmai"
selftests = ["nested_test"]
cases = ["under_uefi", "other"]
"""


class Emulator(unittest.TestCase):
    """[machine] emulator: the QEMU the emulated host runs on."""

    def setUp(self):
        self.env = os.environ.pop("KVMAI_EMULATOR", None)

    def tearDown(self):
        if self.env is not None:
            os.environ["KVMAI_EMULATOR"] = self.env

    def test_debian_by_default(self):
        self.assertEqual(vmhost.emulator({}), ["qemu-system-x86_64"])

    def test_kvmai_is_told_where_debians_firmware_is(self):
        with mock.patch.object(vmhost, "kvmai_qemu", return_value=Path("/c/q/bin/qemu")):
            args = vmhost.emulator({"emulator": "kvmai"})
        self.assertEqual(args[0], "/c/q/bin/qemu")
        self.assertEqual(args[1:], [a for d in vmhost.FIRMWARE_DIRS for a in ("-L", str(d))])

    def test_kvmai_not_built_is_refused(self):
        with mock.patch.object(vmhost, "kvmai_qemu", return_value=None), \
                self.assertRaises(SystemExit), mock.patch("sys.stderr"):
            vmhost.emulator({"emulator": "kvmai"})

    def test_unknown_emulator_is_refused(self):
        with self.assertRaises(SystemExit), mock.patch("sys.stderr"):
            vmhost.emulator({"emulator": "qemu-9"})

    def test_environment_names_another_binary(self):
        os.environ["KVMAI_EMULATOR"] = "/tmp/qemu-debug"
        try:
            self.assertEqual(vmhost.emulator({"emulator": "kvmai"}), ["/tmp/qemu-debug"])
        finally:
            del os.environ["KVMAI_EMULATOR"]

    def test_a_profile_may_choose_it(self):
        topo = vmhost.Topology(vmhost.HERE / "aihost.toml")
        name = next(iter(topo.cfg["profile"]))
        topo.cfg["profile"][name] = dict(topo.cfg["profile"][name], emulator="kvmai")
        topo.use_profile(name)
        self.assertEqual(topo.machine["emulator"], "kvmai")


class Boots(unittest.TestCase):
    """boots.toml: a boot beside another runs in its step, and the two
    split their profile's selftests between them."""

    def table(self, text):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "boots.toml").write_text(text)
            (Path(tmp) / "aihost.toml").write_text(BOOTS_PROFILES)
            return boots.Table(Path(tmp) / "boots.toml", Path(tmp) / "aihost.toml")

    def test_boot_beside_a_boot_runs_in_its_step(self):
        steps = [s.names for s in self.table(BOOTS).plan()]
        self.assertEqual([("vm",), ("vm-kernel", "vm-kernel-dev"), ("nested-kernel",)], steps)

    def test_selftests_a_boot_takes_are_left_out_of_its_siblings(self):
        t = self.table(BOOTS)
        self.assertEqual((["p2p_test"], [], [], []),
                         (t.left_out("vm-kernel"), t.left_out("vm-kernel-dev"),
                          t.left_out("vm"), t.left_out("nested-kernel")))

    def test_a_boot_takes_only_selftests_of_its_profile(self):
        with self.assertRaisesRegex(boots.TableError, "nested_test is no selftest of profile plain"):
            self.table(BOOTS.replace('["p2p_test"]', '["nested_test"]'))

    def test_a_boot_beside_has_no_stages_of_its_own(self):
        with self.assertRaisesRegex(boots.TableError, "must be beside it alone"):
            self.table(BOOTS.replace('selftests = ["p2p_test"]',
                                     'selftests = ["p2p_test"]\nstart = ["deb"]'))

    def boot_commands(self, table, stages):
        """The vmhost.py command lines check.py's boot stages @stages run."""
        calls = []

        class Done(Exception):
            pass

        def popen(cmd, **kw):
            calls.append(cmd)
            raise Done
        saved, check.TABLE = check.TABLE, table
        saved_popen, check.subprocess.Popen = check.subprocess.Popen, popen
        saved_run, check.subprocess.run = check.subprocess.run, \
            lambda *a, **kw: subprocess.CompletedProcess(a, 0, stdout="/k\n")
        args = type("Args", (), {"selftests": None, "verbose": False})
        # The payloads a boot checks for, which a fresh tree has not built yet.
        tmp = tempfile.TemporaryDirectory()
        saved_top, check.TOP = check.TOP, Path(tmp.name)
        for payload in ("vm-payload", "vm-payload-kernel"):
            (check.TOP / "build" / payload).mkdir(parents=True)
        try:
            for stage in stages:
                with self.assertRaises(Done):
                    check.stage_boot(check.Tally(), args, stage)
        finally:
            check.TABLE, check.subprocess.Popen = saved, saved_popen
            check.subprocess.run, check.TOP = saved_run, saved_top
            tmp.cleanup()
        return calls

    def test_boot_stage_names_its_selftests_on_the_guest_command_line(self):
        calls = self.boot_commands(self.table(BOOTS), ("vm-kernel", "vm-kernel-dev", "vm"))
        appended = [c[c.index("--append") + 1] if "--append" in c else None for c in calls]
        self.assertEqual(["kvmai.except=p2p_test", "kvmai.selftests=p2p_test,kernel_health",
                          None], appended)

    def test_boot_of_cases_runs_them_alone_on_its_emulator(self):
        table = self.table(BOOTS + NESTED_UEFI)
        # The nested boot runs nested_test whole: the other takes a case.
        self.assertEqual([], table.left_out("nested"))
        (cmd,) = self.boot_commands(table, ("nested-uefi",))
        appended = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--append"]
        self.assertCountEqual(["kvmai.selftests=nested_test,kernel_health",
                               "kvmai.only-cases=under_uefi+other"], appended)
        self.assertEqual("kvmai", cmd[cmd.index("--emulator") + 1])

    def test_cases_need_selftests(self):
        with self.assertRaisesRegex(boots.TableError, "cases: of which selftests"):
            self.table(BOOTS + NESTED_UEFI.replace('selftests = ["nested_test"]\n', ""))


# A VMM that resets silently on its first boot (TCG's nested SVM), then
# reports; and -p/-r commands that reserve and release as the module does:
# one reservation per VM, refused while the gone QEMU's is held.
L2_VMM = """#!/bin/sh
res=$(echo "$@" | sed -n 's/.*file:\\([^ ]*results.log\\).*/\\1/p')
con=$(echo "$@" | sed -n 's/.*file:\\([^ ]*console.log\\).*/\\1/p')
[ -e "$SIM/booted" ] || { touch "$SIM/booted"; printf "$FIRST_CONSOLE" >"$con"; exit 0; }
echo "KVMAI-EXIT 0" >"$res"
"""
# What OVMF leaves on L2's serial console before the kernel, quiet, says
# anything: screen clears (seen in the UEFI case of nested_test).
OVMF_CLEARS = "\\033[2J\\033[01;01H\\033[=3h\\033[2J\\033[01;01H\\n"
L2_ASSIGN = """#!/bin/sh
[ ! -e "$SIM/held" ] || { echo "its units are reserved for pid $(cat "$SIM/held")" >&2; exit 1; }
echo "$1" >"$SIM/held"
"""


def pipe_holders(pipe):
    """The processes, other than this one, that hold the other end of
    @pipe: 'PID COMM' each."""
    target = f"pipe:[{os.fstat(pipe.fileno()).st_ino}]"
    holders = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        if fd_dir.parent.name == str(os.getpid()):
            continue
        try:
            if any(os.readlink(fd) == target for fd in fd_dir.iterdir()):
                holders.append(f"{fd_dir.parent.name} {(fd_dir.parent / 'comm').read_text().strip()}")
        except OSError:
            continue    # gone meanwhile
    return holders


class L2Retry(unittest.TestCase):
    """guest/l2-run boots L2 again after a silent reset; what -p did for
    the QEMU that is gone must be undone first (-r), or the second boot
    cannot start."""

    def run_l2(self, undo, first_console=""):
        guest = SRC.parent / "guest/l2-run"
        with tempfile.TemporaryDirectory() as sim:
            d = Path(sim)
            (d / "l2.conf").write_text("L2_MEMORY_MIB=512\nL2_CPUS=1\nL2_NUMA_NODES=1\n"
                                       "L2_TIMEOUT_S=60\n")
            (d / "share").mkdir()
            # The emulated host's paths, here.
            text = guest.read_text()
            for old, new in ((". /etc/kvmai/l2", f". {d}/l2.conf"), ("[ ! -c /dev/kvm ]", "false"),
                             ("share=/usr/share/kvmai-l2", f"share={d}/share"),
                             ("/tmp/l2-initrd.img", f"{d}/initrd.img"),
                             ("/tmp/kvmai-retries", f"{d}/retries"),
                             (">/dev/console", f">>{d}/console")):
                self.assertIn(old, text)
                text = text.replace(old, new)
            for name, body in (("l2-run", text), ("vmm", L2_VMM), ("assign", L2_ASSIGN),
                               ("release", '#!/bin/sh\nrm -f "$SIM/held"\n')):
                (d / name).write_text(body)
                (d / name).chmod(0o755)
            for f in ("base.cpio.gz", "payload.cpio.gz"):
                (d / "share" / f).touch()
            args = [str(d / "l2-run"), "-w", str(d / "w"), "-p", str(d / "assign"),
                    "-q", str(d / "vmm")] + (["-r", str(d / "release")] if undo else [])
            with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True,
                                  env={**os.environ, "SIM": sim,
                                       "FIRST_CONSOLE": first_console}) as proc:
                proc.wait()
                # The selftests read l2-run's output to its end (popen):
                # nothing of it may hold the pipe once it exited.
                self.assertEqual([], pipe_holders(proc.stdout), "stdout")
                self.assertEqual([], pipe_holders(proc.stderr), "stderr")
                out, err = proc.communicate()
            return subprocess.CompletedProcess(args, proc.returncode, out, err)

    def test_second_boot_starts_once_undone(self):
        r = self.run_l2(undo=True)
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertIn("booting it again", r.stderr)

    def test_reset_under_ovmf_before_the_kernel_spoke_is_booted_again(self):
        r = self.run_l2(undo=True, first_console=OVMF_CLEARS)
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertIn("booting it again", r.stderr)

    def test_reset_after_the_kernel_spoke_is_not_booted_again(self):
        r = self.run_l2(undo=True, first_console=OVMF_CLEARS + "Kernel panic - not syncing\\n")
        self.assertEqual(3, r.returncode, r.stderr)
        self.assertNotIn("booting it again", r.stderr)

    def test_second_boot_refused_without_undo(self):
        # What CI met: the assign for the new QEMU refused.
        r = self.run_l2(undo=False)
        self.assertEqual(3, r.returncode, r.stderr)
        self.assertIn("its units are reserved for pid", r.stderr)


# l2-run as l2-soak.sh sees it: boot N ($SIM/n counts them) leaves line N
# of $SIM/consoles as L2's console ("-" for none) and exits with word N of
# $EXITS; a boot after a silent reset says so on stderr, as l2-run does.
FAKE_L2_RUN = r"""#!/bin/sh
while getopts s:a:w: opt; do
	case $opt in w) w=$OPTARG ;; *) ;; esac
done
n=$(($(cat "$SIM/n" 2>/dev/null || echo 0) + 1))
echo $n >"$SIM/n"
mkdir -p "$w"
line=$(sed -n "${n}p" "$SIM/consoles")
[ "$line" = - ] || printf '%s\n' "$line" >"$w/console.log"
case $line in *reset*) echo "l2-run: L2 reset before it reported (boot 1, empty console);" \
	"booting it again" >&2 ;; esac
rc=$(echo $EXITS | cut -d' ' -f$n)
[ "$rc" != 0 ] || echo "churn 0: 3 rounds in 1s"
exit "$rc"
"""


class L2Soak(unittest.TestCase):
    """scenarios/l2-soak.sh names how each L2 boot ended, from l2-run's
    exit status and L2's console."""

    def soak(self, consoles, exits):
        script = SRC.parent / "scenarios/l2-soak.sh"
        with tempfile.TemporaryDirectory() as sim:
            d = Path(sim)
            (d / "bin").mkdir()
            (d / "bin/l2-run").write_text(FAKE_L2_RUN)
            (d / "bin/l2-run").chmod(0o755)
            (d / "cmdline").write_text(f"quiet kvmai.soak={len(consoles)} kvmai.churn=1 "
                                       "kvmai.soak-l2=no-kvmapf,nokaslr\n")
            (d / "consoles").write_text("".join(f"{c}\n" for c in consoles))
            text = script.read_text()
            for old, new in (("</proc/cmdline", f"<{d}/cmdline"), ("/tmp/soak", f"{d}/soak")):
                self.assertIn(old, text)
                text = text.replace(old, new)
            (d / "l2-soak").write_text(text)
            return subprocess.run(["sh", str(d / "l2-soak")], capture_output=True, text=True,
                                  env={**os.environ, "SIM": sim, "EXITS": " ".join(exits),
                                       "PATH": f"{d}/bin:{os.environ['PATH']}"})

    def test_each_end_is_named(self):
        r = self.soak(["[ 1.0] Linux version 7.3.4",
                       "[ 9.1] traps: PANIC: double fault, error_code: 0x0",
                       "[ 5.0] BUG: kernel NULL pointer dereference, address: 0",
                       "-",
                       "l2 said: reset then booted fine"],
                      ["0", "3", "3", "3", "0"])
        self.assertEqual(0, r.returncode, r.stderr)
        lines = [l for l in r.stdout.splitlines() if "console:" not in l]
        self.assertIn("L2 args 'no-kvmapf nokaslr'", lines[0])
        for i, what in enumerate(("ok", "double fault", "died", "no report", "ok"), 1):
            self.assertRegex(lines[i], rf"^l2-soak: boot {i}: {what} after \d+s, l2-run exit")
        self.assertIn("double fault, error_code", lines[2])
        self.assertIn("1 silent resets", lines[5])
        self.assertEqual("l2-soak: 5 boots: ok 2, double fault 1, died 1, no report 1; "
                         "silent resets 1", lines[6])
        # The console of every boot that did not end well, and no other.
        self.assertIn("l2-soak: boot 3 console: [ 5.0] BUG:", r.stdout)
        self.assertNotIn("boot 1 console", r.stdout)

    def test_nothing_booted_is_a_failure(self):
        r = self.soak(["-", "-"], ["3", "3"])
        self.assertEqual(1, r.returncode, r.stdout)


def main():
    tests = [t for case in (EmulatorFailure, Emulator, Silence, StuckInL2, Summary, Boots,
                                     L2Retry, L2Soak)
             for t in unittest.defaultTestLoader.loadTestsFromTestCase(case)]
    print("TAP version 13")
    print(f"1..{len(tests)}")
    failed = 0
    for i, test in enumerate(tests, 1):
        result = unittest.TestResult()
        test.run(result)
        name = test.id().rsplit(".", 2)[-2:]
        bad = result.failures + result.errors
        if bad:
            failed += 1
            print("# " + bad[0][1].replace("\n", "\n# ").rstrip("# \n"))
        print(f"{'not ok' if bad else 'ok'} {i} {'.'.join(name)}")
    print(f"# Totals: pass:{len(tests) - failed} fail:{failed} xfail:0 xpass:0 skip:0 error:0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
