#ifndef UVNETWORKING_CARES_SHIM_H
#define UVNETWORKING_CARES_SHIM_H
#include <ares.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#endif
