#ifndef UVNETWORKING_CBROTLIENCODER_SHIM_H
#define UVNETWORKING_CBROTLIENCODER_SHIM_H
// The tests' brotli encoder (libbrotlienc, from the same libbrotli-dev as the decoder): fixtures
// are made at test time by the library's own encoder, never by code of ours.
#include <brotli/encode.h>
#endif
