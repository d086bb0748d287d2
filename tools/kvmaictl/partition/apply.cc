#include "partition/apply.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/unique_fd.h"

namespace kvmai::kvmaictl::partition {
namespace {

// One write of a sysfs attribute, as the kernel's store method sees it: a
// single write(2) of the whole text.
void write_attr(const std::filesystem::path& path, const std::string& text) {
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), std::strerror(errno)));
  }
  const ssize_t n = ::write(fd.get(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) {
    throw std::runtime_error(fmt::format("writing \"{}\" to {}: {}", text, path.string(),
                                         n < 0 ? std::strerror(errno) : "short write"));
  }
}

class Runner {
 public:
  Runner(const std::filesystem::path& sysfs, SeenTypes* seen)
      : sys_(sysfs), reader_(sysfs), seen_(seen) {}

  void run(const Step& s) {
    switch (s.kind) {
      case Step::Kind::remove_mdev:
        write_attr(sys_ / "bus/mdev/devices" / s.uuid / "remove", "1");
        return;
      case Step::Kind::set_autoprobe:
        write_attr(pci(s.device) / "sriov_drivers_autoprobe", s.value);
        return;
      case Step::Kind::set_num_vfs:
        write_attr(pci(s.device) / "sriov_numvfs", s.value);
        return;
      case Step::Kind::bind_vf:
        bind(vf_of(s), s.value);
        return;
      case Step::Kind::set_vgpu_type:
        set_type(s);
        return;
      case Step::Kind::create_mdev:
        write_attr(sys_ / "class/mdev_bus" / s.device / "mdev_supported_types" / s.value / "create",
                   s.uuid);
        return;
    }
  }

 private:
  std::filesystem::path pci(const std::string& bdf) const { return sys_ / "bus/pci/devices" / bdf; }

  std::string vf_of(const Step& s) const {
    const auto rel = fmt::format("bus/pci/devices/{}/virtfn{}", s.device, s.vf);
    auto bdf = link_name(reader_, rel);
    if (!bdf) {
      throw std::runtime_error(fmt::format("{} has no VF {}", s.device, s.vf));
    }
    return *bdf;
  }

  // driver_override decides the driver of the next probe; the VF leaves
  // the one it has first. "" leaves it unbound.
  void bind(const std::string& vf, const std::string& driver) {
    const std::string rel = "bus/pci/devices/" + vf;
    if (!driver.empty() && !reader_.exists("bus/pci/drivers/" + driver)) {
      throw std::runtime_error(
          fmt::format("driver {} is not loaded (no bus/pci/drivers/{})", driver, driver));
    }
    write_attr(pci(vf) / "driver_override", driver.empty() ? "\n" : driver);
    const auto current = link_name(reader_, rel + "/driver");
    if (current && *current == driver) {
      return;
    }
    if (current) {
      write_attr(pci(vf) / "driver/unbind", vf);
    }
    if (driver.empty()) {
      return;
    }
    write_attr(sys_ / "bus/pci/drivers_probe", vf);
    const auto now = link_name(reader_, rel + "/driver");
    if (!now || *now != driver) {
      throw std::runtime_error(
          fmt::format("{}: {} did not bind it (bound to {})", vf, driver, now.value_or("nothing")));
    }
  }

  void set_type(const Step& s) {
    const auto rel = fmt::format("bus/pci/devices/{}/virtfn{}/nvidia", s.device, s.vf);
    std::string id = s.value;
    const auto types = parse_vgpu_types(reader_.read(rel + "/creatable_vgpu_types").value_or(""));
    if (seen_ != nullptr) {
      auto& known = (*seen_)[s.device];
      known.insert(known.end(), types.begin(), types.end());
    }
    if (!std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      // A type by name, for a VF the plan created: its driver says the id.
      const auto it =
          std::find_if(types.begin(), types.end(), [&](const VgpuType& t) { return t.name == id; });
      if (it == types.end()) {
        throw std::runtime_error(
            fmt::format("{} VF {}: no creatable vGPU type \"{}\"", s.device, s.vf, id));
      }
      id = std::to_string(it->id);
    }
    write_attr(sys_ / rel / "current_vgpu_type", id);
  }

  std::filesystem::path sys_;
  FsReader reader_;
  SeenTypes* seen_;
};

std::vector<std::string> touched(const Plan& plan) {
  std::set<std::string> names;
  for (const auto& s : plan.steps) {
    names.insert(s.device);
  }
  return {names.begin(), names.end()};
}

}  // namespace

void apply(const Plan& plan, const std::filesystem::path& sysfs,
           const std::function<void(const Step&)>& done, SeenTypes* seen) {
  Runner r(sysfs, seen);
  for (std::size_t i = 0; i < plan.steps.size(); i++) {
    try {
      r.run(plan.steps[i]);
    } catch (const std::runtime_error& e) {
      throw StepFailed(i, e.what());
    }
    if (done) {
      done(plan.steps[i]);
    }
  }
}

bool same_partitions(const Layout& a, const Layout& b, const std::vector<std::string>& parents) {
  for (const auto& name : parents) {
    const Parent* x = a.find(name);
    const Parent* y = b.find(name);
    if ((x == nullptr) != (y == nullptr)) {
      return false;
    }
    if (x == nullptr) {
      continue;
    }
    if (x->vfs.size() != y->vfs.size() || x->mdevs.size() != y->mdevs.size()) {
      return false;
    }
    for (std::size_t i = 0; i < x->vfs.size(); i++) {
      if (x->vfs[i].index != y->vfs[i].index || x->vfs[i].driver != y->vfs[i].driver ||
          x->vfs[i].vgpu_type != y->vfs[i].vgpu_type) {
        return false;
      }
    }
    for (std::size_t i = 0; i < x->mdevs.size(); i++) {
      if (x->mdevs[i].uuid != y->mdevs[i].uuid || x->mdevs[i].type != y->mdevs[i].type) {
        return false;
      }
    }
    if (x->autoprobe != y->autoprobe) {
      return false;
    }
  }
  return true;
}

Outcome apply_with_rollback(const Plan& plan, const Layout& before,
                            const std::filesystem::path& sysfs,
                            const std::function<void(const Step&)>& done) {
  Outcome out;
  try {
    apply(
        plan, sysfs,
        [&](const Step& s) {
          out.steps_done++;
          if (done) {
            done(s);
          }
        },
        &out.seen);
    return out;
  } catch (const StepFailed& e) {
    out.failure = fmt::format("step {} ({}) failed: {}", e.index() + 1,
                              plan.steps[e.index()].text(), e.what());
  }
  const auto parents = touched(plan);
  const FsReader sys(sysfs);
  std::vector<Wanted> back;
  for (const auto& name : parents) {
    if (const Parent* p = before.find(name)) {
      back.push_back(as_wanted(*p));
    }
  }
  try {
    // Nothing the rollback removes was there before the plan ran, so no
    // user can hold it: no users to refuse for.
    const auto undo =
        partition::plan(Layout::read(sys), back, Users{}, [] { return std::string("?"); });
    apply(undo, sysfs, nullptr, &out.seen);
  } catch (const StepFailed& e) {
    out.rollback_failure = e.what();
  } catch (const Refusal& e) {
    out.rollback_failure = e.what();
  }
  out.restored = same_partitions(Layout::read(sys), before, parents);
  return out;
}

}  // namespace kvmai::kvmaictl::partition
