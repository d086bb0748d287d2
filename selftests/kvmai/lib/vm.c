// SPDX-License-Identifier: GPL-2.0-only
/*
 * A one-vCPU real-mode KVM guest that accesses one MSR N times between two
 * port writes, with the vCPU's exit count and the wall time taken at each
 * port write: what the PMU exit test and benchmark measure.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai_dev.h>

#include "vm.h"

#define PORT_START 0x10
#define PORT_END 0x11
#define PORT_GP 0x13
#define IVT_GP 0x34	/* real-mode vector 13: offset, segment */
#define CODE_GPA 0x1000
#define GP_GPA 0x1100
#define MEM_SIZE 0x10000

struct kt_vm {
	int kvm, fd, vcpu, stats;
	struct kvm_run *run;
	size_t run_size;
	void *mem;
	long exits_off;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const __u8 op_code[] = {
	[KT_RDMSR] = 0x32, [KT_WRMSR] = 0x30, [KT_RDPMC] = 0x33,
};

/*
 * Real mode: ecx = @msr, then @loops times @op (wrmsr writes @value); a #GP
 * goes to a handler that writes PORT_GP and halts.
 */
static size_t guest_code(__u8 *mem, __u32 msr, __u16 loops, enum kt_op op, __u32 value)
{
	__u8 gp[] = {
		0xe6, PORT_GP,						/* out PORT_GP, al */
		0xf4,							/* hlt */
	};
	__u16 ivt[] = { GP_GPA, 0 };
	__u8 *p = mem + CODE_GPA;
	__u8 code[] = {
		0x66, 0xb9, msr, msr >> 8, msr >> 16, msr >> 24,	/* mov ecx, msr */
		0x66, 0xb8, value, value >> 8, value >> 16, value >> 24, /* mov eax, value */
		0x66, 0x31, 0xd2,					/* xor edx, edx */
		0xbe, loops, loops >> 8,				/* mov si, loops */
		0xe6, PORT_START,					/* out PORT_START, al */
		0x0f, op_code[op],					/* rdmsr/wrmsr/rdpmc */
		0x4e,							/* dec si */
		0x75, 0xfb,						/* jnz back 5 */
		0xe6, PORT_END,						/* out PORT_END, al */
		0xf4,							/* hlt */
	};

	memcpy(p, code, sizeof(code));
	memcpy(mem + GP_GPA, gp, sizeof(gp));
	memcpy(mem + IVT_GP, ivt, sizeof(ivt));
	return sizeof(code);
}

static long stat_offset(int stats, const char *name)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	size_t dsize;
	long off = -1;
	char *buf;
	__u32 i;

	if (pread(stats, &h, sizeof(h), 0) != sizeof(h))
		return -1;
	dsize = sizeof(*d) + h.name_size;
	buf = calloc(h.num_desc, dsize);
	if (!buf)
		return -1;
	if (pread(stats, buf, h.num_desc * dsize, h.desc_offset) == (ssize_t)(h.num_desc * dsize)) {
		for (i = 0; i < h.num_desc; i++) {
			d = (struct kvm_stats_desc *)(buf + i * dsize);
			if (!strcmp(d->name, name)) {
				off = h.data_offset + d->offset;
				break;
			}
		}
	}
	free(buf);
	return off;
}

static __u64 vcpu_exits(struct kt_vm *v)
{
	__u64 val = 0;

	if (pread(v->stats, &val, sizeof(val), v->exits_off) != sizeof(val))
		return ~0ULL;
	return val;
}

static void destroy(struct kt_vm *v)
{
	if (v->run && v->run != MAP_FAILED)
		munmap(v->run, v->run_size);
	if (v->mem && v->mem != MAP_FAILED)
		munmap(v->mem, MEM_SIZE);
	if (v->stats > 0)
		close(v->stats);
	if (v->vcpu > 0)
		close(v->vcpu);
	if (v->fd > 0)
		close(v->fd);
	if (v->kvm > 0)
		close(v->kvm);
}

static int create(struct kt_vm *v, __u64 pmu_caps)
{
	struct kvm_enable_cap pmu = {
		.cap = KVM_CAP_PMU_CAPABILITY, .args = { pmu_caps },
	};
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = MEM_SIZE,
	};
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args = { KVM_MSR_EXIT_REASON_UNKNOWN },
	};

	v->kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (v->kvm < 0)
		return -errno;
	v->fd = ioctl(v->kvm, KVM_CREATE_VM, 0);
	if (v->fd < 0)
		return -errno;
	v->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v->mem == MAP_FAILED)
		return -errno;
	region.userspace_addr = (uintptr_t)v->mem;
	if (ioctl(v->fd, KVM_SET_USER_MEMORY_REGION, &region) ||
	    ioctl(v->fd, KVM_ENABLE_CAP, &cap))
		return -errno;
	/* Before the vCPU: KVM takes PMU settings only then. */
	if (pmu_caps && ioctl(v->fd, KVM_ENABLE_CAP, &pmu))
		return -errno;
	v->vcpu = ioctl(v->fd, KVM_CREATE_VCPU, 0);
	if (v->vcpu < 0)
		return -errno;
	v->run_size = ioctl(v->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	v->run = mmap(NULL, v->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->vcpu, 0);
	if (v->run == MAP_FAILED)
		return -errno;
	v->stats = ioctl(v->vcpu, KVM_GET_STATS_FD, NULL);
	if (v->stats < 0)
		return -errno;
	v->exits_off = stat_offset(v->stats, "exits");
	return v->exits_off < 0 ? -ENOENT : 0;
}

struct kt_vm *kt_vm_create(__u64 pmu_caps)
{
	struct kt_vm *v = calloc(1, sizeof(*v));

	if (v && create(v, pmu_caps)) {
		destroy(v);
		free(v);
		v = NULL;
	}
	return v;
}

void kt_vm_destroy(struct kt_vm *v)
{
	if (!v)
		return;
	destroy(v);
	free(v);
}

int kt_vm_fd(const struct kt_vm *v)
{
	return v->fd;
}

int kt_vm_check_cap(const struct kt_vm *v, long cap)
{
	return ioctl(v->fd, KVM_CHECK_EXTENSION, cap);
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

int _test_cmd_vm_run(struct kt_vm *v, __u32 msr, __u32 loops, enum kt_op op,
		     __u32 value, struct kt_counts *c)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };
	__u64 start = 0, t0 = 0;
	bool counting = false;

	if (loops > 0xffff)
		return -EINVAL;
	guest_code(v->mem, msr, loops, op, value);
	if (ioctl(v->vcpu, KVM_GET_SREGS, &sregs))
		return -errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(v->vcpu, KVM_SET_SREGS, &sregs) || ioctl(v->vcpu, KVM_SET_REGS, &regs))
		return -errno;
	memset(c, 0, sizeof(*c));
	for (;;) {
		if (ioctl(v->vcpu, KVM_RUN, NULL))
			return -errno;
		switch (v->run->exit_reason) {
		case KVM_EXIT_IO:
			if (v->run->io.port == PORT_START) {
				start = vcpu_exits(v);
				t0 = now_ns();
				counting = true;
			} else if (v->run->io.port == PORT_END && counting) {
				c->ns = now_ns() - t0;
				/* Less the port write's own exit. */
				c->exits = vcpu_exits(v) - start - 1;
				counting = false;
				if (ioctl(v->vcpu, KVM_GET_REGS, &regs))
					return -errno;
				c->last = (regs.rdx & 0xffffffff) << 32 |
					  (regs.rax & 0xffffffff);
			} else if (v->run->io.port == PORT_GP) {
				c->gp = true;
			}
			break;
		case KVM_EXIT_X86_RDMSR:
			v->run->msr.data = 0;
			v->run->msr.error = 0;
			c->to_user++;
			break;
		case KVM_EXIT_X86_WRMSR:
			v->run->msr.error = 0;
			c->to_user++;
			break;
		case KVM_EXIT_HLT:
			return 0;
		default:
			return -EPROTO;
		}
	}
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

static int uncore_cap(struct kt_vm *v, int fd, __u64 flags)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_UNCORE_PASSTHROUGH, .args = { fd, flags },
	};

	return ioctl(v->fd, KVM_ENABLE_CAP, &cap) ? -errno : 0;
}

int _test_cmd_vm_attach_fd(struct kt_vm *v, int fd)
{
	return uncore_cap(v, fd, 0);
}

int _test_cmd_vm_detach_fd(struct kt_vm *v, int fd)
{
	return uncore_cap(v, fd, KVM_X86_UNCORE_DETACH);
}

static int by_handle(struct kt_vm *v, const char *record, const char *unit, __u64 flags)
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
