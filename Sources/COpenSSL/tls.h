#ifndef UVNETWORKING_COPENSSL_TLS_H
#define UVNETWORKING_COPENSSL_TLS_H
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

// Macros the TLS transport needs, each a direct call so the behaviour is exactly OpenSSL's.
static inline long uvn_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
/// Suspends the handshake at certificate verification (OpenSSL 3.0.2+); 1 on success.
static inline int uvn_SSL_set_retry_verify(SSL *ssl) { return SSL_set_retry_verify(ssl); }
static inline int uvn_SSL_set_app_data(SSL *ssl, void *data) { return SSL_set_app_data(ssl, data); }
static inline void *uvn_SSL_get_app_data(const SSL *ssl) { return SSL_get_app_data(ssl); }
#endif
