#include "options.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace emussd {

std::string usage() {
  return "usage: emussd --backing DIR --mountpoint DIR --read-latency-us X --alpha A\n"
         "              --k-r N --k-w N [--page-size 4096] [--channels N]\n"
         "              [--time-dilation D] [--stats-out FILE] [--foreground] [--debug]\n"
         "       (more arguments may come from $EMUSSD_ARGS, separated by spaces)\n"
         "       emussd --check --read-latency-us X --alpha A --k-r N --k-w N [...]\n"
         "\n"
         "An emulated SSD: a FUSE file system that stores its data in DIR (--backing)\n"
         "and serves every read and write through a device model:\n"
         "  --read-latency-us X  service time of a one-page read, in microseconds (0 < X <= 1e7)\n"
         "  --alpha A            write/read asymmetry: a write page costs A times a read page\n"
         "                       (0 < A <= 1000; A < 1 is a device whose writes are cheaper)\n"
         "  --k-r N, --k-w N     reads / writes in service at once (1..4096)\n"
         "  --page-size B        bytes per page, a power of two in 512..1048576 (default 4096);\n"
         "                       a write of n bytes costs ceil(n/B) pages (at least one), a read\n"
         "                       the pages of the bytes it returns\n"
         "  --channels N         shared limit on reads + writes in service (0 = none, default)\n"
         "  --time-dilation D    run every service time D times slower on the wall clock\n"
         "                       (1 <= D <= 1e5, X * D <= 1e7; default 1): a device faster than\n"
         "                       this machine can emulate, slowed down by a known factor\n"
         "  --stats-out FILE     write the counters as JSON to FILE on unmount\n"
         "  --foreground         stay in the foreground (default: detach once mounted)\n"
         "  --debug              log every FUSE request (implies --foreground)\n"
         "  --check              only check the device arguments, print them as JSON, exit\n"
         "The counters are readable at MOUNTPOINT/.emussd_stats while mounted.\n"
         "Unmount with `fusermount3 -u MOUNTPOINT`, or send emussd SIGINT or SIGTERM.\n";
}

namespace {

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end && *end == '\0' && std::isfinite(out);
}

bool parse_int(const std::string& s, long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtol(s.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

// Decodes the octal escapes (\040 for a space) of /proc/self/mountinfo.
std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && oct.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::strtol(oct.c_str(), nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool is_mount_point(const std::string& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mnt;
    if (fields >> id >> parent >> devno >> root >> mnt && unescape_mountinfo(mnt) == path) return true;
  }
  return false;
}

bool nested(const std::string& a, const std::string& b) {  // a inside b, or equal
  return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && (b == "/" || a[b.size()] == '/'));
}

}  // namespace

bool parse_args(const std::vector<std::string>& args, Options& opts, std::string& error) {
  bool have_latency = false, have_alpha = false, have_kr = false, have_kw = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_value = false;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (name == "-h" || name == "--help") {
      opts.help = true;
      return true;
    }
    if (name == "--foreground" || name == "-f") {
      opts.foreground = true;
      continue;
    }
    if (name == "--debug") {
      opts.debug = opts.foreground = true;
      continue;
    }
    if (name == "--check") {
      opts.check = true;
      continue;
    }
    static const char* const kValued[] = {"--backing",   "--mountpoint",   "--read-latency-us", "--alpha",
                                          "--k-r",       "--k-w",          "--page-size",       "--channels",
                                          "--stats-out", "--time-dilation"};
    bool known = false;
    for (const char* k : kValued) known = known || name == k;
    if (!known) {
      error = "unknown argument '" + args[i] + "'\n" + usage();
      return false;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        error = name + " needs a value\n" + usage();
        return false;
      }
      value = args[++i];
    }
    double d = 0;
    long n = 0;
    if (name == "--backing") {
      opts.backing = value;
    } else if (name == "--mountpoint") {
      opts.mountpoint = value;
    } else if (name == "--stats-out") {
      opts.stats_out = value;
    } else if (name == "--read-latency-us") {
      if (!parse_double(value, d) || d <= 0 || d > 1e7) {
        error = "--read-latency-us '" + value + "' is not allowed: give a number of microseconds, 0 < X <= 1e7 (10 s)";
        return false;
      }
      opts.params.read_latency_us = d;
      have_latency = true;
    } else if (name == "--time-dilation") {
      if (!parse_double(value, d) || d < 1 || d > 1e5) {
        error = "--time-dilation '" + value + "' is not allowed: give a number, 1 <= D <= 1e5";
        return false;
      }
      opts.params.time_dilation = d;
    } else if (name == "--alpha") {
      if (!parse_double(value, d) || d <= 0 || d > 1000) {
        error = "--alpha '" + value + "' is not allowed: give a number, 0 < A <= 1000";
        return false;
      }
      opts.params.alpha = d;
      have_alpha = true;
    } else if (name == "--k-r" || name == "--k-w") {
      if (!parse_int(value, n) || n < 1 || n > 4096) {
        error = name + " '" + value + "' is not allowed: give an integer, 1 <= N <= 4096";
        return false;
      }
      (name == "--k-r" ? opts.params.k_r : opts.params.k_w) = static_cast<int>(n);
      (name == "--k-r" ? have_kr : have_kw) = true;
    } else if (name == "--page-size") {
      if (!parse_int(value, n) || n < 512 || n > (1 << 20) || (n & (n - 1)) != 0) {
        error = "--page-size '" + value + "' is not allowed: give a power of two in bytes, 512 <= B <= 1048576";
        return false;
      }
      opts.params.page_size = static_cast<int>(n);
    } else if (name == "--channels") {
      if (!parse_int(value, n) || n < 0 || n > 8192) {
        error = "--channels '" + value + "' is not allowed: give an integer, 0 (no shared limit) or 1 <= N <= 8192";
        return false;
      }
      opts.params.channels = static_cast<int>(n);
    }
  }
  std::string missing;
  if (opts.backing.empty() && !opts.check) missing += " --backing";
  if (opts.mountpoint.empty() && !opts.check) missing += " --mountpoint";
  if (!have_latency) missing += " --read-latency-us";
  if (!have_alpha) missing += " --alpha";
  if (!have_kr) missing += " --k-r";
  if (!have_kw) missing += " --k-w";
  if (!missing.empty()) {
    error = "missing required argument(s):" + missing + "\n" + usage();
    return false;
  }
  const DeviceParams& p = opts.params;
  if (p.read_latency_us * p.time_dilation > 1e7) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", p.read_latency_us * p.time_dilation);
    error = std::string("--read-latency-us x --time-dilation is ") + buf +
            " us: at most 1e7 (10 s) per page read on the wall clock; give a smaller --time-dilation";
    return false;
  }
  return true;
}

bool check_paths(Options& opts, std::string& error) {
  char buf[PATH_MAX];
  if (!realpath(opts.backing.c_str(), buf)) {
    error = "--backing " + opts.backing + ": " + std::strerror(errno) +
            " (give an existing directory; create it with mkdir -p)";
    return false;
  }
  opts.backing = buf;
  struct stat st;
  if (stat(opts.backing.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "--backing " + opts.backing + " is not a directory";
    return false;
  }

  if (!realpath(opts.mountpoint.c_str(), buf)) {
    const int err = errno;
    if (err == ENOTCONN) {
      error = "--mountpoint " + opts.mountpoint + " is a FUSE mount whose server is gone: run `fusermount3 -u " +
              opts.mountpoint + "` first";
    } else {
      error = "--mountpoint " + opts.mountpoint + ": " + std::strerror(err) +
              " (give an existing empty directory; create it with mkdir -p)";
    }
    return false;
  }
  opts.mountpoint = buf;
  if (stat(opts.mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "--mountpoint " + opts.mountpoint + " is not a directory";
    return false;
  }
  if (is_mount_point(opts.mountpoint)) {
    error = "--mountpoint " + opts.mountpoint + " is already a mount point: unmount it first (`fusermount3 -u " +
            opts.mountpoint + "` for an emussd mount) or choose another empty directory";
    return false;
  }
  if (DIR* dir = opendir(opts.mountpoint.c_str())) {
    std::string first;
    while (dirent* e = readdir(dir)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        first = e->d_name;
        break;
      }
    }
    closedir(dir);
    if (!first.empty()) {
      error = "--mountpoint " + opts.mountpoint + " is not empty (it holds '" + first +
              "'): emussd mounts only on an empty directory, so that nothing is hidden; "
              "choose an empty one";
      return false;
    }
  } else {
    error = "--mountpoint " + opts.mountpoint + ": " + std::strerror(errno);
    return false;
  }
  if (nested(opts.mountpoint, opts.backing) || nested(opts.backing, opts.mountpoint)) {
    error = "--backing " + opts.backing + " and --mountpoint " + opts.mountpoint +
            " must not be the same directory or lie inside one another";
    return false;
  }

  if (!opts.stats_out.empty()) {
    std::string dir = opts.stats_out;
    const auto slash = dir.rfind('/');
    std::string base = slash == std::string::npos ? dir : dir.substr(slash + 1);
    dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
    if (base.empty() || !realpath(dir.c_str(), buf) || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
      error = "--stats-out " + opts.stats_out +
              ": its directory does not exist (create it first), or no file name is given";
      return false;
    }
    // Absolute, since a detached emussd runs in "/".
    opts.stats_out = std::string(buf) + (std::string(buf) == "/" ? "" : "/") + base;
    if (nested(opts.stats_out, opts.mountpoint)) {
      error = "--stats-out must not lie inside the mount point (it is written after unmount)";
      return false;
    }
  }
  return true;
}

bool check_fuse_available(std::string& error) {
  if (access("/dev/fuse", F_OK) != 0) {
    error =
        "/dev/fuse does not exist, so no FUSE file system can be mounted. On a host: "
        "`modprobe fuse` (and `apt-get install fuse3`). In a container: run it with "
        "`--device /dev/fuse --cap-add SYS_ADMIN` (Docker), or use a host where FUSE is allowed.";
    return false;
  }
  const int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    error = std::string("/dev/fuse cannot be opened (") + std::strerror(errno) +
            "). Check its permissions (crw-rw-rw- is usual), or run as root; in a container "
            "add `--device /dev/fuse --cap-add SYS_ADMIN`.";
    return false;
  }
  close(fd);
  bool found = false;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (!found && std::getline(dirs, dir, ':')) found = access((dir + "/fusermount3").c_str(), X_OK) == 0;
  if (!found && access("/usr/bin/fusermount3", X_OK) == 0) found = true;
  if (!found) {
    error =
        "fusermount3 was not found in PATH: it mounts and unmounts FUSE file systems. "
        "Install the FUSE 3 tools: `apt-get install fuse3` (Debian/Ubuntu).";
    return false;
  }
  return true;
}

}  // namespace emussd
