import Foundation

extension NetworkingError {
    /// AFURLResponseSerializationErrorDomain: validation and response-serialization failures.
    public static let responseSerializationErrorDomain = "com.alamofire.error.serialization.response"
    /// AFURLRequestSerializationErrorDomain: requests that could not be built from the input.
    public static let requestSerializationErrorDomain = "com.alamofire.error.serialization.request"
    /// AFNetworkingOperationFailingURLResponseErrorKey. AFNetworking stores an NSHTTPURLResponse;
    /// there is none here, so the value is the swift-http-types `HTTPResponse`.
    public static let responseUserInfoKey = "com.alamofire.serialization.response.error.response"
    /// AFNetworkingOperationFailingURLResponseDataErrorKey: the response body, as `Data`.
    public static let responseDataUserInfoKey = "com.alamofire.serialization.response.error.data"

    /// The domain of the NSError this error bridges to: NSURLErrorDomain for request input,
    /// transport, timeout and cancellation failures, `responseSerializationErrorDomain` for
    /// validation and serialization, `requestSerializationErrorDomain` for request building.
    public var nsErrorDomain: String { code.bridging.domain }

    /// This error as an NSError with AFNetworking's domain, code and userInfo.
    ///
    /// Prefer this to `error as NSError`: swift-corelibs-foundation takes the domain of a bridged
    /// error from the type (`NetworkingError.errorDomain`), so only this property carries the
    /// per-code domain on Linux. Code and userInfo are the same either way.
    public var nsError: NSError {
        NSError(domain: nsErrorDomain, code: errorCode, userInfo: errorUserInfo)
    }
}

extension NetworkingError: CustomNSError {
    /// The domain `error as NSError` gets where the bridge reads it from the type (Linux); see
    /// `nsError` for the per-code domain.
    public static var errorDomain: String { "UVNetworking.NetworkingError" }

    /// The per-code domain where the bridge asks the value (Darwin's `error as NSError`).
    public var _domain: String { nsErrorDomain }

    /// The NSURLError code (or AFNetworking's code) for this failure; see `Code.bridging`.
    public var errorCode: Int { code.bridging.code }

    /// NSLocalizedDescriptionKey (the detail), NSURLErrorFailingURLErrorKey and
    /// NSURLErrorFailingURLStringErrorKey (when the URL is known), `responseUserInfoKey` and
    /// `responseDataUserInfoKey` (when a response arrived), NSUnderlyingErrorKey (bridged too),
    /// and for an untrusted server URLSession's `NSURLErrorFailingURLPeerTrustErrorKey` (the
    /// `ServerTrust`) and `NSErrorPeerCertificateChainKey` (its certificates as DER `Data`).
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: detail]
        if let failingURL {
            info[NSURLErrorFailingURLErrorKey] = failingURL
            // The constant is deprecated in favour of the URL key, but AFNetworking fills both.
            info["NSErrorFailingURLStringKey"] = failingURL.absoluteString
        }
        if let response { info[Self.responseUserInfoKey] = response }
        if let responseData { info[Self.responseDataUserInfoKey] = responseData }
        if let serverTrust {
            info["NSURLErrorFailingURLPeerTrustErrorKey"] = serverTrust
            info["NSErrorPeerCertificateChainKey"] = serverTrust.certificates.map(\.derData)
        }
        if let underlyingError {
            // A nested NetworkingError keeps its own domain only through `nsError`.
            info[NSUnderlyingErrorKey] = (underlyingError as? NetworkingError)?.nsError ?? underlyingError as NSError
        }
        return info
    }
}
