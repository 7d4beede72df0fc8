// Fuzzes loading a client identity from a PKCS#12 archive (ClientIdentity+PKCS12.swift):
// OpenSSL's PKCS#12 reader as the library drives it, the ownership of what PKCS12_parse hands
// back, the key-certificate check, and installing the identity in a TLS context.
//
// Input: the first byte's low four bits are the password's length n, the next n bytes the
// password (as UTF-8, invalid bytes as U+FFFD), the rest the archive.
//
// Bounds: PKCS#12 derives keys with an iteration count the archive chooses (2048 from OpenSSL's
// `pkcs12 -export`), slow by design; a mutated count of millions makes one input take seconds.
// corpora/pkcs12/flags caps an input at 8 KiB (-max_len, enough for an RSA-2048 identity and a
// chain of two) and at 10 s (-timeout): a slower input is reported as a finding, to be judged
// (a count the library should refuse, or a bound to raise).
//
// Invariants:
// - Any bytes and password give an identity or a typed NetworkingError; never a crash or a leak
//   (AddressSanitizer's leak check is on), and OpenSSL's error queue is left empty.
// - An identity's certificate and chain read again from their DER to the same certificates, and
//   loading the same archive again gives the same identity (same leaf, same chain, same order).
// - The identity installs in a fresh TLS client context, or is refused by it with a typed
//   refusal (a signature digest or key too weak for OpenSSL's security level); either way
//   OpenSSL's error queue is left empty.

import COpenSSL
import Foundation
import FuzzSupport
@testable import UVNetworking

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let password = String(decoding: input.bytes(Int(input.byte() & 0x0F)), as: UTF8.self)
    let archive = Data(input.remaining())
    let loaded = Result { () throws(NetworkingError) in try ClientIdentity.pkcs12(archive, password: password) }
    fuzzCheck(ERR_peek_error() == 0, "OpenSSL's error queue was left with an error")
    guard case .success(let identity) = loaded else { return }
    for certificate in [identity.certificate] + identity.chain {
        fuzzCheck((try? Certificate(der: certificate.derData)) == certificate, "\(certificate) did not read again from its DER")
    }
    guard case .success(let again) = Result(catching: { () throws(NetworkingError) in try ClientIdentity.pkcs12(archive, password: password) }) else {
        fuzzCheck(false, "the archive loaded once, then failed")
        return
    }
    fuzzCheck(again.certificate == identity.certificate && again.chain == identity.chain, "loading twice gave two identities")
    guard let context = SSL_CTX_new(TLS_client_method()) else { return }
    defer { SSL_CTX_free(context) }
    // A context may refuse what loads (a digest or key too weak for its security level), but
    // only as one of the refusals, naming the certificate.
    if case .failure(let refusal) = Result(catching: { () throws(SecurityError) in try identity.apply(to: context) }) {
        switch refusal {
        case .certificateRefused, .chainCertificateRefused, .privateKeyRefused: break
        default: fuzzCheck(false, "installing failed with \(refusal)")
        }
    }
    fuzzCheck(ERR_peek_error() == 0, "installing left an error in OpenSSL's queue: \(OpenSSLErrorQueue.drain())")
}
