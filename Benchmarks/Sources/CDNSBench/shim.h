#ifndef DNSBENCH_SHIM_H
#define DNSBENCH_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <netdb.h>
#include <uv.h>
#include <ares.h>

#endif
