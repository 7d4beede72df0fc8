#ifndef UVFETCH_CWARC_SHIM_H
#define UVFETCH_CWARC_SHIM_H
// What uvfetch's WARC writer and reader call in C: zlib for the gzip member of each record,
// libcrypto for the SHA-1 digests WARC names (WARC-Block-Digest, WARC-Payload-Digest).
#include <zlib.h>
#include <openssl/evp.h>

// deflateInit2 and inflateInit2 are macros (they pass zlib's version and the stream's size for a
// check), which Swift cannot call; these are those exact calls.
static inline int warc_deflateInit2(z_streamp stream, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, method, windowBits, memLevel, strategy);
}
static inline int warc_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
