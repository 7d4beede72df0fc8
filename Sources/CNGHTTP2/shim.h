#ifndef UVNETWORKING_NGHTTP2_SHIM_H
#define UVNETWORKING_NGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif
