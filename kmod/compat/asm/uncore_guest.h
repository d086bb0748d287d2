/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reserving uncore PMU units for a guest.
 *
 * An uncore unit counts for a whole package, so handing it to a guest is an
 * isolation decision taken by the host: a reservation names the unit and the
 * packages, fences host perf events off them and tells KVM which MSRs the
 * guest of the VM attached with the reservation's file may touch without
 * exits.
 */
#ifndef _ASM_X86_UNCORE_GUEST_H
#define _ASM_X86_UNCORE_GUEST_H

#include <linux/bits.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kconfig.h>
#include <linux/types.h>

struct file;
struct perf_event;
struct pmu;
struct uncore_guest_res;

/* What the guest may do with the MSRs of a range. */
#define UNCORE_GUEST_MSR_READ	BIT(0)	/* reads are not intercepted */
#define UNCORE_GUEST_MSR_WRITE	BIT(1)	/* writes intercepted, checked, done */
#define UNCORE_GUEST_MSR_RDPMC	BIT(2)	/* RDPMC @rdpmc + i reads MSR @base + i */
/*
 * With MSR_WRITE: the write mask has bits that choose which cores or threads
 * are counted (AMD's L3 thread mask and core id).  Such a unit is reserved
 * only for all the online CPUs of its packages, so that no core it can be
 * pointed at is another tenant's.
 */
#define UNCORE_GUEST_MSR_CORE_SELECT	BIT(3)

/*
 * The CPUs one instance of a unit counts for.  A reservation covers whole
 * packages, so it owns every instance of its packages whatever the scope.
 */
enum uncore_guest_scope {
	UNCORE_GUEST_SCOPE_PKG,		/* a package */
	UNCORE_GUEST_SCOPE_DIE,		/* a die (AMD: a node) */
	UNCORE_GUEST_SCOPE_LLC,		/* the CPUs of a last-level cache */
};

struct uncore_guest_msr_range {
	u32 base;		/* first MSR */
	u32 nr;			/* number of consecutive MSRs */
	u32 flags;		/* UNCORE_GUEST_MSR_* */
	u32 rdpmc;		/* first RDPMC index, with MSR_RDPMC */
	u64 write_mask;		/* bits a guest may set, with MSR_WRITE */
};

/*
 * How the registry reaches a unit's registers on the current CPU, for
 * providers whose registers are not plain MSRs of that CPU.  NULL: the
 * MSRs themselves (rdmsrq_safe(), wrmsrq_safe()).  Called with a spinlock
 * held; must not sleep.
 */
struct uncore_guest_ops {
	int (*read)(struct pmu *pmu, u32 msr, u64 *val);
	int (*write)(struct pmu *pmu, u32 msr, u64 val);
};

/* Owners: who decides that a VM gets a unit. */
typedef void (*uncore_guest_revoke_t)(struct uncore_guest_res *res,
				      void *data);

struct uncore_guest_unit_info {
	const char *name;
	int type;			/* perf PMU type */
	unsigned int nr_ranges;
	unsigned long host_events;	/* open host events, all packages */
	bool reserved;			/* on at least one package */
	bool core_select;		/* UNCORE_GUEST_MSR_CORE_SELECT ranges */
	enum uncore_guest_scope scope;
};

typedef int (*uncore_guest_unit_fn_t)(const struct uncore_guest_unit_info *info,
				    void *data);

#if IS_ENABLED(CONFIG_PERF_UNCORE_GUEST)
/* Providers: uncore PMU drivers. */
int uncore_guest_register(struct pmu *pmu, enum uncore_guest_scope scope,
			  const struct uncore_guest_msr_range *ranges,
			  unsigned int nr_ranges,
			  const struct uncore_guest_ops *ops);
void uncore_guest_unregister(struct pmu *pmu);
int uncore_guest_event_init(struct perf_event *event);

/* Owners */
struct uncore_guest_res *uncore_guest_reserve(const char *name,
					      const struct cpumask *cpus,
					      uncore_guest_revoke_t revoke,
					      void *data);
void uncore_guest_release(struct uncore_guest_res *res);
int uncore_guest_list_units(uncore_guest_unit_fn_t fn, void *data);
struct file *uncore_guest_res_file(struct uncore_guest_res *res);

/* KVM: the VMM attaches its VM with the reservation's file it was given. */
struct uncore_guest_res *uncore_guest_file_res(struct file *file);
int uncore_guest_attach(struct uncore_guest_res *res,
			uncore_guest_revoke_t revoke, void *data);
void uncore_guest_detach(struct uncore_guest_res *res);
int uncore_guest_res_ranges(struct uncore_guest_res *res,
			    const struct uncore_guest_msr_range **ranges);
bool uncore_guest_res_has_cpu(struct uncore_guest_res *res, int cpu);
bool uncore_guest_res_active(struct uncore_guest_res *res);
int uncore_guest_res_read(struct uncore_guest_res *res, u32 msr, u64 *val);
int uncore_guest_res_write(struct uncore_guest_res *res, u32 msr, u64 val);
int uncore_guest_res_rdpmc(struct uncore_guest_res *res, u32 idx, u64 *val);

/* Owners and KVM: packages of a reservation that CPU hotplug took away. */
bool uncore_guest_res_pkg_offline(struct uncore_guest_res *res,
				  unsigned int pkg);
unsigned int uncore_guest_res_hotplug_scrubs(struct uncore_guest_res *res);
#else
/*
 * Without the registry drivers offer nothing, owners cannot reserve and
 * KVM finds no unit; nothing else can be reached without a reservation.
 */
static inline int uncore_guest_register(struct pmu *pmu,
					enum uncore_guest_scope scope,
					const struct uncore_guest_msr_range *ranges,
					unsigned int nr_ranges,
					const struct uncore_guest_ops *ops)
{
	return 0;
}

static inline void uncore_guest_unregister(struct pmu *pmu) { }

static inline int uncore_guest_event_init(struct perf_event *event)
{
	return 0;
}

static inline struct uncore_guest_res *
uncore_guest_reserve(const char *name, const struct cpumask *cpus,
		     uncore_guest_revoke_t revoke, void *data)
{
	return ERR_PTR(-ENODEV);
}

static inline void uncore_guest_release(struct uncore_guest_res *res) { }

static inline int uncore_guest_list_units(uncore_guest_unit_fn_t fn,
					  void *data)
{
	return 0;
}

static inline struct file *
uncore_guest_res_file(struct uncore_guest_res *res)
{
	return ERR_PTR(-ENODEV);
}

static inline struct uncore_guest_res *uncore_guest_file_res(struct file *file)
{
	return NULL;
}

static inline int uncore_guest_attach(struct uncore_guest_res *res,
				      uncore_guest_revoke_t revoke, void *data)
{
	return -ENODEV;
}

static inline void uncore_guest_detach(struct uncore_guest_res *res) { }

static inline int
uncore_guest_res_ranges(struct uncore_guest_res *res,
			const struct uncore_guest_msr_range **ranges)
{
	*ranges = NULL;
	return 0;
}

static inline bool uncore_guest_res_has_cpu(struct uncore_guest_res *res,
					    int cpu)
{
	return false;
}

static inline bool uncore_guest_res_active(struct uncore_guest_res *res)
{
	return false;
}

static inline int uncore_guest_res_read(struct uncore_guest_res *res,
					u32 msr, u64 *val)
{
	return -EPERM;
}

static inline int uncore_guest_res_write(struct uncore_guest_res *res,
					 u32 msr, u64 val)
{
	return -EPERM;
}

static inline int uncore_guest_res_rdpmc(struct uncore_guest_res *res,
					 u32 idx, u64 *val)
{
	return -EPERM;
}

static inline bool uncore_guest_res_pkg_offline(struct uncore_guest_res *res,
						unsigned int pkg)
{
	return false;
}

static inline unsigned int
uncore_guest_res_hotplug_scrubs(struct uncore_guest_res *res)
{
	return 0;
}
#endif /* CONFIG_PERF_UNCORE_GUEST */

#endif /* _ASM_X86_UNCORE_GUEST_H */
