// Fuzzes loading certificates from PEM text and DER (Certificate+PEM.swift, Certificate.swift):
// OpenSSL's PEM and DER readers as the library drives them, and its error-queue handling.
//
// Input: the first byte's low bit picks the reader: 0, the rest is PEM text (several blocks,
// keys and other blocks among them); 1, the rest is one DER certificate.
//
// Invariants:
// - Any bytes give certificates or a typed SecurityError; never a crash or a leak (the run has
//   AddressSanitizer's leak check on), and OpenSSL's error queue is left empty for the next call.
// - A certificate read back from its own PEM (written here: base64 in 64-column lines) has the
//   same DER; the DER alone reads to the same certificate (`Certificate(der:)` and the
//   DER-or-PEM reader), and a DER input reads to the same certificate as its own PEM (found by
//   this harness: a BER quirk kept as given by the DER reader, corrected by the PEM reader).
// - Several certificates keep their order: the PEM of all of them, and of all of them reversed,
//   read to the same list and to it reversed. `Certificate(pem:)` reads the first.

import COpenSSL
import Foundation
import FuzzSupport
@testable import UVNetworking

/// `der` as a PEM certificate block: base64 in lines of 64 characters (RFC 7468).
func pem(_ der: Data) -> String {
    let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    return "-----BEGIN CERTIFICATE-----\n" + base64 + "\n-----END CERTIFICATE-----\n"
}

/// `certificates` written as PEM and read back.
func reread(_ certificates: [Certificate]) -> [Certificate]? {
    reread(pemOf: certificates.map(\.derData))
}

/// DER encodings written as PEM and read back.
func reread(pemOf ders: Data...) -> [Certificate]? { reread(pemOf: ders) }

func reread(pemOf ders: [Data]) -> [Certificate]? {
    try? Certificate.parseCertificates(fromPEM: Data(ders.map(pem).joined().utf8))
}

func checkRoundTrips(_ certificates: [Certificate], from source: String) {
    // Several certificates are read back from their PEM together below; that covers each one's.
    if certificates.count == 1 {
        fuzzCheck(reread(certificates) == certificates, "the certificate of the \(source) did not read back from its PEM")
    }
    for (index, certificate) in certificates.enumerated() {
        fuzzCheck((try? Certificate(der: certificate.derData)) == certificate, "certificate \(index + 1) of the \(source) did not read back from its DER")
        fuzzCheck((try? Certificate.certificates(fromDEROrPEM: certificate.derData)) == [certificate], "the DER-or-PEM reader differs on certificate \(index + 1)")
        _ = certificate.description
    }
    guard certificates.count > 1 else { return }
    fuzzCheck(reread(certificates) == certificates, "\(certificates.count) certificates of the \(source) changed order or count")
    fuzzCheck(reread(certificates.reversed()) == certificates.reversed(), "\(certificates.count) certificates reversed did not stay reversed")
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let isDER = input.flag()
    let data = Data(input.remaining())
    if isDER {
        switch Result(catching: { () throws(SecurityError) in try Certificate(der: data) }) {
        case .success(let certificate):
            // A BER quirk OpenSSL accepts is stored corrected, so compare through PEM, not bytes.
            fuzzCheck(reread(pemOf: data) == [certificate], "the DER input read from PEM is another certificate")
            checkRoundTrips([certificate], from: "DER input")
        case .failure:
            break
        }
    } else {
        switch Result(catching: { () throws(SecurityError) in try Certificate.parseCertificates(fromPEM: data) }) {
        case .success(let certificates):
            fuzzCheck(!certificates.isEmpty, "no certificate and no error")
            fuzzCheck((try? Certificate(pem: data)) == certificates[0], "Certificate(pem:) did not read the first certificate")
            checkRoundTrips(certificates, from: "PEM input")
        case .failure:
            break
        }
    }
    fuzzCheck(ERR_peek_error() == 0, "OpenSSL's error queue was left with an error")
}
