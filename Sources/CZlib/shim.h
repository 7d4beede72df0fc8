#ifndef UVNETWORKING_CZLIB_SHIM_H
#define UVNETWORKING_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro (it passes the library's version and the stream's size for a check),
// which Swift cannot call; this is that exact call.
static inline int uvn_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
// deflateInit2 is the same kind of macro.
static inline int uvn_deflateInit2(z_streamp stream, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, method, windowBits, memLevel, strategy);
}
#endif
