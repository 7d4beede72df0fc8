#ifndef UVNETWORKING_COPENSSL_SHIM_H
#define UVNETWORKING_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
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

// Stacks of certificates and names: OpenSSL's sk_TYPE_* accessors are macros over OPENSSL_sk_*
// with casts, so each typed accessor the security layer needs gets a wrapper.
static inline STACK_OF(X509) *uvn_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int uvn_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) {
    return sk_X509_push(stack, cert);
}
static inline int uvn_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *uvn_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}
// Frees the stack only; the certificates stay owned by whoever pushed them.
static inline void uvn_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
// Frees the stack and drops one reference of every certificate in it (for stacks whose
// entries were up-referenced, such as X509_STORE_CTX_get1_chain's or PKCS12_parse's).
static inline void uvn_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
static inline int uvn_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) {
    return sk_GENERAL_NAME_num(names);
}
static inline GENERAL_NAME *uvn_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}

static inline long uvn_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add1_chain_cert(ctx, cert);
}
static inline long uvn_SSL_CTX_clear_chain_certs(SSL_CTX *ctx) {
    return SSL_CTX_clear_chain_certs(ctx);
}
// OPENSSL_free with OpenSSL's own file and line arguments.
static inline void uvn_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
// The bytes a memory BIO holds, without copying; returns their count.
static inline long uvn_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
#endif
