/* The device model (artifact/device_model.h) for tools that are not C++: fio's external engine
 * (systems/emussd/fio), Python through ctypes (systems/emussd/emussd/library.py). Built as
 * libartifact_device.so by emussd's CMake.
 *
 * A caller does the real I/O on an ordinary file, then charges it: serve() books it as of its
 * arrival (taken just before the I/O) and sleeps once, to the booked end, as emussd does for
 * each FUSE request. Every function is thread-safe; a device is shared by all the threads
 * that charge to it, so that k_r and k_w bound them all together. */
#ifndef ARTIFACT_DEVICE_H
#define ARTIFACT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct artifact_device artifact_device;

enum { ARTIFACT_DEVICE_READ = 0, ARTIFACT_DEVICE_WRITE = 1 };

/* A device with these parameters (the ranges of emussd's), or NULL with the reason in `error`
 * (at most error_size bytes, NUL-terminated; error may be NULL). */
artifact_device* artifact_device_create(double read_latency_us, double alpha, int k_r, int k_w, int page_size,
                                        double time_dilation, char* error, size_t error_size);

/* The same from "read_latency_us=2000,alpha=2.5,k_r=8,k_w=4[,page_size=4096][,channels=N]
 * [,time_dilation=D]" (the form of $EMUSSD_MODEL). */
artifact_device* artifact_device_from_spec(const char* spec, char* error, size_t error_size);

void artifact_device_destroy(artifact_device* device);

/* The model's clock (CLOCK_MONOTONIC, ns): Python's time.monotonic_ns() reads the same one. */
int64_t artifact_device_now_ns(void);

/* Charges a read or write of `bytes` done by the caller since `arrival_ns` (0: now) and sleeps
 * to its booked end. A read is charged for the bytes it returned, a write for at least a page.
 * Returns 0, or -1 for an unknown op. */
int artifact_device_serve(artifact_device* device, int op, uint64_t bytes, int64_t arrival_ns);

/* The counters as JSON (emussd's .emussd_stats without the mount's fields): writes at most
 * size bytes with the NUL and returns the length the whole text needs. */
size_t artifact_device_stats_json(const artifact_device* device, char* out, size_t size);

/* A few counters of one op: requests, bytes, pages, overruns. Returns -1 for an unknown op. */
int artifact_device_counters(const artifact_device* device, int op, uint64_t* count, uint64_t* bytes, uint64_t* pages,
                             uint64_t* overruns);

#ifdef __cplusplus
}
#endif

#endif /* ARTIFACT_DEVICE_H */
