// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - /sys/kernel/debug/kvmai/groups: every group, its members and the
 * ports it holds, for people debugging a host without the CLI.
 */
#include <linux/debugfs.h>
#include <linux/pci.h>
#include <linux/seq_file.h>

#include "kvmai.h"
#include "acs.h"
#include "group.h"

static struct dentry *kvmai_debugfs;

static int kvmai_groups_show(struct seq_file *s, void *unused)
{
	struct kvmai_group *grp;
	struct kvmai_member *m;
	unsigned long index = 0;

	guard(mutex)(&kvmai_lock);
	for (; (grp = kvmai_group_next(&index)); index++) {
		seq_printf(s, "group %s id %u vm %s mode %s %s%s\n", grp->name, grp->id, grp->vm,
			   grp->mode == KVMAI_MODE_DIRECT ? "direct" : "translated",
			   grp->enabled ? "enabled" : "disabled",
			   grp->owner_portid ? " bind-socket" : "");
		list_for_each_entry(m, &grp->members, node) {
			if (m->mdev)
				seq_printf(s, "  member %s mdev of %s\n", dev_name(m->mdev),
					   pci_name(m->pdev));
			else
				seq_printf(s, "  member %s\n", pci_name(m->pdev));
		}
		for (unsigned int i = 0; i < grp->nports; i++) {
			struct kvmai_port *p = grp->ports[i];

			seq_printf(s, "  port %s acs saved %#06x target %#06x current %#06x users %u\n",
				   pci_name(p->pdev), p->saved, p->target,
				   kvmai_port_read(p->pdev), p->users);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kvmai_groups);

void kvmai_debugfs_init(void)
{
	kvmai_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("groups", 0400, kvmai_debugfs, NULL, &kvmai_groups_fops);
}

void kvmai_debugfs_exit(void)
{
	debugfs_remove_recursive(kvmai_debugfs);
}
