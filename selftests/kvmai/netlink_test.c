// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kvmai generic netlink family: registered while the module is loaded,
 * gone after rmmod, and status-get tells the truth about module and kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/kvmai_test.h"

FIXTURE(genl) {
	struct nl_sock *sk;
	int family;
};

FIXTURE_SETUP(genl)
{
	ASSERT_EQ(0, kvmai_module_load()) TH_LOG("cannot insmod %s", KVMAI_MODULE_PATH);
	self->sk = kvmai_genl_open(&self->family);
	ASSERT_NE(NULL, self->sk)
		TH_LOG("generic netlink family \"%s\" not found with the module loaded",
		       KVMAI_FAMILY_NAME);
}

FIXTURE_TEARDOWN(genl)
{
	if (self->sk)
		kvmai_genl_close(self->sk);
}

TEST_F(genl, family_registered)
{
	EXPECT_GT(self->family, 0);
}

TEST_F(genl, status_reports_module_and_kernel)
{
	struct kvmai_status st;
	struct utsname uts;
	char modver[64] = "";
	FILE *f;

	ASSERT_EQ(0, kvmai_status_get(self->sk, self->family, &st));
	f = fopen("/sys/module/kvmai/version", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%63s", modver));
	fclose(f);
	ASSERT_EQ(0, uname(&uts));

	EXPECT_STREQ(modver, st.version);
	EXPECT_EQ((uint32_t)KVMAI_API_VERSION, st.api_version);
	EXPECT_STREQ(uts.release, st.kernel);
}

/* The module reports the kernel interfaces it uses, and only those it has. */
TEST_F(genl, features_match_the_kernel)
{
	struct kvmai_status st;
	char mod[64];

	ASSERT_EQ(0, kvmai_status_get(self->sk, self->family, &st));
	EXPECT_EQ(kernel_has_symbol("pci_acs_override"),
		  !!(st.features & KVMAI_FEATURE_ACS_OVERRIDE));
	EXPECT_EQ(kernel_has_symbol("vfio_device_user"),
		  !!(st.features & KVMAI_FEATURE_VFIO_NOTIFY));
	/* KVM's fence and perf's conflict walk: both or neither. */
	EXPECT_EQ(kernel_has_symbol("kvm_mediated_pmu_fence") &&
		  kernel_has_symbol("perf_guest_core_for_each_conflict"),
		  !!(st.features & KVMAI_FEATURE_CORE_FENCE));
	/* kvmai's own copy of the registry (uncore_guest.ko) does not count. */
	EXPECT_EQ(kernel_symbol("uncore_guest_reserve", mod, sizeof(mod)) && !*mod,
		  !!(st.features & KVMAI_FEATURE_UNCORE_RESERVE));
	TH_LOG("kernel %s, features %#x", st.kernel, st.features);
}

TEST_F(genl, unknown_command_rejected)
{
	char ext[256];

	EXPECT_EQ(-EOPNOTSUPP, kvmai_genl_cmd(self->sk, self->family, KVMAI_CMD_MAX + 1,
					       ext, sizeof(ext)));
}

TEST(family_follows_module_lifetime)
{
	struct nl_sock *sk;
	int family;

	ASSERT_EQ(0, kvmai_module_load());
	ASSERT_EQ(0, kvmai_module_unload());
	sk = kvmai_genl_open(&family);
	EXPECT_EQ(NULL, sk);
	EXPECT_EQ(-ENOENT, family);
	if (sk)
		kvmai_genl_close(sk);

	ASSERT_EQ(0, kvmai_module_load());
	sk = kvmai_genl_open(&family);
	ASSERT_NE(NULL, sk) TH_LOG("family not back after reloading the module");
	kvmai_genl_close(sk);
}

TEST_HARNESS_MAIN
