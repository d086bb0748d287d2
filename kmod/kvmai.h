/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - what every part of the module shares: its one lock.  Each part
 * has a header of its own (main.c draws the layout).
 *
 * kvmai_lock (main.c) serialises requests and events: it protects every
 * group, member and port, every PMU record, and who owns what a counters
 * device shows.  Lock order: device_lock (held by the driver core around
 * the PCI and mdev bus notifiers, and around mdev probe and remove) ->
 * kvmai_lock -> the uncore registry's mutex (pmu.c), kvmai_ctr_lock
 * (counters.c).  Nothing under kvmai_lock may take a device lock or a PCI
 * topology lock (pci_bus_sem, pci_rescan_remove_lock): AER recovery takes
 * pci_bus_sem and then device locks, so topology is read from the driver
 * core's device list (topo.c).
 */
#ifndef _KVMAI_H
#define _KVMAI_H

#include <linux/mutex.h>

#include "compat.h"

extern struct mutex kvmai_lock;

#endif /* _KVMAI_H */
