/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - kernel interfaces that differ between the kernels kvmai builds
 * for (Debian's 6.12 through mainline 7.x), probed by what they define
 * rather than by version number.
 */
#ifndef _KVMAI_COMPAT_H
#define _KVMAI_COMPAT_H

#include <linux/slab.h>
#include <linux/topology.h>

#include <uapi/linux/kvmai.h>

/* Typed allocation helpers arrived in 7.0; kvmai only allocates GFP_KERNEL. */
#ifndef kzalloc_obj
#define kzalloc_obj(P, ...) kzalloc(sizeof(P), GFP_KERNEL)
#endif
#ifndef kmalloc_obj
#define kmalloc_obj(P, ...) kmalloc(sizeof(P), GFP_KERNEL)
#endif

/* pfn_t went away in 6.17; vmf_insert_mixed() takes a plain pfn since. */
#ifdef KVMAI_HAVE_PFN_T
#include <linux/pfn_t.h>
#define kvmai_vmf_insert_mixed(vma, addr, pfn) \
	vmf_insert_mixed(vma, addr, __pfn_to_pfn_t(pfn, 0))
#else
#define kvmai_vmf_insert_mixed vmf_insert_mixed
#endif

/* rdmsrl_safe() and wrmsrl_safe() were renamed in 6.16. */
#ifndef KVMAI_HAVE_RDMSRQ
#define rdmsrq_safe rdmsrl_safe
#define wrmsrq_safe wrmsrl_safe
#endif

/*
 * PMU ownership is x86's: the uncore registry and KVM's core fence exist
 * there only.  Elsewhere (arm64 hosts pass GPUs and NICs to VMs too, and
 * kvmai's P2P groups are for them) pmu-assign is refused, so no record
 * names a CPU or a package, and these x86 topology helpers only let the
 * PMU code build.
 */
#ifndef CONFIG_X86
#define topology_logical_package_id(cpu) ({ (void)(cpu); 0; })
#define topology_max_packages() 1U
#endif

/* What the module was built with, for status-get (enum kvmai_feature). */
#ifdef KVMAI_HAVE_ACS_OVERRIDE
#define KVMAI_FEATURE_ACS KVMAI_FEATURE_ACS_OVERRIDE
#else
#define KVMAI_FEATURE_ACS 0
#endif
#ifdef KVMAI_HAVE_VFIO_NOTIFY
#define KVMAI_FEATURE_VFIO KVMAI_FEATURE_VFIO_NOTIFY
#else
#define KVMAI_FEATURE_VFIO 0
#endif
/* The fence is KVM's; perf says what stands in its way. */
#if defined(KVMAI_HAVE_PERF_GUEST_OWNER) && defined(KVMAI_HAVE_KVM_PMU_FENCE)
#define KVMAI_HAVE_CORE_FENCE
#define KVMAI_FEATURE_CORE KVMAI_FEATURE_CORE_FENCE
#else
#define KVMAI_FEATURE_CORE 0
#endif
/* A kernel with the series may have been built without the registry. */
#if defined(KVMAI_HAVE_UNCORE_GUEST) && IS_ENABLED(CONFIG_PERF_UNCORE_GUEST)
#define KVMAI_FEATURE_UNCORE KVMAI_FEATURE_UNCORE_RESERVE
#else
#define KVMAI_FEATURE_UNCORE 0
#endif
#define KVMAI_FEATURES (KVMAI_FEATURE_ACS | KVMAI_FEATURE_VFIO | \
			KVMAI_FEATURE_CORE | KVMAI_FEATURE_UNCORE)

#endif /* _KVMAI_COMPAT_H */
