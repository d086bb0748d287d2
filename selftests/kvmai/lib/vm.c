// SPDX-License-Identifier: GPL-2.0-only
/*
 * A KVM guest on the kernel's KVM selftests library that accesses one MSR
 * (or reads one counter with RDPMC) in a loop, between two ucalls; at each
 * ucall the host reads the vCPU's "exits" statistic and the time.  Unknown
 * MSRs exit to this process, which answers 0 and counts them.  A #GP ends
 * the loop: the guest reports it with the loop's last value.
 *
 * Built with the library's own flags (selftests/Makefile): the guest code
 * runs in the VM from this program's image.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "kvm_util.h"
#include "processor.h"
#include "ucall_common.h"

#include <linux/kvmai_dev.h>

#include "vm.h"

struct kt_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
};

/* The guest's next loop, set by the host before it runs the vCPU. */
struct guest_loop {
	u32 msr;	/* or the counter index, for RDPMC */
	u32 loops;
	u32 op;		/* enum kt_op */
	u32 value;	/* what WRMSR writes */
};

static struct guest_loop guest_loop;

enum { LOOP_START = 1, LOOP_END };

static void guest_main(void)
{
	for (;;) {
		const struct guest_loop *l = &guest_loop;
		u64 val = l->op == KT_WRMSR ? l->value : 0;
		u8 vector = 0;
		u32 i;

		GUEST_SYNC(LOOP_START);
		for (i = 0; i < l->loops && !vector; i++) {
			if (l->op == KT_RDMSR)
				vector = rdmsr_safe(l->msr, &val);
			else if (l->op == KT_WRMSR)
				vector = wrmsr_safe(l->msr, l->value);
			else
				vector = rdpmc_safe(l->msr, &val);
		}
		GUEST_SYNC_ARGS(LOOP_END, val, vector, 0, 0);
	}
}

struct kt_vm *kt_vm_create(__u64 pmu_caps)
{
	struct kt_vm *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	/* The library ends the process, saying why, if KVM refuses. */
	v->vm = vm_create(1);
	vm_enable_cap(v->vm, KVM_CAP_X86_USER_SPACE_MSR, KVM_MSR_EXIT_REASON_UNKNOWN);
	/* Before the vCPU: KVM takes PMU settings only then. */
	if (pmu_caps)
		vm_enable_cap(v->vm, KVM_CAP_PMU_CAPABILITY, pmu_caps);
	v->vcpu = vm_vcpu_add(v->vm, 0, guest_main);
	return v;
}

void kt_vm_destroy(struct kt_vm *v)
{
	if (!v)
		return;
	kvm_vm_free(v->vm);
	free(v);
}

int kt_vm_fd(const struct kt_vm *v)
{
	return v->vm->fd;
}

int kt_vm_check_cap(const struct kt_vm *v, long cap)
{
	return ioctl(v->vm->fd, KVM_CHECK_EXTENSION, cap);
}

int kt_kvm_check_cap(long cap)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int ret;

	if (kvm < 0)
		return -errno;
	ret = ioctl(kvm, KVM_CHECK_EXTENSION, cap);
	close(kvm);
	return ret;
}

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Runs the vCPU to its next ucall, answering its MSR exits: the ucall's stage. */
static int run_to_sync(struct kt_vm *v, struct kt_counts *c, struct ucall *uc)
{
	struct kvm_run *run = v->vcpu->run;

	for (;;) {
		vcpu_run(v->vcpu);
		switch (run->exit_reason) {
		case KVM_EXIT_X86_RDMSR:
			run->msr.data = 0;
			run->msr.error = 0;
			c->to_user++;
			break;
		case KVM_EXIT_X86_WRMSR:
			run->msr.error = 0;
			c->to_user++;
			break;
		case KVM_EXIT_IO:
			switch (get_ucall(v->vcpu, uc)) {
			case UCALL_SYNC:
				return uc->args[1];
			case UCALL_ABORT:
				REPORT_GUEST_ASSERT(*uc);
			}
			return -EPROTO;
		default:
			return -EPROTO;
		}
	}
}

int _test_cmd_vm_run(struct kt_vm *v, __u32 msr, __u32 loops, enum kt_op op,
		     __u32 value, struct kt_counts *c)
{
	struct guest_loop l = { .msr = msr, .loops = loops, .op = op, .value = value };
	u64 start, t0;
	struct ucall uc;

	memset(c, 0, sizeof(*c));
	guest_loop = l;
	sync_global_to_guest(v->vm, guest_loop);
	if (run_to_sync(v, c, &uc) != LOOP_START)
		return -EPROTO;
	start = vcpu_get_stat(v->vcpu, exits);
	t0 = now_ns();
	if (run_to_sync(v, c, &uc) != LOOP_END)
		return -EPROTO;
	c->ns = now_ns() - t0;
	/* Less the ucall's own exit. */
	c->exits = vcpu_get_stat(v->vcpu, exits) - start - 1;
	c->last = uc.args[2];
	c->gp = uc.args[3] == GP_VECTOR;
	return 0;
}

int _test_cmd_unit_fd(const char *record, const char *unit)
{
	struct kvmai_unit_fd req = {};
	int dev, fd, err;

	if (strlen(record) >= sizeof(req.vm) || strlen(unit) >= sizeof(req.unit))
		return -ENAMETOOLONG;
	snprintf(req.vm, sizeof(req.vm), "%s", record);
	snprintf(req.unit, sizeof(req.unit), "%s", unit);
	dev = open(KVMAI_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = ioctl(dev, KVMAI_UNIT_FD, &req);
	err = errno;
	close(dev);
	return fd < 0 ? -err : fd;
}

static int uncore_cap(struct kt_vm *v, int fd, u64 flags)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_UNCORE_PASSTHROUGH, .args = { fd, flags },
	};

	return ioctl(v->vm->fd, KVM_ENABLE_CAP, &cap) ? -errno : 0;
}

int _test_cmd_vm_attach_fd(struct kt_vm *v, int fd)
{
	return uncore_cap(v, fd, 0);
}

int _test_cmd_vm_detach_fd(struct kt_vm *v, int fd)
{
	return uncore_cap(v, fd, KVM_X86_UNCORE_DETACH);
}

static int by_handle(struct kt_vm *v, const char *record, const char *unit, u64 flags)
{
	int fd = _test_cmd_unit_fd(record, unit), ret;

	if (fd < 0)
		return fd;
	ret = uncore_cap(v, fd, flags);
	close(fd);
	return ret;
}

int _test_cmd_vm_attach(struct kt_vm *v, const char *record, const char *unit)
{
	return by_handle(v, record, unit, 0);
}

int _test_cmd_vm_detach(struct kt_vm *v, const char *record, const char *unit)
{
	return by_handle(v, record, unit, KVM_X86_UNCORE_DETACH);
}
