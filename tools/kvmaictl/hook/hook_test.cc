// `kvmaictl hook qemu`, driven as libvirt drives it, against a model of
// the module behind the genl fake: what each operation asks, in which
// order, what it refuses and in which words, and what it leaves behind.
#include "hook/hook.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "hook/metadata.h"
#include "testing/group_replies.h"
#include "testing/hook.h"
#include "testing/run.h"

namespace kvmai::kvmaictl::hook {
namespace {

using kvmai::kvmaictl::testing::domain_xml;
using kvmai::kvmaictl::testing::FakeTransport;
using kvmai::kvmaictl::testing::kNumaTune;
using kvmai::kvmaictl::testing::kvmai_vm;
using kvmai::kvmaictl::testing::message;
using kvmai::kvmaictl::testing::TempDir;
using kvmai::kvmaictl::testing::write_host_topology;
using ::testing::ElementsAre;

using Log = FakeTransport::Log;
using Commands = std::vector<std::uint8_t>;

// ---- the module ------------------------------------------------------------

// What the module holds, changed by the requests as the module would
// (p2p-groups.rst, pmu-ownership.rst), so that a second run sees the
// first one's work.
struct Model {
  struct Group {
    std::string vm;
    std::uint32_t mode = KVMAI_MODE_TRANSLATED;
    std::uint32_t state = KVMAI_STATE_DISABLED;
    std::vector<std::string> members;
  };
  struct Pmu {
    bool core = false;
    std::vector<std::string> units;
    std::optional<std::uint32_t> pid;
  };
  std::map<std::string, Group> groups;
  std::map<std::string, Pmu> pmus;
  // A request this returns true for fails with `fail_errno` and `fail_extack`.
  std::function<bool(std::uint8_t, const AttrSet&)> fail_when;
  int fail_errno = 0;
  std::string fail_extack;
  std::string warning;  // extack of a successful group-set

  static GenlError refuse(int error, const std::string& extack) {
    return GenlError::kernel(error, extack);
  }

  GenlMessage group_message(const std::string& name) const {
    const Group& g = groups.at(name);
    AttrSet a;
    a.put_string(KVMAI_A_GROUP_NAME, name)
        .put_u32(KVMAI_A_GROUP_ID, 1)
        .put_string(KVMAI_A_GROUP_VM, g.vm)
        .put_u32(KVMAI_A_GROUP_MODE, g.mode)
        .put_u32(KVMAI_A_GROUP_STATE, g.state);
    for (const auto& m : g.members) {
      // An mdev member (by UUID) is reported beside its parent's address.
      const bool mdev = m.size() == 36;
      AttrSet member;
      member.put_string(KVMAI_A_MEMBER_PCI_ADDR, mdev ? "0000:15:00.0" : m)
          .put_string(KVMAI_A_MEMBER_DRIVER, mdev ? "nvidia-vgpu-vfio" : "vfio-pci");
      if (mdev) {
        member.put_string(KVMAI_A_MEMBER_MDEV, m);
      }
      a.put_nested(KVMAI_A_GROUP_MEMBER, member);
    }
    return message(KVMAI_CMD_GROUP_GET, a);
  }

  Group& group(const AttrSet& req) {
    const std::string name = req.str(KVMAI_A_GROUP_NAME).value_or("");
    const auto it = groups.find(name);
    if (it == groups.end()) {
      throw refuse(ENOENT, "no group " + name);
    }
    return it->second;
  }

  std::vector<GenlMessage> answer(std::uint8_t cmd, const AttrSet& req) {
    if (fail_when && fail_when(cmd, req)) {
      throw refuse(fail_errno, fail_extack);
    }
    const std::string name = req.str(KVMAI_A_GROUP_NAME).value_or("");
    switch (cmd) {
      case KVMAI_CMD_GROUP_GET: {
        std::vector<GenlMessage> all;
        for (const auto& entry : groups) {
          all.push_back(group_message(entry.first));
        }
        return all;
      }
      case KVMAI_CMD_GROUP_NEW:
        if (groups.contains(name)) {
          throw refuse(EEXIST, "group " + name + " already exists");
        }
        groups[name] = {.vm = req.str(KVMAI_A_GROUP_VM).value_or(""),
                        .mode = req.u32(KVMAI_A_GROUP_MODE).value_or(KVMAI_MODE_TRANSLATED),
                        .state = KVMAI_STATE_DISABLED,
                        .members = {}};
        return {group_message(name)};
      case KVMAI_CMD_GROUP_DEL:
        group(req);
        groups.erase(name);
        return {};
      case KVMAI_CMD_GROUP_SET: {
        Group& g = group(req);
        if (const auto s = req.u32(KVMAI_A_GROUP_STATE)) {
          if (*s == KVMAI_STATE_ENABLED && g.members.size() < 2) {
            throw refuse(EINVAL, "group " + name + " needs two members");
          }
          g.state = *s;
        }
        if (!warning.empty()) {
          GenlMessage ack;
          ack.warning = warning;
          return {ack};
        }
        return {};
      }
      case KVMAI_CMD_DEV_ADD: {
        Group& g = group(req);
        const std::string dev =
            req.str(KVMAI_A_GROUP_MDEV).value_or(req.str(KVMAI_A_GROUP_PCI_ADDR).value_or(""));
        for (const auto& [other, og] : groups) {
          if (std::find(og.members.begin(), og.members.end(), dev) != og.members.end()) {
            throw refuse(EBUSY, cat({dev, " belongs to group ", other}));
          }
        }
        if (g.state == KVMAI_STATE_ENABLED) {
          throw refuse(EBUSY, "group " + name + " is enabled: disable it first");
        }
        g.members.push_back(dev);
        return {};
      }
      default:
        return pmu_answer(cmd, req);
    }
  }

  std::vector<GenlMessage> pmu_answer(std::uint8_t cmd, const AttrSet& req) {
    const std::string vm = req.str(KVMAI_A_PMU_VM).value_or("");
    std::vector<std::string> units;
    for (const Attr* a : req.all(KVMAI_A_PMU_UNIT)) {
      units.push_back(AttrSet::parse(a->payload).str(KVMAI_A_UNIT_NAME).value_or(""));
    }
    const auto it = pmus.find(vm);
    switch (cmd) {
      case KVMAI_CMD_PMU_GET: {
        if (it == pmus.end()) {
          throw refuse(ENOENT, "vm " + vm + " owns no PMU resources");
        }
        AttrSet a;
        a.put_string(KVMAI_A_PMU_VM, vm);
        if (it->second.core) {
          a.put_flag(KVMAI_A_PMU_CORE);
        }
        for (const auto& u : it->second.units) {
          AttrSet unit;
          unit.put_string(KVMAI_A_UNIT_NAME, u);
          a.put_nested(KVMAI_A_PMU_UNIT, unit);
        }
        if (it->second.pid) {
          a.put_u32(KVMAI_A_PMU_PID, *it->second.pid);
        }
        return {message(KVMAI_CMD_PMU_GET, a)};
      }
      case KVMAI_CMD_PMU_ASSIGN: {
        Pmu& p = pmus[vm];
        if (req.has(KVMAI_A_PMU_CORE)) {
          if (p.core) {
            throw refuse(EEXIST, "vm " + vm + " already owns the core PMU");
          }
          p.core = true;
        }
        p.units.insert(p.units.end(), units.begin(), units.end());
        p.pid = req.u32(KVMAI_A_PMU_PID);
        return {};
      }
      case KVMAI_CMD_PMU_RELEASE: {
        if (it == pmus.end()) {
          throw refuse(ENOENT, "vm " + vm + " owns no PMU resources");
        }
        if (!req.has(KVMAI_A_PMU_CORE) && units.empty()) {
          pmus.erase(it);
          return {};
        }
        it->second.core = it->second.core && !req.has(KVMAI_A_PMU_CORE);
        std::erase_if(it->second.units, [&](const std::string& u) {
          return std::find(units.begin(), units.end(), u) != units.end();
        });
        if (!it->second.core && it->second.units.empty()) {
          pmus.erase(it);
        }
        return {};
      }
      default:
        throw std::logic_error("the hook sent command " + std::to_string(cmd));
    }
  }
};

// ---- running the hook ------------------------------------------------------

const std::string kGpu = "0000:11:00.0";
const std::string kNic = "0000:13:00.0";
const std::string kOtherGpu = "0000:21:00.0";  // on the host, not the domain's

// The host's PCI devices and libvirt's run directory with vm1's pid file.
struct Host {
  TempDir dir{"hook"};
  Host() {
    for (const auto& bdf : {kGpu, kNic, kOtherGpu, std::string("0000:15:00.0")}) {
      dir.write("sys/bus/pci/devices/" + bdf + "/vendor", "0x10de\n");
    }
    dir.write("run/vm1.pid", "4242\n");
    write_host_topology(dir);
  }
};

struct Hooked {
  int rc = -1;
  std::string err;
};

class HookTest : public ::testing::Test {
 protected:
  Hooked hook(const std::string& operation, const std::string& sub, const std::string& xml,
              const std::string& domain = "vm1") {
    const Call call{.domain = domain,
                    .operation = operation,
                    .suboperation = sub,
                    .extra = "-",
                    .run_dir = host_.dir.path() / "run",
                    .sysfs_root = host_.dir.path() / "sys",
                    .config = config()};
    std::ostringstream err;
    const int rc = run_qemu_hook(call, xml, err, connect());
    return {rc, err.str()};
  }

  TransportFactory connect() {
    return testing::fake_kvmai(log_, [m = model_](FakeTransport& t) {
      t.answer = [m](auto c, const auto& a) { return m->answer(c, a); };
    });
  }

  std::string config() const { return host_.dir.path() / "hook.conf"; }
  Commands commands() const { return log_->commands; }
  const AttrSet& request(std::size_t i) const { return log_->requests.at(i); }
  void forget() { *log_ = Log{}; }
  Model& model() { return *model_; }

  Host host_;
  std::shared_ptr<Log> log_ = std::make_shared<Log>();
  std::shared_ptr<Model> model_ = std::make_shared<Model>();
};

const std::string kGroupMetadata = kvmai_vm(
    "      <kvmai:group name='vm1-p2p' mode='translated'>\n"
    "        <kvmai:device address='0000:11:00.0'/>\n"
    "        <kvmai:device address='13:00.0'/>\n"
    "      </kvmai:group>\n");

const std::string kFullMetadata = kvmai_vm(
    "      <kvmai:group name='vm1-p2p' mode='translated'>\n"
    "        <kvmai:device address='0000:11:00.0'/>\n"
    "        <kvmai:device address='0000:13:00.0'/>\n"
    "      </kvmai:group>\n"
    "      <kvmai:pmu core='yes' cpus='0-3'>\n"
    "        <kvmai:unit name='amd_l3'/>\n"
    "      </kvmai:pmu>\n");

std::string vm1(const std::string& metadata) {
  return domain_xml("vm1", {kGpu, kNic}, metadata);
}

// ---- operations that do nothing ----------------------------------------------

// Domains that are not kvm-ai's start, run and reconnect without the hook
// opening a socket.
TEST_F(HookTest, WithoutMetadataStartingDoesNothing) {
  const std::string plain = domain_xml("vm1", {kGpu, kNic}, "");
  const std::string foreign = domain_xml(
      "vm1", {kGpu, kNic}, "    <app:x xmlns:app='http://example.org/app'><app:y/></app:x>\n");
  for (const auto& [op, sub] :
       std::vector<std::pair<std::string, std::string>>{{"prepare", "begin"},
                                                        {"start", "begin"},
                                                        {"started", "begin"},
                                                        {"reconnect", "begin"},
                                                        {"attach", "begin"}}) {
    for (const auto& xml : {plain, foreign}) {
      const Hooked h = hook(op, sub, xml);
      EXPECT_EQ(h.rc, 0) << op;
      EXPECT_EQ(h.err, "") << op;
    }
  }
  EXPECT_EQ(log_->commands, Commands{});
}

// The stop operations do not trust the XML to say whether there is
// anything to clean up: `virsh metadata --live --remove` takes the element
// out of a running domain's XML, and what the hook made at `started` must
// go all the same.  A domain that never was kvm-ai's costs one dump and
// one release that finds nothing.
TEST_F(HookTest, WithoutMetadataStopAsksTheModuleQuietly) {
  const std::string plain = domain_xml("vm1", {kGpu, kNic}, "");
  for (const std::string op : {"stopped", "release"}) {
    forget();
    const Hooked h = hook(op, "end", plain);
    EXPECT_EQ(h.rc, 0) << op << h.err;
    EXPECT_EQ(h.err, "") << op;
    EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_RELEASE})) << op;
  }
}

TEST_F(HookTest, UnknownOperationsExitZeroUnread) {
  // Not even the XML is looked at.
  for (const auto& [op, sub] :
       std::vector<std::pair<std::string, std::string>>{{"migrate", "begin"},
                                                        {"restore", "begin"},
                                                        {"prepare", "end"},
                                                        {"started", "end"},
                                                        {"stopped", "begin"},
                                                        {"frobnicate", "-"}}) {
    const Hooked h = hook(op, sub, "this is not XML");
    EXPECT_EQ(h.rc, 0) << op;
    EXPECT_EQ(h.err, "") << op;
  }
  EXPECT_EQ(log_->commands, Commands{});
}

// Through the command line, as the installed script calls it: no request,
// no output (run_cli's default transport fails the test if one is asked
// for), whatever the domain's name looks like.
TEST(HookCli, UnknownOperationThroughTheCli) {
  for (const std::string& domain : std::vector<std::string>{"vm1", "-v", "help", "--"}) {
    const auto r = testing::run_cli({"hook", "qemu", "--", domain, "migrate", "begin", "-"});
    EXPECT_EQ(r.rc, kExitOk) << domain << r.err;
    EXPECT_EQ(r.out, "") << domain;
    EXPECT_EQ(r.err, "") << domain;
  }
}

TEST(HookCli, ArgumentsAndOptions) {
  EXPECT_EQ(parse_call({"vm1", "release", "end", "destroyed"}).extra, "destroyed");
  EXPECT_EQ(parse_call({"vm1", "started", "begin"}).extra, "-");
  const Call c = parse_call({"--run-dir", "/tmp/r", "--sysfs-root=/tmp/s", "-x", "a", "b", "c"});
  EXPECT_EQ(c.run_dir, "/tmp/r");
  EXPECT_EQ(c.sysfs_root, "/tmp/s");
  EXPECT_EQ(c.domain, "-x");
  EXPECT_EQ(c.operation, "a");
  EXPECT_EQ(c.config, "/etc/kvmai/hook.conf");
  EXPECT_EQ(parse_call({"--config", "/tmp/h.conf", "vm1", "prepare", "begin"}).config,
            "/tmp/h.conf");
  // More words than libvirt passes today are taken, not refused.
  EXPECT_EQ(parse_call({"vm1", "started", "begin", "-", "future"}).domain, "vm1");
  // After "--", libvirt's words are data: a domain called like an option
  // points the hook at no other file.
  const Call dashed = parse_call({"--", "--config=/tmp/evil", "prepare", "begin", "-"});
  EXPECT_EQ(dashed.domain, "--config=/tmp/evil");
  EXPECT_EQ(dashed.config, "/etc/kvmai/hook.conf");
  EXPECT_EQ(parse_call({"--", "-v", "prepare", "begin"}).domain, "-v");

  const auto r = testing::run_cli({"hook", "qemu", "vm1", "started"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, ::testing::StartsWith("Error: hook qemu: missing SUB-OPERATION\n"));
  EXPECT_EQ(testing::run_cli({"hook", "qemu", "--run-dir"}).rc, kExitUsage);
  EXPECT_THAT(testing::run_cli({"hook", "qemu", "--config"}).err,
              ::testing::StartsWith("Error: hook qemu: missing FILE after \"--config\"\n"));
  EXPECT_EQ(testing::run_cli({"hook", "help"}).rc, kExitOk);
}

// ---- prepare -------------------------------------------------------------------

TEST_F(HookTest, PrepareChecksAndChangesNothing) {
  const Hooked h = hook("prepare", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
  // A read: is the module there, and does another VM hold the names?
  EXPECT_EQ(commands(), Commands{KVMAI_CMD_GROUP_GET});
}

struct Refusal {
  std::string what;
  std::string metadata;
  std::string message;
};

TEST_F(HookTest, PrepareRefusesInOneLine) {
  const std::string head = "      <kvmai:group name='vm1-p2p'>\n";
  const std::string devs =
      "        <kvmai:device address='0000:11:00.0'/>\n"
      "        <kvmai:device address='0000:13:00.0'/>\n";
  const std::string tail = "      </kvmai:group>\n";
  const std::vector<Refusal> cases{
      {"not the domain's device",
       kvmai_vm(head + devs + "        <kvmai:device address='0000:21:00.0'/>\n" + tail),
       "kvmai: group vm1-p2p: 0000:21:00.0 is not a PCI hostdev of domain vm1\n"},
      {"bad group name", kvmai_vm("      <kvmai:group name='vm1 p2p'>\n" + devs + tail),
       "kvmai: group name \"vm1 p2p\" has byte 0x20 at offset 3, which names may not hold "
       "(letters, digits and ._:@+- only)\n"},
      {"group name a shell would run",
       kvmai_vm("      <kvmai:group name='$(touch${IFS}pw)'>\n" + devs + tail),
       "kvmai: group name \"$(touch${IFS}pw)\" has '$' at offset 0, which names may not hold "
       "(letters, digits and ._:@+- only)\n"},
      {"long group name",
       kvmai_vm("      <kvmai:group name='" + std::string(32, 'g') + "'>\n" + devs + tail),
       "kvmai: group name \"" + std::string(32, 'g') + "\" is longer than 31 characters\n"},
      {"unknown mode",
       kvmai_vm("      <kvmai:group name='vm1-p2p' mode='sideways'>\n" + devs + tail),
       "kvmai: group vm1-p2p: unknown mode \"sideways\" (translated or direct)\n"},
      {"one device", kvmai_vm(head + "        <kvmai:device address='0000:11:00.0'/>\n" + tail),
       "kvmai: group vm1-p2p: 1 device (a group holds 2 to 16)\n"},
      {"bad address", kvmai_vm(head + devs + "        <kvmai:device address='11:00'/>\n" + tail),
       "kvmai: group vm1-p2p: bad PCI address \"11:00\" (want DDDD:BB:DD.F)\n"},
      {"device twice",
       kvmai_vm(head + devs + "        <kvmai:device address='0000:11:00.0'/>\n" + tail),
       "kvmai: group vm1-p2p: 0000:11:00.0 is named twice\n"},
      {"device in two groups",
       kvmai_vm(head + devs + tail + "      <kvmai:group name='second'>\n" + devs + tail),
       "kvmai: 0000:11:00.0 is in groups vm1-p2p and second (a device is in one group only)\n"},
      {"unknown element", kvmai_vm(head + devs + tail + "      <kvmai:colour/>\n"),
       "kvmai: metadata: unknown element <kvmai:colour> in <kvmai:vm>\n"},
      {"unknown attribute",
       kvmai_vm("      <kvmai:group name='vm1-p2p' colour='red'>\n" + devs + tail),
       "kvmai: metadata: <kvmai:group> has no attribute colour\n"},
      {"from what", kvmai_vm("      <kvmai:group name='vm1-p2p' from='everything'/>\n"),
       "kvmai: group vm1-p2p: unknown from=\"everything\" (hostdevs)\n"},
      {"from and devices",
       kvmai_vm("      <kvmai:group name='vm1-p2p' from='hostdevs'>\n" + devs + tail),
       "kvmai: group vm1-p2p: from=\"hostdevs\" and <kvmai:device> elements exclude each "
       "other\n"},
      {"pmu nothing", kvmai_vm("      <kvmai:pmu core='no'/>\n"),
       "kvmai: pmu: nothing to assign (core=\"yes\" or a <kvmai:unit>)\n"},
      {"pmu core maybe", kvmai_vm("      <kvmai:pmu core='maybe'/>\n"),
       "kvmai: pmu: core=\"maybe\" is neither yes nor no\n"},
      {"pmu bad cpus",
       kvmai_vm("      <kvmai:pmu cpus='all'><kvmai:unit name='amd_l3'/></kvmai:pmu>\n"),
       "kvmai: pmu: bad cpus \"all\" (a CPU list such as 0-31,64-95)\n"},
  };
  for (const Refusal& c : cases) {
    forget();
    const Hooked h = hook("prepare", "begin", vm1(c.metadata));
    EXPECT_EQ(h.rc, 1) << c.what;
    EXPECT_EQ(h.err, c.message) << c.what;
    EXPECT_EQ(commands(), Commands{}) << c.what;
  }
}

TEST_F(HookTest, PrepareRefusesADeviceMissingFromTheHost) {
  const std::string xml = domain_xml("vm1", {kGpu, "0000:99:00.0"},
                                     kvmai_vm("      <kvmai:group name='g' from='hostdevs'/>\n"));
  const Hooked h = hook("prepare", "begin", xml);
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: group g: no PCI device 0000:99:00.0 on this host\n");
}

TEST_F(HookTest, PrepareRefusesAnUnfitDomainName) {
  const std::string metadata = kvmai_vm("      <kvmai:group from='hostdevs'/>\n");
  Hooked h = hook("prepare", "begin", domain_xml("my vm", {kGpu, kNic}, metadata), "my vm");
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: domain name \"my vm\" has byte 0x20 at offset 2, which names may not hold "
            "(letters, digits and ._:@+- only) (kvm-ai's VM name is the domain's)\n");
  // A group without a name takes the domain's, which must fit a group name.
  const std::string longer(40, 'v');
  h = hook("prepare", "begin", domain_xml(longer, {kGpu, kNic}, metadata), longer);
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: group name \"" + longer +
                       "\" is longer than 31 characters (the domain's name: give the group a "
                       "name)\n");
}

TEST_F(HookTest, PrepareRefusesWhatOtherVmsHold) {
  model().groups["vm1-p2p"] = {.vm = "vm2",
                               .mode = KVMAI_MODE_TRANSLATED,
                               .state = KVMAI_STATE_ENABLED,
                               .members = {kOtherGpu}};
  Hooked h = hook("prepare", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: group vm1-p2p exists for vm vm2\n");

  model().groups.clear();
  model().groups["theirs"] = {
      .vm = "vm2", .mode = KVMAI_MODE_TRANSLATED, .state = KVMAI_STATE_DISABLED, .members = {kNic}};
  h = hook("prepare", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: group vm1-p2p: 0000:13:00.0 is in group theirs of vm vm2\n");
}

TEST_F(HookTest, PrepareWithoutModuleRefuses) {
  const Call call{.domain = "vm1",
                  .operation = "prepare",
                  .suboperation = "begin",
                  .extra = "-",
                  .run_dir = host_.dir.path() / "run",
                  .sysfs_root = host_.dir.path() / "sys"};
  std::ostringstream err;
  EXPECT_EQ(run_qemu_hook(call, vm1(kGroupMetadata), err, testing::no_kvmai()), 1);
  EXPECT_EQ(err.str(),
            "kvmai: list groups: kvmai module not loaded (generic netlink family \"kvmai\" not "
            "found)\n");
}

// ---- started -------------------------------------------------------------------

TEST_F(HookTest, StartedCreatesAddsEnablesThenAssigns) {
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_NEW, KVMAI_CMD_DEV_ADD,
                                  KVMAI_CMD_DEV_ADD, KVMAI_CMD_GROUP_SET, KVMAI_CMD_PMU_GET,
                                  KVMAI_CMD_PMU_ASSIGN}));
  EXPECT_EQ(request(1).str(KVMAI_A_GROUP_NAME), "vm1-p2p");
  EXPECT_EQ(request(1).str(KVMAI_A_GROUP_VM), "vm1");
  EXPECT_EQ(request(1).u32(KVMAI_A_GROUP_MODE), KVMAI_MODE_TRANSLATED);
  EXPECT_FALSE(request(1).has(KVMAI_A_GROUP_BIND_SOCKET));
  EXPECT_EQ(request(2).str(KVMAI_A_GROUP_PCI_ADDR), kGpu);
  EXPECT_EQ(request(3).str(KVMAI_A_GROUP_PCI_ADDR), kNic);
  EXPECT_EQ(request(4).u32(KVMAI_A_GROUP_STATE), KVMAI_STATE_ENABLED);
  const AttrSet& assign = request(6);
  EXPECT_EQ(assign.str(KVMAI_A_PMU_VM), "vm1");
  EXPECT_TRUE(assign.has(KVMAI_A_PMU_CORE));
  ASSERT_EQ(assign.all(KVMAI_A_PMU_UNIT).size(), 1U);
  EXPECT_EQ(assign.nested(KVMAI_A_PMU_UNIT)->str(KVMAI_A_UNIT_NAME), "amd_l3");
  EXPECT_EQ(assign.str(KVMAI_A_PMU_CPUS), "0-3");
  EXPECT_EQ(assign.u32(KVMAI_A_PMU_PID), 4242U);  // from run/vm1.pid
  EXPECT_FALSE(assign.has(KVMAI_A_PMU_SHARED));
  EXPECT_FALSE(assign.has(KVMAI_A_PMU_BIND_SOCKET));

  ASSERT_TRUE(model().groups.contains("vm1-p2p"));
  EXPECT_EQ(model().groups["vm1-p2p"].state, KVMAI_STATE_ENABLED);
  EXPECT_EQ(model().groups["vm1-p2p"].members, (std::vector<std::string>{kGpu, kNic}));
}

TEST_F(HookTest, StartedTwiceChangesNothingMore) {
  ASSERT_EQ(hook("started", "begin", vm1(kFullMetadata)).rc, 0);
  const auto groups = model().groups.size();
  forget();
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_GET}));
  EXPECT_EQ(model().groups.size(), groups);
  EXPECT_EQ(model().pmus["vm1"].units, std::vector<std::string>{"amd_l3"});
}

TEST_F(HookTest, StartedEnablesItsDisabledGroup) {
  model().groups["vm1-p2p"] = {.vm = "vm1",
                               .mode = KVMAI_MODE_TRANSLATED,
                               .state = KVMAI_STATE_DISABLED,
                               .members = {kNic, kGpu}};
  const Hooked h = hook("started", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_SET}));
  EXPECT_EQ(model().groups["vm1-p2p"].state, KVMAI_STATE_ENABLED);
}

TEST_F(HookTest, StartedReplacesAGroupAnEarlierRunLeft) {
  model().groups["vm1-p2p"] = {.vm = "vm1",
                               .mode = KVMAI_MODE_DIRECT,
                               .state = KVMAI_STATE_ENABLED,
                               .members = {kGpu, kNic}};
  const Hooked h = hook("started", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_DEL, KVMAI_CMD_GROUP_NEW,
                                  KVMAI_CMD_DEV_ADD, KVMAI_CMD_DEV_ADD, KVMAI_CMD_GROUP_SET}));
  EXPECT_EQ(model().groups["vm1-p2p"].mode, KVMAI_MODE_TRANSLATED);
}

TEST_F(HookTest, StartedFailureUndoesWhatItDid) {
  model().fail_when = [](std::uint8_t cmd, const AttrSet& a) {
    return cmd == KVMAI_CMD_GROUP_SET && a.u32(KVMAI_A_GROUP_STATE) == KVMAI_STATE_ENABLED;
  };
  model().fail_errno = EPERM;
  model().fail_extack =
      "translated mode: member 0000:13:00.0 below 0000:10:02.0 has no ATS enabled";
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: group vm1-p2p: enable: translated mode: member 0000:13:00.0 below "
            "0000:10:02.0 has no ATS enabled (Operation not permitted)\n");
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_NEW, KVMAI_CMD_DEV_ADD,
                                  KVMAI_CMD_DEV_ADD, KVMAI_CMD_GROUP_SET, KVMAI_CMD_GROUP_DEL}));
  EXPECT_EQ(request(5).str(KVMAI_A_GROUP_NAME), "vm1-p2p");
  EXPECT_TRUE(model().groups.empty());
  EXPECT_TRUE(model().pmus.empty());
}

TEST_F(HookTest, StartedPmuRefusalTakesTheGroupsBack) {
  model().fail_when = [](std::uint8_t cmd, const AttrSet&) { return cmd == KVMAI_CMD_PMU_ASSIGN; };
  model().fail_errno = EBUSY;
  model().fail_extack = "amd_l3: host perf events are open on these packages";
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: pmu: assign: amd_l3: host perf events are open on these packages (Device or "
            "resource busy)\n");
  EXPECT_EQ(commands().back(), KVMAI_CMD_GROUP_DEL);
  EXPECT_TRUE(model().groups.empty());
}

TEST_F(HookTest, StartedUndoesOnlyItsOwnPart) {
  // The group was there, enabled; the unit is refused: the group stays.
  model().groups["vm1-p2p"] = {.vm = "vm1",
                               .mode = KVMAI_MODE_TRANSLATED,
                               .state = KVMAI_STATE_ENABLED,
                               .members = {kGpu, kNic}};
  model().fail_when = [](std::uint8_t cmd, const AttrSet&) { return cmd == KVMAI_CMD_PMU_ASSIGN; };
  model().fail_errno = ENODEV;
  EXPECT_EQ(hook("started", "begin", vm1(kFullMetadata)).rc, 1);
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_GET, KVMAI_CMD_PMU_ASSIGN}));
  EXPECT_EQ(model().groups["vm1-p2p"].state, KVMAI_STATE_ENABLED);
}

TEST_F(HookTest, StartedWithoutPidFileChangesNothing) {
  std::filesystem::remove(host_.dir.path() / "run/vm1.pid");
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: pmu: cannot read QEMU's pid from " +
                       (host_.dir.path() / "run/vm1.pid").string() + "\n");
  EXPECT_EQ(commands(), Commands{});
}

TEST_F(HookTest, StartedRefusesAnotherVmsGroup) {
  model().groups["vm1-p2p"] = {.vm = "vm2",
                               .mode = KVMAI_MODE_TRANSLATED,
                               .state = KVMAI_STATE_ENABLED,
                               .members = {kOtherGpu}};
  const Hooked h = hook("started", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: group vm1-p2p exists for vm vm2\n");
  EXPECT_EQ(commands(), Commands{KVMAI_CMD_GROUP_GET});
  EXPECT_EQ(model().groups["vm1-p2p"].vm, "vm2");
}

TEST_F(HookTest, StartedReplacesAStalePmuRecord) {
  model().pmus["vm1"] = {.core = true, .units = {"amd_l3"}, .pid = 1111};
  const Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  const auto c = commands();
  EXPECT_THAT(std::vector<std::uint8_t>(c.end() - 3, c.end()),
              ElementsAre(KVMAI_CMD_PMU_GET, KVMAI_CMD_PMU_RELEASE, KVMAI_CMD_PMU_ASSIGN));
  EXPECT_EQ(model().pmus["vm1"].pid, 4242U);
}

TEST_F(HookTest, KernelWarningsFollowSuccess) {
  model().warning =
      "0000:13:00.0 has no ATS enabled: its peer traffic still goes through the IOMMU";
  const Hooked h = hook("started", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 0);
  EXPECT_EQ(h.err,
            "kvmai: warning: 0000:13:00.0 has no ATS enabled: its peer traffic still goes "
            "through the IOMMU\n");
}

// What the kernel says names processes (comm), which any local user
// chooses: libvirt puts the hook's line into `virsh start`'s error, on the
// operator's terminal, so no control byte may get through (here OSC 52,
// which sets the terminal's clipboard, and a screen clear).
TEST_F(HookTest, KernelTextReachesLibvirtEscaped) {
  model().fail_when = [](std::uint8_t cmd, const AttrSet&) { return cmd == KVMAI_CMD_PMU_ASSIGN; };
  model().fail_errno = EBUSY;
  model().fail_extack = "\x1b]52;c;aGVsbG8=\x07[4242] counts guests\x1b[2J\x7f\xc3\xa9";
  Hooked h = hook("started", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: pmu: assign: \\x1b]52;c;aGVsbG8=\\x07[4242] counts guests\\x1b[2J\\x7f\\xc3"
            "\\xa9 (Device or resource busy)\n");

  model().fail_when = nullptr;
  model().pmus.clear();
  model().groups.clear();
  model().warning = "0000:13:00.0\x1b[31m has no ATS\r\nkvmai: forged line";
  h = hook("started", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 0);
  EXPECT_EQ(h.err, "kvmai: warning: 0000:13:00.0\\x1b[31m has no ATS  kvmai: forged line\n");
}

// ---- what the metadata may not decide ------------------------------------------

// Metadata may come from a tenant (a cloud stack copies flavor or image
// properties into it): the packages a VM's units are reserved on follow
// the domain's own vCPU pinning, which only the operator writes.

// vm1 with `metadata` and `vcpus` (<vcpu>, <cputune>).
std::string vm1_vcpus(const std::string& metadata, const std::string& vcpus) {
  return domain_xml("vm1", {kGpu, kNic}, metadata, "", vcpus);
}

const std::string kUnitOnly =
    kvmai_vm("      <kvmai:pmu><kvmai:unit name='amd_l3'/></kvmai:pmu>\n");

TEST_F(HookTest, UnitsTakeTheCpusOfTheVcpuPinning) {
  const std::string xml = vm1_vcpus(kUnitOnly,
                                    "  <vcpu placement='static' cpuset='0-3,^2'>3</vcpu>\n"
                                    "  <cputune>\n"
                                    "    <vcpupin vcpu='1' cpuset='2'/>\n"
                                    "    <vcpupin vcpu='2' cpuset=' 6 , 7-8 '/>\n"
                                    "    <emulatorpin cpuset='30-31'/>\n"
                                    "  </cputune>\n" +
                                        kNumaTune);
  const Hooked h = hook("started", "begin", xml);
  ASSERT_EQ(h.rc, 0) << h.err;
  // vCPU 0 by <vcpu cpuset>, 1 and 2 by their <vcpupin>; the emulator
  // threads do not read the guest's counters.
  EXPECT_EQ(request(1).str(KVMAI_A_PMU_CPUS), "0-3,6-8");
}

TEST_F(HookTest, UnitsNeedEveryVcpuPinned) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"",
       "kvmai: pmu: uncore units need the domain's vCPUs pinned to host CPUs "
       "(<cputune><vcpupin> or <vcpu cpuset>): vCPU 0 may run on any\n"},
      {"  <vcpu>2</vcpu>\n  <cputune><vcpupin vcpu='0' cpuset='0-1'/></cputune>\n",
       "kvmai: pmu: uncore units need the domain's vCPUs pinned to host CPUs "
       "(<cputune><vcpupin> or <vcpu cpuset>): vCPU 1 may run on any\n"},
      // numad chooses at start, and libvirt then ignores cpuset.
      {"  <vcpu placement='auto' cpuset='0-1'>1</vcpu>\n",
       "kvmai: pmu: uncore units need the domain's vCPUs pinned to host CPUs "
       "(<cputune><vcpupin> or <vcpu cpuset>): vCPU 0 may run on any\n"},
      {"  <vcpu>1</vcpu>\n  <cputune><vcpupin vcpu='0' cpuset='0-1,x'/></cputune>\n",
       "kvmai: pmu: <vcpupin vcpu='0'> has cpuset \"0-1,x\", not a CPU list\n"},
      {"  <vcpu cpuset='^0'>1</vcpu>\n",
       "kvmai: pmu: <vcpu> has cpuset \"^0\", which holds no CPU\n"},
  };
  for (const auto& [head, message] : cases) {
    forget();
    const Hooked h = hook("prepare", "begin", vm1_vcpus(kUnitOnly, head));
    EXPECT_EQ(h.rc, 1) << head;
    EXPECT_EQ(h.err, message) << head;
    EXPECT_EQ(commands(), Commands{}) << head;
  }
}

TEST_F(HookTest, MetadataCpusMustBeThePinning) {
  const std::string pinning = "  <vcpu cpuset='0-1'>2</vcpu>\n" + kNumaTune;
  Hooked h = hook("prepare", "begin",
                  vm1_vcpus(kvmai_vm("      <kvmai:pmu cpus='0-3'><kvmai:unit name='amd_l3'/>"
                                     "</kvmai:pmu>\n"),
                            pinning));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: pmu: cpus=\"0-3\" is not where the domain's vCPUs run (0-1, by <vcpu> and "
            "<cputune>): leave cpus out\n");
  // The same set, written otherwise, is no contradiction.
  h = hook("started", "begin",
           vm1_vcpus(kvmai_vm("      <kvmai:pmu cpus='1,0'><kvmai:unit name='amd_l3'/>"
                              "</kvmai:pmu>\n"),
                     pinning));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(model().pmus["vm1"].units, std::vector<std::string>{"amd_l3"});
}

TEST_F(HookTest, MetadataCannotShare) {
  const Hooked h = hook("prepare", "begin",
                        vm1(kvmai_vm("      <kvmai:pmu shared='yes'><kvmai:unit "
                                     "name='amd_l3'/></kvmai:pmu>\n")));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: pmu: shared=\"yes\" is the host's to say, not the domain's: list vm1 under "
            "[pmu] shared in " +
                config() + "\n");
  EXPECT_EQ(commands(), Commands{});
}

// The host's configuration lists the domains whose packages are shared.
TEST_F(HookTest, SharedPackagesAreTheHostsToAllow) {
  host_.dir.write("hook.conf", "# kvm-ai's libvirt hook\n[pmu]\nshared = vm7\nshared = vm1\n");
  // With or without the metadata's agreement.
  for (const std::string shared : {"", " shared='yes'"}) {
    model().pmus.clear();
    forget();
    const Hooked h = hook(
        "started", "begin",
        vm1(kvmai_vm("      <kvmai:pmu" + shared + "><kvmai:unit name='amd_l3'/></kvmai:pmu>\n")));
    ASSERT_EQ(h.rc, 0) << h.err;
    EXPECT_TRUE(request(1).has(KVMAI_A_PMU_SHARED)) << shared;
  }
  // Not for the domains it does not list.
  host_.dir.write("run/vm2.pid", "4343\n");
  forget();
  ASSERT_EQ(hook("started", "begin", domain_xml("vm2", {kGpu, kNic}, kUnitOnly), "vm2").rc, 0);
  EXPECT_FALSE(request(1).has(KVMAI_A_PMU_SHARED));
}

TEST_F(HookTest, ABrokenHostConfigStopsPmuDomainsOnly) {
  host_.dir.write("hook.conf", "[pmu]\nshare = vm1\n");
  Hooked h = hook("prepare", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: " + config() + ": unrecognised option 'pmu.share'\n");
  // Groups alone have nothing to look up there.
  h = hook("prepare", "begin", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  // A running domain is not stopped for it: what is missing stays so.
  h = hook("reconnect", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0);
  EXPECT_EQ(h.err, "kvmai: warning: " + config() +
                       ": unrecognised option 'pmu.share': nothing put back\n");
}

// ---- counters devices --------------------------------------------------------------

const std::string kUuid = "8d6ece3b-212c-4304-8f5a-d0b7974a09f9";

std::string mdev_xml(const std::string& uuid) {
  return "    <hostdev mode='subsystem' type='mdev' model='vfio-pci'>\n"
         "      <source><address uuid='" +
         uuid + "'/></source>\n    </hostdev>\n";
}

// A counters device (kmod/counters.c) as sysfs shows it.
void counters_device(const TempDir& dir, const std::string& uuid, const std::string& vm,
                     const std::string& state) {
  const std::string d = "sys/bus/mdev/devices/" + uuid + "/kvmai/";
  dir.write(d + "vm", vm + "\n");
  dir.write(d + "unit", "amd_l3\n");
  dir.write(d + "state", state + "\n");
}

TEST_F(HookTest, ACountersDeviceMustBeTheDomains) {
  counters_device(host_.dir, kUuid, "vm2", "live");
  for (const std::string& metadata : {kGroupMetadata, std::string()}) {
    for (const std::string op : {"prepare", "started"}) {
      forget();
      const Hooked h =
          hook(op, "begin", domain_xml("vm1", {kGpu, kNic}, metadata, mdev_xml(kUuid)));
      EXPECT_EQ(h.rc, 1) << op;
      EXPECT_EQ(h.err,
                "kvmai: counters device " + kUuid + " belongs to vm vm2, not to domain vm1\n")
          << op;
      // Refused before anything is asked of the module.
      EXPECT_EQ(commands(), Commands{}) << op;
    }
  }
  EXPECT_TRUE(model().groups.empty());
}

TEST_F(HookTest, ARevokedCountersDeviceIsRefused) {
  counters_device(host_.dir, kUuid, "vm1", "revoked");
  const Hooked h =
      hook("prepare", "begin", domain_xml("vm1", {kGpu, kNic}, kGroupMetadata, mdev_xml(kUuid)));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "kvmai: counters device " + kUuid +
                       " was revoked (vm1 gave its unit back): remove it and create another\n");
}

TEST_F(HookTest, TheDomainsOwnCountersDeviceAndOtherMdevsPass) {
  counters_device(host_.dir, kUuid, "vm1", "live");
  // A mediated device of another driver (a vGPU) has no kvmai/ directory.
  const std::string vgpu = "c2177883-f1bb-47f0-914d-32a22e3a8804";
  host_.dir.write("sys/bus/mdev/devices/" + vgpu + "/mdev_type/name", "GRID\n");
  const Hooked h =
      hook("prepare", "begin",
           domain_xml("vm1", {kGpu, kNic}, kGroupMetadata, mdev_xml(kUuid) + mdev_xml(vgpu)));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
}

// ---- mdevs in groups ----------------------------------------------------------

// A vGPU mdev of the host's 0000:15:00.0, as the mdev core lays it out:
// below its parent, bus/mdev/devices/UUID a link to it.
const std::string kVgpu = "c2177883-f1bb-47f0-914d-32a22e3a8804";

void vgpu_mdev(const TempDir& dir, const std::string& uuid, const std::string& parent) {
  const std::string at = "sys/devices/pci0000:00/" + parent + "/" + uuid;
  dir.write(at + "/mdev_type/name", "GRID\n");
  std::filesystem::create_directories(dir.path() / "sys/bus/mdev/devices");
  std::filesystem::create_symlink(dir.path() / at, dir.path() / "sys/bus/mdev/devices" / uuid);
}

// from="hostdevs" takes the domain's mdevs of PCI parents, by UUID, and
// leaves others (a counters device's parent is kvm-ai's own).
TEST_F(HookTest, HostdevsGroupTakesMdevsOfPciParents) {
  vgpu_mdev(host_.dir, kVgpu, "0000:15:00.0");
  counters_device(host_.dir, kUuid, "vm1", "live");
  const Hooked h =
      hook("started", "begin",
           domain_xml("vm1", {kGpu}, kvmai_vm("      <kvmai:group from='hostdevs'/>\n"),
                      mdev_xml(kVgpu) + mdev_xml(kUuid)));
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_THAT(model().groups.at("vm1").members, ElementsAre(kGpu, kVgpu));
  // The mdev went by its own attribute.
  bool by_uuid = false;
  for (std::size_t i = 0; i < log_->requests.size(); i++) {
    by_uuid = by_uuid || request(i).str(KVMAI_A_GROUP_MDEV) == kVgpu;
  }
  EXPECT_TRUE(by_uuid);
  // Reconnecting finds the enabled group's mdev among the domain's hostdevs.
  forget();
  const Hooked r =
      hook("reconnect", "begin",
           domain_xml("vm1", {kGpu}, kvmai_vm("      <kvmai:group from='hostdevs'/>\n"),
                      mdev_xml(kVgpu)));
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(HookTest, NamedMdevMembersAreTheDomainsOfPciParents) {
  vgpu_mdev(host_.dir, kVgpu, "0000:15:00.0");
  const std::string other = "0b1d2f3a-4c5e-4f60-9a1b-2c3d4e5f6a7b";
  vgpu_mdev(host_.dir, other, "mtty");
  const std::string head =
      "      <kvmai:group name='g'>\n        <kvmai:device address='" + kGpu + "'/>\n";
  const std::string tail = "      </kvmai:group>\n";
  const auto with = [&](const std::string& dev) {
    return domain_xml("vm1", {kGpu},
                      kvmai_vm(head + "        <kvmai:device " + dev + "/>\n" + tail),
                      mdev_xml(kVgpu) + mdev_xml(other));
  };
  Hooked h = hook("started", "begin", with("mdev='" + kVgpu + "'"));
  ASSERT_EQ(h.rc, 0) << h.err;
  EXPECT_THAT(model().groups.at("g").members, ElementsAre(kGpu, kVgpu));
  model().groups.clear();
  const std::vector<std::pair<std::string, std::string>> refused{
      {"mdev='c2177883'", "kvmai: group g: bad mdev \"c2177883\" (want a UUID)\n"},
      {"mdev='9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3'",
       "kvmai: group g: 9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3 is not an mdev hostdev of domain "
       "vm1\n"},
      {"mdev='" + other + "'",
       "kvmai: group g: mdev " + other + ": its parent mtty is not a PCI device\n"},
      {"address='" + kNic + "' mdev='" + kVgpu + "'",
       "kvmai: metadata: <kvmai:device> with both address and mdev\n"},
  };
  for (const auto& [dev, message] : refused) {
    forget();
    h = hook("prepare", "begin", with(dev));
    EXPECT_EQ(h.rc, 1) << dev;
    EXPECT_EQ(h.err, message) << dev;
  }
}

// ---- stopped, release ------------------------------------------------------------

TEST_F(HookTest, StoppedDeletesOnlyThisDomainsGroups) {
  model().groups["a"] = {.vm = "vm1",
                         .mode = KVMAI_MODE_TRANSLATED,
                         .state = KVMAI_STATE_ENABLED,
                         .members = {kGpu, kNic}};
  model().groups["b"] = {.vm = "vm2",
                         .mode = KVMAI_MODE_TRANSLATED,
                         .state = KVMAI_STATE_ENABLED,
                         .members = {kOtherGpu}};
  model().groups["c"] = {
      .vm = "vm1", .mode = KVMAI_MODE_DIRECT, .state = KVMAI_STATE_DISABLED, .members = {}};
  model().pmus["vm1"] = {.core = true, .units = {}, .pid = std::nullopt};
  model().pmus["vm2"] = {.core = true, .units = {}, .pid = std::nullopt};
  // The metadata no longer names "c": the domain's groups go all the same.
  Hooked h = hook("stopped", "end", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_DEL, KVMAI_CMD_GROUP_DEL,
                                  KVMAI_CMD_PMU_RELEASE}));
  EXPECT_EQ(request(1).str(KVMAI_A_GROUP_NAME), "a");
  EXPECT_EQ(request(2).str(KVMAI_A_GROUP_NAME), "c");
  EXPECT_EQ(request(3).str(KVMAI_A_PMU_VM), "vm1");
  EXPECT_FALSE(request(3).has(KVMAI_A_PMU_CORE));  // everything
  ASSERT_EQ(model().groups.size(), 1U);
  EXPECT_TRUE(model().groups.contains("b"));
  EXPECT_FALSE(model().pmus.contains("vm1"));
  EXPECT_TRUE(model().pmus.contains("vm2"));

  // release end follows stopped end: all gone, quietly.
  forget();
  h = hook("release", "end", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0);
  EXPECT_EQ(h.err, "");
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_RELEASE}));
}

TEST_F(HookTest, StoppedWithBrokenMetadataStillCleansUp) {
  model().groups["a"] = {.vm = "vm1",
                         .mode = KVMAI_MODE_TRANSLATED,
                         .state = KVMAI_STATE_ENABLED,
                         .members = {kGpu, kNic}};
  const Hooked h = hook("stopped", "end", vm1(kvmai_vm("      <kvmai:group mode='sideways'/>\n")));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_TRUE(model().groups.empty());
}

TEST_F(HookTest, StoppedWithoutMetadataCleansUpByName) {
  // What `started` made, then the live metadata removed.
  ASSERT_EQ(hook("started", "begin", vm1(kFullMetadata)).rc, 0);
  ASSERT_TRUE(model().groups.contains("vm1-p2p"));
  ASSERT_TRUE(model().pmus.contains("vm1"));
  forget();
  const Hooked h = hook("stopped", "end", vm1(""));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "");
  EXPECT_EQ(commands(),
            (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_DEL, KVMAI_CMD_PMU_RELEASE}));
  EXPECT_TRUE(model().groups.empty());
  EXPECT_TRUE(model().pmus.empty());
}

// The stop operations need nothing from the XML: not even XML.
TEST_F(HookTest, StoppedCleansUpWhateverStandardInputHolds) {
  model().groups["a"] = {.vm = "vm1",
                         .mode = KVMAI_MODE_TRANSLATED,
                         .state = KVMAI_STATE_ENABLED,
                         .members = {kGpu, kNic}};
  model().pmus["vm1"] = {.core = true, .units = {}, .pid = 4242};
  const Hooked h = hook("release", "end", "this is not XML");
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_TRUE(model().groups.empty());
  EXPECT_TRUE(model().pmus.empty());
}

TEST_F(HookTest, StoppedIsQuietWhenTheModuleIsGone) {
  const Call call{.domain = "vm1",
                  .operation = "release",
                  .suboperation = "end",
                  .extra = "crashed",
                  .run_dir = host_.dir.path() / "run",
                  .sysfs_root = host_.dir.path() / "sys"};
  for (const std::string& xml : {vm1(kFullMetadata), vm1("")}) {
    std::ostringstream err;
    EXPECT_EQ(run_qemu_hook(call, xml, err, testing::no_kvmai()), 0);
    EXPECT_EQ(err.str(), "");
  }
}

TEST_F(HookTest, StoppedReportsARealFailure) {
  model().groups["a"] = {.vm = "vm1",
                         .mode = KVMAI_MODE_TRANSLATED,
                         .state = KVMAI_STATE_ENABLED,
                         .members = {kGpu, kNic}};
  model().groups["b"] = {
      .vm = "vm1", .mode = KVMAI_MODE_TRANSLATED, .state = KVMAI_STATE_DISABLED, .members = {}};
  model().fail_when = [](std::uint8_t cmd, const AttrSet& a) {
    return cmd == KVMAI_CMD_GROUP_DEL && a.str(KVMAI_A_GROUP_NAME) == "a";
  };
  model().fail_errno = EPERM;
  model().fail_extack = "kvmai needs CAP_SYS_ADMIN in the initial user namespace";
  const Hooked h = hook("stopped", "end", vm1(kGroupMetadata));
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: group a: delete: kvmai needs CAP_SYS_ADMIN in the initial user namespace "
            "(Operation not permitted)\n");
  // The others went all the same.
  EXPECT_FALSE(model().groups.contains("b"));
}

// ---- reconnect, attach -----------------------------------------------------------

const std::string kTwoGroups = kvmai_vm(
    "      <kvmai:group name='g1'>\n"
    "        <kvmai:device address='0000:11:00.0'/>\n"
    "        <kvmai:device address='0000:13:00.0'/>\n"
    "      </kvmai:group>\n"
    "      <kvmai:group name='g2' mode='direct'>\n"
    "        <kvmai:device address='0000:15:00.0'/>\n"
    "        <kvmai:device address='0000:21:00.0'/>\n"
    "      </kvmai:group>\n");

std::string two_group_domain() {
  return domain_xml("vm1", {kGpu, kNic, "0000:15:00.0", kOtherGpu}, kTwoGroups);
}

TEST_F(HookTest, ReconnectRecreatesWhatTheModuleLost) {
  model().groups["g1"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_TRANSLATED,
                          .state = KVMAI_STATE_ENABLED,
                          .members = {kGpu, kNic}};
  for (const std::string op : {"reconnect", "attach"}) {
    model().groups.erase("g2");
    forget();
    const Hooked h = hook(op, "begin", two_group_domain());
    EXPECT_EQ(h.rc, 0) << h.err;
    EXPECT_EQ(h.err, "");
    EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_NEW, KVMAI_CMD_DEV_ADD,
                                    KVMAI_CMD_DEV_ADD, KVMAI_CMD_GROUP_SET}));
    // g1 untouched: every request names g2.
    for (std::size_t i = 1; i < commands().size(); ++i) {
      EXPECT_EQ(request(i).str(KVMAI_A_GROUP_NAME), "g2") << op << i;
    }
    EXPECT_EQ(model().groups["g2"].state, KVMAI_STATE_ENABLED);
    EXPECT_EQ(model().groups["g2"].mode, KVMAI_MODE_DIRECT);
  }
}

TEST_F(HookTest, ReconnectNeverDisables) {
  // Enabled with other members than the metadata says, all the domain's:
  // left running.  Disabled and different: left alone, with a warning.
  model().groups["g1"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_TRANSLATED,
                          .state = KVMAI_STATE_ENABLED,
                          .members = {kGpu, "0000:15:00.0"}};
  model().groups["g2"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_TRANSLATED,
                          .state = KVMAI_STATE_DISABLED,
                          .members = {kOtherGpu}};
  const Hooked h = hook("reconnect", "begin", two_group_domain());
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(h.err, "kvmai: warning: group g2 differs from the metadata: left disabled\n");
  EXPECT_EQ(commands(), Commands{KVMAI_CMD_GROUP_GET});
}

TEST_F(HookTest, ReconnectEnablesADisabledGroupAsTheMetadataSays) {
  model().groups["g1"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_TRANSLATED,
                          .state = KVMAI_STATE_ENABLED,
                          .members = {kGpu, kNic}};
  model().groups["g2"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_DIRECT,
                          .state = KVMAI_STATE_DISABLED,
                          .members = {"0000:15:00.0", kOtherGpu}};
  EXPECT_EQ(hook("reconnect", "begin", two_group_domain()).rc, 0);
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_GROUP_SET}));
  EXPECT_EQ(request(1).str(KVMAI_A_GROUP_NAME), "g2");
  EXPECT_EQ(request(1).u32(KVMAI_A_GROUP_STATE), KVMAI_STATE_ENABLED);
}

TEST_F(HookTest, ReconnectFailsOnlyWhenUnsafe) {
  // An enabled group of the domain holding a device the domain is not
  // given: libvirt kills the domain on this exit, and its stop deletes it.
  model().groups["g1"] = {.vm = "vm1",
                          .mode = KVMAI_MODE_TRANSLATED,
                          .state = KVMAI_STATE_ENABLED,
                          .members = {kGpu, "0000:99:00.0"}};
  Hooked h = hook("reconnect", "begin", two_group_domain());
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err,
            "kvmai: group g1 is enabled with 0000:99:00.0, which is not a PCI or mdev hostdev "
            "of domain vm1\n");
  EXPECT_EQ(commands(), Commands{KVMAI_CMD_GROUP_GET});

  // What is merely missing or refused is a warning.
  model().groups.clear();
  model().fail_when = [](std::uint8_t cmd, const AttrSet&) { return cmd == KVMAI_CMD_GROUP_SET; };
  model().fail_errno = EBUSY;
  model().fail_extack = "0000:11:00.0 and 0000:13:00.0 are held by different VFIO users";
  forget();
  h = hook("reconnect", "begin", two_group_domain());
  EXPECT_EQ(h.rc, 0);
  EXPECT_THAT(h.err, ::testing::StartsWith(
                         "kvmai: warning: group g1: enable: 0000:11:00.0 and "
                         "0000:13:00.0 are held by different VFIO users (Device or resource "
                         "busy): not put back\n"));
  EXPECT_TRUE(model().groups.empty());  // the failed ones were taken back
  const Commands sent = commands();
  EXPECT_EQ(std::count(sent.begin(), sent.end(), KVMAI_CMD_GROUP_DEL), 2);

  // No module at all: nothing relaxed, nothing unsafe.
  const Call call{.domain = "vm1",
                  .operation = "reconnect",
                  .suboperation = "begin",
                  .extra = "-",
                  .run_dir = host_.dir.path() / "run",
                  .sysfs_root = host_.dir.path() / "sys"};
  std::ostringstream err;
  EXPECT_EQ(run_qemu_hook(call, two_group_domain(), err, testing::no_kvmai()), 0);
}

TEST_F(HookTest, ReconnectReassignsALostPmuRecord) {
  model().groups["vm1-p2p"] = {.vm = "vm1",
                               .mode = KVMAI_MODE_TRANSLATED,
                               .state = KVMAI_STATE_ENABLED,
                               .members = {kGpu, kNic}};
  const Hooked h = hook("reconnect", "begin", vm1(kFullMetadata));
  EXPECT_EQ(h.rc, 0) << h.err;
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_GET, KVMAI_CMD_PMU_ASSIGN}));
  EXPECT_EQ(request(2).u32(KVMAI_A_PMU_PID), 4242U);
  forget();
  EXPECT_EQ(hook("reconnect", "begin", vm1(kFullMetadata)).rc, 0);
  EXPECT_EQ(commands(), (Commands{KVMAI_CMD_GROUP_GET, KVMAI_CMD_PMU_GET}));
}

// ---- the installed program -------------------------------------------------------

// The hook as installed, with kvmaictl's absolute path in it.  The tests
// make their own from the same source, for kvmaictl at `bin`.
std::filesystem::path installed_hook(const TempDir& dir, const std::string& bin) {
  std::string text = testing::read_text(KVMAICTL_HOOK_SCRIPT);
  const std::string placeholder = "@KVMAICTL@";
  if (const auto at = text.find(placeholder); at != std::string::npos) {
    text.replace(at, placeholder.size(), bin);
  }
  const auto path = dir.write("qemu.d/kvmai", text);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// How libvirt runs it: in qemu.d, with libvirt's PATH (/usr/local first),
// the XML on standard input.
testing::Ran run_as_libvirt(const TempDir& dir, const std::filesystem::path& hook,
                            const std::string& path, const std::string& domain,
                            const std::string& xml, std::string& err) {
  const auto in = dir.write("in.xml", xml);
  const auto err_file = dir.path() / "err";
  auto r =
      testing::sh("PATH=" + testing::sh_quote(path) + " " + testing::sh_quote(hook.string()) + " " +
                  testing::sh_quote(domain) + " prepare begin - <" +
                  testing::sh_quote(in.string()) + " 2>" + testing::sh_quote(err_file.string()));
  err = testing::read_text(err_file.string());
  return r;
}

// libvirt's way: the script in qemu.d, the XML on standard input, nothing
// on standard output, one line on standard error when refused.  Refusals
// that need no module are used, so no socket is opened.
TEST(HookProgram, AsLibvirtRunsIt) {
  const TempDir dir("hook-program");
  // A kvmaictl on libvirt's PATH that is not the one installed with the
  // hook (a stale `make install` in /usr/local/bin) never runs.
  const auto stale = dir.write("local/bin/kvmaictl", "#!/bin/sh\necho stale >&2\nexit 3\n");
  std::filesystem::permissions(stale, std::filesystem::perms::owner_all);
  const auto hook = installed_hook(dir, KVMAICTL_BIN);
  const std::string path = (dir.path() / "local/bin").string() + ":/usr/bin:/bin";
  std::string err;
  // No metadata: exit 0, silent, whatever the name.
  for (const std::string& domain : std::vector<std::string>{"vm1", "-v", "help"}) {
    const auto r = run_as_libvirt(dir, hook, path, domain, domain_xml(domain, {kGpu}, ""), err);
    EXPECT_EQ(r.rc, 0) << domain << err;
    EXPECT_EQ(r.out, "") << domain;
    EXPECT_EQ(err, "") << domain;
  }
  const auto r =
      run_as_libvirt(dir, hook, path, "-v",
                     domain_xml("-v", {kGpu},
                                kvmai_vm("      <kvmai:group name='g'>\n"
                                         "        <kvmai:device address='0000:21:00.0'/>\n"
                                         "      </kvmai:group>\n")),
                     err);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(err, "kvmai: group g: 0000:21:00.0 is not a PCI hostdev of domain -v\n");
}

// CMake writes the installed kvmaictl's path into the hook it installs.
TEST(HookProgram, InstalledWithKvmaictlsAbsolutePath) {
  const std::string text = testing::read_text(KVMAICTL_HOOK_INSTALLED);
  EXPECT_THAT(text,
              ::testing::HasSubstr("\nkvmaictl=" + std::string(KVMAICTL_INSTALLED_BIN) + "\n"));
  EXPECT_THAT(KVMAICTL_INSTALLED_BIN, ::testing::StartsWith("/"));
  EXPECT_EQ(text.find("@KVMAICTL@"), std::string::npos);
  EXPECT_THAT(text, ::testing::HasSubstr("\nexec \"$kvmaictl\" hook qemu -- \"$@\"\n"));
}

// kvmaictl removed, the hook left behind (copied by hand, or a package's
// conffile): every domain still starts, and the hook says why it did
// nothing.
TEST(HookProgram, WithoutKvmaictlDomainsStart) {
  const TempDir dir("hook-program");
  const std::string gone = (dir.path() / "bin/kvmaictl").string();
  const auto hook = installed_hook(dir, gone);
  std::string err;
  for (const std::string& metadata :
       {std::string(), kvmai_vm("      <kvmai:group from='hostdevs'/>\n")}) {
    const auto r =
        run_as_libvirt(dir, hook, "/usr/bin:/bin", "vm1", domain_xml("vm1", {kGpu}, metadata), err);
    EXPECT_EQ(r.rc, 0) << err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(err, "kvmai: warning: " + gone + " is missing: kvm-ai's libvirt hook does nothing (" +
                       hook.string() + " is left over)\n");
  }
}

}  // namespace
}  // namespace kvmai::kvmaictl::hook
