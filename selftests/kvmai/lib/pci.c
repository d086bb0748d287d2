// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device map and PCI access for the selftests.  Everything here reads the
 * hardware (config space via sysfs) rather than the module, so the tests
 * can check what the module did independently.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "kvmai_test.h"

#define MAX_DEVS 64

static struct kvmai_dev devs[MAX_DEVS];
static int ndevs = -1;

static void load_map(void)
{
	char flags[64];
	FILE *f;

	if (ndevs >= 0)
		return;
	ndevs = 0;
	f = fopen(KVMAI_DEVICES_FILE, "r");
	if (!f)
		return;
	while (ndevs < MAX_DEVS) {
		struct kvmai_dev *d = &devs[ndevs];

		if (fscanf(f, "%31s %15s %7s %15s %d %63s %15s", d->name, d->bdf,
			   d->role, d->sw, &d->numa, flags, d->port) != 7)
			break;
		d->ats = strstr(flags, "ats");
		d->sriov = strstr(flags, "sriov");
		d->acs_port = strstr(flags, "acsport");
		ndevs++;
	}
	fclose(f);
}

const struct kvmai_dev *kvmai_dev(const char *name)
{
	load_map();
	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

const char *kt_bdf(const char *name)
{
	const struct kvmai_dev *d = kvmai_dev(name);

	return d ? d->bdf : "none";
}

const char *kt_port(const char *name)
{
	const struct kvmai_dev *d = kvmai_dev(name);

	return d ? d->port : "none";
}

size_t kt_bind_vfio(const char *const *names, size_t n, char (*saved)[64])
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pci_driver(kt_bdf(names[i]), saved[i], 64) ||
		    pci_bind(kt_bdf(names[i]), "vfio-pci"))
			break;
	return i;
}

int kvmai_devs(const struct kvmai_dev **out, int max)
{
	int i;

	load_map();
	for (i = 0; i < ndevs && i < max; i++)
		out[i] = &devs[i];
	return i;
}

static void dev_path(char *buf, size_t len, const char *bdf, const char *attr)
{
	snprintf(buf, len, "/sys/bus/pci/devices/%s/%s", bdf, attr);
}

/* One pread() or pwrite() of config space; bytes moved or -errno. */
static int cfg_io(const char *bdf, unsigned int off, void *buf, size_t len, bool write)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	dev_path(path, sizeof(path), bdf, "config");
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

int pci_cfg_read(const char *bdf, unsigned int off, void *buf, size_t len)
{
	return cfg_io(bdf, off, buf, len, false);
}

int pci_cfg_read16(const char *bdf, unsigned int off, uint16_t *val)
{
	int n = pci_cfg_read(bdf, off, val, sizeof(*val));

	return n == sizeof(*val) ? 0 : (n < 0 ? n : -EIO);
}

int pci_cfg_write16(const char *bdf, unsigned int off, uint16_t val)
{
	int n = cfg_io(bdf, off, &val, sizeof(val), true);

	return n == sizeof(val) ? 0 : (n < 0 ? n : -EIO);
}

int pci_ext_cap(const char *bdf, uint16_t id)
{
	unsigned int off = 0x100;
	int hops = 0;
	uint32_t hdr;

	while (off && hops++ < 128) {
		if (pci_cfg_read(bdf, off, &hdr, sizeof(hdr)) != sizeof(hdr))
			return -EIO;
		if (!hdr || hdr == 0xffffffff)
			return 0;
		if ((hdr & 0xffff) == id)
			return off;
		off = (hdr >> 20) & 0xffc;
	}
	return 0;
}

int pci_driver(const char *bdf, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	dev_path(path, sizeof(path), bdf, "driver");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		buf[0] = '\0';
		return errno == ENOENT ? 0 : -errno;
	}
	target[n] = '\0';
	snprintf(buf, len, "%s", strrchr(target, '/') + 1);
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int pci_bind(const char *bdf, const char *driver)
{
	char path[PATH_MAX], cur[64];
	int ret;

	ret = pci_driver(bdf, cur, sizeof(cur));
	if (ret)
		return ret;
	if (cur[0]) {
		dev_path(path, sizeof(path), bdf, "driver/unbind");
		ret = write_str(path, bdf);
		if (ret)
			return ret;
	}
	dev_path(path, sizeof(path), bdf, "driver_override");
	ret = write_str(path, driver[0] ? driver : "\n");
	if (ret)
		return ret;
	/* A device no driver claims is still a success for "" (unbound). */
	ret = write_str("/sys/bus/pci/drivers_probe", bdf);
	return driver[0] ? ret : 0;
}

int pci_iommu_group(const char *bdf)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	dev_path(path, sizeof(path), bdf, "iommu_group");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return atoi(strrchr(target, '/') + 1);
}

int run_capture(const char *cmd, char *buf, size_t len)
{
	size_t used = 0, n;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -errno;
	while (used + 1 < len && (n = fread(buf + used, 1, len - 1 - used, p)) > 0)
		used += n;
	buf[used] = '\0';
	/* Drain what did not fit so the child is not killed by SIGPIPE. */
	while (fgetc(p) != EOF)
		;
	return pclose(p);
}

int kt_sh(char *out, size_t len, const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	st = run_capture(cmd, out, len);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int kt_child(int (*body)(void *arg), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(body(arg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

static bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* insmod @path with @params unless @name is loaded: 0 or -EIO. */
static int module_load_params(const char *name, const char *path, const char *params)
{
	char cmd[256];

	if (module_loaded(name))
		return 0;
	snprintf(cmd, sizeof(cmd), "insmod %s %s", path, params);
	return system(cmd) == 0 ? 0 : -EIO;
}

static int module_load(const char *name, const char *path)
{
	return module_load_params(name, path, "");
}

/* rmmod @name if it is loaded: 0 or -EIO. */
static int module_unload(const char *name)
{
	char cmd[128];

	if (!module_loaded(name))
		return 0;
	snprintf(cmd, sizeof(cmd), "rmmod %s", name);
	return system(cmd) == 0 ? 0 : -EIO;
}

/* Kernels without the uncore registry get kvmai's copy, before its users. */
static int compat_load(void)
{
	if (access(KVMAI_COMPAT_PATH, F_OK))
		return 0;
	return module_load("uncore_guest", KVMAI_COMPAT_PATH);
}

bool kvmai_module_loaded(void)
{
	return module_loaded("kvmai");
}

int kvmai_module_load(void)
{
	return compat_load() ?: module_load("kvmai", KVMAI_MODULE_PATH);
}

int kvmai_module_load_with(const char *params)
{
	if (module_loaded("kvmai"))
		return -EBUSY;
	return compat_load() ?: module_load_params("kvmai", KVMAI_MODULE_PATH, params);
}

int kvmai_module_unload(void)
{
	return module_unload("kvmai");
}

bool kvmai_mock_loaded(void)
{
	return module_loaded("kvmai_mock_pmu");
}

int kvmai_mock_load(void)
{
	return compat_load() ?: module_load("kvmai_mock_pmu", KVMAI_MOCK_PATH);
}

int kvmai_mock_unload(void)
{
	return module_unload("kvmai_mock_pmu");
}

bool kvmai_mock_counters_loaded(void)
{
	return module_loaded("kvmai_mock_counters");
}

int kvmai_mock_counters_load(const char *params)
{
	return kvmai_module_load() ?: module_load_params("kvmai_mock_counters",
						 KVMAI_MOCK_COUNTERS_PATH, params ?: "");
}

int kvmai_mock_counters_unload(void)
{
	return module_unload("kvmai_mock_counters");
}

bool kvmai_mock_vfbus_loaded(void)
{
	return module_loaded("kvmai_mock_vfbus");
}

int kvmai_mock_vfbus_load(const char *pf)
{
	char params[64];

	snprintf(params, sizeof(params), "pf=%s", pf);
	return module_load_params("kvmai_mock_vfbus", KVMAI_MOCK_VFBUS_PATH, params);
}

int kvmai_mock_vfbus_unload(void)
{
	return module_unload("kvmai_mock_vfbus");
}

int sysfs_write_ret(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

long sysfs_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long val;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &val) != 1)
		val = -EINVAL;
	fclose(f);
	return val;
}

bool kernel_symbol(const char *symbol, char *module, size_t len)
{
	char line[512], name[256], mod[64];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		n = sscanf(line, "%*s %*s %255s [%63[^]]]", name, mod);
		found = n >= 1 && !strcmp(name, symbol);
	}
	fclose(f);
	if (found && module)
		snprintf(module, len, "%s", n == 2 ? mod : "");
	return found;
}

bool kernel_has_symbol(const char *symbol)
{
	return kernel_symbol(symbol, NULL, 0);
}

void snap_take(struct acs_snap *s)
{
	char out[8192], *line, *save;

	s->n = 0;
	run_capture("ls /sys/bus/pci/devices", out, sizeof(out));
	for (line = strtok_r(out, "\n", &save); line && s->n < KT_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		int pos = pci_ext_cap(line, PCI_EXT_CAP_ID_ACS);

		if (pos <= 0 || pci_cfg_read16(line, pos + PCI_ACS_CTRL, &s->ctl[s->n]))
			continue;
		snprintf(s->bdf[s->n++], sizeof(s->bdf[0]), "%s", line);
	}
}

uint16_t snap_get(const struct acs_snap *s, const char *bdf)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->bdf[i], bdf))
			return s->ctl[i];
	return 0xdead;
}

uint16_t acs_now(const char *bdf)
{
	int pos = pci_ext_cap(bdf, PCI_EXT_CAP_ID_ACS);
	uint16_t ctl = 0xdead;

	if (pos > 0)
		pci_cfg_read16(bdf, pos + PCI_ACS_CTRL, &ctl);
	return ctl;
}

int snap_diff(const struct acs_snap *a, const struct acs_snap *b, char *diff, size_t len)
{
	int n = 0, used = 0;

	diff[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		uint16_t now = snap_get(b, a->bdf[i]);

		if (now == a->ctl[i])
			continue;
		n++;
		used += snprintf(diff + used, len - used, " %s:%#06x->%#06x", a->bdf[i],
				 a->ctl[i], now);
		if ((size_t)used >= len)
			break;
	}
	return n;
}
