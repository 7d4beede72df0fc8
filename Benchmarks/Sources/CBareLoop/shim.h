#ifndef UVBENCH_CBARELOOP_SHIM_H
#define UVBENCH_CBARELOOP_SHIM_H
// The bare loop's two C libraries, the ones UVNetworking itself is built on.
#include <uv.h>
#include <llhttp.h>
#endif
