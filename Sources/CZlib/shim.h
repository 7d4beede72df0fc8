#ifndef UVNETWORKING_CZLIB_SHIM_H
#define UVNETWORKING_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro (it passes the library's version and the stream's size for a check),
// which Swift cannot call; this is that exact call.
static inline int uvn_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
