#ifndef UVNETWORKING_CBROTLI_SHIM_H
#define UVNETWORKING_CBROTLI_SHIM_H
// The decoder only: the library undoes "Content-Encoding: br" (RFC 7932) and never encodes, so it
// links libbrotlidec alone. The tests' encoder is the separate CBrotliEncoder module.
#include <brotli/decode.h>
#endif
