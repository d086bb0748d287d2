#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The table of boots (boots.toml): which stage boots which kernel and host
profile, and where each selftest runs.

check.py and vmhost.py import it; selftests/Makefile runs it for the lists
of selftests to build:

  boots.py tests host|boot   selftests of the build machine, or of the boots
  boots.py list              every stage with its kernel, profile and selftests
"""

import fnmatch
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "boots.toml"
TOPOLOGY = HERE / "vmhost/aihost.toml"
KERNELS = ("6.12", "patched")
# check.py's stages that run on the build machine.
BUILD_STAGES = ("unit", "spec", "host", "product", "patches", "deb", "kernel")


class TableError(Exception):
    pass


@dataclass(frozen=True)
class Boot:
    name: str
    kernel: str
    profile: str
    default: bool
    beside: tuple
    # Boots a profile of multi-threaded TCG, whose emulator fails now and
    # then under load (emulated-host.rst, "Emulator stalls").
    multi_tcg: bool = False
    # A QEMU CPU model instead of the profile's: the same boot on another
    # platform model.
    cpu: str = ""
    # Build-machine stages started in the background when this boot
    # starts, and those it waits for first.
    start: tuple = ()
    needs: tuple = ()
    # The selftests of its profile this boot takes from the other boots of
    # its kernel and profile, which leave them out: one boot's selftests
    # split over two that run at the same time.
    selftests: tuple = ()
    # Only these cases of its selftests (the harness's -t): a boot for the
    # cases that need what the other boots of its profile lack, which
    # leave none of their binaries to it.
    cases: tuple = ()
    # The QEMU the emulated host runs on, instead of the profile's.
    emulator: str = ""


@dataclass(frozen=True)
class Selftest:
    name: str           # a binary's name, or a glob pattern
    where: str          # "host" or a host profile
    load: tuple         # modules the check scenario inserts around it


@dataclass(frozen=True)
class Step:
    """What check.py runs at once: stages (the first in its own process,
    the others beside it), after starting @start in the background and
    waiting for @needs."""
    names: tuple
    start: tuple = ()
    needs: tuple = ()


class Table:
    def __init__(self, path=TABLE, topology=TOPOLOGY):
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
        with open(topology, "rb") as f:
            profiles = tomllib.load(f).get("profile", {})
        self.first = tuple(cfg.get("check", {}).get("first", ()))
        self.boots = {}
        for name, b in cfg.get("boot", {}).items():
            boot = Boot(name, b.get("kernel"), b.get("profile"), b.get("default", True),
                        tuple(b.get("beside", ())),
                        profiles.get(b.get("profile"), {}).get("tcg_thread") == "multi",
                        b.get("cpu", ""), tuple(b.get("start", ())), tuple(b.get("needs", ())),
                        tuple(b.get("selftests", ())), tuple(b.get("cases", ())),
                        b.get("emulator", ""))
            if boot.kernel not in KERNELS:
                raise TableError(f"boot {name}: kernel must be one of {', '.join(KERNELS)}")
            if boot.profile not in profiles:
                raise TableError(f"boot {name}: no [profile.{boot.profile}] in {topology}")
            for key in ("start", "needs"):
                for s in getattr(boot, key):
                    if s not in BUILD_STAGES:
                        raise TableError(f"boot {name}: {key}: '{s}' is no build-machine stage")
            if boot.emulator not in ("", "debian", "kvmai"):
                raise TableError(f"boot {name}: emulator must be \"debian\" or \"kvmai\"")
            if boot.cases and not boot.selftests:
                raise TableError(f"boot {name}: cases: of which selftests? (selftests)")
            if name in BUILD_STAGES:
                raise TableError(f"boot {name}: the name of a build-machine stage")
            self.boots[name] = boot
        # Beside a boot: build-machine stages, or a boot that runs no step
        # of its own (it goes where the boot it is beside goes).
        self.inside = {}
        for boot in self.boots.values():
            for s in boot.beside:
                if s in BUILD_STAGES:
                    continue
                other = self.boots.get(s)
                if other is None:
                    raise TableError(f"boot {boot.name}: beside: '{s}' is neither a "
                                     "build-machine stage nor a boot")
                if other.beside or other.start or other.needs or s in self.inside or \
                        other.default != boot.default or s == boot.name:
                    raise TableError(f"boot {boot.name}: beside: boot {s} must be beside it "
                                     "alone, with no stages of its own and the same default")
                self.inside[s] = boot.name
        for s in self.first:
            if s not in BUILD_STAGES:
                raise TableError(f"[check] first: '{s}' is no build-machine stage")
        self.selftests = {}
        for name, v in cfg.get("selftests", {}).items():
            if isinstance(v, str):
                v = {"profile": v}
            where = v.get("profile")
            if where != "host" and where not in profiles:
                raise TableError(f"selftest {name}: no [profile.{where}] in {topology}")
            self.selftests[name] = Selftest(name, where, tuple(v.get("load", ())))
        for boot in self.boots.values():
            for t in boot.selftests:
                if t not in self.selftests or self.selftests[t].where != boot.profile:
                    raise TableError(f"boot {boot.name}: selftests: {t} is no selftest of "
                                     f"profile {boot.profile} (patterns are not taken)")
        # Planned once, which also checks the boots' order.
        self.steps = self._plan()

    def stages(self):
        """Every stage name check.py knows: its own, then the boots."""
        return list(BUILD_STAGES) + list(self.boots)

    def default_stages(self):
        """'make check': the first stages, then each default boot with the
        stages beside it, as check.py --stages takes them (without the
        background stages: plan() has them)."""
        return ",".join("+".join(step.names) for step in self.plan())

    def plan(self):
        """'make check' as steps: the first stages, then each default boot
        with the stages beside it, the background stages it starts and
        those it waits for.  A background stage is started once, before
        any step needs it."""
        return list(self.steps)

    def _plan(self):
        steps = [Step((name,)) for name in self.first]
        started = set()
        for b in self.boots.values():
            if not b.default or b.name in self.inside:
                continue
            for s in b.needs:
                if s not in started:
                    raise TableError(f"boot {b.name}: needs '{s}', which no boot before starts")
            started.update(b.start)
            steps.append(Step((b.name,) + b.beside, b.start, b.needs))
        return steps

    def left_out(self, name):
        """The selftests boot @name leaves to the other boots of its kernel
        and profile (their 'selftests')."""
        boot = self.boots[name]
        if boot.selftests:
            return []
        return [t for b in self.boots.values() if b is not boot and b.kernel == boot.kernel
                and b.profile == boot.profile and not b.cases for t in b.selftests]

    def of(self, where):
        """The selftests (names or patterns) that run @where."""
        return [t.name for t in self.selftests.values() if t.where == where]

    def guest_lines(self):
        """The table as the check scenario reads it: 'PATTERN PROFILE [MODULE...]'."""
        return [" ".join((t.name, t.where) + t.load) for t in self.selftests.values()
                if t.where != "host"]

    def built(self, where):
        """The selftests selftests/Makefile builds: of the build machine
        (@where "host") or of the boots ("boot"), patterns left out.  Each
        must have a source, and each source an entry."""
        names = [t.name for t in self.selftests.values()
                 if (t.where == "host") == (where == "host") and not is_pattern(t.name)]
        for name in names:
            if not (HERE / f"kvmai/{name}.c").exists() and \
                    not (HERE / f"vmhost/{name}.py").exists():
                raise TableError(f"selftest {name}: no kvmai/{name}.c or vmhost/{name}.py")
        for src in sorted((HERE / "kvmai").glob("*_test.c")):
            if not any(fnmatch.fnmatchcase(src.stem, n) for n in self.selftests):
                raise TableError(f"kvmai/{src.name} runs nowhere: add '{src.stem} = PROFILE' "
                                 f"to [selftests]")
        return names


def is_pattern(name):
    return any(c in name for c in "*?[")


def main():
    try:
        table = Table()
        if sys.argv[1:2] == ["tests"] and sys.argv[2:] in (["host"], ["boot"]):
            print(" ".join(table.built(sys.argv[2])))
        elif sys.argv[1:] == ["list"]:
            for name in table.first:
                print(f"{name:15} build machine")
            for b in table.boots.values():
                print(f"{b.name:15} {b.kernel:8} {b.profile:14} "
                      f"{'make check' if b.default else 'on request':11} "
                      f"{'beside ' + '+'.join(b.beside) + ' ' if b.beside else ''}"
                      f"{'starts ' + '+'.join(b.start) + ' ' if b.start else ''}"
                      f"{'needs ' + '+'.join(b.needs) + ' ' if b.needs else ''}"
                      f"{'cpu ' + b.cpu + ' ' if b.cpu else ''}"
                      f"{'emulator ' + b.emulator if b.emulator else ''}")
                left_out = table.left_out(b.name)
                tests = b.selftests or [t for t in table.of(b.profile) if t not in left_out]
                print(f"{'':15} {' '.join(tests)}"
                      f"{' (' + ', '.join(b.cases) + ')' if b.cases else ''} kernel_health")
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except TableError as e:
        print(f"{TABLE}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
