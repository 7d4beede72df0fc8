#ifndef UVNETWORKING_CZSTD_SHIM_H
#define UVNETWORKING_CZSTD_SHIM_H
// The stable API only (no ZSTD_STATIC_LINKING_ONLY): the streaming decoder and its parameters,
// which are all "Content-Encoding: zstd" (RFC 8878, RFC 9659) needs. zstd_errors.h names the
// error codes, so that a frame refused for its window size can say so.
#include <zstd.h>
#include <zstd_errors.h>
#endif
