#ifndef UVNETWORKING_COPENSSL_SHIM_H
#define UVNETWORKING_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include "tls.h"

// OpenSSL exposes these as macros, which Swift cannot call. Each wrapper is a direct call of the
// macro so that the behaviour is exactly OpenSSL's.
static inline long uvn_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline size_t uvn_BIO_pending(BIO *bio) { return BIO_pending(bio); }
static inline size_t uvn_BIO_wpending(BIO *bio) { return BIO_wpending(bio); }
static inline long uvn_BIO_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}
static inline long uvn_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long uvn_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline int uvn_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
#endif
