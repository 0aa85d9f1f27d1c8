/* fio's external engine for the library device: psync on ordinary files, each read and write
 * then charged to one device model (libartifact_device.so) shared by all the jobs' threads, so
 * that k_r and k_w bound them together as on an emussd mount, without FUSE or privileges.
 *
 *   EMUSSD_MODEL=read_latency_us=2000,alpha=2.5,k_r=8,k_w=4,time_dilation=3 \
 *     fio --thread --ioengine=external:/path/libfio_emussd.so --direct=1 ...
 *
 * Built against the headers of the fio it is loaded into (systems/emussd/fio/source.yaml): fio
 * refuses an engine of another FIO_IOOPS_VERSION, and the structs it reads must be that
 * version's. README.md ("The library device") says more. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/device.h"
#include "fio.h"

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static artifact_device* device; /* one per fio process: every job's I/O goes through it */
static char stats_out[4096];

/* The model from $EMUSSD_MODEL, made by the first job; the variable is then blanked where it
 * lies, as emussd does with EMUSSD_ARGS, so that other processes cannot read a lab's hidden
 * device in /proc/<pid>/environ. */
static int open_device(void) {
  char error[256];
  char* spec;
  int ret = 0;

  pthread_mutex_lock(&device_lock);
  if (!device) {
    spec = getenv("EMUSSD_MODEL");
    if (!spec || !*spec) {
      log_err(
          "emussd: set EMUSSD_MODEL=read_latency_us=X,alpha=A,k_r=N,k_w=N[,page_size=B]"
          "[,time_dilation=D]\n");
      ret = 1;
    } else if (!(device = artifact_device_from_spec(spec, error, sizeof(error)))) {
      log_err("emussd: EMUSSD_MODEL: %s\n", error);
      ret = 1;
    } else {
      memset(spec, ' ', strlen(spec));
      if (getenv("EMUSSD_STATS_OUT")) snprintf(stats_out, sizeof(stats_out), "%s", getenv("EMUSSD_STATS_OUT"));
    }
  }
  pthread_mutex_unlock(&device_lock);
  return ret;
}

static int fio_emussd_init(struct thread_data* td) {
  /* Jobs as processes would each get a model of their own: k would hold per job. */
  if (!td->o.use_thread) {
    log_err("emussd: needs --thread (thread=1), so that all jobs share one device\n");
    return 1;
  }
  return open_device();
}

/* The counters as JSON in $EMUSSD_STATS_OUT (whole or not at all), after every job. */
static void fio_emussd_cleanup(struct thread_data* td) {
  char tmp[sizeof(stats_out) + 32];
  size_t size;
  char* json;
  FILE* out;

  (void)td;
  pthread_mutex_lock(&device_lock);
  if (device && stats_out[0]) {
    size = artifact_device_stats_json(device, NULL, 0);
    json = malloc(size);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", stats_out, (int)getpid());
    if (json && (out = fopen(tmp, "w"))) {
      artifact_device_stats_json(device, json, size);
      fprintf(out, "%s\n", json);
      if (fclose(out) == 0) rename(tmp, stats_out);
    }
    free(json);
  }
  pthread_mutex_unlock(&device_lock);
}

/* O_DIRECT when the file system allows it; otherwise buffered, since the model, not the data
 * path, sets the timing. */
static int fio_emussd_open(struct thread_data* td, struct fio_file* f) {
  int flags = (td_write(td) ? O_RDWR | O_CREAT : O_RDONLY) | td->o.sync_io;

  f->fd = open(f->file_name, flags | (td->o.odirect ? O_DIRECT : 0), 0644);
  if (f->fd < 0 && errno == EINVAL && td->o.odirect) f->fd = open(f->file_name, flags, 0644);
  if (f->fd < 0) {
    td_verror(td, errno, "open");
    return 1;
  }
  return 0;
}

static ssize_t transfer(struct io_u* io_u) {
  int fd = io_u->file->fd;
  ssize_t done;

  for (;;) {
    if (io_u->ddir == DDIR_READ)
      done = pread(fd, io_u->xfer_buf, io_u->xfer_buflen, io_u->offset);
    else
      done = pwrite(fd, io_u->xfer_buf, io_u->xfer_buflen, io_u->offset);
    /* A file system that takes O_DIRECT at open and refuses it at the first I/O. */
    if (done < 0 && errno == EINVAL && (fcntl(fd, F_GETFL) & O_DIRECT)) {
      if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT) == 0) continue;
      errno = EINVAL;
    }
    return done;
  }
}

static enum fio_q_status fio_emussd_queue(struct thread_data* td, struct io_u* io_u) {
  int64_t arrival = artifact_device_now_ns();
  ssize_t done;

  fio_ro_check(td, io_u);
  if (io_u->ddir == DDIR_TRIM) {
    io_u->error = EINVAL;
    td_verror(td, io_u->error, "trim");
    return FIO_Q_COMPLETED;
  }
  if (!ddir_rw(io_u->ddir)) {
    /* fsync is metadata for the model: done, not charged (emussd counts it only). */
    if (do_io_u_sync(td, io_u) < 0) {
      io_u->error = errno;
      td_verror(td, io_u->error, "sync");
    }
    return FIO_Q_COMPLETED;
  }
  done = transfer(io_u);
  if (done < 0) {
    io_u->error = errno;
    io_u_log_error(td, io_u);
    td_verror(td, io_u->error, "xfer");
    return FIO_Q_COMPLETED;
  }
  if ((unsigned long long)done != io_u->xfer_buflen) io_u->resid = io_u->xfer_buflen - done;
  artifact_device_serve(device, io_u->ddir == DDIR_READ ? ARTIFACT_DEVICE_READ : ARTIFACT_DEVICE_WRITE, (uint64_t)done,
                        arrival);
  return FIO_Q_COMPLETED;
}

struct ioengine_ops ioengine = {
    .name = "emussd",
    .version = FIO_IOOPS_VERSION,
    .init = fio_emussd_init,
    .queue = fio_emussd_queue,
    .cleanup = fio_emussd_cleanup,
    .open_file = fio_emussd_open,
    .close_file = generic_close_file,
    .get_file_size = generic_get_file_size,
    .flags = FIO_SYNCIO,
};
