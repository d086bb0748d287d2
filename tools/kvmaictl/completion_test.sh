#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The bash completion treats what kvmaictl, the module and sysfs report as
# data: a stub kvmaictl first in PATH reports group, VM, unit and device
# names that a shell would run, and completing after every word that
# offers such names must run none of them and offer only names that the
# module could hold.
#
#   completion_test.sh COMPLETION_SCRIPT
set -uo pipefail

script=$(realpath "$1")
helpers=/usr/share/bash-completion/bash_completion
[ -r "$helpers" ] || { echo "completion_test: $helpers missing (bash-completion)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kvmaictl-completion.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/cwd"
marker=$work/ran

# Each hostile word would create $marker.N if a shell expanded it.
cat >"$work/bin/kvmaictl" <<STUB
#!/bin/sh
hostile() {
	printf '%s %s\n' "\$1" '\$(touch\${IFS}$marker.1)'
	printf '%s %s\n' "\$1" '\`touch $marker.2\`'
	printf '%s %s\n' "\$1" '\$(touch${IFS}$marker.3)x'
	printf '%s %s\n' "\$1" 'a;touch${IFS}$marker.4'
	printf '%s %s\n' "\$1" '*'
	printf '%s %s\n' "\$1" "ok-\$1"
}
case "\$1 \$2" in
"group show") hostile group ;;
"pmu show") hostile vm; hostile unit ;;
"topo "*) printf '%s\n' 'gpu0 \$(touch\${IFS}$marker.5)' 'nic1 x' ;;
esac
STUB
chmod +x "$work/bin/kvmaictl"

# Runs the completion of the words given, the last one being completed,
# in a shell of its own; prints COMPREPLY, one word a line.
complete_words() {
	(cd "$work/cwd" && PATH="$work/bin:$PATH" bash --norc --noprofile -c '
		. "$1"; . "$2"; shift 2
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_kvmaictl kvmaictl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' sh "$helpers" "$script" "$@")
}

failed=0
check() {
	local want=$1 got
	shift
	got=$(complete_words "$@" | sort | tr '\n' ' ')
	if compgen -G "$marker.*" >/dev/null; then
		echo "FAIL: completing '$*' ran a reported name: $(ls "$work" | grep ran)"
		rm -f "$marker".*
		failed=1
	elif [ "$got" != "$want" ]; then
		echo "FAIL: completing '$*' offered [$got], want [$want]"
		failed=1
	else
		echo "ok: $*"
	fi
}

check "ok-group " kvmaictl group show ''
check "ok-group " kvmaictl group del ''
check "ok-group " kvmaictl dev add ''
check "ok-vm " kvmaictl pmu release ''
check "core ok-unit " kvmaictl pmu release vm1 ''
check "ok-unit " kvmaictl pmu exec vm1 unit ''
check "ok-unit " kvmaictl pmu exec --user nobody vm1 unit ''
check "--group --user ok-vm " kvmaictl pmu exec ''
check "nobody " kvmaictl pmu exec --user nobod
check "ok-vm " kvmaictl pmu show o
check "--host-bridge-switches --procfs-root --root --sysfs-root firmware format gpu0 group hugepages memory merge mmio64 nic1 pin vcpus " kvmaictl vm plan ''
check "bios uefi " kvmaictl vm plan gpu0 firmware ''
check "node none vcpu " kvmaictl vm nccl-topo gpu0 pin ''
exit $failed
