#ifndef UVNETWORKING_FUZZ_CFUZZBROTLIENCODER_SHIM_H
#define UVNETWORKING_FUZZ_CFUZZBROTLIENCODER_SHIM_H
// The content-decoder harness's brotli encoder (libbrotlienc): its round trips compress with
// brotli's own encoder. The library links only the decoder (CBrotli).
#include <brotli/encode.h>
#endif
