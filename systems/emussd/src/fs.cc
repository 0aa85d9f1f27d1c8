// FUSE low-level API pass-through. The low-level API (rather than the
// path-based high-level one) is used for one reason: libfuse 3.14 cannot set
// FOPEN_PARALLEL_DIRECT_WRITES through fuse_file_info, and without it the
// kernel serialises all direct writes to one inode, so k_w > 1 would never be
// reached on a single file. Here the open and create replies are built by
// hand (fuse_reply_iov) with that flag. Inodes follow libfuse's
// passthrough_ll example: one O_PATH fd per backing inode.
#define FUSE_USE_VERSION 312
#include "fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <linux/fuse.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "artifact/atomic_file.h"

namespace emussd {
namespace {

struct Inode {
  int fd = -1;  // O_PATH fd of the backing inode
  dev_t dev = 0;
  ino_t ino = 0;
  uint64_t nlookup = 0;
};

struct Fs {
  const Options* opts = nullptr;
  DeviceModel* model = nullptr;
  int64_t start_ns = 0;
  double timeout = 1.0;  // attribute and entry cache, seconds
  Inode root;
  std::mutex mu;  // guards inodes and nlookup counts
  std::map<std::pair<dev_t, ino_t>, Inode*> inodes;
};

// Inode numbers given to the kernel are Inode pointers, except the root (1)
// and the virtual stats file (2, never a valid pointer).
constexpr fuse_ino_t kStatsIno = 2;

Fs& fs_of(fuse_req_t req) { return *static_cast<Fs*>(fuse_req_userdata(req)); }

Inode& inode_of(fuse_req_t req, fuse_ino_t ino) {
  if (ino == FUSE_ROOT_ID) return fs_of(req).root;
  return *reinterpret_cast<Inode*>(ino);
}

bool is_stats(fuse_ino_t parent, const char* name) {
  return parent == FUSE_ROOT_ID && std::strcmp(name, kStatsName) == 0;
}

std::string proc_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

void stats_attr(const Fs& fs, struct stat& st) {
  std::memset(&st, 0, sizeof st);
  st.st_ino = kStatsIno;
  st.st_mode = S_IFREG | 0444;
  st.st_nlink = 1;
  st.st_uid = getuid();
  st.st_gid = getgid();
  st.st_size = static_cast<off_t>(full_stats_json(*fs.opts, *fs.model, fs.start_ns).size());
  st.st_blksize = 4096;
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  st.st_atim = st.st_mtim = st.st_ctim = now;
}

int do_lookup(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_entry_param& e) {
  Fs& fs = fs_of(req);
  std::memset(&e, 0, sizeof e);
  if (is_stats(parent, name)) {
    stats_attr(fs, e.attr);
    e.ino = kStatsIno;
    return 0;  // timeouts 0: the size changes with every read
  }
  e.attr_timeout = e.entry_timeout = fs.timeout;
  const int fd = openat(inode_of(req, parent).fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  if (fstatat(fd, "", &e.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    close(fd);
    return err;
  }
  std::lock_guard<std::mutex> lock(fs.mu);
  auto [it, inserted] = fs.inodes.try_emplace({e.attr.st_dev, e.attr.st_ino}, nullptr);
  if (inserted) {
    it->second = new Inode{fd, e.attr.st_dev, e.attr.st_ino, 1};
  } else {
    ++it->second->nlookup;
    close(fd);
  }
  e.ino = reinterpret_cast<fuse_ino_t>(it->second);
  return 0;
}

void forget_one(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  if (ino == FUSE_ROOT_ID || ino == kStatsIno) return;
  Fs& fs = fs_of(req);
  Inode* inode = reinterpret_cast<Inode*>(ino);
  std::lock_guard<std::mutex> lock(fs.mu);
  inode->nlookup -= std::min(n, inode->nlookup);
  if (inode->nlookup == 0) {
    fs.inodes.erase({inode->dev, inode->ino});
    close(inode->fd);
    delete inode;
  }
}

// --- replies with FOPEN_PARALLEL_DIRECT_WRITES (see the file comment) ---

void fill_attr(fuse_attr& a, const struct stat& st) {
  a.ino = st.st_ino;
  a.size = static_cast<uint64_t>(st.st_size);
  a.blocks = static_cast<uint64_t>(st.st_blocks);
  a.atime = static_cast<uint64_t>(st.st_atim.tv_sec);
  a.mtime = static_cast<uint64_t>(st.st_mtim.tv_sec);
  a.ctime = static_cast<uint64_t>(st.st_ctim.tv_sec);
  a.atimensec = static_cast<uint32_t>(st.st_atim.tv_nsec);
  a.mtimensec = static_cast<uint32_t>(st.st_mtim.tv_nsec);
  a.ctimensec = static_cast<uint32_t>(st.st_ctim.tv_nsec);
  a.mode = st.st_mode;
  a.nlink = static_cast<uint32_t>(st.st_nlink);
  a.uid = st.st_uid;
  a.gid = st.st_gid;
  a.rdev = static_cast<uint32_t>(st.st_rdev);
  a.blksize = static_cast<uint32_t>(st.st_blksize);
}

fuse_open_out direct_open_out(uint64_t fh) {
  fuse_open_out out;
  std::memset(&out, 0, sizeof out);
  out.fh = fh;
  // Direct I/O: the page cache never answers for the device. No keep_cache.
  out.open_flags = FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES;
  return out;
}

void reply_open_direct(fuse_req_t req, uint64_t fh) {
  fuse_open_out out = direct_open_out(fh);
  iovec iov{&out, sizeof out};
  fuse_reply_iov(req, &iov, 1);
}

void reply_create_direct(fuse_req_t req, const fuse_entry_param& e, uint64_t fh) {
  struct {
    fuse_entry_out entry;
    fuse_open_out open;
  } out;
  std::memset(&out, 0, sizeof out);
  out.entry.nodeid = e.ino;
  out.entry.generation = e.generation;
  const double whole = std::floor(e.entry_timeout);
  out.entry.entry_valid = out.entry.attr_valid = static_cast<uint64_t>(whole);
  out.entry.entry_valid_nsec = out.entry.attr_valid_nsec = static_cast<uint32_t>((e.entry_timeout - whole) * 1e9);
  fill_attr(out.entry.attr, e.attr);
  out.open = direct_open_out(fh);
  iovec iov{&out, sizeof out};
  fuse_reply_iov(req, &iov, 1);
}

// Flags for the backing open: the backing file is used through the host's
// page cache (the device model, not the host disk, sets the timing), and
// O_APPEND is dropped because the kernel already gives the append offset and
// pwrite on an O_APPEND fd would ignore it.
int backing_flags(int flags) { return (flags & ~(O_NOFOLLOW | O_DIRECT | O_APPEND)) | O_CLOEXEC; }

// --- operations ---

void op_init(void* userdata, fuse_conn_info* conn) {
  Fs& fs = *static_cast<Fs*>(userdata);
  const DeviceParams& p = fs.model->params();
  // Asynchronous direct I/O (io_uring, libaio) travels as FUSE "background"
  // requests, of which the kernel allows max_background (default 12) at once:
  // raise it so the queue limits are the device model's, not the kernel's.
  const unsigned bg = static_cast<unsigned>(std::min(65535, 4 * (p.k_r + p.k_w) + 64));
  conn->max_background = bg;
  conn->congestion_threshold = bg * 3 / 4;
  conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_entry_param e;
  const int err = do_lookup(req, parent, name, e);
  if (err)
    fuse_reply_err(req, err);
  else
    fuse_reply_entry(req, &e);
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  forget_one(req, ino, nlookup);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  for (size_t i = 0; i < count; ++i) forget_one(req, forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Fs& fs = fs_of(req);
  struct stat st;
  if (ino == kStatsIno) {
    stats_attr(fs, st);
    fuse_reply_attr(req, &st, 0);
    return;
  }
  if (fstatat(inode_of(req, ino).fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  fuse_reply_attr(req, &st, fs.timeout);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int valid, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    fuse_reply_err(req, EPERM);
    return;
  }
  const Inode& inode = inode_of(req, ino);
  const std::string path = proc_path(inode.fd);
  int res = 0;
  if (valid & FUSE_SET_ATTR_MODE)
    res = fi ? fchmod(static_cast<int>(fi->fh), attr->st_mode) : chmod(path.c_str(), attr->st_mode);
  if (res == 0 && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
    const uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : static_cast<uid_t>(-1);
    const gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : static_cast<gid_t>(-1);
    res = fchownat(inode.fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
  }
  // Truncation is metadata (like a trim), so it is not charged by the model.
  if (res == 0 && (valid & FUSE_SET_ATTR_SIZE))
    res = fi ? ftruncate(static_cast<int>(fi->fh), attr->st_size) : truncate(path.c_str(), attr->st_size);
  if (res == 0 && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
    timespec tv[2];
    tv[0].tv_sec = tv[1].tv_sec = 0;
    tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
    if (valid & FUSE_SET_ATTR_ATIME_NOW)
      tv[0].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_ATIME)
      tv[0] = attr->st_atim;
    if (valid & FUSE_SET_ATTR_MTIME_NOW)
      tv[1].tv_nsec = UTIME_NOW;
    else if (valid & FUSE_SET_ATTR_MTIME)
      tv[1] = attr->st_mtim;
    res = fi ? futimens(static_cast<int>(fi->fh), tv) : utimensat(AT_FDCWD, path.c_str(), tv, 0);
  }
  if (res != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  op_getattr(req, ino, fi);
}

struct DirHandle {
  DIR* dp = nullptr;
  off_t offset = 0;
  dirent* entry = nullptr;
};

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const int fd = openat(inode_of(req, ino).fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  auto* d = new DirHandle;
  d->dp = fdopendir(fd);
  if (!d->dp) {
    const int err = errno;
    close(fd);
    delete d;
    fuse_reply_err(req, err);
    return;
  }
  fi->fh = reinterpret_cast<uint64_t>(d);
  fuse_reply_open(req, fi);
}

// The stats file is not listed (it is a hidden control file, like /proc's),
// only looked up by name.
void op_readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  auto* d = reinterpret_cast<DirHandle*>(fi->fh);
  std::vector<char> buf(size);
  char* p = buf.data();
  size_t rem = size;
  if (offset != d->offset) {
    seekdir(d->dp, offset);
    d->entry = nullptr;
    d->offset = offset;
  }
  for (;;) {
    if (!d->entry) {
      errno = 0;
      d->entry = readdir(d->dp);
      if (!d->entry) {
        if (errno != 0 && rem == size) {
          fuse_reply_err(req, errno);
          return;
        }
        break;
      }
    }
    struct stat st;
    std::memset(&st, 0, sizeof st);
    st.st_ino = d->entry->d_ino;
    st.st_mode = static_cast<mode_t>(d->entry->d_type) << 12;
    const off_t next = d->entry->d_off;
    const size_t used = fuse_add_direntry(req, p, rem, d->entry->d_name, &st, next);
    if (used > rem) break;
    p += used;
    rem -= used;
    d->entry = nullptr;
    d->offset = next;
  }
  fuse_reply_buf(req, buf.data(), size - rem);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  auto* d = reinterpret_cast<DirHandle*>(fi->fh);
  closedir(d->dp);
  delete d;
  fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  const int fd = dirfd(reinterpret_cast<DirHandle*>(fi->fh)->dp);
  const int res = datasync ? fdatasync(fd) : fsync(fd);
  fuse_reply_err(req, res == 0 ? 0 : errno);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
      fuse_reply_err(req, EACCES);
      return;
    }
    // One snapshot per open, so that a reader gets one consistent document.
    Fs& fs = fs_of(req);
    fi->fh = reinterpret_cast<uint64_t>(new std::string(full_stats_json(*fs.opts, *fs.model, fs.start_ns)));
    fi->direct_io = 1;
    fuse_reply_open(req, fi);
    return;
  }
  const int fd = open(proc_path(inode_of(req, ino).fd).c_str(), backing_flags(fi->flags));
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  reply_open_direct(req, static_cast<uint64_t>(fd));
}

// Mounted by root, emussd is shared with other users (allow_other): a file or directory it
// creates for a caller belongs to that caller, as on a local file system, not to root.
// (A PostgreSQL server, which never runs as root, can then keep its files on the device.)
void give_to_caller(fuse_req_t req, int dir_fd, const char* name) {
  if (geteuid() != 0) return;
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (fchownat(dir_fd, name, ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW) != 0) {
    // best effort: the entry exists either way, owned by root as before
  }
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  if (is_stats(parent, name)) {
    fuse_reply_err(req, EACCES);
    return;
  }
  const int fd = openat(inode_of(req, parent).fd, name, backing_flags(fi->flags) | O_CREAT, mode);
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  give_to_caller(req, inode_of(req, parent).fd, name);
  fuse_entry_param e;
  const int err = do_lookup(req, parent, name, e);
  if (err) {
    close(fd);
    fuse_reply_err(req, err);
    return;
  }
  reply_create_direct(req, e, static_cast<uint64_t>(fd));
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  if (ino == kStatsIno) {  // never through the device model
    const auto* text = reinterpret_cast<const std::string*>(fi->fh);
    const size_t start = std::min(text->size(), static_cast<size_t>(off));
    fuse_reply_buf(req, text->data() + start, std::min(size, text->size() - start));
    return;
  }
  thread_local std::vector<char> buf;  // one per FUSE worker thread
  if (buf.size() < size) buf.resize(size);
  const int fd = static_cast<int>(fi->fh);
  const ssize_t n = fs_of(req).model->serve(Op::kRead, size, [&]() -> ssize_t {
    size_t done = 0;
    while (done < size) {
      const ssize_t r = pread(fd, buf.data() + done, size - done, off + static_cast<off_t>(done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return done ? static_cast<ssize_t>(done) : -errno;
      if (r == 0) break;  // end of file
      done += static_cast<size_t>(r);
    }
    return static_cast<ssize_t>(done);
  });
  if (n < 0)
    fuse_reply_err(req, static_cast<int>(-n));
  else
    fuse_reply_buf(req, buf.data(), static_cast<size_t>(n));
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char* data, size_t size, off_t off, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    fuse_reply_err(req, EACCES);
    return;
  }
  const int fd = static_cast<int>(fi->fh);
  const ssize_t n = fs_of(req).model->serve(Op::kWrite, size, [&]() -> ssize_t {
    size_t done = 0;
    while (done < size) {
      const ssize_t r = pwrite(fd, data + done, size - done, off + static_cast<off_t>(done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return done ? static_cast<ssize_t>(done) : -errno;
      done += static_cast<size_t>(r);
    }
    return static_cast<ssize_t>(done);
  });
  if (n < 0)
    fuse_reply_err(req, static_cast<int>(-n));
  else
    fuse_reply_write(req, static_cast<size_t>(n));
}

void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }

void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kStatsIno)
    delete reinterpret_cast<std::string*>(fi->fh);
  else
    close(static_cast<int>(fi->fh));
  fuse_reply_err(req, 0);
}

// fsync reaches the backing store (an fsync of the backing fd).
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    fuse_reply_err(req, 0);
    return;
  }
  const int fd = static_cast<int>(fi->fh);
  const int err =
      fs_of(req).model->serve_fsync([&] { return (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : errno; });
  fuse_reply_err(req, err);
}

// Allocation is metadata, like truncation: not charged.
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    fuse_reply_err(req, EPERM);
    return;
  }
  const int res = fallocate(static_cast<int>(fi->fh), mode, offset, length);
  fuse_reply_err(req, res == 0 ? 0 : errno);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  if (is_stats(parent, name) || mkdirat(inode_of(req, parent).fd, name, mode) != 0) {
    fuse_reply_err(req, is_stats(parent, name) ? EEXIST : errno);
    return;
  }
  give_to_caller(req, inode_of(req, parent).fd, name);
  op_lookup(req, parent, name);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (is_stats(parent, name)) {
    fuse_reply_err(req, EPERM);
    return;
  }
  fuse_reply_err(req, unlinkat(inode_of(req, parent).fd, name, 0) == 0 ? 0 : errno);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (is_stats(parent, name)) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  fuse_reply_err(req, unlinkat(inode_of(req, parent).fd, name, AT_REMOVEDIR) == 0 ? 0 : errno);
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags) {
  if (is_stats(parent, name) || is_stats(newparent, newname)) {
    fuse_reply_err(req, EPERM);
    return;
  }
  const int res = renameat2(inode_of(req, parent).fd, name, inode_of(req, newparent).fd, newname, flags);
  fuse_reply_err(req, res == 0 ? 0 : errno);
}

// A symbolic link is served from the backing directory and resolved by the kernel, so a
// link to a path off the device leaves the device: PostgreSQL keeps its WAL on another
// device through the link pg_wal. Reading a link is metadata: not charged, not counted.
void op_readlink(fuse_req_t req, fuse_ino_t ino) {
  char target[PATH_MAX + 1];
  const ssize_t n = readlinkat(inode_of(req, ino).fd, "", target, sizeof target - 1);
  if (n < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  target[n] = '\0';
  fuse_reply_readlink(req, target);
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs sv;
  if (fstatvfs(fs_of(req).root.fd, &sv) != 0)
    fuse_reply_err(req, errno);
  else
    fuse_reply_statfs(req, &sv);
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops ops;
  std::memset(&ops, 0, sizeof ops);
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.releasedir = op_releasedir;
  ops.fsyncdir = op_fsyncdir;
  ops.open = op_open;
  ops.create = op_create;
  ops.read = op_read;
  ops.write = op_write;
  ops.flush = op_flush;
  ops.release = op_release;
  ops.fsync = op_fsync;
  ops.fallocate = op_fallocate;
  ops.mkdir = op_mkdir;
  ops.unlink = op_unlink;
  ops.rmdir = op_rmdir;
  ops.rename = op_rename;
  ops.readlink = op_readlink;
  ops.statfs = op_statfs;
  return ops;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string full_stats_json(const Options& opts, const DeviceModel& model, int64_t start_ns) {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  const double sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                ",\n \"uptime_s\": %.6f, \"cpu_user_s\": %.6f, \"cpu_system_s\": %.6f, "
                "\"pid\": %d,\n",
                (now_ns() - start_ns) / 1e9, user, sys, static_cast<int>(getpid()));
  std::string json = model.stats_json();
  json.pop_back();  // reopen the top-level object to add the process facts
  return json + buf + " \"backing\": " + json_string(opts.backing) +
         ", \"mountpoint\": " + json_string(opts.mountpoint) + "}\n";
}

int run_fuse(const Options& opts, DeviceModel& model) {
  Fs fs;
  fs.opts = &opts;
  fs.model = &model;
  fs.start_ns = now_ns();
  fs.root.fd = open(opts.backing.c_str(), O_PATH | O_CLOEXEC);
  if (fs.root.fd < 0) {
    std::fprintf(stderr, "emussd: error: cannot open --backing %s: %s\n", opts.backing.c_str(), std::strerror(errno));
    return 1;
  }
  fs.root.nlookup = 2;

  std::string mount_opts = "fsname=emussd,subtype=emussd";
  // As root, let other users (e.g. a database server's) use the device too;
  // the kernel then checks the permission bits.
  if (geteuid() == 0) mount_opts += ",allow_other,default_permissions";
  std::vector<std::string> argv_s = {"emussd", "-o", mount_opts};
  if (opts.debug) argv_s.push_back("-d");
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());

  const fuse_lowlevel_ops ops = make_ops();
  fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, &fs);
  if (!se) {
    std::fprintf(stderr, "emussd: error: fuse_session_new failed\n");
    return 1;
  }
  int ret = 1;
  // A shell starts a background job with SIGINT ignored, and libfuse installs its handlers only
  // over a signal's default action: emussd stops on SIGINT and SIGTERM (its --help), so it takes
  // them back. (Under the test suite run as a background job, SIGINT left emussd mounted.)
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, SIG_DFL);
  if (fuse_set_signal_handlers(se) != 0) {
    fuse_session_destroy(se);
    return 1;
  }
  if (fuse_session_mount(se, opts.mountpoint.c_str()) != 0) {
    std::fprintf(stderr,
                 "emussd: error: mounting %s failed (see the message above). Without root, "
                 "fusermount3 must be setuid root (apt-get install --reinstall fuse3); in a "
                 "container, add --device /dev/fuse --cap-add SYS_ADMIN.\n",
                 opts.mountpoint.c_str());
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    return 1;
  }
  const DeviceParams& p = model.params();
  std::fprintf(stderr,
               "emussd: mounted %s (backing %s): read_latency_us=%g alpha=%g k_r=%d k_w=%d "
               "page_size=%d channels=%d time_dilation=%g\n",
               opts.mountpoint.c_str(), opts.backing.c_str(), p.read_latency_us, p.alpha, p.k_r, p.k_w, p.page_size,
               p.channels, p.time_dilation);
  std::fflush(stderr);
  fuse_daemonize(opts.foreground ? 1 : 0);

  // Every request holds a worker thread while it waits in the model's
  // queue and while it is in service, so the pool must cover the largest
  // concurrency a client is expected to offer (benchmarks go to 4 k).
  // Idle threads are kept: creating one per request burst costs CPU.
  const unsigned threads = static_cast<unsigned>(std::max(64, 4 * (p.k_r + p.k_w) + 32));
  fuse_loop_config* cfg = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(cfg, threads);
  fuse_loop_cfg_set_idle_threads(cfg, threads);
  fuse_loop_cfg_set_clone_fd(cfg, 0);
  ret = fuse_session_loop_mt(se, cfg);
  fuse_loop_cfg_destroy(cfg);
  // libfuse reports the signal that ended the loop: that is a clean stop.
  if (ret == SIGINT || ret == SIGTERM || ret == SIGHUP) ret = 0;

  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);

  if (!opts.stats_out.empty()) {
    std::string error;
    if (!artifact::write_file_atomically(opts.stats_out, full_stats_json(opts, model, fs.start_ns), error)) {
      std::fprintf(stderr, "emussd: error: %s\n", error.c_str());
      ret = 1;
    }
  }
  {
    std::lock_guard<std::mutex> lock(fs.mu);
    for (auto& [key, inode] : fs.inodes) {
      close(inode->fd);
      delete inode;
    }
    fs.inodes.clear();
  }
  close(fs.root.fd);
  return ret == 0 ? 0 : 1;
}

}  // namespace emussd
