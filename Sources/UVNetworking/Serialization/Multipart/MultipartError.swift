#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension NetworkingError {
    /// A `.multipartFormDataFailed` error; with `errno`, the system's reason is appended to the
    /// detail and kept as the underlying `POSIXError`.
    static func multipart(_ detail: String, errno code: Int32? = nil) -> NetworkingError {
        guard let code else { return NetworkingError(.multipartFormDataFailed, detail) }
        let reason = String(cString: strerror(code))
        return NetworkingError(.multipartFormDataFailed, "\(detail): \(reason)",
                               underlyingError: POSIXErrorCode(rawValue: code).map { POSIXError($0) })
    }
}
