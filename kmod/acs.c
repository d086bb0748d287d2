// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the ports registry: every port an enabled group programmed, with
 * the ACS control word it had before, and the one place that writes ACS.
 *
 * A port is shared by reference count when several enabled groups need the
 * same control word on it; the saved word goes back when the last one goes.
 * A restore that fails (the write is refused, a reset is under way) is never
 * given up: the port stays on the list, marked restore_pending, blocks any
 * new plan through it, and a work item retries every 200 ms until the saved
 * word is back (or the port itself is removed).
 *
 * Nothing here waits for a port's config access: kvmai_lock is taken under
 * a device lock (the bus notifier at unbind), and AER recovery holds a
 * port's config access while it takes the device locks below it.  The
 * series' pci_acs_override() returns -EBUSY instead of waiting; enabling
 * then fails, and a restore is left to the retries above.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/netlink.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "kvmai.h"
#include "acs.h"
#include "plan.h"
#include "testing.h"

static LIST_HEAD(kvmai_ports);
/* Ports on the list whose restore is pending; under kvmai_lock. */
static unsigned int kvmai_ports_pending;

#define KVMAI_RESTORE_RETRY_MS 200

static void kvmai_port_retry(struct work_struct *work);
static DECLARE_DELAYED_WORK(kvmai_port_work, kvmai_port_retry);

u16 kvmai_port_read(struct pci_dev *pdev)
{
	u16 ctl = 0;

	pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CTRL, &ctl);
	return ctl;
}

#ifdef KVMAI_HAVE_ACS_OVERRIDE
/*
 * Through the PCI core: the change survives the kernel's reprogramming of
 * ACS after a reset, is refused while a reset or error recovery blocks the
 * port's config access (-EBUSY, without waiting) and on ports whose ACS a
 * PCI quirk handles (-EOPNOTSUPP), and the core logs it.  Setting the saved
 * word drops the override, which restores the kernel's policy.
 */
static int kvmai_port_write(struct kvmai_port *port, u16 val, const char *group)
{
	u16 mask = KVMAI_ACS_REDIR | PCI_ACS_DT;

	if (val != port->saved && kvmai_test_acs_quirk(port->pdev))
		return -EOPNOTSUPP;
	if (val == port->saved) {
		if (kvmai_test_fail_restore())
			return -EIO;
		mask = 0;
	}
	return pci_acs_override(port->pdev, mask & port->cap, val);
}
#else
static int kvmai_port_write(struct kvmai_port *port, u16 val, const char *group)
{
	u16 old = kvmai_port_read(port->pdev);

	if (val == port->saved && kvmai_test_fail_restore())
		return -EIO;
	/*
	 * pci_acs_enabled() and the quirks it consults are not exported:
	 * here a quirk port is only caught when it ignores the write, which
	 * kvmai_port_get() checks.  Tests stand in for the series' refusal.
	 */
	if (val != port->saved && kvmai_test_acs_quirk(port->pdev))
		return -EOPNOTSUPP;

	pci_write_config_word(port->pdev, port->acs_pos + PCI_ACS_CTRL, val);
	pci_info(port->pdev, "kvmai: ACS control %#06x -> %#06x (group %s)\n",
		 old, val, group);
	return 0;
}
#endif

struct kvmai_port *kvmai_port_find(struct pci_dev *pdev)
{
	struct kvmai_port *port;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(port, &kvmai_ports, node)
		if (port->pdev == pdev)
			return port;
	return NULL;
}

int kvmai_port_check(struct pci_dev *pdev, u16 want, struct netlink_ext_ack *extack)
{
	struct kvmai_port *port = kvmai_port_find(pdev);

	if (port && port->restore_pending) {
		NL_SET_ERR_MSG_FMT(extack,
				   "port %s: restore of its ACS control %#06x is pending, try again",
				   pci_name(pdev), port->saved);
		return -EBUSY;
	}
	if (port && port->target != want) {
		NL_SET_ERR_MSG_FMT(extack, "port %s holds ACS %#06x for another group, not %#06x",
				   pci_name(pdev), port->target, want);
		return -EBUSY;
	}
	return 0;
}

struct kvmai_port *kvmai_port_get(struct pci_dev *pdev, u16 want, const char *group,
				  struct netlink_ext_ack *extack)
{
	struct kvmai_port *port;
	int ret;

	ret = kvmai_port_check(pdev, want, extack);
	if (ret)
		return ERR_PTR(ret);

	port = kvmai_port_find(pdev);
	if (port) {
		port->users++;
		return port;
	}

	port = kzalloc_obj(*port);
	if (!port)
		return ERR_PTR(-ENOMEM);
	port->pdev = pci_dev_get(pdev);
	port->acs_pos = pdev->acs_cap;
	pci_read_config_word(pdev, port->acs_pos + PCI_ACS_CAP, &port->cap);
	port->saved = kvmai_port_read(pdev);
	port->target = want;
	port->users = 1;
	if (want != port->saved) {
		ret = kvmai_port_write(port, want, group);
		if (ret) {
			pci_warn(pdev, "kvmai: ACS change for group %s failed: %d\n", group, ret);
			if (ret == -EOPNOTSUPP)
				NL_SET_ERR_MSG_FMT(extack, "port %s: a PCI quirk handles its ACS",
						   pci_name(pdev));
			else if (ret == -EBUSY)
				NL_SET_ERR_MSG_FMT(extack,
						   "port %s: ACS change refused (%d): it is being reset, try again",
						   pci_name(pdev), ret);
			else
				NL_SET_ERR_MSG_FMT(extack, "port %s: ACS change refused (%d)",
						   pci_name(pdev), ret);
			goto err_free;
		}
		/* A port that ignores the write is no place to relax isolation. */
		if (kvmai_port_read(pdev) != want) {
			NL_SET_ERR_MSG_FMT(extack,
					   "port %s: ACS control reads %#06x after writing %#06x",
					   pci_name(pdev), kvmai_port_read(pdev), want);
			ret = -EIO;
			list_add_tail(&port->node, &kvmai_ports);
			kvmai_port_put(port, group);
			return ERR_PTR(ret);
		}
	}
	list_add_tail(&port->node, &kvmai_ports);
	return port;

err_free:
	pci_dev_put(port->pdev);
	kfree(port);
	return ERR_PTR(ret);
}

static void kvmai_port_free(struct kvmai_port *port)
{
	if (port->restore_pending)
		kvmai_ports_pending--;
	list_del(&port->node);
	pci_dev_put(port->pdev);
	kfree(port);
}

/* Put the saved word back: true if done, else the port is left pending. */
static bool kvmai_port_restore(struct kvmai_port *port, const char *group)
{
	int ret;

#ifndef KVMAI_HAVE_ACS_OVERRIDE
	/* Without an override to drop, a word already back needs no write. */
	if (kvmai_port_read(port->pdev) == port->saved)
		return true;
#endif
	ret = kvmai_port_write(port, port->saved, group);
	if (!ret)
		return true;
	if (!port->restore_pending) {
		port->restore_pending = true;
		kvmai_ports_pending++;
		pci_warn(port->pdev,
			 "kvmai: cannot restore ACS control %#06x (group %s): %d, retrying every %d ms\n",
			 port->saved, group, ret, KVMAI_RESTORE_RETRY_MS);
	}
	schedule_delayed_work(&kvmai_port_work, msecs_to_jiffies(KVMAI_RESTORE_RETRY_MS));
	return false;
}

static void kvmai_port_retry(struct work_struct *work)
{
	struct kvmai_port *port, *tmp;

	guard(mutex)(&kvmai_lock);
	list_for_each_entry_safe(port, tmp, &kvmai_ports, node) {
		if (!port->restore_pending || !kvmai_port_restore(port, "(retry)"))
			continue;
		pci_info(port->pdev, "kvmai: ACS control restored to %#06x\n", port->saved);
		kvmai_port_free(port);
	}
}

void kvmai_port_put(struct kvmai_port *port, const char *group)
{
	u16 cur;

	lockdep_assert_held(&kvmai_lock);
	if (--port->users)
		return;

	cur = kvmai_port_read(port->pdev);
	if (cur != port->target)
		pci_warn(port->pdev,
			 "kvmai: ACS control changed behind kvmai (%#06x, expected %#06x)\n",
			 cur, port->target);
	if (kvmai_port_restore(port, group))
		kvmai_port_free(port);
}

unsigned int kvmai_ports_restore_pending(void)
{
	lockdep_assert_held(&kvmai_lock);
	return kvmai_ports_pending;
}

/* A port that is going away needs no restore any more. */
void kvmai_ports_device_removed(struct pci_dev *pdev)
{
	struct kvmai_port *port;

	lockdep_assert_held(&kvmai_lock);
	port = kvmai_port_find(pdev);
	if (port && port->restore_pending) {
		pci_info(pdev, "kvmai: removed before its ACS control was restored\n");
		kvmai_port_free(port);
	}
}

/*
 * Module unload, after every group let go: the retries cannot outlive the
 * module, so keep trying here for a while, then say what is left.
 */
void kvmai_ports_destroy(void)
{
	struct kvmai_port *port, *tmp;
	int tries;

	cancel_delayed_work_sync(&kvmai_port_work);
	guard(mutex)(&kvmai_lock);
	for (tries = 0; kvmai_ports_pending && tries < 50; tries++) {
		list_for_each_entry_safe(port, tmp, &kvmai_ports, node)
			if (kvmai_port_write(port, port->saved, "(unload)") == 0)
				kvmai_port_free(port);
		if (kvmai_ports_pending)
			msleep(KVMAI_RESTORE_RETRY_MS);
	}
	list_for_each_entry_safe(port, tmp, &kvmai_ports, node) {
		pci_err(port->pdev, "kvmai: unloading with ACS control %#06x, could not restore %#06x\n",
			kvmai_port_read(port->pdev), port->saved);
		kvmai_port_free(port);
	}
}
