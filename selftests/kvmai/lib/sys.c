// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host the selftests run on: shell commands, child processes, files,
 * sysfs, CPUs and the kernel's symbols and log.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"

int kt_run(const char *cmd, char *buf, size_t len)
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
	st = kt_run(cmd, out, len);
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

long kt_file_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

bool kt_file_has(const char *path, const char *line)
{
	static char buf[65536];

	return kt_file_read(path, buf, sizeof(buf)) >= 0 && strstr(buf, line);
}

bool kt_kmsg_has(const char *needle)
{
	static char out[65536];

	if (kt_run("dmesg | tail -n 40", out, sizeof(out)) < 0)
		return false;
	return strstr(out, needle);
}

int kt_sysfs_write(const char *path, const char *val)
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

long kt_sysfs_read_long(const char *path)
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

int kt_cpulist_each(const char *list, int (*each)(int cpu, void *arg), void *arg)
{
	const char *p = list;
	int ret = 0;
	char *end;
	long a, b;

	while (*p && !ret) {
		a = strtol(p, &end, 10);
		b = a;
		if (end != p && *end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
		}
		if (end == p || (*end && *end != ','))
			return -EINVAL;
		for (; a <= b && !ret; a++)
			ret = each(a, arg);
		p = *end ? end + 1 : end;
	}
	return ret;
}

static int count_cpu(int cpu, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

int kt_cpu_package(int cpu, char *list, size_t len)
{
	char path[128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list", cpu);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(list, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	list[strcspn(list, "\n")] = '\0';
	return kt_cpulist_each(list, count_cpu, &n) ?: n;
}

static int set_cpu(int cpu, void *arg)
{
	CPU_SET(cpu, (cpu_set_t *)arg);
	return 0;
}

int kt_cpu_pin(const char *list)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (kt_cpulist_each(list, set_cpu, &set))
		return -EINVAL;
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

bool kt_kernel_symbol(const char *symbol, char *module, size_t len)
{
	char line[512], name[256], mod[64];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");
	int n = 0;

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
