import Foundation

extension NetworkingError {
    /// A file error with the system's reason appended to `detail` and kept as the underlying
    /// `POSIXError`.
    static func file(_ code: Code, _ detail: String, errno: Int32) -> NetworkingError {
        NetworkingError(code, "\(detail): \(POSIXFile.describe(errno))",
                        underlyingError: POSIXErrorCode(rawValue: errno).map { POSIXError($0) })
    }

    /// The error for a file that cannot be opened for reading, by errno: URLSession's
    /// "does not exist", "is a directory" and "no permission" codes, else `cannotOpenFile`.
    static func fileUnreadable(_ path: String, errno: Int32) -> NetworkingError {
        switch POSIXErrorCode(rawValue: errno) {
        case .ENOENT?, .ENOTDIR?: return .file(.fileDoesNotExist, "\(path) does not exist", errno: errno)
        case .EISDIR?: return .file(.fileIsDirectory, "\(path) is a directory", errno: errno)
        case .EACCES?, .EPERM?: return .file(.noPermissionsToReadFile, "\(path) cannot be read", errno: errno)
        default: return .file(.cannotOpenFile, "\(path) cannot be opened", errno: errno)
        }
    }
}
