import Foundation

extension NetworkingError {
    /// The family a failure belongs to, for callers that decide by family (retry a transport
    /// failure, show a validation failure, ignore a cancellation) rather than by exact `code`.
    ///
    /// New codes join an existing kind; a new kind is a source-breaking change for exhaustive
    /// switches, so it only comes with a new family of failures (TLS is reserved for that).
    public enum Kind: Hashable, Sendable {
        /// Reaching the server or exchanging bytes with it failed (DNS, connect, reset, closed,
        /// truncated, write failed).
        case transport
        /// One of the timeouts fired.
        case timeout
        /// The TLS handshake or certificate evaluation failed, or a certificate could not be
        /// parsed (`secureConnectionFailed`, `serverCertificateUntrusted`,
        /// `clientCertificateRejected`, `clientCertificateRequired`, `invalidCertificate`).
        case tls
        /// The response is not HTTP/1.1 as this client accepts it, or exceeds its size limits.
        case parse
        /// The response serializer rejected the status code or content type.
        case validation
        /// The response serializer could not turn the body into an object.
        case serialization
        /// The task was cancelled, its session invalidated, or its loop or worker pool shut down.
        case cancelled
        /// A local file could not be read or written: an upload's source, a download's file or
        /// its destination (`fileDoesNotExist`, `fileIsDirectory`, `noPermissionsToReadFile`,
        /// `cannotOpenFile`, `cannotCreateFile`, `cannotWriteToFile`, `cannotMoveFile`).
        case file
        /// The request could not be built from the caller's input; nothing was sent. Also a
        /// streamed body that failed or did not match its declared length, which may have been
        /// partly sent, a client identity that could not be loaded, and a request only the cache
        /// may answer that it cannot (`resourceUnavailable`).
        case invalidRequest
    }

    /// The family of this failure.
    public var kind: Kind { code.bridging.kind }
}

extension NetworkingError.Code {
    /// One row per code: its kind and the NSError it bridges to. The one table to extend when a
    /// code is added.
    var bridging: (kind: NetworkingError.Kind, domain: String, code: Int) {
        let request = NetworkingError.requestSerializationErrorDomain
        let response = NetworkingError.responseSerializationErrorDomain
        switch self {
        // Bad input: AFNetworking reports request-serializer failures in its request domain.
        case .invalidURL: return (.invalidRequest, NSURLErrorDomain, NSURLErrorBadURL)
        case .unsupportedURL: return (.invalidRequest, NSURLErrorDomain, NSURLErrorUnsupportedURL)
        case .invalidRequestHeader: return (.invalidRequest, request, NSURLErrorBadURL)
        // AF: parameters that are not valid JSON.
        case .requestSerializationFailed: return (.invalidRequest, request, NSURLErrorCannotDecodeContentData)
        // AF: a file part whose URL is not a reachable file URL.
        case .multipartFormDataFailed: return (.invalidRequest, request, NSURLErrorBadURL)
        // The caller's body stream failed or broke its declared length.
        case .bodyStreamFailed: return (.invalidRequest, NSURLErrorDomain, NSURLErrorRequestBodyStreamExhausted)
        // The caller's identity is unusable, so it is rejected before any server sees it.
        // -1206 ("required") would claim that a server asked for a certificate, which did not
        // happen; -1205 says the certificate was refused, which is what happened, locally.
        case .invalidClientIdentity: return (.invalidRequest, NSURLErrorDomain, URLError.Code.clientCertificateRejected.rawValue)

        // TLS: the codes URLSession reports for the same failures. Taken from URLError.Code:
        // swift-corelibs-foundation's NSURLError… constants of this family are one off
        // (NSURLErrorSecureConnectionFailed is -1201 there, -1200 on Darwin), its URLError.Code
        // values are Darwin's.
        case .secureConnectionFailed: return (.tls, NSURLErrorDomain, URLError.Code.secureConnectionFailed.rawValue)
        // AFNetworking 4's policy failure.
        case .serverCertificateUntrusted: return (.tls, NSURLErrorDomain, URLError.Code.serverCertificateUntrusted.rawValue)
        case .clientCertificateRejected: return (.tls, NSURLErrorDomain, URLError.Code.clientCertificateRejected.rawValue)
        case .clientCertificateRequired: return (.tls, NSURLErrorDomain, URLError.Code.clientCertificateRequired.rawValue)
        // No NSURLError code names a malformed certificate, and the ServerCertificate… codes
        // describe a server's certificate that parsed but failed evaluation. -1015 ("raw data
        // could not be decoded") says what happened: the bytes are not a certificate.
        case .invalidCertificate: return (.tls, NSURLErrorDomain, NSURLErrorCannotDecodeRawData)

        // Local files: URLSession's codes for the same failures, from URLError.Code (Darwin's
        // values) like the TLS family.
        case .fileDoesNotExist: return (.file, NSURLErrorDomain, URLError.Code.fileDoesNotExist.rawValue)
        case .fileIsDirectory: return (.file, NSURLErrorDomain, URLError.Code.fileIsDirectory.rawValue)
        case .noPermissionsToReadFile: return (.file, NSURLErrorDomain, URLError.Code.noPermissionsToReadFile.rawValue)
        case .cannotOpenFile: return (.file, NSURLErrorDomain, URLError.Code.cannotOpenFile.rawValue)
        case .cannotCreateFile: return (.file, NSURLErrorDomain, URLError.Code.cannotCreateFile.rawValue)
        case .cannotWriteToFile: return (.file, NSURLErrorDomain, URLError.Code.cannotWriteToFile.rawValue)
        case .cannotMoveFile: return (.file, NSURLErrorDomain, URLError.Code.cannotMoveFile.rawValue)
        // The caller's input: bytes that do not decode as resume data (-1015, "raw data could
        // not be decoded").
        case .invalidResumeData: return (.invalidRequest, NSURLErrorDomain, NSURLErrorCannotDecodeRawData)

        case .dnsFailure: return (.transport, NSURLErrorDomain, NSURLErrorCannotFindHost)
        case .connectionRefused, .connectFailed, .proxyConnectFailed: return (.transport, NSURLErrorDomain, NSURLErrorCannotConnectToHost)
        case .proxyAuthenticationRequired: return (.transport, NSURLErrorDomain, NSURLErrorUserAuthenticationRequired)
        // URLSession's code when a request that disallows cellular finds only cellular:
        // NSURLErrorDataNotAllowed (from URLError.Code, Darwin's value, like the TLS family).
        case .cellularAccessDenied: return (.transport, NSURLErrorDomain, URLError.Code.dataNotAllowed.rawValue)
        case .connectTimeout, .responseHeadTimeout, .idleTimeout, .requestTimeout, .dnsTimeout:
            return (.timeout, NSURLErrorDomain, NSURLErrorTimedOut)
        // What URLSession reports when a connection dies under a request.
        case .connectionReset, .connectionClosed, .writeFailed, .truncatedResponse:
            return (.transport, NSURLErrorDomain, NSURLErrorNetworkConnectionLost)

        // What URLSession reports for a redirect limit or loop; an https-to-http redirect is
        // refused as App Transport Security refuses cleartext.
        // Asked of the cache alone: nothing was sent, and sending it again would not help.
        case .resourceUnavailable: return (.invalidRequest, NSURLErrorDomain, NSURLErrorResourceUnavailable)
        case .tooManyRedirects, .redirectCycle: return (.transport, NSURLErrorDomain, NSURLErrorHTTPTooManyRedirects)
        case .insecureRedirect: return (.invalidRequest, NSURLErrorDomain, NSURLErrorAppTransportSecurityRequiresSecureConnection)

        case .malformedResponse, .unexpectedUpgrade: return (.parse, NSURLErrorDomain, NSURLErrorBadServerResponse)
        case .contentDecodingFailed: return (.parse, NSURLErrorDomain, NSURLErrorCannotDecodeContentData)
        case .responseHeadTooLarge, .responseBodyTooLarge, .decompressionLimitExceeded:
            return (.parse, NSURLErrorDomain, NSURLErrorDataLengthExceedsMaximum)

        // URLSession fails the tasks of an invalidated session as cancelled, too. A loop or
        // worker pool shut down is the embedding program stopping the client: the same family,
        // and as pointless to retry.
        case .cancelled, .sessionInvalidated, .loopShutDown: return (.cancelled, NSURLErrorDomain, NSURLErrorCancelled)

        // AFHTTPResponseSerializer's codes.
        case .unacceptableStatusCode: return (.validation, response, NSURLErrorBadServerResponse)
        case .unacceptableContentType: return (.validation, response, NSURLErrorCannotDecodeContentData)
        // Not -1016: AF's parsing serializers read -1016 in this domain as "content type
        // rejected, do not parse", so a parse failure gets its own code.
        case .serializationFailed: return (.serialization, response, NSURLErrorCannotParseResponse)

        // Unreachable while every code above has a row; a code added without one reads as an
        // unknown transport failure rather than trapping on an error path.
        default: return (.transport, NSURLErrorDomain, NSURLErrorUnknown)
        }
    }
}
