import Foundation

/// Where download bodies are written while they arrive: a new file per task, directly in
/// FileManager's temporary directory (or the session's `downloadDirectory`), under a name only
/// this library makes.
enum DownloadTemporaryFile {
    static let namePrefix = "UVNetworking-Download-"

    /// The directory download files go to: `directory`, else FileManager's temporary directory.
    static func directory(_ directory: URL? = nil) -> URL {
        directory ?? FileManager.default.temporaryDirectory
    }

    /// A fresh path in `directory` (no file is created here: the writer creates it on a worker).
    static func makeURL(in directory: URL? = nil) -> URL {
        Self.directory(directory).appendingPathComponent(namePrefix + UUID().uuidString + ".tmp")
    }

    /// Whether `path` could be one of ours. Resume data names the file it appends to; a path
    /// anywhere else (which a forged or corrupted blob could name) is refused, so resuming never
    /// truncates, appends to or removes a file the library did not create.
    static func isDownloadFile(_ path: String, in directory: URL? = nil) -> Bool {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let name = url.lastPathComponent
        let parent = url.deletingLastPathComponent().standardizedFileURL.path
        let temporary = Self.directory(directory).standardizedFileURL.path
        return name.hasPrefix(namePrefix) && name.count > namePrefix.count
            && parent.trimmingSuffix("/") == temporary.trimmingSuffix("/")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) && count > suffix.count ? String(dropLast(suffix.count)) : self
    }
}
