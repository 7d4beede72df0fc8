import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.unit)) struct NetworkingErrorKindTests {
    typealias Row = (code: NetworkingError.Code, kind: NetworkingError.Kind, domain: String, errorCode: Int)
    static let request = "com.alamofire.error.serialization.request"
    static let response = "com.alamofire.error.serialization.response"
    static let url = "NSURLErrorDomain"

    /// Every code, with literal values so that a changed mapping fails here.
    static let table: [Row] = [
        (.invalidURL, .invalidRequest, url, -1000),
        (.unsupportedURL, .invalidRequest, url, -1002),
        (.invalidRequestHeader, .invalidRequest, request, -1000),
        (.requestSerializationFailed, .invalidRequest, request, -1016),
        (.multipartFormDataFailed, .invalidRequest, request, -1000),
        (.bodyStreamFailed, .invalidRequest, url, -1021),
        (.invalidClientIdentity, .invalidRequest, url, -1205),
        (.invalidCertificate, .tls, url, -1015),
        (.secureConnectionFailed, .tls, url, -1200),
        (.serverCertificateUntrusted, .tls, url, -1202),
        (.clientCertificateRejected, .tls, url, -1205),
        (.clientCertificateRequired, .tls, url, -1206),
        (.dnsFailure, .transport, url, -1003),
        (.dnsTimeout, .timeout, url, -1001),
        (.connectionRefused, .transport, url, -1004),
        (.connectFailed, .transport, url, -1004),
        (.cellularAccessDenied, .transport, url, -1020),
        (.connectTimeout, .timeout, url, -1001),
        (.responseHeadTimeout, .timeout, url, -1001),
        (.idleTimeout, .timeout, url, -1001),
        (.requestTimeout, .timeout, url, -1001),
        (.connectionReset, .transport, url, -1005),
        (.connectionClosed, .transport, url, -1005),
        (.writeFailed, .transport, url, -1005),
        (.truncatedResponse, .transport, url, -1005),
        (.malformedResponse, .parse, url, -1011),
        (.responseHeadTooLarge, .parse, url, -1103),
        (.responseBodyTooLarge, .parse, url, -1103),
        (.unexpectedUpgrade, .parse, url, -1011),
        (.cancelled, .cancelled, url, -999),
        (.sessionInvalidated, .cancelled, url, -999),
        (.loopShutDown, .cancelled, url, -999),
        (.unacceptableStatusCode, .validation, response, -1011),
        (.unacceptableContentType, .validation, response, -1016),
        (.serializationFailed, .serialization, response, -1017),
        (.fileDoesNotExist, .file, url, -1100),
        (.fileIsDirectory, .file, url, -1101),
        (.noPermissionsToReadFile, .file, url, -1102),
        (.cannotCreateFile, .file, url, -3000),
        (.cannotOpenFile, .file, url, -3001),
        (.cannotWriteToFile, .file, url, -3003),
        (.cannotMoveFile, .file, url, -3005),
        (.invalidResumeData, .invalidRequest, url, -1015),
    ]

    @Test func everyCodeMapsToItsKindDomainAndCode() {
        for row in Self.table {
            let error = NetworkingError(row.code, "x")
            #expect(error.kind == row.kind, "\(row.code)")
            #expect(error.nsErrorDomain == row.domain, "\(row.code)")
            #expect(error.errorCode == row.errorCode, "\(row.code)")
            #expect(error.nsError.domain == row.domain, "\(row.code)")
            #expect(error.nsError.code == row.errorCode, "\(row.code)")
        }
        #expect(Set(Self.table.map(\.code)).count == Self.table.count)
    }

    @Test func kindAgreesWithTheOlderPredicates() {
        for row in Self.table {
            let error = NetworkingError(row.code, "x")
            #expect(error.isTimeout == (error.kind == .timeout), "\(row.code)")
            if error.isCancellation { #expect(error.kind == .cancelled) }
        }
    }

    @Test func switchingOnKind() {
        func advice(_ error: NetworkingError) -> String {
            switch error.kind {
            case .transport, .timeout: "retry"
            case .cancelled: "ignore"
            case .validation, .serialization: "show"
            case .tls, .parse, .invalidRequest, .file: "fail"
            }
        }
        #expect(advice(NetworkingError(.idleTimeout, "x")) == "retry")
        #expect(advice(NetworkingError(.unacceptableStatusCode, "x")) == "show")
        #expect(advice(NetworkingError(.sessionInvalidated, "x")) == "ignore")
        #expect(advice(NetworkingError(.serverCertificateUntrusted, "x")) == "fail")
    }
}
