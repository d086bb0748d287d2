// SPDX-License-Identifier: GPL-2.0-only
/*
 * Does a guest read an owned uncore counter without VM exits?
 *
 * The emulated host runs KVM (kvm_amd on QEMU's emulated SVM), and QEMU
 * honours L1 KVM's MSR permission map on every guest RDMSR, so exits can
 * be counted here even though no counter counts: a one-vCPU real-mode
 * guest reads the mock L3 unit's first counter MSR N times between two
 * port writes, and the vCPU's "exits" statistic is read at each port write.
 *
 *  - intercepted: the MSR is unknown to KVM and goes to userspace, N exits;
 *  - passed through (KVM_CAP_X86_UNCORE_PASSTHROUGH, kvm-ai series) after
 *    kvmai reserved the unit for this process: reads do not exit, while
 *    writes to its control MSR still do, handled and checked by KVM;
 *  - after kvmai releases the unit, reads exit again.
 *
 * On real uncore hardware the same holds for the host's own units; those
 * tests need one and skip here.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/kvmai_test.h"

#ifndef KVM_CAP_X86_UNCORE_PASSTHROUGH
#define KVM_CAP_X86_UNCORE_PASSTHROUGH 252
#endif

#define L3 "mock_uncore_l3"
#define L3_CTL0 0xc0010230
#define L3_CTR0 0xc0010231
#define LOOPS 1000
#define PORT_START 0x10
#define PORT_END 0x11
#define CODE_GPA 0x1000
#define MEM_SIZE 0x10000

struct vm {
	int kvm, fd, vcpu, stats;
	struct kvm_run *run;
	size_t run_size;
	void *mem;
	off_t exits_off;
};

/* Real mode: ecx = @msr, then @loops times rdmsr (or wrmsr of 0). */
static size_t guest_code(uint8_t *p, uint32_t msr, uint16_t loops, bool write)
{
	uint8_t code[] = {
		0x66, 0xb9, msr, msr >> 8, msr >> 16, msr >> 24,	/* mov ecx, msr */
		0x66, 0x31, 0xc0,					/* xor eax, eax */
		0x66, 0x31, 0xd2,					/* xor edx, edx */
		0xbe, loops, loops >> 8,				/* mov si, loops */
		0xe6, PORT_START,					/* out PORT_START, al */
		0x0f, write ? 0x30 : 0x32,				/* rdmsr / wrmsr */
		0x4e,							/* dec si */
		0x75, 0xfb,						/* jnz back 5 */
		0xe6, PORT_END,						/* out PORT_END, al */
		0xf4,							/* hlt */
	};

	memcpy(p, code, sizeof(code));
	return sizeof(code);
}

static off_t stat_offset(int stats, const char *name)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	size_t dsize;
	off_t off = -1;
	char *buf;
	uint32_t i;

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

static uint64_t vcpu_exits(struct vm *v)
{
	uint64_t val = 0;

	if (pread(v->stats, &val, sizeof(val), v->exits_off) != sizeof(val))
		return ~0ULL;
	return val;
}

static int vm_create(struct vm *v)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = MEM_SIZE,
	};
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args = { KVM_MSR_EXIT_REASON_UNKNOWN },
	};

	memset(v, 0, sizeof(*v));
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

static void vm_destroy(struct vm *v)
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

struct counts {
	uint64_t exits;		/* VM exits between the two port writes */
	unsigned int to_user;	/* of which MSR exits to userspace */
};

/* Runs the loop once from the start; 0 or -errno. */
static int vm_measure(struct vm *v, uint32_t msr, bool write, struct counts *c)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };
	uint64_t start = 0;
	bool counting = false;

	guest_code((uint8_t *)v->mem + CODE_GPA, msr, LOOPS, write);
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
				counting = true;
			} else if (v->run->io.port == PORT_END && counting) {
				/* Less the port write's own exit. */
				c->exits = vcpu_exits(v) - start - 1;
				counting = false;
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

static bool has_passthrough(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int ret;

	if (kvm < 0)
		return false;
	ret = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_X86_UNCORE_PASSTHROUGH);
	close(kvm);
	return ret > 0;
}

/* Runs this process (and so its vCPU) on the CPUs of @list only. */
static int pin(const char *list)
{
	cpu_set_t set;
	int a, b;
	const char *p = list;

	CPU_ZERO(&set);
	while (*p) {
		if (sscanf(p, "%d-%d", &a, &b) != 2) {
			if (sscanf(p, "%d", &a) != 1)
				return -EINVAL;
			b = a;
		}
		for (; a <= b; a++)
			CPU_SET(a, &set);
		p += strcspn(p, ",");
		if (*p)
			p++;
	}
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

FIXTURE(exits) {
	struct nl_sock *sk;
	int family;
	char pkg0[64];
	char ext[256];
	struct vm vm;
	bool mock;
};

FIXTURE_SETUP(exits)
{
	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "no /dev/kvm in this host");
	ASSERT_EQ(0, kvmai_module_load());
	/* Only the mock cases need it; a real host may not carry it. */
	self->mock = kvmai_mock_load() == 0;
	self->sk = kvmai_genl_open(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, kt_package_cpus(0, self->pkg0, sizeof(self->pkg0)));
	ASSERT_EQ(0, pin(self->pkg0));
	ASSERT_EQ(0, vm_create(&self->vm)) TH_LOG("cannot make a KVM guest");
}

FIXTURE_TEARDOWN(exits)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "exit-test" };

	vm_destroy(&self->vm);
	if (self->sk) {
		kt_pmu_request(self->sk, self->family, &rel, NULL, 0, NULL, NULL, 0);
		kvmai_genl_close(self->sk);
	}
}

static int reserve_l3(FIXTURE_DATA(exits) *self)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "exit-test",
				  .units = { L3 }, .cpus = self->pkg0 };

	return kt_pmu_request(self->sk, self->family, &req, NULL, 0, NULL,
			      self->ext, sizeof(self->ext));
}

TEST_F(exits, intercepted_uncore_reads_exit)
{
	struct counts c;

	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KVMAI_MOCK_PATH);
	ASSERT_EQ(0, vm_measure(&self->vm, L3_CTR0, false, &c));
	TH_LOG("intercepted: %u reads, %llu exits, %u to userspace",
	       LOOPS, (unsigned long long)c.exits, c.to_user);
	EXPECT_EQ(LOOPS, c.to_user);
	EXPECT_LE(LOOPS, c.exits);
}

TEST_F(exits, owned_uncore_counter_reads_do_not_exit)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_UNCORE_PASSTHROUGH };
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "exit-test" };
	struct counts before, pass, ctl, after;

	if (!has_passthrough())
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KVMAI_MOCK_PATH);
	ASSERT_EQ(0, vm_measure(&self->vm, L3_CTR0, false, &before));

	/* Not reserved for us yet: KVM must refuse. */
	cap.args[0] = kt_perf_type(L3);
	ASSERT_LE(0, (int)cap.args[0]);
	EXPECT_EQ(-1, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap));
	EXPECT_EQ(EPERM, errno);

	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->ext);
	ASSERT_EQ(0, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, vm_measure(&self->vm, L3_CTR0, false, &pass));
	ASSERT_EQ(0, vm_measure(&self->vm, L3_CTL0, true, &ctl));

	/* Released by kvmai: KVM intercepts again. */
	ASSERT_EQ(0, kt_pmu_request(self->sk, self->family, &rel, NULL, 0, NULL, NULL, 0));
	ASSERT_EQ(0, vm_measure(&self->vm, L3_CTR0, false, &after));

	TH_LOG("%u reads of 0x%x: %llu exits intercepted, %llu owned, %llu after release",
	       LOOPS, L3_CTR0, (unsigned long long)before.exits,
	       (unsigned long long)pass.exits, (unsigned long long)after.exits);
	TH_LOG("%u writes of 0x%x while owned: %llu exits, %u to userspace",
	       LOOPS, L3_CTL0, (unsigned long long)ctl.exits, ctl.to_user);
	EXPECT_LE(LOOPS, before.exits);
	/* Timer interrupts may still exit now and then; MSR reads may not. */
	EXPECT_GT(LOOPS / 100, pass.exits);
	EXPECT_EQ(0, pass.to_user);
	/* Control writes are checked by KVM: they exit, but stay in the kernel. */
	EXPECT_LE(LOOPS, ctl.exits);
	EXPECT_EQ(0, ctl.to_user);
	EXPECT_LE(LOOPS, after.exits);
	EXPECT_EQ(LOOPS, after.to_user);
}

/*
 * The first unit of real hardware that drivers offer, reserved for this
 * process on package 0: NULL with its name and a counter MSR, or a reason
 * to skip (no such unit), or *err set for a failure (it would not reserve).
 */
static const char *reserve_real_unit(FIXTURE_DATA(exits) *self, char *name,
				     uint32_t *counter, int *err)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "exit-test",
				  .units = { name }, .cpus = self->pkg0 };
	struct kt_pmu_host h;
	struct kt_pmu rec;
	int i;

	if (kt_pmu_host(self->sk, self->family, &h, NULL, 0))
		return "pmu-host-get failed";
	for (i = 0; i < h.nunits; i++)
		if (strncmp(h.units[i].name, "mock_", 5))
			break;
	if (i == h.nunits)
		return "no uncore PMU hardware offered here (emulated host: TCG has no PMU)";
	strcpy(name, h.units[i].name);
	*err = kt_pmu_request(self->sk, self->family, &req, &rec, 1, NULL,
			      self->ext, sizeof(self->ext));
	if (!*err && (rec.nunits != 1 || !rec.units[0].counter_msr))
		*err = -ENOENT;
	if (!*err)
		*counter = rec.units[0].counter_msr;
	return NULL;
}

TEST_F(exits, hardware_host_perf_refused_while_owned)
{
	uint32_t counter = 0;
	const char *why;
	char name[64];
	int fd, err = 0;

	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s: %s", name, self->ext);
	/* What 'perf stat -a -e <unit>/.../' does on the owned package. */
	fd = kt_perf_open(name, 0, false);
	EXPECT_EQ(-EBUSY, fd);
	if (fd >= 0)
		close(fd);
}

TEST_F(exits, hardware_uncore_counter_reads_do_not_exit)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_UNCORE_PASSTHROUGH };
	uint32_t counter = 0;
	const char *why;
	struct counts c;
	char name[64];
	int err = 0;

	if (!has_passthrough())
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s (or no counter MSR): %s", name, self->ext);
	cap.args[0] = kt_perf_type(name);
	ASSERT_EQ(0, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, vm_measure(&self->vm, counter, false, &c));
	TH_LOG("%u reads of %s's counter 0x%x: %llu exits", LOOPS, name, counter,
	       (unsigned long long)c.exits);
	EXPECT_GT(LOOPS / 100, c.exits);
	EXPECT_EQ(0, c.to_user);
}

TEST_HARNESS_MAIN
