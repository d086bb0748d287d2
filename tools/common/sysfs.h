// Reading sysfs and procfs: the narrow interface the tools read the host
// through, so that a recorded or synthesized tree is read exactly like the
// live one.
//
// `--sysfs-root DIR` means the same to kvmaictl and kvmaistat: DIR is read
// where /sys would be (a recorded tree's sys/ directory, not the one above
// it), and likewise kvmaictl's `--procfs-root DIR` for /proc.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvmai {

// Where sysfs and procfs are read without --sysfs-root, --procfs-root.
inline constexpr std::string_view kSysfsRoot = "/sys";
inline constexpr std::string_view kProcfsRoot = "/proc";

// Paths are relative to the tree's root: "bus/pci/devices", not
// "/sys/bus/pci/devices".
class TreeReader {
 public:
  TreeReader() = default;
  TreeReader(const TreeReader&) = delete;
  TreeReader& operator=(const TreeReader&) = delete;
  TreeReader(TreeReader&&) = delete;
  TreeReader& operator=(TreeReader&&) = delete;
  virtual ~TreeReader() = default;

  // Whole file contents (bytes, for `config` too); nullopt if unreadable.
  virtual std::optional<std::string> read(const std::string& rel) const = 0;
  // Target of a symbolic link, as stored.
  virtual std::optional<std::string> link_target(const std::string& rel) const = 0;
  // `rel` with every link followed, relative to the root; nullopt if it does
  // not exist or leaves the tree.
  virtual std::optional<std::string> resolve(const std::string& rel) const = 0;
  // Entry names in a directory, sorted; empty if none or not a directory.
  virtual std::vector<std::string> list(const std::string& rel) const = 0;
  virtual bool exists(const std::string& rel) const = 0;
};

// The real file system below `root` (e.g. "/sys").
class FsReader final : public TreeReader {
 public:
  explicit FsReader(const std::filesystem::path& root);

  std::optional<std::string> read(const std::string& rel) const override;
  std::optional<std::string> link_target(const std::string& rel) const override;
  std::optional<std::string> resolve(const std::string& rel) const override;
  std::vector<std::string> list(const std::string& rel) const override;
  bool exists(const std::string& rel) const override;

 private:
  std::filesystem::path root_;
};

// First line of a text attribute, without surrounding blanks.
std::optional<std::string> read_line(const TreeReader& r, const std::string& rel);
// An integer attribute ("0x10de", "-1", "16"); base 0 accepts 0x.
std::optional<long long> read_int(const TreeReader& r, const std::string& rel, int base = 0);
// The last path component of a link's target ("iommu_group" -> "12").
std::optional<std::string> link_name(const TreeReader& r, const std::string& rel);

}  // namespace kvmai
