/* Linked into every program built from a submission (labkit.plugin): before any of the
 * submission's code runs, its static constructors included, this forbids new processes, exec and
 * new executable memory (seccomp's 'running' filter, labkit/seccomp.py, generated into
 * running_filter.h). A submission's object may not add code before it: labkit.plugin refuses a
 * .preinit_array or an IFUNC of its own.
 *
 * With ThreadSanitizer (LABKIT_TSAN_OPTIONS defined), its options are the grader's: a submission
 * may not define __tsan_default_options (labkit.plugin refuses sanitizer symbols), and the
 * grader's environment sets the same. Each report also leaves a line of its own in the grader's
 * FIFO (LABKIT_TSAN_REPORT: the prefix of the path labkit.sandbox makes for the process), opened
 * anew each time by raw system calls, so that a run that closed the sanitizer's own descriptor
 * still shows it raced; if that line cannot be written, the run ends with the sanitizer's status. */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "running_filter.h"

static void labkit_confine(int argc, char** argv, char** envp) {
  (void)argc;
  (void)argv;
  (void)envp;
  struct sock_fprog program = {sizeof(running_filter) / sizeof(running_filter[0]), (struct sock_filter*)running_filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    static const char message[] = "labkit: the sandbox's seccomp filter could not be installed\n";
    (void)!write(2, message, sizeof message - 1);
    _exit(125);
  }
}

__attribute__((section(".preinit_array"), used)) static void (*const labkit_preinit)(int, char**,
                                                                                     char**) = labkit_confine;

#ifdef LABKIT_TSAN_OPTIONS
const char* __tsan_default_options(void) { return LABKIT_TSAN_OPTIONS; }

void __tsan_on_report(void* report) {
  (void)report;
  static const char line[] = "\nlabkit: ThreadSanitizer reported a problem\n";
  char path[4096];
  snprintf(path, sizeof path, "%s.%ld", LABKIT_TSAN_REPORT, (long)syscall(SYS_getpid));
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || syscall(SYS_write, fd, line, sizeof line - 1) != (long)(sizeof line - 1))
    syscall(SYS_exit_group, LABKIT_TSAN_EXIT);
  syscall(SYS_close, fd);
}
#endif
