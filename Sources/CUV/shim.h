#ifndef UVNETWORKING_CUV_SHIM_H
#define UVNETWORKING_CUV_SHIM_H
#include <uv.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#endif
